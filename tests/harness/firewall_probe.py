"""Who reaches each port of a simulated node with a network namespace of its own (molecule/harness's harness-fw), with
the firewall it loaded: a veth pair joins the node's namespace to one this probe makes, which holds every client
address; listeners on the node answer each port; every client connects from its own address. Only loopback-range
addresses on that pair (route_localnet), so no traffic leaves the two namespaces; the probe's namespace and the veth
go when it ends.

usage: firewall_probe.py CONTAINER NODE_ADDRESS '{"name": "address", ...}' PORT...
prints {"name port": "open" | "refused" | "error ..."} as JSON."""

import json
import subprocess
import sys
import uuid

SERVER = """
import socket, sys, time
socks = []
for port in map(int, sys.argv[1:]):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", port)); s.listen()
    socks.append(s)
print("ready", flush=True)
time.sleep(60)
"""

CLIENT = """
import json, socket, sys
node, out = sys.argv[1], {}
for name, source, port in json.loads(sys.argv[2]):
    s = socket.socket(); s.settimeout(3); s.bind((source, 0))
    try:
        s.connect((node, port)); out["%s %d" % (name, port)] = "open"
    except ConnectionRefusedError:
        out["%s %d" % (name, port)] = "refused"
    except OSError as exc:
        out["%s %d" % (name, port)] = "error %s" % exc
    finally:
        s.close()
print(json.dumps(out))
"""


def sh(*argv, check=True):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    if check and result.returncode:
        sys.exit("firewall_probe: %s failed: %s" % (" ".join(argv), result.stderr.strip()))
    return result.stdout


def main(container, node, clients, ports):
    pid = sh("docker", "inspect", "-f", "{{.State.Pid}}", container).strip()
    tag = uuid.uuid4().hex[:6]
    ns, here, there = "fwp-" + tag, "fwp" + tag, "fwq" + tag
    sh("ip", "netns", "add", ns)
    server = None
    try:
        sh("ip", "link", "add", here, "netns", ns, "type", "veth", "peer", "name", there)
        sh("ip", "link", "set", there, "netns", pid)
        enter = ["nsenter", "-t", pid, "-n"]
        for prefix, dev, addresses in ((enter, there, [node]), (["ip", "netns", "exec", ns], here, clients.values())):
            for key in ("all", dev):
                sh(*prefix, "sysctl", "-qw", "net.ipv4.conf.%s.route_localnet=1" % key)
            for address in addresses:
                sh(*prefix, "ip", "addr", "add", address + "/24", "dev", dev)
            sh(*prefix, "ip", "link", "set", dev, "up")
        server = subprocess.Popen(["docker", "exec", "-i", container, "python3", "-c", SERVER, *ports],
                                  stdout=subprocess.PIPE, text=True)
        if server.stdout.readline().strip() != "ready":
            sys.exit("firewall_probe: the listeners did not start in %s" % container)
        pairs = [[name, address, int(port)] for name, address in clients.items() for port in ports]
        print(sh("ip", "netns", "exec", ns, sys.executable, "-c", CLIENT, node, json.dumps(pairs)).strip())
    finally:
        if server is not None:
            server.kill()
            server.wait()
            sh("docker", "exec", container, "pkill", "-f", "socket.SO_REUSEADDR", check=False)
        sh("nsenter", "-t", pid, "-n", "ip", "link", "del", there, check=False)
        sh("ip", "netns", "del", ns, check=False)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:])
