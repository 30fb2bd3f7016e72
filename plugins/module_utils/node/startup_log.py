# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A vLLM container's startup phases, read from its own log since its last start.

vLLM 0.32 exports no startup metric: its log lines carry the phases (docs/startup.md lists each with the
source that writes it). `docker logs --timestamps` stamps every line with the container's clock, so a phase
is the time from the container's start to the line that ends it. The vllm_startup module (the smoke report)
and the watchdog (its Prometheus textfile) both read a node's startup here.

Stdlib only, Python 3.9: the watchdog runs it on the node beside node_state.py.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

try:
    from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
except ImportError:  # on a node, beside the watchdog's script
    import node_record  # type: ignore[no-redef]

try:
    from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import docker_time
except ImportError:  # on a node, for the watchdog: node_state.py lies next to this file
    from node_state import docker_time  # type: ignore[no-redef]

# (phase, markers, which line ends it): "first" for a line printed once, "last" where every worker of the
# node prints it (tensor-parallel ranks), so the phase ends when the slowest one did.
PHASES: Tuple[Tuple[str, Tuple[str, ...], str], ...] = (
    ("engine_started", ("Initializing a V1 LLM engine",), "first"),
    ("weights_loaded", ("Loading weights took", "Model loading took"), "last"),
    # GPU: torch.compile's total; CPU (AOT compile): the compiled function saved, or loaded from the cache
    ("compiled", ("torch.compile took", "torch.compile takes", "saved AOT compiled function",
                  "Directly load AOT compilation"), "last"),
    ("graphs_captured", ("Graph capturing finished in",), "last"),
    ("engine_ready", ("init engine (profile, create kv cache, warmup model) took",), "last"),
    ("api_ready", ("Application startup complete.",), "first"),
)
PHASE_NAMES = tuple(name for name, _markers, _which in PHASES)
# The figure vLLM prints on the line ("took 12.34 s", "took 1.5 seconds", "finished in 7 secs").
_TOOK = re.compile(r"(?:took|takes|finished in) ([0-9]+(?:\.[0-9]+)?) ?s")
_COMPILATION = re.compile(r"\(compilation: ([0-9]+(?:\.[0-9]+)?) ?s")
# Whether torch.compile's artefacts came from the cache (vllm/compilation/backends.py, decorators.py).
_CACHE_HIT = ("Directly load the compiled graph", "Directly load AOT compilation")
_CACHE_MISS = ("Compiling a graph for", "saved AOT compiled function")
# Where the engine took its weights with vllm_weight_cache (vLLM's IpcModelLoader): "Mapped %d tensors from the
# weight cache daemon (%s mode)", or "Weight cache unusable (%s); falling back to disk loading" (and "... IPC loading
# failed; falling back ...")
_WEIGHT_CACHE_MAPPED = "tensors from the weight cache daemon"
_WEIGHT_CACHE_FALLBACK = "falling back to disk loading"
READY = "api_ready"
MAX_LINES = 200000
TIMEOUT = 60.0

Runner = Callable[[List[str], int, float, str], Tuple[List[str], str]]


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def phases(lines: Iterable[str], started_at: float) -> Dict[str, object]:
    """The phases in `docker logs --timestamps` lines of one container start: for each phase that the log shows,
    when it ended (`at`), seconds from the container's start (`after_s`) and the figure vLLM printed (`took_s`);
    whether torch.compile's graphs came from the cache, and with the weight cache where the weights came from.
    Lines without a docker timestamp, or from before the start, are skipped."""
    found: Dict[str, Dict[str, object]] = {}
    cache: Optional[str] = None
    mapped = fell_back = False
    for line in lines:
        stamp_text, _sep, text = line.rstrip("\n").partition(" ")
        stamp = docker_time(stamp_text)
        if stamp is None or stamp < started_at - 0.001:
            continue
        mapped = mapped or _WEIGHT_CACHE_MAPPED in text
        fell_back = fell_back or _WEIGHT_CACHE_FALLBACK in text
        if any(marker in text for marker in _CACHE_HIT):
            cache = "hit"
        elif cache is None and any(marker in text for marker in _CACHE_MISS):
            cache = "miss"
        for name, markers, which in PHASES:
            if not any(marker in text for marker in markers) or (which == "first" and name in found):
                continue
            took = _TOOK.search(text)
            entry: Dict[str, object] = {"at": _iso(stamp), "after_s": round(max(0.0, stamp - started_at), 3),
                                        "took_s": float(took.group(1)) if took else None}
            compilation = _COMPILATION.search(text)
            if compilation:
                entry["compilation_s"] = float(compilation.group(1))
            found[name] = entry
    return {"started_at": _iso(started_at), "phases": {n: found[n] for n in PHASE_NAMES if n in found},
            "compile_cache": cache, "ready": READY in found,
            # one rank that fell back read the disk: the start did not gain from the cache
            "weights_from": "disk, the weight cache unusable" if fell_back else "weight cache" if mapped else None}


def _record(path: str) -> Dict[str, Any]:
    """A node's JSON record (node_record.read: never through a link); {} where there is none or it is not one."""
    if not path:
        return {}
    try:
        return node_record.read(path) or {}
    except OSError:
        return {}


def recorded(image_record: str, model_record: str) -> Dict[str, Optional[str]]:
    """The two phases before the container, from the node's records: when the node first had the image it runs
    (image.json's pulled_at) and when it verified the weights it serves (model.json's current.verified_at)."""
    current = _record(model_record).get("current")
    pulled = _record(image_record).get("pulled_at")
    staged = current.get("verified_at") if isinstance(current, dict) else None
    return {"image_pulled_at": pulled if isinstance(pulled, str) else None,
            "weights_staged_at": staged if isinstance(staged, str) else None}


def read_lines(argv: List[str], max_lines: int = MAX_LINES, timeout: float = TIMEOUT,
               stop: str = "Application startup complete.") -> Tuple[List[str], str]:
    """The output lines of argv (stdout and stderr together), up to the first line holding `stop`, at most
    max_lines, within timeout seconds; and why it stopped short ("" when it reached the end or `stop`)."""
    deadline = time.monotonic() + timeout
    # a script the watchdog runs under bare python3 as well as a module's helper: no AnsibleModule here
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # pylint: disable=ansible-bad-function,consider-using-with
    except OSError as exc:
        return [], "could not run %s: %s" % (argv[0], exc)
    lines: List[str] = []
    pending, short = b"", ""
    try:
        fd = proc.stdout.fileno()   # type: ignore[union-attr]
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                short = "stopped after %.0f s" % timeout
                break
            ready, _w, _x = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *whole, pending = pending.split(b"\n")
            start = len(lines)
            lines += [raw.decode("utf-8", "replace") for raw in whole]
            hit = next((i for i in range(start, len(lines)) if stop in lines[i]), None) if stop else None
            if hit is not None:
                return lines[:hit + 1], ""
            if len(lines) >= max_lines:
                return lines[:max_lines], "stopped after %d lines" % max_lines
        if pending and not short:
            lines.append(pending.decode("utf-8", "replace"))
        return lines, short
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()   # type: ignore[union-attr]


def read(docker: str, container: str, started_at: float, max_lines: int = MAX_LINES, timeout: float = TIMEOUT,
         reader: Runner = read_lines) -> Dict[str, object]:
    """The phases of the container's start at started_at (epoch, its State.StartedAt), read from its log with
    docker's timestamps; `short` says why the read stopped early ("" when it did not)."""
    lines, short = reader([docker, "logs", "--timestamps", "--since", "%.3f" % started_at, container], max_lines,
                          timeout, "Application startup complete.")
    return dict(phases(lines, started_at), short=short)
