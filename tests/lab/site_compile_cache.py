"""The site compile cache in the lab, after the first site.yml: every node's key has its cache in the site registry
(shared by the node, or taken from it where an earlier lab on this machine shared the same key); and a node that
starts from an empty cache root gets the files back.

The second half is the restore a replaced node runs before its first start, run by hand on lab-node4 into a fresh
directory beside its cache root (its vLLM keeps serving): the same module, the same registry, the node's own key.
Runs on the machine that hosts the lab nodes (scripts/lab.sh test).
"""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

NODES = ("lab-node1", "lab-node2", "lab-node3", "lab-node4")
ROOT = "/var/lib/inferops-vllm/compile-cache"
RECORD = ROOT + "/.inferops-site-cache.json"
REGISTRY = "http://127.0.0.1:5000"
SCRATCH = "/var/lib/inferops-vllm/compile-cache-check"


def fail(msg: str) -> None:
    sys.exit("site compile cache FAILED: " + msg)


def docker(node: str, *argv: str) -> str:
    out = subprocess.run(["docker", "exec", node, *argv], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        fail("docker exec %s %s: %s" % (node, " ".join(argv), out.stderr.strip()))
    return out.stdout


def main() -> None:
    with urllib.request.urlopen(REGISTRY + "/v2/inferops-vllm/compile-cache/tags/list", timeout=10) as resp:
        tags = set(json.load(resp).get("tags") or ())
    keys = {}
    for node in NODES:
        record = json.loads(docker(node, "cat", RECORD))["keys"]
        if len(record) != 1:
            fail("%s's %s names %d keys, not 1: %s" % (node, RECORD, len(record), record))
        (key, entry), = record.items()
        # collected or present on a fresh registry; restored where an earlier lab on this machine shared the key
        if entry.get("state") not in ("collected", "present", "restored") or key not in tags:
            fail("%s's key %s is %s, and the registry's tags are %s" % (node, key, entry, sorted(tags)))
        keys[node] = (key, entry)
    if len({key for key, _entry in keys.values()}) != len(NODES):
        fail("two nodes of different ranks or clusters got one key: %s" % keys)
    print("site compile cache: every node's own key is in the site registry: %s"
          % ", ".join("%s %s… (%s, %s files)" % (n, k[:12], e["state"], e.get("files", "?")) for n, (k, e) in keys.items()))

    # a replaced lab-node4: an empty cache root takes its key's cache from the site
    key, entry = keys["lab-node4"]
    docker("lab-node4", "sh", "-c", "rm -rf %s && mkdir -m 0700 %s" % (SCRATCH, SCRATCH))
    try:
        out = subprocess.run(["ansible", "-i", "inventories/lab", "lab-node4", "-b", "-o", "-m",
                              "inferops.vllm.compile_cache", "-a",
                              "state=restored cache_dir=%s registry=%s key=%s" % (SCRATCH, REGISTRY, key)],
                             capture_output=True, text=True, check=False)
        result = out.stdout.split("=>", 1)[-1].strip()
        restored = json.loads(result) if result.startswith("{") else {}
        if out.returncode != 0 or not restored.get("restored") or restored.get("skipped"):
            fail("lab-node4 did not restore its key's cache: %s %s" % (out.stdout[-1500:], out.stderr[-800:]))
        files = int(docker("lab-node4", "sh", "-c", "find %s -type f ! -name '.inferops-*' | wc -l" % SCRATCH))
        shared = int(docker("lab-node4", "sh", "-c", "find %s -type f ! -name '.inferops-*' | wc -l" % ROOT))
        # its own root may have grown since it shared (vLLM writes on), never shrunk
        if files != restored["files"] or not 0 < files <= shared:
            fail("lab-node4 restored %d files (module says %s), its own cache root has %d"
                 % (files, restored["files"], shared))
        print("site compile cache: an empty cache root on lab-node4 took %d files (%.1f MB) from the site; its own "
              "root holds %d" % (files, restored["bytes"] / 1e6, shared))
    finally:
        docker("lab-node4", "rm", "-rf", SCRATCH)


if __name__ == "__main__":
    main()
