"""Weights to a rollout: star (every node reads the site store) against peer-to-peer (BitTorrent), each server
capped at the same bandwidth, at 3, 9 and 27 simulated nodes.

The store is an HTTP server on loopback that serves one blob with Range support, its upload capped at --mbps (the
store's NIC). Star: N `curl --limit-rate` readers of the blob at once, as model_fetch reads the site registry today.
Peer-to-peer: Debian's opentracker as the tracker and N `aria2c` peers, each capped at --mbps up and down (a node's
NIC), that serve the pieces they hold while they fetch the rest, in two variants:
  webseed  mktorrent's torrent with the store's URL as its web seed (BEP 19): the peers read the store over HTTP;
  seeder   a torrent without a web seed, and the store runs one more aria2c peer that holds the blob (its upload
           capped the same); the nodes go on seeding once they hold it, as model_fetch's nodes do until no peer
           is downloading.
  leave    as seeder, but each node leaves the swarm once it holds the blob (--seed-time=0).
Every figure is the time until the last node holds the whole blob (aria2c's download-complete hook), as a multiple
of one node's fetch time alone (blob size / cap), with the bytes the store sent over HTTP. Figures only; no asserts.

usage: python3 bench/p2p_bench.py [--nodes 3,9,27] [--mb 64] [--mbps 8] [--modes star,webseed,seeder,leave]
                                  [--repeat 1] [--json FILE]
       (needs aria2, opentracker, mktorrent and curl: apt-get install aria2 opentracker mktorrent curl;
       INFEROPS_P2P_LOG=DIR keeps each aria2c's log there)
"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHUNK = 64 << 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bucket:
    """A token bucket shared by every connection of one server: its upload, capped."""

    def __init__(self, rate: float) -> None:
        self.rate, self.lock, self.next = rate, threading.Lock(), time.monotonic()
        self.sent = 0

    def take(self, size: int) -> None:
        with self.lock:
            now = time.monotonic()
            self.next = max(self.next, now) + size / self.rate
            wait = self.next - now - size / self.rate
            self.sent += size
        if wait > 0:
            time.sleep(wait)


def store(path: Path, bucket: Bucket) -> ThreadingHTTPServer:
    size = path.stat().st_size

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()

        def do_GET(self):
            start, end = 0, size - 1
            rng = self.headers.get("Range", "")
            if rng.startswith("bytes="):
                first, _sep, last = rng[6:].split(",")[0].partition("-")
                start = int(first) if first else size - int(last)
                end = int(last) if first and last else size - 1
                self.send_response(206)
                self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(end - start + 1))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            try:
                with open(path, "rb") as fh:
                    fh.seek(start)
                    left = end - start + 1
                    while left > 0:
                        data = fh.read(min(CHUNK, left))
                        bucket.take(len(data))
                        self.wfile.write(data)
                        left -= len(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def done(path: Path, size: int) -> bool:
    """aria2c's download-complete hook marked the peer's file (it then goes on seeding)."""
    return Path(str(path) + ".done").exists() and path.stat().st_size == size


def star(url: str, n: int, size: int, mbps: float, work: Path) -> float:
    began = time.monotonic()
    procs = [subprocess.Popen(["curl", "-sf", "--limit-rate", "%dk" % int(mbps * 1000), "-o",
                               str(work / ("star%d" % i)), url]) for i in range(n)]
    for proc in procs:
        if proc.wait(timeout=3600) != 0:
            raise SystemExit("curl failed")
    took = time.monotonic() - began
    for i in range(n):
        if (work / ("star%d" % i)).stat().st_size != size:
            raise SystemExit("star: a short file")
        (work / ("star%d" % i)).unlink()
    return took


def peer(torrent: Path, folder: Path, limit: str, hook: Path, log: str = "", seeder: bool = False,
         leave: bool = False) -> subprocess.Popen:
    """One aria2c BitTorrent peer, capped at limit: a node, or the store's seeder, which holds the blob already
    (checked piece by piece first: a file without aria2's control file would be fetched again)."""
    # the seeder checks its file, then seeds it (--bt-hash-check-seed, on by default)
    own = ["--check-integrity=true"] if seeder else ["--on-bt-download-complete", str(hook)]
    own += ["--seed-time=0"] if leave else ["--seed-time=600"]
    return subprocess.Popen(
        ["aria2c", "--dir", str(folder), "--enable-dht=false", "--enable-dht6=false", "--bt-enable-lpd=false",
         "--enable-peer-exchange=true", "--listen-port", str(free_port()), "--seed-ratio=1000.0",
         "--max-overall-upload-limit", limit, "--max-overall-download-limit", limit,
         "--bt-tracker-interval=2", "--bt-max-peers=40", "--file-allocation=none", "--summary-interval=0",
         "--console-log-level=warn", "--disable-ipv6=true", *own, str(torrent)]
        + (["--log", log, "--log-level=info"] if log else []), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def p2p(torrent: Path, name: str, n: int, size: int, mbps: float, work: Path, seed: Path = None,
        timeout: float = 600, leave: bool = False) -> tuple:
    """Seconds until every one of n peers holds the blob, and its sha256. seed: a folder holding the blob, whose
    aria2c seeds it (the store's seeder, without a web seed)."""
    limit = "%dK" % int(mbps * 1000 * 1000 / 1024)
    procs, dirs = [], []
    hook = work / "complete.sh"
    hook.write_text('#!/bin/sh\ntouch "$3.done"\n')
    hook.chmod(0o755)
    logs = os.environ.get("INFEROPS_P2P_LOG", "")
    if seed is not None:
        procs.append(peer(torrent, seed, limit, hook, logs and logs + "/seed.log", seeder=True))
    began = time.monotonic()
    for i in range(n):
        folder = work / ("peer%d" % i)
        folder.mkdir()
        dirs.append(folder)
        procs.append(peer(torrent, folder, limit, hook, logs and logs + "/peer%d.log" % i, leave=leave))
    try:
        deadline = began + timeout
        while not all(done(d / name, size) for d in dirs):
            if time.monotonic() > deadline:
                raise SystemExit("p2p: not every peer finished in %d s" % timeout)
            time.sleep(0.1)
        took = time.monotonic() - began
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)
    digest = hashlib.sha256((dirs[-1] / name).read_bytes()).hexdigest()
    for folder in dirs:
        shutil.rmtree(folder)
    return took, digest


def info_hash(torrent: Path) -> str:
    shown = subprocess.run(["aria2c", "-S", str(torrent)], check=True, capture_output=True, text=True).stdout
    return next(line.split()[-1] for line in shown.splitlines() if line.lower().startswith("info hash"))


def wait_for_tracker(port: int, info_hash: str, seconds: float = 15) -> None:
    """Until the tracker answers an announce of the torrent (it loads its whitelist in the background)."""
    def announce(event: str) -> bytes:
        query = urllib.parse.urlencode({"info_hash": bytes.fromhex(info_hash), "peer_id": b"-IO0000-000000000000",
                                        "port": 1, "left": 1, "compact": 1, "event": event})
        with urllib.request.urlopen("http://127.0.0.1:%d/announce?%s" % (port, query), timeout=2) as resp:
            return resp.read()
    deadline, body = time.monotonic() + seconds, b""
    while time.monotonic() < deadline:
        try:
            body = announce("started")
            if b"failure reason" not in body:
                announce("stopped")   # out of the swarm again
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("opentracker did not accept the torrent: %r" % body[:200])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="3,9,27")
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--mbps", type=float, default=8.0, help="every server's cap, MB/s")
    parser.add_argument("--modes", default="star,webseed,seeder,leave",
                        help="what to run: star, and the peer-to-peer variants webseed, seeder, leave")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each peer-to-peer variant (the median is shown)")
    parser.add_argument("--json")
    opts = parser.parse_args()
    for tool in ("aria2c", "opentracker", "mktorrent", "curl"):
        if shutil.which(tool) is None:
            raise SystemExit("%s is missing: apt-get install aria2 opentracker mktorrent curl" % tool)
    size = opts.mb << 20
    rate = opts.mbps * 1e6
    one = size / rate
    report = {"mb": opts.mb, "mbps": opts.mbps, "one_node_s": round(one, 2), "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        blob = work / "blob"
        blob.write_bytes(os.urandom(size))
        want = hashlib.sha256(blob.read_bytes()).hexdigest()
        bucket = Bucket(rate)
        server = store(blob, bucket)
        url = "http://127.0.0.1:%d/blob" % server.server_address[1]
        tport = free_port()
        announce = "http://127.0.0.1:%d/announce" % tport
        # two torrents of the blob: with the store's URL as web seed (BEP 19), and without (the store seeds itself)
        webseeded, plain = work / "webseed.torrent", work / "plain.torrent"
        subprocess.run(["mktorrent", "-a", announce, "-w", url, "-l", "18", "-o", str(webseeded), str(blob)],
                       check=True, capture_output=True)
        subprocess.run(["mktorrent", "-a", announce, "-l", "18", "-o", str(plain), str(blob)],
                       check=True, capture_output=True)
        hashes = [info_hash(t) for t in (webseeded, plain)]
        # Debian's opentracker serves only the torrents its whitelist names. It chroots into its directory (-d),
        # then reads the whitelist as user nobody: a folder of its own, 0755.
        home = work / "tracker"
        home.mkdir(mode=0o755)
        (home / "whitelist").write_text("".join(h + "\n" for h in hashes))
        tracker = subprocess.Popen(["opentracker", "-i", "127.0.0.1", "-p", str(tport), "-P", str(tport),
                                    "-d", str(home), "-w", "whitelist"], cwd=home,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seed = work / "seed"
        seed.mkdir()
        os.link(blob, seed / "blob")
        try:
            for h in hashes:
                wait_for_tracker(tport, h)
            for n in [int(x) for x in opts.nodes.split(",")]:
                bucket.sent = 0
                star_s = star(url, n, size, opts.mbps, work) if "star" in opts.modes else float("nan")
                star_bytes = bucket.sent
                bucket.sent = 0
                web_s, digest = p2p(webseeded, "blob", n, size, opts.mbps, work) if "webseed" in opts.modes \
                    else (float("nan"), want)
                web_bytes = bucket.sent
                runs = {"seeder": [], "leave": []}
                for _round in range(opts.repeat):  # interleaved, so both see the same machine
                    for mode in runs:
                        if mode in opts.modes:
                            took, got = p2p(plain, "blob", n, size, opts.mbps, work, seed=seed, leave=mode == "leave")
                            if got != want:
                                raise SystemExit("p2p: the blob arrived with other content")
                            runs[mode].append(took)
                seeded_s, left_s = (statistics.median(runs[m]) if runs[m] else float("nan") for m in ("seeder", "leave"))
                if digest != want:
                    raise SystemExit("p2p: the blob arrived with other content")
                row = {"nodes": n, "star_s": round(star_s, 1), "star_x": round(star_s / one, 2),
                       "webseed_s": round(web_s, 1), "webseed_x": round(web_s / one, 2),
                       "seeder_s": round(seeded_s, 1), "seeder_x": round(seeded_s / one, 2),
                       "leave_s": round(left_s, 1), "leave_x": round(left_s / one, 2),
                       "seeder_runs_s": [round(t, 1) for t in runs["seeder"]],
                       "leave_runs_s": [round(t, 1) for t in runs["leave"]],
                       "store_mb_star": round(star_bytes / 1e6, 1), "store_mb_webseed": round(web_bytes / 1e6, 1)}
                report["rows"].append(row)
                print("nodes %2d: star %6.1f s (%5.2fx one node); BitTorrent with the store as web seed %6.1f s "
                      "(%5.2fx), with the store as a seeding peer and the nodes seeding once done (as model_fetch) "
                      "%6.1f s (%5.2fx; runs %s), the nodes leaving once done %6.1f s (%5.2fx; runs %s); the store "
                      "sent %.0f MB for star, %.0f MB as web seed"
                      % (n, row["star_s"], row["star_x"], row["webseed_s"], row["webseed_x"], row["seeder_s"],
                         row["seeder_x"], row["seeder_runs_s"], row["leave_s"], row["leave_x"], row["leave_runs_s"],
                         row["store_mb_star"], row["store_mb_webseed"]))
        finally:
            tracker.terminate()
            tracker.wait(10)
            server.shutdown()
    print("one node alone: %.1f s (%d MB at %.0f MB/s); every server capped at %.0f MB/s (the store's upload, each "
          "peer's up and down)" % (one, opts.mb, opts.mbps, opts.mbps))
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
