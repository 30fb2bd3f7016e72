"""Debian's docker-registry on a loopback port, as the site registry of the weights and the compile cache tests,
and the small socket and HTTP waits they share."""
import contextlib
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from vllm_servers import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def wait_http(url, proc, log, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("exited: " + Path(log).read_text()[-2000:])
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("%s did not answer: %s" % (url, Path(log).read_text()[-2000:] if log else ""))


@contextlib.contextmanager
def running_registry(base, port=None):
    """The registry's URL, with a throwaway data dir under base; port if free, else any."""
    if shutil.which("docker-registry") is None:
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    port = port if port and port_free(port) else free_port()
    tmpl = (ROOT / "tests/harness/registry.yml.tmpl").read_text()
    (base / "config.yml").write_text(tmpl.replace("@DATA@", str(base / "data")).replace(
        "127.0.0.1:5000", "127.0.0.1:%d" % port))
    log = base / "registry.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(["docker-registry", "serve", str(base / "config.yml")], stdout=fh, stderr=fh)
    url = "http://127.0.0.1:%d" % port
    try:
        wait_http(url + "/v2/", proc, log)
        yield url
    finally:
        stop_process(proc, 20)
