"""Each lab node's running vLLM got its own address: the launch put every node's address where it
belongs (VLLM_HOST_IP, the follower's --master-addr / --data-parallel-address pointing at its head),
and Ansible reached each node over SSH on that address as the non-root user ops.

The nodes share one loopback, so a launch that put the wrong node's address somewhere would still
serve: only these checks see it. Runs on the machine that hosts the lab nodes (scripts/lab.sh test).
"""
from __future__ import annotations

import json
import subprocess
import sys

NODES = {"lab-node1": "127.0.1.1", "lab-node2": "127.0.1.2", "lab-node3": "127.0.1.3", "lab-node4": "127.0.1.4"}
HEADS = {"lab-node2": ("--master-addr", "127.0.1.1"), "lab-node4": ("--data-parallel-address", "127.0.1.3")}


def docker(node: str, *argv: str) -> str:
    out = subprocess.run(["docker", "exec", node, *argv], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit("addresses FAILED: docker exec %s %s: %s" % (node, " ".join(argv), out.stderr.strip()))
    return out.stdout


def flag_value(argv: list, config_yaml: str, flag: str) -> str | None:
    """The flag's value on the command line (--flag V or --flag=V), else in the --config file it reads."""
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    for line in config_yaml.splitlines():
        key, _sep, value = line.partition(":")
        if key.strip() == flag[2:]:
            return value.strip().strip("'\"")
    return None


def main() -> None:
    problems = []
    for node, address in NODES.items():
        container = json.loads(docker(node, "docker", "container", "inspect", "vllm"))[0]
        env = dict(item.split("=", 1) for item in container["Config"]["Env"])
        if env.get("VLLM_HOST_IP") != address:
            problems.append("%s: VLLM_HOST_IP=%s, not its own address %s" % (node, env.get("VLLM_HOST_IP"), address))
        # the process itself, not only the container's config
        pid = str(container["State"]["Pid"])
        proc_env = dict(item.split("=", 1) for item in docker(node, "cat", "/proc/%s/environ" % pid).split("\0") if "=" in item)
        if proc_env.get("VLLM_HOST_IP") != address:
            problems.append("%s: the running vLLM has VLLM_HOST_IP=%s" % (node, proc_env.get("VLLM_HOST_IP")))
        if node in HEADS:
            flag, head = HEADS[node]
            value = flag_value(docker(node, "cat", "/proc/%s/cmdline" % pid).split("\0"),
                               docker(node, "cat", "/etc/inferops-vllm/vllm.yaml"), flag)
            if value != head:
                problems.append("%s: %s %s, not its head's address %s" % (node, flag, value, head))
        listening = docker(node, "ss", "-Hltn")
        if "%s:2222" % address not in listening:
            problems.append("%s: sshd does not listen on its own address %s:2222" % (node, address))
        if "Accepted publickey for ops" not in docker(node, "journalctl", "-u", "ssh", "--no-pager", "-q"):
            problems.append("%s: no SSH login as ops in its journal: Ansible did not come in over SSH" % node)
    if problems:
        sys.exit("addresses FAILED:\n  " + "\n  ".join(problems))
    print("=== every lab node runs vLLM on its own address and was reached over SSH as ops: %s"
          % ", ".join("%s=%s" % item for item in NODES.items()))


if __name__ == "__main__":
    main()
