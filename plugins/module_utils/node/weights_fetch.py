# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's side of the weights: read the artifact from the site registry, fetch only what its HF
cache lacks (resumed with Range, hashed in the stream, renamed into place only when whole), link
the snapshot, write the record, prune old revisions. Used by the model_fetch module.

Stdlib only (runs on the nodes, Python 3.9).
"""

from __future__ import annotations

import collections
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
from ansible_collections.inferops.vllm.plugins.module_utils.node import p2p as bt
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import (
    TRANSIENT, BoundedRegistry, RegistryAnswered, manifest_by_tag, one_line, open_blob, read_blob)

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


# The whole-blob bound: a transfer slower than MIN_RATE_MBPS over RATE_WINDOW seconds (after a first
# window of grace) fails; each read's timeout alone lets a store that trickles a byte at a time live forever.
MIN_RATE_MBPS = 1.0
RATE_WINDOW = 60.0
# How long a run waits for another run's fetch on the same cache (one writer per repo cache).
LOCK_TIMEOUT = 3600.0
# Directories are opened without following a link; files are created without following one and without
# blocking on a fifo a hostile cache may hold.
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
O_FILE = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
CONTENT_RANGE = re.compile(r"\Abytes (\d+)-(\d+)/(\d+|\*)\Z")


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
    try:
        config_digest = json.loads(body)["config"]["digest"]
    except (ValueError, KeyError, TypeError) as exc:
        raise FetchError("the site registry %s serves %s:%s as no OCI manifest (%s): run the store step "
                         "(model_store) again" % (reg.base, rrepo, revision, one_line(str(exc))))
    if not isinstance(config_digest, str) or not w.DIGEST.fullmatch(config_digest):
        raise FetchError("the site registry %s serves %s:%s with config digest %r: run the store step "
                         "(model_store) again" % (reg.base, rrepo, revision, config_digest))
    config = read_blob(reg, rrepo, config_digest)
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


# --- the cache's directories, never through a link -----------------------------------------------

def lstat_at(dir_fd: int, name: str) -> Optional[os.stat_result]:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def remove_entry(dir_fd: int, name: str) -> None:
    """Remove name in dir_fd whatever it is: a link goes itself (never its target), a directory with all
    it holds (opened without following, so a link inside is removed, not entered)."""
    st = lstat_at(dir_fd, name)
    if st is None:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    fd = os.open(name, O_DIR, dir_fd=dir_fd)
    try:
        for child in os.listdir(fd):
            remove_entry(fd, child)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def open_dir(parent_fd: int, name: str) -> int:
    """The real directory name in parent_fd, opened without following a link. A link, file, fifo or device
    in its place is removed (the entry itself, never what a link points to) and a directory made there."""
    for _attempt in range(3):
        try:
            return os.open(name, O_DIR, dir_fd=parent_fd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            remove_entry(parent_fd, name)
        try:
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        except FileExistsError:
            pass
    return os.open(name, O_DIR, dir_fd=parent_fd)


def open_hub(cache_root: str) -> int:
    """cache_root/hub, the operator's (it may be a link to another disk on purpose): everything below it
    is the fetcher's and is never followed."""
    hub = os.path.join(cache_root, "hub")
    os.makedirs(hub, exist_ok=True)
    return os.open(hub, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


class CacheDirs:
    """The repo's directories (models--org--name, blobs/, snapshots/, snapshots/<rev>/, refs/) held open
    without following a link; one that is a link or no directory is replaced by an empty directory.
    Every write goes through these, so no link planted in the cache leads a write outside it."""

    def __init__(self, cache_root: str, repo: str, revision: str):
        self._fds: List[int] = []
        try:
            hub = self._keep(open_hub(cache_root))
            self.repo = self._keep(open_dir(hub, os.path.basename(w.repo_dir(cache_root, repo))))
            self.blobs = self._keep(open_dir(self.repo, "blobs"))
            self.snapshots = self._keep(open_dir(self.repo, "snapshots"))
            self.snapshot = self._keep(open_dir(self.snapshots, revision))
            self._keep(open_dir(self.repo, "refs"))
        except BaseException:
            self.close()
            raise

    def _keep(self, fd: int) -> int:
        self._fds.append(fd)
        return fd

    def close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def __enter__(self) -> "CacheDirs":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_blobs_dir(cache_root: str, repo: str) -> int:
    hub = open_hub(cache_root)
    try:
        repo_fd = open_dir(hub, os.path.basename(w.repo_dir(cache_root, repo)))
    finally:
        os.close(hub)
    try:
        return open_dir(repo_fd, "blobs")
    finally:
        os.close(repo_fd)


# --- one blob -----------------------------------------------------------------------------------

class TransferBounds:
    """The whole-blob bound: min_rate_mbps (10^6 bytes/s; 0 turns it off) averaged over window seconds."""

    def __init__(self, min_rate_mbps: float = MIN_RATE_MBPS, window: float = RATE_WINDOW):
        self.min_rate = max(0.0, float(min_rate_mbps)) * 1e6
        self.window = max(0.0, float(window))

    def effective_window(self) -> float:
        """The window, but at least four reads' time at the floor: progress is counted once per read."""
        return max(self.window, 4.0 * READ_SIZE / self.min_rate) if self.min_rate else 0.0


class RateGuard:
    """Ends a transfer whose average rate over the last window falls under the floor, after a first
    window of grace. A thread samples the bytes moved and, when too slow, shuts the socket down: that
    ends the read blocked in the main loop, which checks .rate_seen. The hot loop only adds to .progress."""

    def __init__(self, resp: Any, bounds: TransferBounds):
        self.progress = 0
        self.rate_seen: Optional[float] = None
        self.window = bounds.effective_window()
        self._floor = bounds.min_rate
        self._stop = threading.Event()
        self._sock: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None
        if not self._floor:
            return
        try:  # a dup of the connection's socket: shutting it down ends the blocked read, whatever fd reuse follows
            self._sock = socket.socket(fileno=os.dup(resp.fileno()))
        except (OSError, ValueError, AttributeError):
            return
        self._thread = threading.Thread(target=self._watch, name="inferops-rate-guard", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        started = time.monotonic()
        samples = collections.deque([(started, 0)])
        tick = min(1.0, self.window / 8)
        while not self._stop.wait(tick):
            now, moved = time.monotonic(), self.progress
            samples.append((now, moved))
            while len(samples) > 2 and samples[1][0] <= now - self.window:
                samples.popleft()
            since, before = samples[0]
            if now - started < self.window:
                continue
            rate = (moved - before) / max(now - since, 1e-6)
            if rate < self._floor:
                self.rate_seen = rate
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._sock is not None:
            self._sock.close()


class _Again(Exception):
    """This try failed in a way another try may mend (a broken transfer, bad bytes)."""


class _Transfer:
    """One blob into blobs/<etag>: the partial blobs/<etag>.incomplete is resumed with a Range request (its
    bytes hashed first), hashed as it streams, and renamed to its final name only when whole and checked.
    Files are opened relative to the blobs/ directory fd, without following a link."""

    def __init__(self, reg: BoundedRegistry, cache_root: str, repo: str, f: Dict[str, Any], blobs_fd: int,
                 bounds: TransferBounds):
        self.reg, self.f, self.blobs_fd, self.bounds = reg, f, blobs_fd, bounds
        self.rrepo, self.digest, self.size = w.registry_repository(repo), "sha256:" + f["sha256"], f["size"]
        self.name, self.partial = f["etag"], f["etag"] + w.INCOMPLETE
        self.where = w.blob_path(cache_root, repo, f["etag"]) + w.INCOMPLETE
        self.moved = 0
        self.flush_s = 0.0      # waited in flush and fsync: the disk's share of this blob's time
        self.from_zero = False  # after a 416 or a wrong range: the whole blob, once

    def failure(self, why: str, fix: str) -> FetchError:
        return FetchError(one_line("fetching %s (%s, %d bytes) from %s into %s failed: %s; %s"
                                   % (self.f["path"], self.digest, self.size, self.reg.base, self.where, why, fix),
                                   limit=2000))

    def run(self, retries: int, backoff: float) -> int:
        buf = bytearray(READ_SIZE)
        last = ""
        for attempt in range(retries + 1):
            if attempt:
                time.sleep(backoff * (2 ** (attempt - 1)))
            try:
                self._attempt(buf)
                return self.moved
            except _Again as again:
                last = str(again)
            except OSError as exc:  # the disk (space, I/O), not the network: another try would not mend it
                raise self.failure(one_line(str(exc)), "check the cache's disk (free space, errors, permissions)")
        raise self.failure("%d tries: %s" % (retries + 1, last),
                           "check the store's disk and the network to it, or raise retries")

    def _open_partial(self) -> Any:
        """The partial as a regular file opened without following a link; anything else there is removed first."""
        st = lstat_at(self.blobs_fd, self.partial)
        if st is not None and not stat.S_ISREG(st.st_mode):
            remove_entry(self.blobs_fd, self.partial)
        fd = os.open(self.partial, O_FILE, 0o644, dir_fd=self.blobs_fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self.failure("it is not a regular file", "remove it and re-run")
        return os.fdopen(fd, "r+b")

    def _hashes(self) -> List[Any]:
        return _hashers(self.f)

    def _attempt(self, buf: bytearray) -> None:
        with self._open_partial() as out:
            have = os.fstat(out.fileno()).st_size
            if have > self.size or self.from_zero:
                have = 0
            hashes = self._hashes()
            if have:
                _hash_prefix(out, have, hashes, buf)
            if have < self.size:
                resp, start = self._answer(have)
                if start != have:  # the store sends the whole blob: start over
                    have, hashes = start, self._hashes()
                try:
                    have = self._stream(resp, out, have, hashes, buf)
                finally:
                    resp.close()
            out.truncate(have)
            flushing = time.monotonic()
            out.flush()
            os.fsync(out.fileno())
            self.flush_s += time.monotonic() - flushing
        if have != self.size:
            raise _Again("the registry sent %d of %d bytes" % (have, self.size))
        if not _content_is(self.f, hashes):
            os.unlink(self.partial, dir_fd=self.blobs_fd)  # never resume from bad bytes
            raise _Again("the content does not match its sha256%s" % ("" if self.f["lfs"] else " or git sha1"))
        os.rename(self.partial, self.name, src_dir_fd=self.blobs_fd, dst_dir_fd=self.blobs_fd)

    def _answer(self, have: int) -> Tuple[Any, int]:
        """The registry's answer to a GET from have on, and the byte it starts at. A 416 or a range other
        than the one asked for (a store that lost it, a partial as long as the blob) discards the partial
        and asks for the whole blob, once; after that it is a failure."""
        while True:
            offset = 0 if self.from_zero else have
            try:
                resp = open_blob(self.reg, self.rrepo, self.digest, offset)
            except RegistryAnswered as exc:
                if exc.status == 416 and not self.from_zero:
                    self.from_zero = True
                    continue
                raise self._refused(exc, offset)
            except RegistryError as exc:
                raise self.failure(one_line(str(exc)), "check that the site registry runs and this node reaches it")
            if resp is None:
                raise self.failure("the registry has no such blob in %s" % self.rrepo,
                                   "run the store step (model_store) for this revision again")
            start, wrong = self._start_of(resp, offset)
            if not wrong:
                return resp, start
            resp.close()
            if self.from_zero:
                raise self.failure(wrong, "run the store step (model_store) again, or check a proxy between "
                                          "this node and the registry")
            self.from_zero = True

    def _refused(self, exc: RegistryAnswered, offset: int) -> FetchError:
        if exc.status == 416:
            return self.failure("the registry answered 416 (range not satisfiable) from byte %d, also for the "
                                "whole blob" % offset, "its copy of the blob is broken: run the store step "
                                "(model_store) again")
        return self.failure(one_line(str(exc)), "check the site registry's log and its access rules for this node")

    def _start_of(self, resp: Any, offset: int) -> Tuple[int, str]:
        """(byte the answer starts at, what is wrong with it or "")."""
        length = resp.headers.get("Content-Length")
        if resp.status == 200:
            if length is not None and length.strip() != str(self.size):
                return 0, "the registry sends %s bytes for a blob of %d" % (one_line(length, 40), self.size)
            return 0, ""
        if resp.status == 206:
            got = CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range") or "")
            if got and int(got.group(1)) == offset and int(got.group(2)) == self.size - 1 \
                    and got.group(3) in ("*", str(self.size)):
                return offset, ""
            return 0, "the registry answered a request from byte %d with Content-Range %r" % (
                offset, one_line(resp.headers.get("Content-Range") or "", 80))
        return 0, "the registry answered HTTP %d" % resp.status

    def _stream(self, resp: Any, out: Any, have: int, hashes: List[Any], buf: bytearray) -> int:
        """Read the answer into the partial from have on, hashing it; the bytes the partial then holds."""
        view = memoryview(buf)
        out.seek(have)
        out.truncate()
        flushed = have
        guard = RateGuard(resp, self.bounds)
        try:
            while True:
                n = resp.readinto(view)
                if not n:
                    break
                chunk = view[:n]
                for h in hashes:
                    h.update(chunk)
                out.write(chunk)
                have += n
                self.moved += n
                guard.progress += n
                if have > self.size:
                    break
                if have - flushed >= WRITEBACK_WINDOW:
                    out.flush()
                    start_writeback(out.fileno(), flushed, have - flushed)
                    flushed = have
        except TRANSIENT as exc:
            if guard.rate_seen is None:
                raise _Again("transfer broke at byte %d: %s" % (have, one_line(str(exc) or type(exc).__name__)))
        except OSError as exc:
            if guard.rate_seen is None:
                raise self.failure("at byte %d: %s" % (have, one_line(str(exc))),
                                   "check the cache's disk (space, errors) and the network to the registry")
        finally:
            guard.close()
        if guard.rate_seen is not None:
            raise self.failure("the registry sent %.0f bytes/s over the last %g s, under the floor of %g MB/s "
                               "(at byte %d)" % (guard.rate_seen, guard.window, self.bounds.min_rate / 1e6, have),
                               "check the store's disk and network, or lower model_fetch's min_rate_mbps "
                               "(0 turns the floor off) or raise its rate_window")
        if have > self.size:
            os.unlink(self.partial, dir_fd=self.blobs_fd)
            raise _Again("the registry sent more than %d bytes" % self.size)
        return have


def _hashers(f: Dict[str, Any]) -> List[Any]:
    """The hashes a blob of f is judged by: sha256, and for a file not in LFS its git sha1 (the etag)."""
    return [hashlib.sha256()] + ([] if f["lfs"] else [w.git_sha1_start(f["size"])])


def _content_is(f: Dict[str, Any], hashes: List[Any]) -> bool:
    """Whether the bytes fed to _hashers(f) are f's."""
    return hashes[0].hexdigest() == f["sha256"] and (f["lfs"] or hashes[1].hexdigest() == f["etag"])


def _hash_prefix(out: Any, size: int, hashes: List[Any], buf: bytearray) -> None:
    view = memoryview(buf)
    out.seek(0)
    left = size
    while left:
        n = out.readinto(view[:min(left, len(buf))])
        if not n:
            break
        for h in hashes:
            h.update(view[:n])
        left -= n


# --- from the site's swarm (peer-to-peer), checked as the registry's bytes are -------------------------

P2P_STAGING = ".inferops-p2p"


def clear_staging(fd: int, keep: List[str]) -> None:
    """Leave in the staging folder only regular files (and aria2c's control files) of the blobs wanted, each with one
    link: anything else (a link, a folder, a fifo, a hard link to a file elsewhere) is removed as itself, so aria2c
    never writes through it."""
    keep_names = set(keep) | {k + ".aria2" for k in keep}
    for name in os.listdir(fd):
        st = lstat_at(fd, name)
        if st is not None and not (name in keep_names and stat.S_ISREG(st.st_mode) and st.st_nlink == 1):
            remove_entry(fd, name)


def _kept_from_swarm(staging_fd: int, blobs_fd: int, f: Dict[str, Any], buf: bytearray) -> bool:
    """Link the swarm's copy of f into blobs/<etag> if it is f (size, sha256, git sha1): the staging name stays,
    for the node's own seeding. A copy that is not f is removed, and the registry fetches f."""
    sha = f["sha256"]
    try:
        fd = os.open(sha, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=staging_fd)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        hashes = _hashers(f)
        good = stat.S_ISREG(st.st_mode) and st.st_size == f["size"] and st.st_nlink == 1
        if good:
            _hash_prefix(fh, f["size"], hashes, buf)
            good = _content_is(f, hashes)
        if good:
            os.fsync(fh.fileno())
    if not good:
        os.unlink(sha, dir_fd=staging_fd)
        return False
    for name in (f["etag"], f["etag"] + w.INCOMPLETE):
        if lstat_at(blobs_fd, name) is not None:
            remove_entry(blobs_fd, name)
    os.link(sha, f["etag"], src_dir_fd=staging_fd, dst_dir_fd=blobs_fd, follow_symlinks=False)
    return True


def from_swarm(dirs: "CacheDirs", files: List[Dict[str, Any]], swarm: Dict[str, Any], bounds: TransferBounds
               ) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """(the files still to fetch from the registry, what the swarm did): aria2c writes into the repo's own
    staging folder, each blob it brings is checked whole before it is linked into blobs/, and the node then
    seeds what it holds to the peers still downloading (bounded) before the staging folder goes."""
    wanted = {f["sha256"]: f["size"] for f in files}
    total = sum(wanted.values())
    timeout = total / bounds.min_rate + bounds.effective_window() if bounds.min_rate else 24 * 3600
    announce, torrents, bind = swarm["announce"], swarm["torrents"], swarm.get("bind", "")
    stall = max(bounds.window, 10.0)
    staging = open_dir(dirs.repo, P2P_STAGING)
    lingered: Dict[str, Any] = {"seconds": 0.0, "ended": ""}
    try:
        clear_staging(staging, sorted(wanted))
        try:
            got = bt.swarm(staging, wanted, announce, torrents, bind, timeout=timeout, stall_s=stall)
        except bt.P2PError as exc:  # no aria2c: the registry serves, as without the swarm
            got = {"arrived": [], "seconds": 0.0, "problem": str(exc)}
        buf = bytearray(READ_SIZE)
        kept = {f["sha256"] for f in files if f["sha256"] in got["arrived"]
                and _kept_from_swarm(staging, dirs.blobs, f, buf)}
        if kept:
            lingered = bt.linger(staging, kept, announce, torrents, bind, bound=stall * 5)
    finally:
        os.close(staging)
    remove_entry(dirs.repo, P2P_STAGING)
    left = [f for f in files if f["sha256"] not in kept]
    rejected = sorted(set(got["arrived"]) - kept)
    problem = got["problem"] or ("%d blobs from the swarm did not match the manifest" % len(rejected)
                                 if rejected else "")
    return left, {"files": len(files) - len(left), "bytes": sum(wanted[s] for s in kept),
                  "seconds": got["seconds"], "problem": one_line(problem, 300),
                  "seeded_seconds": lingered["seconds"], "seeding_ended": lingered["ended"]}


def fetch_blob(reg: BoundedRegistry, cache_root: str, repo: str, f: Dict[str, Any], retries: int = 3,
               backoff: float = 0.5, blobs_fd: Optional[int] = None, bounds: Optional[TransferBounds] = None) -> int:
    """Fetch one file's blob into blobs/<etag>; the bytes moved over the network. A failure is one
    FetchError line naming the file, the registry and the fix."""
    own = blobs_fd is None
    fd = open_blobs_dir(cache_root, repo) if own else blobs_fd
    try:
        return _Transfer(reg, cache_root, repo, f, fd, bounds or TransferBounds()).run(retries, backoff)
    finally:
        if own:
            os.close(fd)


# --- the snapshot, the record, pruning ----------------------------------------------------------

def _link_one(snap_fd: int, path: str, target: str) -> None:
    """snapshots/<rev>/<path> -> target, made beside it and renamed over it; the directories on the way are
    opened without following a link (a linked one is replaced)."""
    parts = path.split("/")
    fd = snap_fd
    try:
        for part in parts[:-1]:
            inner = open_dir(fd, part)
            if fd != snap_fd:
                os.close(fd)
            fd = inner
        name, tmp = parts[-1], parts[-1] + w.LINK_TMP
        st = lstat_at(fd, name)
        if st is not None and stat.S_ISDIR(st.st_mode):
            remove_entry(fd, name)  # a rename cannot replace a directory
        remove_entry(fd, tmp)
        os.symlink(target, tmp, dir_fd=fd)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        if fd != snap_fd:
            os.close(fd)


def link_snapshot(cache_root: str, manifest: w.Manifest, links: List[Dict[str, Any]],
                  dirs: Optional[CacheDirs] = None) -> None:
    own = dirs is None
    dirs = CacheDirs(cache_root, manifest["repo"], manifest["revision"]) if own else dirs
    try:
        for link in links:
            _link_one(dirs.snapshot, link["path"], w.link_target(link["path"], link["etag"]))
    finally:
        if own:
            dirs.close()


def read_record(path: str) -> Optional[Dict[str, Any]]:
    """model.json, or None (none yet, or a torn or foreign file: rewritten on the next verified fetch)."""
    return node_record.read(path)


def write_record(path: str, record: Dict[str, Any]) -> None:
    """Whole or not at all, 0644 (node_record.write); model.json is indented by 2."""
    node_record.write(path, record, indent=2)


def _snapshot_targets(snap: str) -> List[str]:
    """The blob names a snapshot's links name (a linked snapshot is no snapshot of this cache)."""
    if os.path.islink(snap) or not os.path.isdir(snap):
        return []
    names = []
    for dirpath, _dirs, files in os.walk(snap):
        names += [os.path.basename(os.readlink(os.path.join(dirpath, n))) for n in files
                  if os.path.islink(os.path.join(dirpath, n))]
    return names


def _drop_stale_refs(repo_fd: int, drop: List[str]) -> None:
    """Remove refs/<name> files that name a dropped revision (only regular files are read, none followed)."""
    try:
        refs = os.open("refs", O_DIR, dir_fd=repo_fd)
    except OSError:
        return
    try:
        for ref in os.listdir(refs):
            st = lstat_at(refs, ref)
            if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > 4096:
                continue
            fd = os.open(ref, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=refs)
            with os.fdopen(fd, "rb") as fh:
                named = fh.read(4096).decode("utf-8", "replace").strip()
            if named in drop:
                os.unlink(ref, dir_fd=refs)
    finally:
        os.close(refs)


def _open_existing(parent_fd: int, name: str) -> Optional[int]:
    try:
        return os.open(name, O_DIR, dir_fd=parent_fd)
    except OSError:
        return None


def _remove_pruned(cache_root: str, repo: str, drop: List[str], blobs: List[str]) -> None:
    hub = open_hub(cache_root)
    repo_fd = _open_existing(hub, os.path.basename(w.repo_dir(cache_root, repo)))
    os.close(hub)
    if repo_fd is None:
        return
    try:
        for sub, names in (("snapshots", drop), (".no_exist", drop), ("blobs", blobs)):
            fd = _open_existing(repo_fd, sub)
            if fd is None:
                continue
            try:
                for name in names:
                    remove_entry(fd, name)
            finally:
                os.close(fd)
        _drop_stale_refs(repo_fd, drop)
    finally:
        os.close(repo_fd)


def prune(cache_root: str, repo: str, record: Dict[str, Any], keep: int, dry_run: bool = False) -> Dict[str, Any]:
    """Remove snapshots beyond keep (never current or previous) and the blobs no kept snapshot links to.
    Nothing is followed: a linked snapshot or blob is removed as the link, never what it points to."""
    base = w.repo_dir(cache_root, repo)
    blobs_bad, snaps_bad = w.repo_directory_problem(cache_root, repo)
    snaps_dir, blobs_dir = os.path.join(base, "snapshots"), os.path.join(base, "blobs")
    snaps = {} if snaps_bad else {n: os.lstat(os.path.join(snaps_dir, n)).st_mtime for n in os.listdir(snaps_dir)}
    drop = w.prune_selection(snaps, record, keep)
    kept: List[str] = []
    for rev in snaps:
        if rev not in drop:
            kept += _snapshot_targets(os.path.join(snaps_dir, rev))
    blobs = w.unreferenced_blobs([] if blobs_bad else os.listdir(blobs_dir), kept)
    freed = sum(os.lstat(os.path.join(blobs_dir, b)).st_size for b in blobs)
    if not dry_run and (drop or blobs):
        _remove_pruned(cache_root, repo, drop, blobs)
    return {"revisions": drop, "blobs": len(blobs), "bytes": freed}


class _Lock:
    """One writer per repo cache on a node (two plays, or a play and a hand-run fetch), held from before
    the fetch is planned, so a second run waits and then finds the blobs present. The wait is bounded;
    the lock file is made without following a link, and holds the holder's pid for the message."""

    def __init__(self, cache_root: str, repo: str, timeout: float = LOCK_TIMEOUT, poll: float = 0.2):
        self.cache_root = cache_root
        self.name = "inferops-" + os.path.basename(w.repo_dir(cache_root, repo)) + ".lock"
        self.path = os.path.join(cache_root, ".locks", self.name)
        self.timeout, self.poll = timeout, poll
        self.fd: Optional[int] = None

    def _open(self) -> int:
        os.makedirs(self.cache_root, exist_ok=True)
        root = os.open(self.cache_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            locks = open_dir(root, ".locks")
        finally:
            os.close(root)
        try:
            st = lstat_at(locks, self.name)
            if st is not None and stat.S_ISLNK(st.st_mode):
                os.unlink(self.name, dir_fd=locks)  # the link itself, never its target
            elif st is not None and not stat.S_ISREG(st.st_mode):
                raise FetchError("the lock file %s is %s, not a file: remove it and re-run"
                                 % (self.path, w.kind_of(st)))
            fd = os.open(self.name, O_FILE, 0o644, dir_fd=locks)
        finally:
            os.close(locks)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise FetchError("the lock file %s is not a file: remove it and re-run" % self.path)
        return fd

    def _holder(self) -> str:
        try:
            pid = int(os.pread(self.fd, 32, 0).split()[0])
        except (OSError, ValueError, IndexError):
            return "another process (its pid is not recorded)"
        try:
            with open("/proc/%d/comm" % pid, encoding="utf-8", errors="replace") as fh:
                return "pid %d (%s)" % (pid, one_line(fh.read(), 40))
        except OSError:
            return "pid %d" % pid

    def __enter__(self) -> "_Lock":
        self.fd = self._open()
        deadline = time.monotonic() + max(0.0, self.timeout)
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                    raise
            if time.monotonic() >= deadline:
                holder = self._holder()
                os.close(self.fd)
                raise FetchError("waited %g s for the lock %s, held by %s (another fetch of this model on this "
                                 "node): let it finish, stop it, or raise lock_timeout"
                                 % (self.timeout, self.path, holder))
            time.sleep(self.poll)
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, b"%d\n" % os.getpid(), 0)
        return self

    def __exit__(self, *exc: Any) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


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
            expected_digest: str = "", dry_run: bool = False, retry_failed: bool = False,
            min_rate_mbps: float = MIN_RATE_MBPS, rate_window: float = RATE_WINDOW,
            lock_timeout: float = LOCK_TIMEOUT, swarm: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Make the cache hold repo@revision, verified, and the record say so. dry_run reports only.
    The cache lock is taken before the fetch is planned: a second run waits, then finds the blobs present.
    swarm ({announce, torrents, bind}): the missing blobs come from the site's BitTorrent swarm first, and
    whatever it does not bring whole, from the registry."""
    if swarm:
        try:
            bt.checked_swarm(swarm.get("announce"), swarm.get("torrents"))
        except bt.P2PError as exc:
            raise FetchError("%s: use what the store's seeding step (model_store state=torrents) returned" % exc)
    started = time.monotonic()
    refusal = w.failed_refusal(read_record(record_path), repo, revision, retry_failed)
    if refusal:
        raise FetchError(refusal)
    found = read_artifact(reg, repo, revision, expected_digest)
    if found is None:
        raise FetchError("the site registry %s has no %s:%s: run the store step (model_store) first"
                         % (reg.base, w.registry_repository(repo), revision))
    manifest, digest = found
    if dry_run:
        return _planned(cache_root, manifest, digest, record_path, verify, margin, keep)
    bounds = TransferBounds(min_rate_mbps, rate_window)
    with _Lock(cache_root, repo, lock_timeout):
        out = _staged(reg, cache_root, manifest, digest, record_path, verify, margin, keep, concurrency, retries,
                      bounds, swarm)
    seconds = time.monotonic() - started
    return dict(out, seconds=round(seconds, 3),
                throughput_mbps=round(out["fetched_bytes"] / 1e6 / seconds, 1) if seconds else 0.0)


def _plan_and_record(cache_root: str, manifest: w.Manifest, digest: str, record_path: str, verify: str,
                     margin: float) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]], bool]:
    """(plan, record to write, whether the record changes); refuses a cache the model does not fit."""
    repo, revision = manifest["repo"], manifest["revision"]
    record = read_record(record_path)
    facts = fs_facts(cache_root)
    plan = w.plan_fetch(cache_root, manifest, verify)
    problems = problems_for(cache_root, manifest, plan["missing_bytes"], margin, facts)
    if problems:
        raise FetchError("; ".join(problems))
    entry = {"repo": repo, "revision": revision, "manifest": digest, "bytes": w.total_bytes(manifest),
             "files": len(manifest["files"]), "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    record_changes = not w.is_current(record, repo, revision, digest)
    return plan, (w.record_after(record, entry) if record_changes else record), record_changes


def _summary(plan: Dict[str, Any], digest: str, record_changes: bool, pruned: Dict[str, Any]) -> Dict[str, Any]:
    changed = bool(plan["fetch"] or plan["link"] or plan["remove"] or record_changes
                   or pruned["revisions"] or pruned["blobs"])
    return {"digest": digest, "missing_files": _missing_files(plan), "fetched_files": len(plan["fetch"]),
            "fetched_bytes": plan["missing_bytes"], "linked": len(plan["link"]), "removed": plan["remove"],
            "changed": changed, "pruned": pruned}


def _planned(cache_root: str, manifest: w.Manifest, digest: str, record_path: str, verify: str, margin: float,
             keep: int) -> Dict[str, Any]:
    """What present would do (check mode): nothing is written, no lock taken."""
    plan, new_record, record_changes = _plan_and_record(cache_root, manifest, digest, record_path, verify, margin)
    pruned = prune(cache_root, manifest["repo"], new_record, keep, dry_run=True) if os.path.isdir(
        w.repo_dir(cache_root, manifest["repo"])) else {"revisions": [], "blobs": 0, "bytes": 0}
    return dict(_summary(plan, digest, record_changes, pruned), record=new_record, seconds=0.0, throughput_mbps=0.0)


def _staged(reg: BoundedRegistry, cache_root: str, manifest: w.Manifest, digest: str, record_path: str,
            verify: str, margin: float, keep: int, concurrency: int, retries: int,
            bounds: TransferBounds, swarm: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Under the lock: plan, fetch, link, re-check, record, prune. The plan treats a linked or non-directory
    cache directory as empty, and CacheDirs replaces it with an empty one, so the plan stays true."""
    repo = manifest["repo"]
    plan, new_record, record_changes = _plan_and_record(cache_root, manifest, digest, record_path, verify, margin)
    moved = 0
    swarmed = {"files": 0, "bytes": 0, "seconds": 0.0, "problem": "" if swarm else "off", "seeded_seconds": 0.0,
               "seeding_ended": ""}
    with CacheDirs(cache_root, repo, manifest["revision"]) as dirs:
        blobs_dir = os.path.dirname(w.blob_path(cache_root, repo, "x"))
        for path in plan["remove"]:
            if os.path.dirname(path) == blobs_dir:
                remove_entry(dirs.blobs, os.path.basename(path))
        from_registry = plan["fetch"]
        if swarm and from_registry:
            from_registry, swarmed = from_swarm(dirs, from_registry, swarm, bounds)
            moved = swarmed["bytes"]
        transfers = [_Transfer(reg, cache_root, repo, f, dirs.blobs, bounds) for f in from_registry]
        if transfers:
            with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
                moved += sum(pool.map(lambda t: t.run(retries, 0.5), transfers))
        link_snapshot(cache_root, manifest, plan["link"], dirs)
    # what was fetched was checked in the stream; the rest was checked by plan_fetch
    after = w.plan_fetch(cache_root, manifest, "size")
    if after["fetch"] or after["link"]:
        raise FetchError("the cache %s still lacks %d files and %d links of %s@%s after the fetch (first: %s): "
                         "check that nothing else writes to it, then re-run"
                         % (w.repo_dir(cache_root, repo), len(after["fetch"]), len(after["link"]), repo,
                            manifest["revision"], ([f["path"] + " " + f["reason"] for f in after["fetch"]]
                                                   + [x["path"] + " " + x["reason"] for x in after["link"]])[0]))
    if record_changes:
        write_record(record_path, new_record)
    pruned = prune(cache_root, repo, new_record, keep)
    return dict(_summary(plan, digest, record_changes, pruned), fetched_bytes=moved, record=new_record,
                flush_seconds=round(sum(t.flush_s for t in transfers), 3), p2p=swarmed)


def verified(repo: str, revision: str, cache_root: str, record_path: str, verify: str = "size") -> Dict[str, Any]:
    """Read-only, no registry (a shared filesystem filled elsewhere): the snapshot is whole."""
    result = w.verify_snapshot(cache_root, repo, revision, full=verify == "full")
    record = read_record(record_path)
    return dict(result, record_current=(record or {}).get("current"))


__all__ = ["FetchError", "RegistryError", "TransferBounds", "check", "present", "rolled_back", "verified", "fetch_blob",
           "read_artifact"]
