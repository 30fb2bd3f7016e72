"""The lab as the tests on its host machine see it: the two clusters and the router (inventories/lab), the
calls that ask them for a generation, the docker calls that read or break a node, and a steady client
through the router. Shared by tests/lab/day_two.py and bench/heal_bench.py.

Requests go through the collection's own health.py (the watchdog's probe), which is stdlib only; its request()
is every lab test's HTTP call (prometheus_targets.py takes health from here).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins/module_utils/node"))
import health  # noqa: E402  pylint: disable=wrong-import-position

INVENTORY = ROOT / "inventories/lab"
KEY = "lab-key-not-a-secret"
MODEL = "tiny-k3"
ROUTER = "http://127.0.0.1:18480"
CLUSTERS = {   # head endpoint, nodes (head first)
    "lab": ("http://127.0.1.1:18300", ["lab-node1", "lab-node2"]),      # each head's own address
    "lab_dp": ("http://127.0.1.3:18310", ["lab-node3", "lab-node4"]),
}
RANKS = {"http://127.0.1.1:18300": 1, "http://127.0.1.3:18310": 2}   # data-parallel ranks behind each head
STATE_DIR = "/var/lib/inferops-vllm"


class LabError(SystemExit):
    """A lab node could not be read or acted on: the test (or bench) cannot go on."""


def http(url: str, timeout: float = 30) -> tuple[int, object]:
    return health.request(url, KEY, None, timeout)


def generate(base: str, timeout: float = 20, rank: int | None = None) -> tuple[bool, float, str]:
    """One short generation: (answered with text, seconds, why not)."""
    start = time.monotonic()
    try:
        status, body = health.chat(base, MODEL, KEY, timeout, max_tokens=8, prompt="Say hello.", rank=rank)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, time.monotonic() - start, str(getattr(exc, "reason", exc))
    # the K3-format model may spend its few tokens on reasoning: any text counts as an answer
    text = health.answer(body) if status == 200 else None
    ok = bool((text or "").strip())
    return ok, time.monotonic() - start, "" if ok else "%s %s" % (status, str(body)[:200])


def serves(base: str, timeout: float = 20) -> bool:
    """Every data-parallel rank answers a generation sent to it, at once (a lost rank hangs)."""
    ranks = RANKS.get(base, 1)
    results = health.each_rank(ranks, lambda r: generate(base, timeout, r)[0], timeout + 5)
    return all(results)


def docker(node: str, *argv: str, check_rc: bool = True) -> str:
    out = subprocess.run(["docker", "exec", node, *argv], capture_output=True, text=True, check=False)
    if check_rc and out.returncode != 0:
        raise LabError("lab: docker exec %s %s: %s" % (node, " ".join(argv), out.stderr.strip()))
    return out.stdout


def container(node: str, name: str = "vllm") -> dict:
    return json.loads(docker(node, "docker", "container", "inspect", name))[0]


def image_of(node: str) -> str:
    return container(node)["Config"]["Image"]


def kill_vllm(node: str) -> None:
    """The vLLM process dies (a crash, the OOM killer): docker's restart policy brings it back."""
    pid = container(node)["State"]["Pid"]
    docker(node, "kill", "-9", str(pid))


def reboot(node: str) -> None:
    """The node restarts (its container, stopped with systemd's own signal): its dockerd brings vLLM back."""
    out = subprocess.run(["docker", "restart", node], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise LabError("lab: docker restart %s: %s" % (node, out.stderr.strip()))


def watchdog(node: str) -> dict:
    """The node's watchdog status file ({} while the node cannot be read, as in a reboot)."""
    text = docker(node, "cat", STATE_DIR + "/watchdog.json", check_rc=False)
    try:
        return json.loads(text)
    except ValueError:
        return {}


def router_workers() -> list[str]:
    status, body = http(ROUTER + "/list_workers")
    if status != 200 or not isinstance(body, dict):
        raise LabError("lab: router /list_workers answered %s %s" % (status, body))
    return sorted(body.get("urls", []))


def wait_until_serving(endpoint: str, deadline: float) -> float | None:
    """Seconds until the endpoint serves on every rank twice in a row."""
    start, streak = time.monotonic(), 0
    while time.monotonic() - start < deadline:
        streak = streak + 1 if serves(endpoint, timeout=15) else 0
        if streak == 2:
            return time.monotonic() - start
        time.sleep(3)
    return None


def wait_until_failing(endpoint: str, deadline: float) -> bool:
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        if not serves(endpoint, timeout=15):
            return True
        time.sleep(1)
    return False


class Client:
    """A steady client through the router: one request at a time with `pause` seconds between them (about one a
    second on the lab), bounded in count and time. A request that takes its whole timeout is hung; every request
    that got no text failed. The pause leaves most of the lab's two CPUs to the reloads the test waits for, and a
    second between requests still lands several in every drain and move."""

    def __init__(self, max_requests: int = 3000, max_seconds: float = 1800, timeout: float = 60, pause: float = 1.0):
        self.samples: list[tuple[float, bool, float, str]] = []   # (when it ended, ok, seconds, why not)
        self.stop = threading.Event()
        self.max_requests, self.max_seconds, self.timeout, self.pause = max_requests, max_seconds, timeout, pause
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> "Client":
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set() and len(self.samples) < self.max_requests and time.monotonic() - start < self.max_seconds:
            ok, latency, err = generate(ROUTER, timeout=self.timeout)
            self.samples.append((time.time(), ok, latency, err))
            time.sleep(self.pause)

    def figures(self, since: float, until: float) -> dict:
        window = [s for s in self.samples if since <= s[0] <= until]
        latencies = sorted(s[2] for s in window if s[1])
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else None
        return {"requests": len(window), "failed": sum(1 for s in window if not s[1]),
                "hung": sum(1 for s in window if not s[1] and s[2] >= self.timeout - 1),
                "errors": sorted({s[3] for s in window if not s[1]})[:5],
                "p50_s": round(statistics.median(latencies), 3) if latencies else None,
                "p99_s": round(p99, 3) if p99 is not None else None}
