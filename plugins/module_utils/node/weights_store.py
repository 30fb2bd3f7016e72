# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The store host's side of the weights: turn the store's HF cache and its manifest into the OCI
artifact in the site registry (one raw layer per file, the manifest as config), so each site reads
the Hub once and its nodes read the registry. Used by the model_store module. Stdlib only.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import (
    BoundedRegistry, manifest_by_tag, push_blob, put_manifest)


class StoreError(RuntimeError):
    pass


def load_manifest(path: str, repo: str = "", revision: str = "") -> w.Manifest:
    with open(path, "rb") as fh:
        manifest = w.parse_manifest(fh.read())
    if (repo and manifest["repo"] != repo) or (revision and manifest["revision"] != revision):
        raise StoreError("%s describes %s@%s, not %s@%s: the download step wrote another revision"
                         % (path, manifest["repo"], manifest["revision"], repo, revision))
    return manifest


def pin_problem(digest: str, expected: str, repo: str, revision: str) -> str:
    if not expected or digest == expected:
        return ""
    return ("vllm_model_manifest_digest pins %s for %s@%s, but the store built %s from the files it downloaded: "
            "the file set differs (include/exclude patterns, or the pin is for another revision); fix the "
            "patterns, or set the pin to %s if these files are the ones you want"
            % (expected, repo, revision, digest, digest))


def query(reg: BoundedRegistry, repo: str, revision: str) -> Dict[str, Any]:
    found = manifest_by_tag(reg, w.registry_repository(repo), revision)
    return {"present": found is not None, "digest": found[1] if found else ""}


def store_file(cache_dir: str, manifest: w.Manifest, f: Dict[str, Any]) -> str:
    """The store's copy of one file (the snapshot link resolved)."""
    return os.path.realpath(os.path.join(w.snapshot_dir(cache_dir, manifest["repo"], manifest["revision"]),
                                         f["path"]))


def verify_store(cache_dir: str, manifest: w.Manifest, files: Optional[List[Dict[str, Any]]] = None) -> List[str]:
    """One problem per store file that is missing or does not match the manifest (sha256, git sha1)."""
    problems = []
    for f in manifest["files"] if files is None else files:
        path = store_file(cache_dir, manifest, f)
        if not os.path.isfile(path):
            problems.append("%s: missing in the store (%s)" % (f["path"], path))
            continue
        size, sha256, sha1 = w.file_hashes(path, git=not f["lfs"])
        if size != f["size"]:
            problems.append("%s: %d bytes in the store, the manifest says %d" % (f["path"], size, f["size"]))
        elif sha256 != f["sha256"]:
            problems.append("%s: sha256 %s in the store, the manifest says %s" % (f["path"], sha256, f["sha256"]))
        elif not f["lfs"] and sha1 != f["etag"]:
            problems.append("%s: git sha1 %s in the store, the manifest says %s" % (f["path"], sha1, f["etag"]))
    return problems


def push(reg: BoundedRegistry, cache_dir: str, manifest: w.Manifest, expected_digest: str = "",
         dry_run: bool = False) -> Dict[str, Any]:
    """Push the artifact: every blob the registry lacks, the config, then the manifest under the revision tag.

    Where the tag already holds this very artifact nothing is read or hashed (the registry checked every
    blob's digest when it took it). Otherwise every store file is checked first."""
    repo, revision = manifest["repo"], manifest["revision"]
    rrepo = w.registry_repository(repo)
    config = w.canonical(manifest)
    oci = w.oci_manifest(manifest)
    digest = w.digest_of(oci)
    problem = pin_problem(digest, expected_digest, repo, revision)
    if problem:
        raise StoreError(problem)
    out = {"digest": digest, "repository": rrepo, "blobs": len(manifest["files"]) + 1,
           "bytes": 0, "uploaded": 0, "replaced": ""}
    found = manifest_by_tag(reg, rrepo, revision)
    if found is not None and found[1] == digest:
        return dict(out, changed=False)
    out["replaced"] = found[1] if found else ""
    problems = verify_store(cache_dir, manifest)
    if problems:
        raise StoreError("the store's copy of %s@%s does not match its manifest (download it again): %s"
                         % (repo, revision, "; ".join(problems)))
    todo = [("sha256:" + f["sha256"], f["size"], store_file(cache_dir, manifest, f)) for f in manifest["files"]]
    uploaded, moved = 0, 0
    seen = set()
    for blob, size, path in todo:
        if blob in seen:
            continue
        seen.add(blob)
        if dry_run:
            if not reg.blob_present(rrepo, blob):
                uploaded, moved = uploaded + 1, moved + size
            continue
        if push_blob(reg, rrepo, blob, size, path=path):
            uploaded, moved = uploaded + 1, moved + size
    config_digest = w.digest_of(config)
    if dry_run:
        if not reg.blob_present(rrepo, config_digest):
            uploaded, moved = uploaded + 1, moved + len(config)
        return dict(out, changed=True, uploaded=uploaded, bytes=moved)
    if push_blob(reg, rrepo, config_digest, len(config), data=config):
        uploaded, moved = uploaded + 1, moved + len(config)
    put_manifest(reg, rrepo, revision, oci, w.OCI_MANIFEST)
    return dict(out, changed=True, uploaded=uploaded, bytes=moved)


def swarm_blobs(cache_dir: str, manifest: w.Manifest) -> Dict[str, Any]:
    """{sha256: (path, size)} of the store's files the site's swarm can seed: each that the store holds whole in
    size (the nodes check the content; a blob they reject comes from the registry)."""
    blobs = {}
    for f in manifest["files"]:
        path = store_file(cache_dir, manifest, f)
        if os.path.isfile(path) and os.path.getsize(path) == f["size"]:
            blobs[f["sha256"]] = (path, f["size"])
    return blobs


__all__ = ["StoreError", "RegistryError", "load_manifest", "query", "push", "swarm_blobs", "verify_store"]
