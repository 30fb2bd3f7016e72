"""The host firewall the plan compiles (module_utils/controller/firewall.py), loaded by the real nftables into network
namespaces this test makes and removes (never the machine's own rules): each listener answers the hosts its flow table
names and refuses everyone else, SSH and ports that are not the collection's stay open, a second load changes
nothing, and another table of the host is left as it was. The namespaces talk over a veth pair on loopback-range
addresses (route_localnet), so no traffic leaves them."""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "harness"))
from firewall_probe import CLIENT, SERVER  # noqa: E402  (the Molecule probe's listeners and clients)

from ansible_collections.inferops.vllm.plugins.module_utils.controller import firewall, flows
from ansible_collections.inferops.vllm.plugins.module_utils.controller.fleet import PortUse

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

ADDRESSES = {"node": "127.0.3.1", "peer": "127.0.3.2", "router": "127.0.3.3", "prom": "127.0.3.4"}
CONTROLLER, STRANGER = "127.0.3.5", "127.0.3.9"
PORTS = {"api": 8000, "dp": 13345, "kv": 5600, "kv2": 5601, "exporter": 9100, "ssh": 2222, "other": 7777}


def table():
    cluster = {"name": "c", "nodes": ["node", "peer"], "endpoint": "http://127.0.3.1:8000",
               "pd": {"deployment": "d", "role": "prefill"}}
    launches = {host: {"rank": rank, "args": {"host": "0.0.0.0"}, "env": {}, "cluster": cluster,
                       "secret_env": {"VLLM_API_KEY": "vllm_api_key"}} for rank, host in enumerate(["node", "peer"])}
    uses = {"node": [PortUse(8000, "the vLLM API", "vllm_port"), PortUse(13345, "data-parallel RPC", "vllm_dp_rpc_port"),
                     PortUse(5600, "the KV side channel", "vllm_kv_side_channel_port"),
                     PortUse(5601, "the KV side channel", "vllm_kv_side_channel_port"),
                     PortUse(9100, "node_exporter", "vllm_exporters_node_exporter_port")]}
    return flows.compile_flows(flows.Site(uses=uses, launches=launches, routers={"router": ["c"]}, prometheus=["prom"],
                                          p2p=[], p2p_range=(51413, 51612, "p2p", "vllm_model_p2p"),
                                          ssh_ports={"node": 2222}, binds=lambda host, use: None))


def sh(*argv, check=True):
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=30)


@pytest.fixture
def namespaces():
    """A node namespace and a client one joined by a veth pair; the client holds every other host's address."""
    assert shutil.which("nft") and shutil.which("ip"), "nft or ip is missing: apt-get install nftables iproute2 " \
        "(scripts/test.sh installs them)"
    tag = uuid.uuid4().hex[:6]
    node, client = "fwn-" + tag, "fwc-" + tag
    sh("ip", "netns", "add", node)
    sh("ip", "netns", "add", client)
    try:
        sh("ip", "link", "add", "fwa" + tag, "netns", node, "type", "veth", "peer", "name", "fwb" + tag, "netns", client)
        for ns, dev, addresses in ((node, "fwa" + tag, [ADDRESSES["node"]]),
                                   (client, "fwb" + tag, [a for h, a in ADDRESSES.items() if h != "node"]
                                    + [CONTROLLER, STRANGER])):
            for key in ("all", dev):
                sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.%s.route_localnet=1" % key)
            for address in addresses:
                sh("ip", "-n", ns, "addr", "add", address + "/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        yield node, client
    finally:
        sh("ip", "netns", "del", node, check=False)
        sh("ip", "netns", "del", client, check=False)


def reach(namespaces, ruleset):
    """{'source port': open|refused} from every client address to every port, with the ruleset loaded on the node."""
    node, client = namespaces
    path = "/tmp/%s.nft" % node
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(ruleset)
    try:
        sh("ip", "netns", "exec", node, "nft", "-f", path)
    finally:
        os.unlink(path)
    server = subprocess.Popen(["ip", "netns", "exec", node, sys.executable, "-c", SERVER, *map(str, PORTS.values())],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        pairs = [[source, source, port] for source in list(ADDRESSES.values())[1:] + [CONTROLLER, STRANGER]
                 for port in PORTS.values()]
        return json.loads(sh("ip", "netns", "exec", client, sys.executable, "-c", CLIENT, ADDRESSES["node"],
                             json.dumps(pairs)).stdout)
    finally:
        server.kill()
        server.wait()


def test_each_listener_answers_only_the_hosts_its_table_names(namespaces):
    machine_rules = sh("nft", "list", "ruleset").stdout
    node, _client = namespaces
    sh("ip", "netns", "exec", node, "nft", "add", "table", "inet", "site_own")   # a table of the site's: left alone
    rules = firewall.ruleset("node", table(), ADDRESSES, firewall.allow_networks([CONTROLLER + "/32"]))
    seen = reach(namespaces, rules)
    allowed = {"api": ["peer", "router", "prom", CONTROLLER], "dp": ["peer"], "kv": ["peer"], "kv2": ["peer"],
               "exporter": ["prom"], "ssh": "all", "other": "all"}
    for name, port in PORTS.items():
        for who, source in list(ADDRESSES.items())[1:] + [(CONTROLLER, CONTROLLER), (STRANGER, STRANGER)]:
            want = "open" if allowed[name] == "all" or who in allowed[name] else "refused"
            assert seen["%s %d" % (source, port)] == want, "%s (%s) to %s port %d: %s" % (
                who, source, name, port, seen["%s %d" % (source, port)])
    # loaded again: the same table, nothing added; the site's table is still there; the machine's rules untouched
    before = sh("ip", "netns", "exec", node, "nft", "list", "ruleset").stdout
    reach(namespaces, rules)
    assert sh("ip", "netns", "exec", node, "nft", "list", "ruleset").stdout == before
    assert "table inet site_own" in before and "table inet %s" % firewall.TABLE in before
    assert sh("nft", "list", "ruleset").stdout == machine_rules


def test_without_an_allow_list_outside_listeners_stay_open(namespaces):
    seen = reach(namespaces, firewall.ruleset("node", table(), ADDRESSES, []))
    assert seen["%s 8000" % STRANGER] == "open"          # clients and the controller: no one locked out
    assert seen["%s 13345" % STRANGER] == "refused"      # the cluster's own ports stay closed to strangers
    assert seen["%s 9100" % STRANGER] == "refused"       # Prometheus is a host of the inventory


def test_every_example_sites_firewall_is_valid_nftables(namespaces):
    """The rulesets the plan compiled for every example site (tests/golden/*/firewall), checked by nft itself."""
    node, _client = namespaces
    files = sorted((Path(__file__).parents[1] / "golden").glob("*/firewall/*.nft"))
    assert files, "no golden firewall files: UPDATE_GOLDEN=1 tests/unit/test_plan_playbook.py"
    for path in files:
        result = sh("ip", "netns", "exec", node, "nft", "-c", "-f", str(path), check=False)
        assert result.returncode == 0, "%s: %s" % (path, result.stderr)
