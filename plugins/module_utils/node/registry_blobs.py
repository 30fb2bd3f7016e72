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
# The most a manifest or config may weigh: a 2000-file model's manifest is well under 1 MiB.
MAX_DOCUMENT = 32 << 20
# errors worth another try: the store restarting, a dropped connection, a timeout
TRANSIENT = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError)


class StoreUnreachable(RegistryError):
    pass


class RegistryAnswered(RegistryError):
    """The registry answered with an error status (416 on a resume, 400, 403...): .status holds it."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def one_line(text: str, limit: int = 200) -> str:
    """text on one line of printable characters (a registry's HTML error page, an exception with newlines)."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def _error_body(exc: urllib.error.HTTPError) -> str:
    """The start of an error answer's body, on one line; "" when the body itself breaks (a short body, a reset)."""
    try:
        return one_line(exc.read(200).decode("utf-8", "replace"))
    except (OSError, http.client.HTTPException, ValueError):
        return ""
    finally:
        exc.close()


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
                    exc.close()
                    return None
                detail = _error_body(exc)
                if not _retryable(exc.code):
                    raise RegistryAnswered("%s %s: HTTP %d %s" % (method, url, exc.code, detail), exc.code)
                last = "HTTP %d %s" % (exc.code, detail)
            except TRANSIENT as exc:
                last = one_line(str(getattr(exc, "reason", None) or exc) or type(exc).__name__)
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


def read_document(reg: BoundedRegistry, resp, what: str, limit: int = MAX_DOCUMENT) -> bytes:
    """A small answer (a manifest, the config) read whole within limit bytes and a deadline of a few
    timeouts: a store that trickles it, or sends a gigabyte for it, fails named instead of hanging."""
    deadline = time.monotonic() + 4 * reg.timeout
    parts, size = [], 0
    try:
        with resp:
            while True:
                part = resp.read1(CHUNK) if hasattr(resp, "read1") else resp.read(CHUNK)
                if not part:
                    break
                parts.append(part)
                size += len(part)
                if size > limit:
                    raise RegistryError("the registry %s sent more than %d bytes for %s: check that %s is a "
                                        "model artifact the store step pushed" % (reg.base, limit, what, what))
                if time.monotonic() > deadline:
                    raise RegistryError("the registry %s took over %g s to send %s (%d bytes so far): check the "
                                        "store's load and network, or raise timeout"
                                        % (reg.base, 4 * reg.timeout, what, size))
    except TRANSIENT as exc:
        raise StoreUnreachable("the registry %s broke off sending %s: %s" % (reg.base, what, one_line(str(exc))))
    return b"".join(parts)


def manifest_by_tag(reg: BoundedRegistry, repo: str, tag: str) -> Optional[Tuple[bytes, str]]:
    """(bytes, sha256 digest) of the manifest under tag, or None when the registry has no such tag."""
    resp = reg.request("GET", "/v2/%s/manifests/%s" % (repo, tag), {"Accept": OCI_MANIFEST})
    if resp is None:
        return None
    body = read_document(reg, resp, "the manifest %s:%s" % (repo, tag))
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
              data: Optional[bytes] = None, chunks: Optional[Callable[[], Iterator[bytes]]] = None) -> bool:
    """Upload one blob (from a file, streamed, from bytes, or from chunks(), called afresh for each try) unless the
    registry has it; True if uploaded.
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
    body = (lambda: data) if data is not None else (chunks or (lambda: _file_chunks(path)))
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
    body = read_document(reg, resp, "the blob %s in %s" % (digest, repo))
    if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
        raise RegistryError("%s served blob %s with other content" % (reg.base, digest))
    return body
