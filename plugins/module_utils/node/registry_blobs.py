# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registry API v2 for the weights artifact: push blobs from local files, put and read manifests
by tag, and read a blob from an offset (Range) so a broken fetch resumes.

Bounded: every request has a timeout and a few retries with backoff on connection errors, 429
and 5xx, so a site store that does not answer fails in (retries + 1) x timeout plus a few seconds,
with the registry named. Stdlib only (runs on the store host and on every node).
"""

from __future__ import annotations

import hashlib
import http.client
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Callable, Dict, Iterator, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import _OPENER, Registry, RegistryError

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CHUNK = 1 << 20
# errors worth another try: the store restarting, a dropped connection, a timeout
TRANSIENT = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError)


class StoreUnreachable(RegistryError):
    pass


def _retryable(code: int) -> bool:
    return code == 429 or code >= 500


class BoundedRegistry(Registry):
    """A Registry whose requests time out and retry a bounded number of times."""

    def __init__(self, base: str, timeout: float = 60, retries: int = 3, backoff: float = 0.5,
                 username: str = "", password: str = ""):
        super().__init__(base, username, password, timeout)
        self.retries, self.backoff = max(0, retries), backoff

    def request(self, method: str, path: str, headers: Optional[Dict[str, str]] = None,
                body: Optional[Callable[[], object]] = None):
        """The response, or None on 404. body() makes a fresh request body for each try (a file is re-read)."""
        url = path if path.startswith("http") else self.base + path
        started, last = time.monotonic(), ""
        tries = self.retries + 1
        attempt = 0
        auth_retried = False
        while attempt < tries:
            req = urllib.request.Request(url, data=body() if body else None, method=method,
                                         headers=dict(headers or {}, **self._auth_header()))
            try:
                return _OPENER.open(req, timeout=self.timeout)
            except urllib.error.HTTPError as exc:
                challenge = exc.headers.get("WWW-Authenticate", "")
                if exc.code == 401 and not auth_retried and challenge.lower().startswith("bearer"):
                    auth_retried = True
                    self._fetch_token(challenge)
                    continue
                if exc.code == 404:
                    return None
                detail = exc.read()[:200].decode("utf-8", "replace").strip()
                if not _retryable(exc.code):
                    raise RegistryError("%s %s: HTTP %d %s" % (method, url, exc.code, detail))
                last = "HTTP %d %s" % (exc.code, detail)
            except TRANSIENT as exc:
                last = str(getattr(exc, "reason", None) or exc) or type(exc).__name__
            attempt += 1
            if attempt < tries:
                time.sleep(self.backoff * (2 ** (attempt - 1)))
        raise StoreUnreachable("the registry %s did not answer %s %s: %s (%d tries in %.1f s, timeout %g s each)"
                               % (self.base, method, path if not path.startswith("http") else
                                  urllib.parse.urlsplit(path).path, last, tries, time.monotonic() - started,
                                  self.timeout))

    def blob_present(self, repo: str, digest: str) -> bool:
        resp = self.request("HEAD", "/v2/%s/blobs/%s" % (repo, digest))
        if resp is None:
            return False
        resp.close()
        return True


def manifest_by_tag(reg: BoundedRegistry, repo: str, tag: str) -> Optional[Tuple[bytes, str]]:
    """(bytes, sha256 digest) of the manifest under tag, or None when the registry has no such tag."""
    resp = reg.request("GET", "/v2/%s/manifests/%s" % (repo, tag), {"Accept": OCI_MANIFEST})
    if resp is None:
        return None
    with resp:
        body = resp.read()
    return body, "sha256:" + hashlib.sha256(body).hexdigest()


def put_manifest(reg: BoundedRegistry, repo: str, tag: str, body: bytes, media_type: str = OCI_MANIFEST) -> str:
    resp = reg.request("PUT", "/v2/%s/manifests/%s" % (repo, tag), {"Content-Type": media_type}, lambda: body)
    if resp is None:
        raise RegistryError("%s refused the manifest for %s:%s" % (reg.base, repo, tag))
    resp.close()
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _file_chunks(path: str) -> Iterator[bytes]:
    # big chunks: http.client would send a file object 8 KiB at a time
    with open(path, "rb") as fh:
        yield from iter(lambda: fh.read(CHUNK), b"")


def push_blob(reg: BoundedRegistry, repo: str, digest: str, size: int, path: str = "",
              data: Optional[bytes] = None) -> bool:
    """Upload one blob (from a file, streamed, or from bytes) unless the registry has it; True if uploaded.
    Monolithic upload: POST for a session, then one PUT with the digest; the registry checks the digest."""
    if reg.blob_present(repo, digest):
        return False
    start = reg.request("POST", "/v2/%s/blobs/uploads/" % repo, {"Content-Length": "0"}, lambda: b"")
    if start is None:
        raise RegistryError("%s refused an upload to %s" % (reg.base, repo))
    location = start.headers["Location"]
    start.close()
    if location.startswith("/"):
        location = reg.base + location
    upload = location + ("&" if "?" in location else "?") + urllib.parse.urlencode({"digest": digest})
    body = (lambda: data) if data is not None else (lambda: _file_chunks(path))
    headers = {"Content-Type": "application/octet-stream", "Content-Length": str(size)}
    done = reg.request("PUT", upload, headers, body)
    if done is None or done.status not in (201, 204):
        status = done.status if done else 404
        raise RegistryError("%s: upload of %s to %s answered %s" % (reg.base, digest, repo, status))
    done.close()
    return True


def open_blob(reg: BoundedRegistry, repo: str, digest: str, offset: int = 0):
    """The blob's response from offset on (206 with a Range), or None if the registry lacks it.
    The caller reads it; a server that ignores the Range answers 200 from byte 0 (check .status)."""
    headers = {"Range": "bytes=%d-" % offset} if offset else {}
    return reg.request("GET", "/v2/%s/blobs/%s" % (repo, digest), headers)


def read_blob(reg: BoundedRegistry, repo: str, digest: str) -> bytes:
    """A small blob (the config), checked against its digest."""
    resp = open_blob(reg, repo, digest)
    if resp is None:
        raise RegistryError("%s has no blob %s in %s" % (reg.base, digest, repo))
    with resp:
        body = resp.read()
    if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
        raise RegistryError("%s served blob %s with other content" % (reg.base, digest))
    return body
