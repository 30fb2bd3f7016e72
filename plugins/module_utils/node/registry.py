# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registry API v2: copy one pinned image into a site registry, byte for byte,
reading each blob from upstream once.

Why not only a pull-through cache: docker-registry's proxy (distribution 2.8)
reads a cold blob from upstream twice even for a single GET, and again for
concurrent pullers (distribution#4664). Copying the node architecture's image
once, then letting every node pull from the site registry, costs 1.0x the
image per site. Stdlib only (runs on the mirror host).
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, List, Optional, Tuple

MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
])
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")
# Proxies from the environment apply (the upstream registry may sit behind one).
_OPENER = urllib.request.build_opener()


class RegistryError(RuntimeError):
    pass


class Registry:
    """A v2 registry endpoint with anonymous, basic or bearer-token access."""

    def __init__(self, base: str, username: str = "", password: str = "", timeout: float = 300):
        self.base = base.rstrip("/")
        self.username, self.password, self.timeout = username, password, timeout
        self.token: Optional[str] = None

    def _auth_header(self) -> Dict[str, str]:
        if self.token:
            return {"Authorization": "Bearer " + self.token}
        if self.username:
            raw = ("%s:%s" % (self.username, self.password)).encode()
            return {"Authorization": "Basic " + base64.b64encode(raw).decode()}
        return {}

    def _fetch_token(self, challenge: str) -> None:
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        realm = params.pop("realm", None)
        if not realm:
            raise RegistryError("unsupported auth challenge: %s" % challenge)
        req = urllib.request.Request(realm + "?" + urllib.parse.urlencode(params))
        if self.username:
            raw = ("%s:%s" % (self.username, self.password)).encode()
            req.add_header("Authorization", "Basic " + base64.b64encode(raw).decode())
        with _OPENER.open(req, timeout=self.timeout) as resp:
            body = json.loads(resp.read())
        self.token = body.get("token") or body.get("access_token")

    def open(self, method: str, path: str, headers: Optional[Dict[str, str]] = None, data=None):
        """The HTTP response (caller reads or streams it); retries once with a bearer token on 401."""
        for attempt in (0, 1):
            req = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers=dict(headers or {}, **self._auth_header()))
            try:
                return _OPENER.open(req, timeout=self.timeout)
            except urllib.error.HTTPError as exc:
                challenge = exc.headers.get("WWW-Authenticate", "")
                if exc.code == 401 and attempt == 0 and challenge.lower().startswith("bearer"):
                    self._fetch_token(challenge)
                    continue
                if exc.code == 404:
                    return None
                try:
                    detail = exc.read(200).decode("utf-8", "replace")
                except (OSError, ValueError, http.client.HTTPException):
                    detail = ""  # a short or broken error body: the status says enough
                detail = " ".join("".join(c if c.isprintable() else " " for c in detail).split())
                raise RegistryError("%s %s%s: HTTP %d %s" % (method, self.base, path, exc.code, detail))
        return None

    def manifest(self, repo: str, reference: str) -> Tuple[bytes, str]:
        resp = self.open("GET", "/v2/%s/manifests/%s" % (repo, reference), {"Accept": MANIFEST_TYPES})
        if resp is None:
            raise RegistryError("%s/%s@%s: manifest unknown" % (self.base, repo, reference))
        with resp:
            return resp.read(), resp.headers.get("Content-Type", "")

    def has_blob(self, repo: str, digest: str) -> bool:
        resp = self.open("HEAD", "/v2/%s/blobs/%s" % (repo, digest))
        if resp is None:
            return False
        resp.close()
        return True


def platform_manifest(source: Registry, repo: str, digest: str, arch: str) -> Tuple[str, bytes, str]:
    """The image manifest for linux/<arch>: (digest, bytes, media type); the pinned digest itself if it is no index."""
    body, ctype = source.manifest(repo, digest)
    doc = json.loads(body)
    if ctype not in INDEX_TYPES and not doc.get("manifests"):
        return digest, body, ctype or doc.get("mediaType", "")
    chosen = [m for m in doc["manifests"] if m.get("platform", {}).get("architecture") == arch
              and m.get("platform", {}).get("os", "linux") == "linux"]
    if not chosen:
        raise RegistryError("%s@%s lists no linux/%s image" % (repo, digest, arch))
    child = chosen[0]["digest"]
    body, ctype = source.manifest(repo, child)
    return child, body, ctype or chosen[0].get("mediaType", "")


def copy_image(source: Registry, target: Registry, repo: str, digest: str, arch: str = "amd64",
               dry_run: bool = False) -> Dict[str, object]:
    """Copy the pinned image's linux/<arch> manifest and blobs from source to target (same repo path).
    With dry_run only count what would be copied."""
    manifest_digest, body, ctype = platform_manifest(source, repo, digest, arch)
    doc = json.loads(body)
    blobs: List[Tuple[str, int]] = [(doc["config"]["digest"], int(doc["config"]["size"]))]
    blobs += [(layer["digest"], int(layer["size"])) for layer in doc["layers"]]
    copied, copied_bytes = 0, 0
    for blob, size in blobs:
        if target.has_blob(repo, blob):
            continue
        copied += 1
        copied_bytes += size
        if dry_run:
            continue
        start = target.open("POST", "/v2/%s/blobs/uploads/" % repo, data=b"")
        location = start.headers["Location"]
        start.close()
        if location.startswith("/"):
            location = target.base + location
        upload = location + ("&" if "?" in location else "?") + urllib.parse.urlencode({"digest": blob})
        src = source.open("GET", "/v2/%s/blobs/%s" % (repo, blob))
        if src is None:
            raise RegistryError("%s: blob %s unknown upstream" % (repo, blob))
        with src:
            req = urllib.request.Request(upload, data=src, method="PUT", headers=dict(
                {"Content-Type": "application/octet-stream", "Content-Length": str(size)}, **target._auth_header()))
            with _OPENER.open(req, timeout=target.timeout) as done:
                if done.status not in (201, 204):
                    raise RegistryError("upload of %s answered %d" % (blob, done.status))
    if dry_run:
        return {"manifest": manifest_digest, "blobs": len(blobs), "copied": copied, "bytes": copied_bytes}
    put = target.open("PUT", "/v2/%s/manifests/%s" % (repo, manifest_digest), {"Content-Type": ctype}, data=body)
    if put is None:
        raise RegistryError("the site registry refused manifest %s" % manifest_digest)
    put.close()
    return {"manifest": manifest_digest, "blobs": len(blobs), "copied": copied, "bytes": copied_bytes}
