# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's side of the weights: read the artifact from the site registry, fetch only what its HF
cache lacks (resumed with Range, hashed in the stream, renamed into place only when whole), link
the snapshot, write the record, prune old revisions. Used by the model_fetch module.

Stdlib only (runs on the nodes, Python 3.9).
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import (
    TRANSIENT, BoundedRegistry, manifest_by_tag, open_blob, read_blob)

# Reads of 4 MiB into one reused buffer: few Python-level iterations per GB, no per-chunk allocation.
READ_SIZE = 4 << 20
# Start the disk's writeback every 32 MiB written, so the fsync before the rename waits for the last
# window only and the disk writes while the network reads (Linux sync_file_range; no-op elsewhere).
WRITEBACK_WINDOW = 32 << 20


def _writeback_starter() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_SYNC_FILE_RANGE = _writeback_starter()
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to write [offset, offset+length) to disk now, without waiting for it."""
    if _SYNC_FILE_RANGE is not None:
        _SYNC_FILE_RANGE(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


class FetchError(RuntimeError):
    pass


# --- the artifact -------------------------------------------------------------------------------

def read_artifact(reg: BoundedRegistry, repo: str, revision: str, expected_digest: str = ""
                  ) -> Optional[Tuple[w.Manifest, str]]:
    """(manifest, manifest digest) of repo@revision in the site registry, or None when it has no such tag."""
    rrepo = w.registry_repository(repo)
    found = manifest_by_tag(reg, rrepo, revision)
    if found is None:
        return None
    body, digest = found
    if expected_digest and digest != expected_digest:
        raise FetchError("the site registry %s holds %s:%s with manifest digest %s, but vllm_model_manifest_digest "
                         "pins %s: the store built other files for this revision; check the include/exclude "
                         "patterns, or pin the digest the store built"
                         % (reg.base, rrepo, revision, digest, expected_digest))
    doc = json.loads(body)
    config = read_blob(reg, rrepo, doc["config"]["digest"])
    return w.check_artifact(body, config, repo, revision), digest


# --- the node's filesystem ----------------------------------------------------------------------

def fs_facts(path: str) -> Dict[str, Any]:
    """Free bytes and the mount of path (or its nearest existing parent)."""
    real = os.path.realpath(w.existing_parent(path))
    st = os.statvfs(real)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            mounts = w.parse_mountinfo(fh.read())
    except OSError:
        mounts = []
    point, fstype, ro = w.mount_of(real, mounts)
    # a read-only bind may only show in statvfs
    ro = ro or bool(st.f_flag & os.ST_RDONLY)
    return {"free_bytes": st.f_bavail * st.f_frsize, "mount": point, "fstype": fstype, "read_only": ro}


def problems_for(cache_root: str, manifest: w.Manifest, missing: int, margin: float, facts: Dict[str, Any]
                 ) -> List[str]:
    problems = []
    fs = w.fs_problem(cache_root, (facts["mount"], facts["fstype"], facts["read_only"]))
    if fs:
        problems.append(fs)
    space = w.space_problem(cache_root, missing, w.total_bytes(manifest), facts["free_bytes"], margin)
    if space:
        problems.append(space)
    return problems


# --- one blob -----------------------------------------------------------------------------------

def _hash_prefix(path: str, size: int, hashes: List[Any], buf: bytearray) -> None:
    view = memoryview(buf)
    with open(path, "rb") as fh:
        left = size
        while left:
            n = fh.readinto(view[:min(left, len(buf))])
            if not n:
                break
            for h in hashes:
                h.update(view[:n])
            left -= n


def fetch_blob(reg: BoundedRegistry, cache_root: str, repo: str, f: Dict[str, Any], retries: int = 3,
               backoff: float = 0.5) -> int:
    """Fetch one file's blob into blobs/<etag>; the bytes moved over the network.

    The partial lives in blobs/<etag>.incomplete; a broken transfer resumes from its end with a Range
    request (its bytes are hashed first). Only a whole, checked file is renamed to its final name."""
    blob = w.blob_path(cache_root, repo, f["etag"])
    partial = blob + w.INCOMPLETE
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    rrepo, digest, size = w.registry_repository(repo), "sha256:" + f["sha256"], f["size"]
    buf = bytearray(READ_SIZE)
    view = memoryview(buf)
    moved, last = 0, ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * (2 ** (attempt - 1)))
        have = os.path.getsize(partial) if os.path.isfile(partial) else 0
        if have > size:
            have = 0
        sha256 = hashlib.sha256()
        sha1 = None if f["lfs"] else w.git_sha1_start(size)
        hashes = [h for h in (sha256, sha1) if h is not None]
        if have:
            _hash_prefix(partial, have, hashes, buf)
        resp = open_blob(reg, rrepo, digest, have) if have < size else None
        if resp is None and have < size:
            raise FetchError("the site registry %s has no blob %s (%s) in %s" % (reg.base, digest, f["path"], rrepo))
        if resp is not None and have and resp.status != 206:
            # the server ignored the Range: start over
            have = 0
            sha256 = hashlib.sha256()
            sha1 = None if f["lfs"] else w.git_sha1_start(size)
            hashes = [h for h in (sha256, sha1) if h is not None]
        try:
            with open(partial, "r+b" if have else "wb") as out:
                out.seek(have)
                out.truncate()
                flushed = have
                while resp is not None:
                    n = resp.readinto(view)
                    if not n:
                        break
                    chunk = view[:n]
                    for h in hashes:
                        h.update(chunk)
                    out.write(chunk)
                    have += n
                    moved += n
                    if have > size:
                        break
                    if have - flushed >= WRITEBACK_WINDOW:
                        out.flush()
                        start_writeback(out.fileno(), flushed, have - flushed)
                        flushed = have
                out.flush()
                os.fsync(out.fileno())
        except TRANSIENT as exc:
            last = "transfer broke at byte %d: %s" % (have, exc)
            continue
        finally:
            if resp is not None:
                resp.close()
        if have != size:
            last = "the registry sent %d of %d bytes" % (have, size)
            if have > size:
                os.unlink(partial)
            continue
        if sha256.hexdigest() != f["sha256"] or (sha1 is not None and sha1.hexdigest() != f["etag"]):
            os.unlink(partial)  # never resume from bad bytes
            last = "the content does not match its sha256%s" % ("" if f["lfs"] else " or git sha1")
            continue
        os.rename(partial, blob)
        return moved
    raise FetchError("fetching %s (%s, %d bytes) from %s failed after %d tries: %s"
                     % (f["path"], digest, size, reg.base, retries + 1, last))


# --- the snapshot, the record, pruning ----------------------------------------------------------

def link_snapshot(cache_root: str, manifest: w.Manifest, links: List[Dict[str, Any]]) -> None:
    snap = w.snapshot_dir(cache_root, manifest["repo"], manifest["revision"])
    os.makedirs(os.path.join(w.repo_dir(cache_root, manifest["repo"]), "refs"), exist_ok=True)
    for link in links:
        where = os.path.join(snap, link["path"])
        os.makedirs(os.path.dirname(where), exist_ok=True)
        if os.path.isdir(where) and not os.path.islink(where):
            shutil.rmtree(where)
        elif os.path.lexists(where):
            os.unlink(where)
        tmp = where + ".inferops-tmp"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(w.link_target(link["path"], link["etag"]), tmp)
        os.rename(tmp, where)


def read_record(path: str) -> Optional[Dict[str, Any]]:
    """model.json, or None (none yet, or a torn or foreign file: rewritten on the next verified fetch)."""
    return node_record.read(path)


def write_record(path: str, record: Dict[str, Any]) -> None:
    """Whole or not at all, 0644 (node_record.write); model.json is indented by 2."""
    node_record.write(path, record, indent=2)


def _snapshot_targets(snap: str) -> List[str]:
    names = []
    for dirpath, _dirs, files in os.walk(snap):
        names += [os.path.basename(os.readlink(os.path.join(dirpath, n))) for n in files
                  if os.path.islink(os.path.join(dirpath, n))]
    return names


def prune(cache_root: str, repo: str, record: Dict[str, Any], keep: int, dry_run: bool = False) -> Dict[str, Any]:
    """Remove snapshots beyond keep (never current or previous) and the blobs no kept snapshot links to."""
    base = w.repo_dir(cache_root, repo)
    snaps_dir = os.path.join(base, "snapshots")
    snaps = {n: os.stat(os.path.join(snaps_dir, n)).st_mtime for n in os.listdir(snaps_dir)} \
        if os.path.isdir(snaps_dir) else {}
    drop = w.prune_selection(snaps, record, keep)
    kept: List[str] = []
    for rev in snaps:
        if rev not in drop:
            kept += _snapshot_targets(os.path.join(snaps_dir, rev))
    blobs_dir = os.path.join(base, "blobs")
    blobs = w.unreferenced_blobs(os.listdir(blobs_dir) if os.path.isdir(blobs_dir) else [], kept)
    freed = sum(os.path.getsize(os.path.join(blobs_dir, b)) for b in blobs)
    if not dry_run:
        for rev in drop:
            shutil.rmtree(os.path.join(snaps_dir, rev))
            shutil.rmtree(os.path.join(base, ".no_exist", rev), ignore_errors=True)
        for b in blobs:
            os.unlink(os.path.join(blobs_dir, b))
        refs = os.path.join(base, "refs")
        for ref in os.listdir(refs) if os.path.isdir(refs) else []:
            with open(os.path.join(refs, ref), encoding="utf-8") as fh:
                if fh.read().strip() in drop:
                    os.unlink(os.path.join(refs, ref))
    return {"revisions": drop, "blobs": len(blobs), "bytes": freed}


class _Lock:
    """One writer per repo cache on a node (two plays, or a play and a hand-run fetch)."""

    def __init__(self, cache_root: str, repo: str):
        locks = os.path.join(cache_root, ".locks")
        os.makedirs(locks, exist_ok=True)
        self.path = os.path.join(locks, "inferops-" + os.path.basename(w.repo_dir(cache_root, repo)) + ".lock")
        self.fh = None

    def __enter__(self):
        self.fh = open(self.path, "a")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


# --- the module's states ------------------------------------------------------------------------

def _missing_files(plan: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{"path": f["path"], "size": f["size"], "reason": f["reason"], "resume_from": f["resume"]}
            for f in plan["fetch"]]


def check(reg: BoundedRegistry, repo: str, revision: str, cache_root: str, record_path: str, verify: str = "size",
          margin: float = 5, expected_digest: str = "", retry_failed: bool = False) -> Dict[str, Any]:
    """Read-only: what this node lacks, whether it fits, and whether its record is current."""
    record = read_record(record_path)
    facts = fs_facts(cache_root)
    refused = [r for r in (w.failed_refusal(record, repo, revision, retry_failed),) if r]
    out: Dict[str, Any] = {"free_bytes": facts["free_bytes"], "fstype": facts["fstype"], "mount": facts["mount"],
                           "record_current": (record or {}).get("current"), "up_to_date": False}
    found = read_artifact(reg, repo, revision, expected_digest)
    if found is None:
        return dict(out, digest="", missing_files=None, missing_bytes=None, links_missing=None,
                    problems=refused + ["the site registry %s has no %s:%s yet: run the store step first"
                                        % (reg.base, w.registry_repository(repo), revision)])
    manifest, digest = found
    plan = w.plan_fetch(cache_root, manifest, verify)
    complete = not (plan["fetch"] or plan["link"] or plan["remove"])
    return dict(out, digest=digest, missing_files=_missing_files(plan), missing_bytes=plan["missing_bytes"],
                links_missing=len(plan["link"]), total_bytes=w.total_bytes(manifest),
                problems=refused + problems_for(cache_root, manifest, plan["missing_bytes"], margin, facts),
                up_to_date=complete and w.is_current(record, repo, revision, digest))


def rolled_back(record_path: str, failed_revision: str, back_to: str, dry_run: bool = False) -> Dict[str, Any]:
    """The record after a rollout took the node back to back_to: that revision current again, failed_revision
    failed (check then refuses it unless retried on purpose)."""
    record = read_record(record_path)
    if record is None:
        return {"changed": False, "record": None}
    after = w.record_after_rollback(record, failed_revision, back_to)
    changed = after != record
    if changed and not dry_run:
        write_record(record_path, after)
    return {"changed": changed, "record": after}


def present(reg: BoundedRegistry, repo: str, revision: str, cache_root: str, record_path: str,
            verify: str = "size", margin: float = 5, keep: int = 2, concurrency: int = 4, retries: int = 3,
            expected_digest: str = "", dry_run: bool = False, retry_failed: bool = False) -> Dict[str, Any]:
    """Make the cache hold repo@revision, verified, and the record say so. dry_run reports only."""
    started = time.monotonic()
    record = read_record(record_path)
    refusal = w.failed_refusal(record, repo, revision, retry_failed)
    if refusal:
        raise FetchError(refusal)
    found = read_artifact(reg, repo, revision, expected_digest)
    if found is None:
        raise FetchError("the site registry %s has no %s:%s: run the store step (model_store) first"
                         % (reg.base, w.registry_repository(repo), revision))
    manifest, digest = found
    facts = fs_facts(cache_root)
    plan = w.plan_fetch(cache_root, manifest, verify)
    problems = problems_for(cache_root, manifest, plan["missing_bytes"], margin, facts)
    if problems:
        raise FetchError("; ".join(problems))
    entry = {"repo": repo, "revision": revision, "manifest": digest, "bytes": w.total_bytes(manifest),
             "files": len(manifest["files"]), "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    record_changes = not w.is_current(record, repo, revision, digest)
    new_record = w.record_after(record, entry) if record_changes else record
    out = {"digest": digest, "missing_files": _missing_files(plan), "fetched_files": len(plan["fetch"]),
           "fetched_bytes": plan["missing_bytes"], "linked": len(plan["link"]), "removed": plan["remove"]}
    if dry_run:
        pruned = prune(cache_root, repo, new_record, keep, dry_run=True) if os.path.isdir(
            w.repo_dir(cache_root, repo)) else {"revisions": [], "blobs": 0, "bytes": 0}
        changed = bool(plan["fetch"] or plan["link"] or plan["remove"] or record_changes
                       or pruned["revisions"] or pruned["blobs"])
        return dict(out, changed=changed, pruned=pruned, record=new_record, seconds=0.0, throughput_mbps=0.0)
    with _Lock(cache_root, repo):
        for path in plan["remove"]:
            if os.path.lexists(path):
                os.unlink(path)
        moved = 0
        if plan["fetch"]:
            with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
                moved = sum(pool.map(lambda f: fetch_blob(reg, cache_root, repo, f, retries), plan["fetch"]))
        link_snapshot(cache_root, manifest, plan["link"])
        # what was fetched was checked in the stream; the rest was checked by plan_fetch
        after = w.plan_fetch(cache_root, manifest, "size")
        if after["fetch"] or after["link"]:
            raise FetchError("the cache still lacks %d files and %d links after the fetch"
                             % (len(after["fetch"]), len(after["link"])))
        if record_changes:
            write_record(record_path, new_record)
        pruned = prune(cache_root, repo, new_record, keep)
    seconds = time.monotonic() - started
    changed = bool(plan["fetch"] or plan["link"] or plan["remove"] or record_changes
                   or pruned["revisions"] or pruned["blobs"])
    return dict(out, changed=changed, fetched_bytes=moved, pruned=pruned, record=new_record,
                seconds=round(seconds, 3), throughput_mbps=round(moved / 1e6 / seconds, 1) if seconds else 0.0)


def verified(repo: str, revision: str, cache_root: str, record_path: str, verify: str = "size") -> Dict[str, Any]:
    """Read-only, no registry (a shared filesystem filled elsewhere): the snapshot is whole."""
    result = w.verify_snapshot(cache_root, repo, revision, full=verify == "full")
    record = read_record(record_path)
    return dict(result, record_current=(record or {}).get("current"))


__all__ = ["FetchError", "RegistryError", "check", "present", "rolled_back", "verified", "fetch_blob", "read_artifact"]
