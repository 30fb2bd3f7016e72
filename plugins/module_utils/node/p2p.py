# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Peer-to-peer weights with BitTorrent: the store host's tracker (Debian's opentracker) and seeder (aria2c),
and a node's swarm (aria2c), so every node that holds a piece serves it and the store's NIC stops being the
bound (bench/p2p_bench.py: 1.85x one node's fetch at 27 nodes with the nodes seeding once done, star 27x).

BitTorrent only moves bytes here: what a node keeps is judged as the HTTP path judges it (size, sha256, git
sha1 against the pinned manifest), and whatever the swarm did not bring whole is fetched from the site
registry as before. One torrent per blob, named by its sha256, without a tracker inside: nodes get magnet
links (the info-hash and the tracker), and the metadata from the seeder (BEP 9), checked against the info-hash.

Stdlib only (runs on the nodes, Python 3.9).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import signal
import stat
import subprocess
import time
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Optional, Tuple

INFO_HASH = re.compile(r"\A[0-9a-f]{40}\Z")
SHA256 = re.compile(r"\A[0-9a-f]{64}\Z")
ANNOUNCE = re.compile(r"\Ahttp://[0-9A-Za-z.\-]+:[0-9]{1,5}/announce\Z")
# pieces of 256 KiB up to 16 MiB, at most about 4096 of them per blob
MIN_PIECE, MAX_PIECE, PIECES = 256 << 10, 16 << 20, 4096
# the peers' ports: aria2c takes the first free one (nodes that share an address, as in the lab, differ)
PEER_PORTS = "51413-51612"
# the torrents' metadata the store keeps beside its files, one per blob (hashing a blob is a full read)
TORRENT_DIR = "torrents"
SEED_DIR = "seed"


# the site's own tracker, never through a proxy the environment names
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class P2PError(RuntimeError):
    pass


# --- bencoding (BEP 3) ---------------------------------------------------------------------------

def bencode(value: Any) -> bytes:
    if isinstance(value, bool):
        raise TypeError("no booleans in bencoding")
    if isinstance(value, int):
        return b"i%de" % value
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, bytes):
        return b"%d:%s" % (len(value), value)
    if isinstance(value, list):
        return b"l" + b"".join(bencode(v) for v in value) + b"e"
    if isinstance(value, dict):
        keys = sorted((k.encode("utf-8") if isinstance(k, str) else k, v) for k, v in value.items())
        return b"d" + b"".join(bencode(k) + bencode(v) for k, v in keys) + b"e"
    raise TypeError("cannot bencode %s" % type(value).__name__)


def bdecode(data: bytes, depth: int = 32) -> Any:
    """The one value data holds, whole; ValueError for anything else (a tracker's answer is untrusted)."""
    value, end = _decode(data, 0, depth)
    if end != len(data):
        raise ValueError("%d bytes after the value" % (len(data) - end))
    return value


def _decode(data: bytes, at: int, depth: int) -> Tuple[Any, int]:
    if depth <= 0 or at >= len(data):
        raise ValueError("nested too deep or cut short")
    lead = data[at:at + 1]
    if lead == b"i":
        end = data.index(b"e", at)
        text = data[at + 1:end]
        if not re.fullmatch(rb"-?(0|[1-9][0-9]{0,30})", text) or text == b"-0":
            raise ValueError("bad integer %r" % text[:40])
        return int(text), end + 1
    if lead in (b"l", b"d"):
        items, at = [], at + 1
        while data[at:at + 1] != b"e":
            item, at = _decode(data, at, depth - 1)
            items.append(item)
        if lead == b"l":
            return items, at + 1
        if len(items) % 2 or not all(isinstance(k, bytes) for k in items[::2]):
            raise ValueError("a dictionary with keys that are not strings")
        return dict(zip(items[::2], items[1::2])), at + 1
    colon = data.index(b":", at)
    if not re.fullmatch(rb"0|[1-9][0-9]{0,11}", data[at:colon]):
        raise ValueError("bad string length %r" % data[at:colon][:20])
    end = colon + 1 + int(data[at:colon])
    if end > len(data):
        raise ValueError("a string runs past the end")
    return data[colon + 1:end], end


# --- torrents --------------------------------------------------------------------------------------

def piece_length(size: int) -> int:
    length = MIN_PIECE
    while length < MAX_PIECE and size > length * PIECES:
        length *= 2
    return length


def torrent_of(path: str, sha256: str, size: int) -> bytes:
    """The metainfo of one blob: a single file named by its sha256, its pieces' SHA-1, no tracker inside
    (the nodes name the tracker in their magnet links)."""
    length = piece_length(size)
    pieces, moved = [], 0
    with open(path, "rb") as fh:
        while True:
            piece = fh.read(length)
            if not piece:
                break
            moved += len(piece)
            pieces.append(hashlib.sha1(piece).digest())
    if moved != size:
        raise P2PError("%s holds %d bytes, the manifest says %d: the store's copy is not the blob" % (path, moved, size))
    return bencode({"info": {"length": size, "name": sha256, "piece length": length, "pieces": b"".join(pieces)}})


def info_hash(metainfo: bytes) -> str:
    info = bdecode(metainfo)[b"info"]
    return hashlib.sha1(bencode(info)).hexdigest()


def magnet(ih: str, announce: str) -> str:
    return "magnet:?xt=urn:btih:%s&tr=%s" % (ih, urllib.parse.quote(announce, safe=""))


def checked_swarm(announce: str, torrents: Dict[str, str]) -> Tuple[str, Dict[str, str]]:
    """(announce, {sha256: info-hash}) after checking each whole; P2PError names what is wrong."""
    if not isinstance(announce, str) or not ANNOUNCE.fullmatch(announce):
        raise P2PError("p2p tracker %r is not http://HOST:PORT/announce" % (announce,))
    if not isinstance(torrents, dict):
        raise P2PError("p2p torrents must map a blob's sha256 to its info-hash")
    for sha, ih in torrents.items():
        if not (isinstance(sha, str) and SHA256.fullmatch(sha) and isinstance(ih, str) and INFO_HASH.fullmatch(ih)):
            raise P2PError("p2p torrents: %r -> %r is not a sha256 and a 40-hex info-hash" % (sha, ih))
    return announce, torrents


# --- the tracker's view ----------------------------------------------------------------------------

def scrape(announce: str, hashes: Iterable[str], timeout: float = 5) -> Optional[Dict[str, Tuple[int, int]]]:
    """{info-hash: (complete, incomplete)} as the tracker counts the swarms (BEP 48); None when it does not answer.
    Only `incomplete` (peers downloading) is judged: a magnet link's peer announces `left=0` before it has the
    metadata, so it counts as complete for a moment."""
    hashes = list(hashes)
    query = "&".join("info_hash=" + urllib.parse.quote(bytes.fromhex(h), safe="") for h in hashes)
    url = announce[:-len("announce")] + "scrape?" + query
    try:
        with _DIRECT.open(url, timeout=timeout) as resp:
            files = bdecode(resp.read(1 << 20)).get(b"files", {})
    except (OSError, ValueError, AttributeError):
        return None
    out = {}
    for raw, counts in files.items():
        if isinstance(raw, bytes) and len(raw) == 20 and isinstance(counts, dict):
            out[raw.hex()] = (int(counts.get(b"complete", 0)), int(counts.get(b"incomplete", 0)))
    return out


# --- processes, bounded ----------------------------------------------------------------------------

def _start(argv: List[str], feed: Optional[List[str]] = None, **kw: Any) -> subprocess.Popen:
    """A process that runs beside the module (a tracker, a seeder, a swarm), in a session of its own so that
    `stop` ends it with its children: run_command waits for its command, so it cannot hold one. feed: the lines
    of its standard input (aria2c's downloads), written and closed at once."""
    try:
        proc = subprocess.Popen(  # pylint: disable=ansible-bad-function,consider-using-with
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
            stdin=subprocess.DEVNULL if feed is None else subprocess.PIPE, **kw)
    except OSError as exc:
        raise P2PError("cannot run %s (%s): install the %s package, or set vllm_model_p2p: false"
                       % (argv[0], exc.strerror, "aria2" if argv[0] == "aria2c" else argv[0]))
    if feed is not None:
        proc.stdin.write("".join(line + "\n" for line in feed).encode("utf-8"))
        proc.stdin.close()
    return proc


def stop(proc: Optional[subprocess.Popen], grace: float = 10) -> str:
    """End proc's whole session (aria2c's and opentracker's children too); its last stderr line."""
    if proc is None:
        return ""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            pass
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    err = proc.stderr.read(4096).decode("utf-8", "replace") if proc.stderr else ""
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def aria2c_argv(folder: str, bind: str, stall_s: float, announce: str, seeder: bool) -> List[str]:
    """aria2c as one BitTorrent peer of the site: no DHT or local discovery (the tracker names the peers),
    peer exchange on, the downloads read from stdin. A node's download ends when it holds its blobs; a seeder
    (the store's, or a node's once its blobs are checked: `linger`) seeds until it is stopped."""
    argv = ["aria2c", "--dir", folder, "--input-file", "-", "--enable-dht=false", "--enable-dht6=false",
            "--bt-enable-lpd=false", "--enable-peer-exchange=true", "--listen-port", PEER_PORTS,
            "--bt-tracker-interval=2", "--bt-max-peers=40", "--file-allocation=none", "--summary-interval=0",
            "--console-log-level=error", "--disable-ipv6=true", "--auto-file-renaming=false", "--allow-overwrite=true",
            "--max-concurrent-downloads=16"]
    if bind:
        argv += ["--interface", bind]
    if seeder:
        argv += ["--bt-seed-unverified=true", "--seed-ratio=0.0", "--bt-tracker", announce, "--bt-save-metadata=false"]
    else:  # the metadata (<info-hash>.torrent) is kept for the node's own seeding once it holds its blobs
        argv += ["--seed-time=0", "--bt-stop-timeout=%d" % max(1, int(stall_s)), "--bt-save-metadata=true"]
    return argv


# --- a node's side -----------------------------------------------------------------------------------

def swarm(staging_fd: int, wanted: Dict[str, int], announce: str, torrents: Dict[str, str], bind: str = "",
          timeout: float = 3600, stall_s: float = 60) -> Dict[str, Any]:
    """Let aria2c bring the wanted blobs ({sha256: size}) from the site's swarm into the staging folder (given as
    its open fd, written through /proc/self/fd so no path outside it is resolved; the caller has emptied it of
    anything but these blobs' partials, weights_fetch.clear_staging). Bounded by timeout and by stall_s without a
    byte. Returns which blobs arrived whole in size (their content is the caller's to check) and, where the swarm
    failed, why."""
    todo = {sha: size for sha, size in wanted.items() if sha in torrents}
    started = time.monotonic()
    if not todo:
        return {"arrived": [], "seconds": 0.0, "problem": "the store's seeder has none of these blobs"}
    os.fchmod(staging_fd, 0o700)
    folder = "/proc/self/fd/%d" % staging_fd
    proc = _start(aria2c_argv(folder, bind, stall_s, announce, seeder=False),
                  [magnet(torrents[sha], announce) for sha in sorted(todo)], pass_fds=(staging_fd,))
    problem = ""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        problem = "the swarm did not bring every blob within %d s" % timeout
    finally:
        last = stop(proc)
    if not problem and proc.returncode:
        problem = "aria2c exited %s%s" % (proc.returncode, (": " + last) if last else "")
    arrived = []
    for sha, size in sorted(todo.items()):
        st = _lstat(staging_fd, sha)
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == size and _lstat(staging_fd, sha + ".aria2") is None:
            arrived.append(sha)
    return {"arrived": arrived, "seconds": round(time.monotonic() - started, 3), "problem": problem}


def linger(staging_fd: int, held: Iterable[str], announce: str, torrents: Dict[str, str], bind: str = "",
           bound: float = 300, quiet_s: float = 5, poll: float = 1) -> Dict[str, Any]:
    """Seed the blobs the node now holds ({sha256} in the staging folder, with the metadata its download kept) until
    no peer of those swarms has been downloading for quiet_s, or bound: the nodes that finish first serve the
    rest, as every peer of the benchmark's swarm did (bench/p2p_bench.py, mode seeder against leave)."""
    started = time.monotonic()
    hashes = {torrents[sha] for sha in held if sha in torrents}
    metadata = sorted(h + ".torrent" for h in hashes
                      if stat.S_ISREG(getattr(_lstat(staging_fd, h + ".torrent"), "st_mode", 0)))
    if not metadata:
        return {"seconds": 0.0, "ended": "no metadata kept to seed from"}
    folder = "/proc/self/fd/%d" % staging_fd
    proc = _start(aria2c_argv(folder, bind, 0, announce, seeder=True),
                  ["%s/%s" % (folder, name) for name in metadata], pass_fds=(staging_fd,))
    why, quiet_since, unanswered = "it seeded %d s" % bound, None, 0
    try:
        while time.monotonic() - started < bound:
            time.sleep(poll)
            if proc.poll() is not None:
                why = "aria2c exited %s" % proc.returncode
                break
            counts = scrape(announce, sorted(hashes), timeout=2)
            unanswered = 0 if counts is not None else unanswered + 1
            if unanswered >= 3:  # the store ended its tracker: the rollout's swarm is over
                why = "the tracker no longer answers"
                break
            busy = counts is None or any(counts.get(h, (0, 0))[1] for h in hashes)
            quiet_since = None if busy else (quiet_since or time.monotonic())
            if quiet_since is not None and time.monotonic() - quiet_since >= quiet_s:
                why = "no peer has been downloading for %d s" % quiet_s
                break
    finally:
        stop(proc)
    return {"seconds": round(time.monotonic() - started, 3), "ended": why}


def _lstat(fd: int, name: str) -> Optional[os.stat_result]:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


# --- the store's side --------------------------------------------------------------------------------

def prepare(work_dir: str, blobs: Dict[str, Tuple[str, int]]) -> Dict[str, str]:
    """{sha256: info-hash} of the store's blobs ({sha256: (path, size)}): each torrent made once and kept in
    work_dir/torrents (a blob's content never changes under its sha256), and each blob linked into
    work_dir/seed under its sha256, where the seeder reads it."""
    torrents_dir = os.path.join(work_dir, TORRENT_DIR)
    seed_dir = os.path.join(work_dir, SEED_DIR)
    for folder in (work_dir, torrents_dir, seed_dir):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if os.path.islink(folder) or not os.path.isdir(folder):
            raise P2PError("%s is a link or no folder: remove it and re-run" % folder)
    hashes = {}
    for sha, (path, size) in sorted(blobs.items()):
        if not SHA256.fullmatch(sha):
            raise P2PError("blob %r has no sha256 name" % sha)
        kept = os.path.join(torrents_dir, "%s-%d.torrent" % (sha, piece_length(size)))
        metainfo = _read_small(kept)
        if metainfo is None:
            metainfo = torrent_of(path, sha, size)
            _write_new(kept, metainfo)
        hashes[sha] = info_hash(metainfo)
        seeded = os.path.join(seed_dir, sha)
        st = os.lstat(seeded) if os.path.lexists(seeded) else None
        real = os.stat(path)
        if st is None or not stat.S_ISREG(st.st_mode) or (st.st_ino, st.st_dev) != (real.st_ino, real.st_dev):
            if st is not None:
                os.unlink(seeded)
            os.link(path, seeded, follow_symlinks=False)
    return hashes


def _read_small(path: str) -> Optional[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(8 << 20)
    try:
        bdecode(data)[b"info"][b"pieces"]  # pylint: disable=expression-not-assigned
    except (ValueError, KeyError, TypeError):
        return None
    return data


def _write_new(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.rename(tmp, path)


def tracker_argv(work_dir: str, address: str, port: int) -> List[str]:
    """Debian's opentracker on the store's address only, serving only the whitelisted torrents (it chroots into
    its folder as root and reads the whitelist there)."""
    return ["opentracker", "-i", address, "-p", str(port), "-P", str(port), "-d", work_dir, "-w", "whitelist"]


def seed(work_dir: str, hashes: Dict[str, str], address: str, port: int, timeout: float, idle_s: float = 30,
         poll: float = 2, first_s: float = 120) -> Dict[str, Any]:
    """Run the site's tracker and the store's seeder until no peer has been downloading for idle_s (after one
    was), no peer came to download within first_s (a revision no node lacked), or timeout. The nodes leave their
    swarms once no peer downloads, so an empty swarm is a finished rollout; a node that comes later fetches from
    the site registry. Returns what the tracker counted last."""
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise P2PError("the tracker's address %r is no IP address: set vllm_model_p2p_address to the store host's "
                       "address that the nodes reach" % (address,))
    whitelist = os.path.join(work_dir, "whitelist")
    _write_new(whitelist, "".join(h + "\n" for h in sorted(set(hashes.values()))).encode("ascii"))
    os.chmod(whitelist, 0o644)
    os.chmod(work_dir, 0o755)  # opentracker reads its whitelist as nobody
    announce = "http://%s:%d/announce" % (address, port)
    started = time.monotonic()
    tracker = seeder = None
    counts: Dict[str, Tuple[int, int]] = {}
    why, seen, last = "it ran %d s (vllm_model_p2p_timeout)" % timeout, 0, ""
    try:
        tracker = _start(tracker_argv(work_dir, address, port), cwd=work_dir)
        _wait_tracker(announce, tracker, sorted(hashes.values()), started + 30)
        torrents_dir = os.path.join(work_dir, TORRENT_DIR)
        seeder = _start(aria2c_argv(os.path.join(work_dir, SEED_DIR), address, 0, announce, seeder=True),
                        [os.path.join(torrents_dir, name) for name in sorted(os.listdir(torrents_dir))
                         if name.endswith(".torrent") and name.split("-")[0] in hashes], cwd=work_dir)
        idle_since = None
        while time.monotonic() - started < timeout:
            time.sleep(poll)
            if seeder.poll() is not None or tracker.poll() is not None:
                why = "the %s stopped" % ("seeder" if seeder.poll() is not None else "tracker")
                break
            counts = scrape(announce, hashes.values()) or counts
            leeching = sum(c[1] for c in counts.values())
            seen = max(seen, leeching)
            if not seen and time.monotonic() - started >= first_s:
                why = "no node came to download within %d s" % first_s
                break
            idle_since = None if leeching or not seen else (idle_since or time.monotonic())
            if idle_since is not None and time.monotonic() - idle_since >= idle_s:
                why = "no node has been downloading for %d s" % idle_s
                break
    finally:
        last = stop(seeder)
        stop(tracker)
    return {"announce": announce, "ended": why, "seconds": round(time.monotonic() - started, 1),
            "most_downloading": seen, "seeder_said": last,
            "swarms": {h: {"complete": c[0], "incomplete": c[1]} for h, c in sorted(counts.items())}}


def _wait_tracker(announce: str, tracker: subprocess.Popen, hashes: List[str], deadline: float) -> None:
    """Until the tracker answers a scrape of the swarms (it loads its whitelist in the background)."""
    while time.monotonic() < deadline:
        if tracker.poll() is not None:
            raise P2PError("opentracker exited %s at start: %s" % (tracker.returncode, stop(tracker)))
        if scrape(announce, hashes[:1], timeout=1) is not None:
            return
        time.sleep(0.2)
    raise P2PError("opentracker did not answer at %s within 30 s" % announce)


__all__ = ["P2PError", "bencode", "bdecode", "checked_swarm", "info_hash", "linger", "magnet", "piece_length", "prepare",
           "scrape", "seed", "swarm", "torrent_of"]
