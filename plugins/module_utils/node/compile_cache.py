# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site compile cache on a node: share the vLLM cache root of a node whose cluster has proven that it serves,
and hand it to a node of the same key before that node starts.

One OCI artifact per key in the site registry (repository REPOSITORY, tag = the key the plan computed from the image
digest, the GPU model, the node's rank and the launch): config = what the key was made of and what the archive holds,
one layer = the cache root as a gzip'd tar. Every cache inside the root keeps its own finer key (vLLM's config hash,
Inductor's source hashes), so a file restored here is used only where it matches, and recomputed otherwise.

Runs as root on the node, against a cache root other software writes (vLLM, its compilers): it opens every
directory and file with O_NOFOLLOW relative to its parent, packs regular files and directories only, restores
only into names that do not exist (never replacing a file), refuses archive members outside the root, and bounds
bytes, files and time. A missing, foreign or broken artifact never stops a start: the restore says why it skipped,
and the node compiles as it would have. Stdlib only (Python 3.9).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import time
import zlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import (
    CHUNK, OCI_MANIFEST, TRANSIENT, BoundedRegistry, manifest_by_tag, one_line, open_blob, push_blob, put_manifest,
    read_blob)

REPOSITORY = "inferops-vllm/compile-cache"
ARTIFACT_TYPE = "application/vnd.inferops.vllm.compile-cache.v1"
CONFIG_TYPE = "application/vnd.inferops.vllm.compile-cache.config.v1+json"
LAYER_TYPE = "application/vnd.inferops.vllm.compile-cache.v1.tar+gzip"
# Names of the collection's own at the top of the cache root: the record and temporary files, never packed,
# never restored over.
OWN_PREFIX = ".inferops-"
RECORD = OWN_PREFIX + "site-cache.json"
RECORD_BYTES = 1 << 20   # KEEP_KEYS keys take a few kB
KEEP_KEYS = 8          # keys remembered in the record
MAX_DEPTH = 64
MAX_FILES = 1000000
FREE_MARGIN = 1 << 30  # left free on the cache's filesystem after a restore
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Skipped(Exception):
    """The cache was not shared or not restored, for the reason in the message (one line); the start goes on."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def open_root(path: str) -> int:
    """The cache root's directory fd, not following a link in its place."""
    try:
        return os.open(path, DIR_FLAGS)
    except OSError as exc:
        raise Skipped("cannot open the cache root %s: %s (vllm_serve creates it, mode 0700; a link there is refused)"
                      % (path, exc.strerror or exc))


# ----------------------------------------------------------------------------------------------------------------
# the record: which keys this cache root holds from the site, or gave to it

def read_record(root_fd: int) -> Dict[str, Any]:
    """The cache root's record (node_record.read, never through a link, at most RECORD_BYTES: vLLM writes in this
    folder); {"keys": {}} where there is none."""
    try:
        doc = node_record.read(RECORD, dir_fd=root_fd, limit=RECORD_BYTES) or {}
    except OSError:
        doc = {}
    keys = doc.get("keys")
    return {"keys": {k: v for k, v in keys.items() if isinstance(v, dict)}} if isinstance(keys, dict) else {"keys": {}}


def write_record(root_fd: int, record: Dict[str, Any]) -> None:
    """node_record.write inside the root, its temporary file under the collection's own prefix (never packed): a
    reader sees the old record or the new one. The oldest keys past KEEP_KEYS are forgotten."""
    keys = sorted(record["keys"].items(), key=lambda kv: str(kv[1].get("at", "")))[-KEEP_KEYS:]
    node_record.write(RECORD, {"keys": dict(keys)}, dir_fd=root_fd, tmp="%srecord.%d" % (OWN_PREFIX, os.getpid()))


def _unlink_own(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def held(cache_dir: str, key: str) -> Optional[str]:
    """How the cache root holds the site cache of key, from its record: restored (taken from the site), collected
    (compiled here and shared), present (compiled here; another node shared first), or None."""
    try:
        fd = os.open(cache_dir, DIR_FLAGS)
    except OSError:
        return None
    try:
        return read_record(fd)["keys"].get(key, {}).get("state")
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------------------------------------------
# packing: the cache root as a tar stream, regular files and directories only

def walk(root_fd: int) -> Iterator[Tuple[str, int, str, os.stat_result]]:
    """(relative path, parent dir fd, name, lstat) for each directory and regular file under the root, parents
    first; links, sockets, devices and the collection's own files are left out. Fds are closed when done."""
    stack: List[Tuple[int, str, int]] = [(os.dup(root_fd), "", 0)]
    try:
        while stack:
            fd, rel, depth = stack.pop()
            try:
                names = sorted(os.listdir(fd))
                subdirs = []
                for name in names:
                    if not rel and name.startswith(OWN_PREFIX):
                        continue
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    path = rel + "/" + name if rel else name
                    if stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
                        yield path, fd, name, st
                        subdirs.append((name, path))
                    elif stat.S_ISREG(st.st_mode):
                        yield path, fd, name, st
                for name, path in reversed(subdirs):
                    try:
                        stack.append((os.open(name, DIR_FLAGS, dir_fd=fd), path, depth + 1))
                    except OSError:
                        continue   # replaced by a link or removed meanwhile
            finally:
                os.close(fd)
    finally:
        for fd, _rel, _depth in stack:
            os.close(fd)


class _Hashing(io.RawIOBase):
    """A write-only stream that hashes and counts what passes to fh."""

    def __init__(self, fh) -> None:
        super().__init__()
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha.update(data)
        self.size += len(data)
        self.fh.write(data)
        return len(data)


def pack(root_fd: int, out, deadline: float) -> Dict[str, Any]:
    """Write the root as tar+gzip to the binary file out; {digest, size, files, bytes}. Raises Skipped past the
    deadline or where a file changes under the read."""
    sink = _Hashing(out)
    files = total = 0
    with gzip.GzipFile(fileobj=sink, mode="wb", compresslevel=1, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for path, dir_fd, name, st in walk(root_fd):
                if time.monotonic() > deadline:
                    raise Skipped("packing the cache took longer than its timeout (%d files so far)" % files)
                info = tarfile.TarInfo(path)
                info.mtime, info.uid, info.gid = int(st.st_mtime), 0, 0
                if stat.S_ISDIR(st.st_mode):
                    info.type, info.mode = tarfile.DIRTYPE, 0o700
                    tar.addfile(info)
                    continue
                try:
                    fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
                except OSError:
                    continue
                with os.fdopen(fd, "rb") as fh:
                    now = os.fstat(fh.fileno())
                    if not stat.S_ISREG(now.st_mode):
                        continue
                    info.size, info.mode = now.st_size, now.st_mode & 0o755
                    try:
                        tar.addfile(info, fh)
                    except OSError as exc:
                        raise Skipped("%s changed while it was packed (%s): share again on the next run" % (path, exc))
                files, total = files + 1, total + now.st_size
    return {"digest": "sha256:" + sink.sha.hexdigest(), "size": sink.size, "files": files, "bytes": total}


def has_files(root_fd: int) -> bool:
    return any(stat.S_ISREG(st.st_mode) for _p, _fd, _n, st in walk(root_fd))


# ----------------------------------------------------------------------------------------------------------------
# restoring: members checked one by one, written only where nothing is

def member_parts(name: str) -> Optional[List[str]]:
    """The path components of an archive member that stays inside the root, or None: no absolute path, no '.',
    '..' or empty part, no control or format character, no part past 255 bytes, no name of the collection's own
    at the top, at most MAX_DEPTH deep."""
    if not isinstance(name, str) or not name or name.startswith("/"):
        return None
    parts = name.rstrip("/").split("/")
    if len(parts) > MAX_DEPTH + 1:
        return None
    for part in parts:
        if part in ("", ".", "..") or len(part.encode("utf-8", "surrogateescape")) > 255:
            return None
        if any(not ch.isprintable() for ch in part):
            return None
    if parts[0].startswith(OWN_PREFIX):
        return None
    return parts


def _open_dirs(root_fd: int, parts: List[str], opened: Dict[Tuple[str, ...], int]) -> int:
    """The fd of root/parts..., made (0700) where missing; OSError where a part is not a real directory."""
    fd = root_fd
    for i in range(len(parts)):
        key = tuple(parts[:i + 1])
        if key not in opened:
            try:
                os.mkdir(parts[i], 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            opened[key] = os.open(parts[i], DIR_FLAGS, dir_fd=fd)
        fd = opened[key]
    return fd


def extract(root_fd: int, archive, limit_bytes: int, limit_files: int, deadline: float) -> Dict[str, int]:
    """Add the archive's (a binary tar+gzip file) files to the root where no file of that name exists.

    {files, bytes, kept, refused}: written, bytes written, already there (kept as they are), and members refused
    (outside the root, a link or device, a directory that is a link on the node). Raises Skipped past a bound."""
    counts = {"files": 0, "bytes": 0, "kept": 0, "refused": 0}
    opened: Dict[Tuple[str, ...], int] = {}
    try:
        with gzip.GzipFile(fileobj=archive, mode="rb") as gz, tarfile.open(fileobj=gz, mode="r|") as tar:
            for member in tar:
                if time.monotonic() > deadline:
                    raise Skipped("restoring took longer than its timeout (%d files so far)" % counts["files"])
                parts = member_parts(member.name)
                if parts is None or not (member.isdir() or member.isreg()):
                    counts["refused"] += 1
                    continue
                try:
                    if member.isdir():
                        _open_dirs(root_fd, parts, opened)
                        continue
                    parent = _open_dirs(root_fd, parts[:-1], opened)
                except OSError:
                    counts["refused"] += 1
                    continue
                if counts["files"] + 1 > limit_files or counts["bytes"] + member.size > limit_bytes:
                    raise Skipped("the archive holds more than its config says (%d files, %d bytes)"
                                  % (limit_files, limit_bytes))
                if _exists(parent, parts[-1]):
                    counts["kept"] += 1
                    continue
                _write_member(parent, parts[-1], tar.extractfile(member), member)
                counts["files"] += 1
                counts["bytes"] += member.size
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise Skipped("the archive does not read as tar+gzip: %s" % one_line(str(exc)))
    finally:
        for fd in opened.values():
            os.close(fd)
    return counts


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def _write_member(dir_fd: int, name: str, src, member: tarfile.TarInfo) -> None:
    """The member under a temporary name of the collection's own, then renamed into place: a cut restore leaves
    no half-written file under a name a compiler reads."""
    tmp = "%spart.%d" % (OWN_PREFIX, os.getpid())
    _unlink_own(dir_fd, tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as out:
            left = member.size
            while left > 0:
                chunk = src.read(min(CHUNK, left))
                if not chunk:
                    raise Skipped("the archive ends inside %s" % member.name)
                out.write(chunk)
                left -= len(chunk)
            os.fchmod(out.fileno(), (member.mode & 0o755) | 0o600)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_own(dir_fd, tmp)
        raise


# ----------------------------------------------------------------------------------------------------------------
# the registry side

def oci_manifest(config: bytes, layer_digest: str, layer_size: int) -> bytes:
    return w.canonical({
        "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": ARTIFACT_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": w.digest_of(config),
                   "size": len(config)},
        "layers": [{"mediaType": LAYER_TYPE, "digest": layer_digest, "size": layer_size}],
    })


def find(reg: BoundedRegistry, key: str) -> Optional[Dict[str, Any]]:
    """The artifact under the key's tag: {manifest_digest, config, layer}, or None where there is none.
    Skipped where what the tag holds is not a compile cache of this key."""
    found = manifest_by_tag(reg, REPOSITORY, key)
    if found is None:
        return None
    body, manifest_digest = found
    try:
        doc = json.loads(body.decode("utf-8"))
        config_ref, layers = doc["config"], doc["layers"]
        ok = (doc.get("artifactType") == ARTIFACT_TYPE and config_ref.get("mediaType") == CONFIG_TYPE
              and isinstance(layers, list) and len(layers) == 1 and layers[0].get("mediaType") == LAYER_TYPE
              and isinstance(layers[0].get("size"), int) and str(layers[0].get("digest", "")).startswith("sha256:"))
    except (ValueError, KeyError, TypeError, AttributeError):
        ok = False
    if not ok:
        raise Skipped("%s:%s in %s is not a compile cache artifact" % (REPOSITORY, key, reg.base))
    config = json.loads(read_blob(reg, REPOSITORY, config_ref["digest"]).decode("utf-8"))
    if not isinstance(config, dict) or config.get("key") != key:
        raise Skipped("%s:%s in %s was made for key %r: a different key never reuses a cache"
                      % (REPOSITORY, key, reg.base, config.get("key") if isinstance(config, dict) else None))
    return {"manifest_digest": manifest_digest, "config": config, "layer": layers[0]}


def download(reg: BoundedRegistry, digest: str, size: int, out, deadline: float) -> None:
    """The layer into the binary file out, checked against its size and sha256."""
    resp = open_blob(reg, REPOSITORY, digest)
    if resp is None:
        raise Skipped("%s lacks the blob %s its manifest names" % (reg.base, digest))
    sha, got = hashlib.sha256(), 0
    try:
        with resp:
            while True:
                chunk = resp.read(CHUNK)
                if not chunk:
                    break
                got += len(chunk)
                if got > size:
                    raise Skipped("%s sent more than the %d bytes of %s" % (reg.base, size, digest))
                if time.monotonic() > deadline:
                    raise Skipped("fetching %s from %s took longer than its timeout (%d of %d bytes)"
                                  % (digest, reg.base, got, size))
                sha.update(chunk)
                out.write(chunk)
    except TRANSIENT as exc:
        raise Skipped("%s broke off sending %s: %s" % (reg.base, digest, one_line(str(exc))))
    if got != size or "sha256:" + sha.hexdigest() != digest:
        raise Skipped("%s sent %s with other content (%d bytes of %d)" % (reg.base, digest, got, size))


def _temp(root_fd: int, what: str):
    name = "%s%s.%d" % (OWN_PREFIX, what, os.getpid())
    _unlink_own(root_fd, name)
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=root_fd)
    return name, os.fdopen(fd, "w+b")


def _chunks(fh) -> Iterator[bytes]:
    """The temporary file from its start, for each try of the upload."""
    fh.seek(0)
    yield from iter(lambda: fh.read(CHUNK), b"")


def free_bytes(root_fd: int) -> int:
    st = os.fstatvfs(root_fd)
    return st.f_bavail * st.f_frsize


def restore(reg: BoundedRegistry, root_fd: int, key: str, timeout: float, check_mode: bool) -> Dict[str, Any]:
    """Put the site's cache for key into the root. {changed, restored, reason, ...}; Skipped on any fault."""
    record = read_record(root_fd)
    if key in record["keys"]:
        return {"changed": False, "restored": False,
                "reason": "this cache root already holds the site's cache for this key (%s)"
                          % record["keys"][key].get("state", "recorded")}
    deadline = time.monotonic() + timeout
    found = find(reg, key)
    if found is None:
        return {"changed": False, "restored": False,
                "reason": "the site registry has no compile cache for this key yet: this node compiles, and the "
                          "cluster's first proven start shares it"}
    layer, config = found["layer"], found["config"]
    want_bytes, want_files = int(config.get("bytes", 0)), int(config.get("files", 0))
    free = free_bytes(root_fd)
    if free < layer["size"] + want_bytes + FREE_MARGIN:
        raise Skipped("the cache root's filesystem has %d MiB free; the site cache needs %d MiB and 1 GiB to spare"
                      % (free >> 20, (layer["size"] + want_bytes) >> 20))
    out = {"changed": True, "restored": True, "digest": found["manifest_digest"], "from": config.get("host", ""),
           "archive_bytes": layer["size"], "bytes": want_bytes, "files": want_files}
    if check_mode:
        return out
    name, fh = _temp(root_fd, "download")
    try:
        with fh:
            download(reg, layer["digest"], layer["size"], fh, deadline)
            fh.seek(0)
            counts = extract(root_fd, fh, want_bytes, want_files, deadline)
    finally:
        _unlink_own(root_fd, name)
    out.update(files=counts["files"], bytes=counts["bytes"], kept=counts["kept"], refused=counts["refused"])
    record["keys"][key] = {"state": "restored", "digest": found["manifest_digest"], "at": _now(),
                           "files": counts["files"]}
    write_record(root_fd, record)
    return out


def collect(reg: BoundedRegistry, root_fd: int, key: str, inputs: Dict[str, Any], host: str, timeout: float,
            check_mode: bool) -> Dict[str, Any]:
    """Share the root as the site's cache for key, unless the registry has one. {changed, shared, reason, ...}."""
    record = read_record(root_fd)
    if key in record["keys"]:
        return {"changed": False, "shared": False,
                "reason": "the site registry has this key's cache (%s here)" % record["keys"][key].get("state")}
    if not has_files(root_fd):
        return {"changed": False, "shared": False, "reason": "the cache root is empty: nothing compiled to share"}
    found = manifest_by_tag(reg, REPOSITORY, key)
    if found is not None:
        if not check_mode:
            record["keys"][key] = {"state": "present", "digest": found[1], "at": _now()}
            write_record(root_fd, record)
        return {"changed": True, "shared": False, "digest": found[1],
                "reason": "another node of this key shared its cache first"}
    if check_mode:
        return {"changed": True, "shared": True, "reason": "would share this node's cache"}
    deadline = time.monotonic() + timeout
    name, fh = _temp(root_fd, "pack")
    try:
        with fh:
            packed = pack(root_fd, fh, deadline)
            fh.flush()
            config = w.canonical({"schema": ARTIFACT_TYPE, "key": key, "inputs": inputs, "host": host,
                                 "collected_at": _now(), "files": packed["files"], "bytes": packed["bytes"]})
            push_blob(reg, REPOSITORY, packed["digest"], packed["size"], chunks=lambda: _chunks(fh))
        push_blob(reg, REPOSITORY, w.digest_of(config), len(config), data=config)
        digest = put_manifest(reg, REPOSITORY, key, oci_manifest(config, packed["digest"], packed["size"]))
    finally:
        _unlink_own(root_fd, name)
    record["keys"][key] = {"state": "collected", "digest": digest, "at": _now(), "files": packed["files"]}
    write_record(root_fd, record)
    return {"changed": True, "shared": True, "digest": digest, "files": packed["files"], "bytes": packed["bytes"],
            "archive_bytes": packed["size"]}


def run(state: str, registry: str, cache_dir: str, key: str, inputs: Dict[str, Any], host: str, timeout: float,
        retries: int, check_mode: bool) -> Dict[str, Any]:
    """The module's one call. Never raises for a cache fault: {changed: false, skipped: reason} instead."""
    reg = BoundedRegistry(registry, timeout=min(60.0, timeout), retries=retries)
    try:
        if check_mode and not os.path.lexists(cache_dir):
            # the run makes the cache root: empty, so a restore would take whatever the registry holds
            found = find(reg, key) if state == "restored" else None
            return {"changed": found is not None, "restored": found is not None,
                    "reason": "the cache root does not exist yet"}
        root_fd = open_root(cache_dir)
        try:
            if state == "restored":
                return restore(reg, root_fd, key, timeout, check_mode)
            return collect(reg, root_fd, key, inputs, host, timeout, check_mode)
        finally:
            os.close(root_fd)
    except (Skipped, RegistryError, OSError, ValueError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror and not str(exc) else str(exc)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            detail = "the cache root's filesystem is full: " + detail
        return {"changed": False, "skipped": "%s the site compile cache of %s: %s"
                % ("did not restore" if state == "restored" else "did not share", cache_dir, one_line(detail, 400))}
