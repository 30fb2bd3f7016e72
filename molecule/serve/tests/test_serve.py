"""Each node runs the pinned digest with exactly its compiled launch; secrets
only in the 0600 env file; the mirror fetched upstream once for three nodes."""
import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "_shared"))
from node_reads import debian_13_node  # noqa: E402  (molecule/_shared, beside the scenarios)

DIGEST_REF = os.environ["INFEROPS_STANDIN_VLLM_DIGEST"]
DIGEST = DIGEST_REF.split("@")[1]
SECRET = "molecule-not-a-real-secret"


def inspect(host):
    return json.loads(host.check_output("docker inspect vllm"))[0]


def test_the_nodes_run_debian_13(host):
    debian_13_node(host)


def test_runs_the_pinned_digest_through_the_mirror(host):
    info = inspect(host)
    assert info["Config"]["Image"] == "127.0.0.1:5001/inferops/standin-vllm@" + DIGEST
    image = json.loads(host.check_output("docker image inspect %s" % info["Image"]))[0]
    assert any(d.endswith("@" + DIGEST) for d in image["RepoDigests"])
    state = json.loads(host.file("/var/lib/inferops-vllm/image.json").content_string)
    assert state["current"] == info["Config"]["Image"]


def test_runs_exactly_the_compiled_launch(host):
    info = inspect(host)
    assert info["Config"]["Cmd"] == ["--config", "/etc/inferops-vllm/vllm.yaml"]
    assert info["HostConfig"]["NetworkMode"] == "host" and info["HostConfig"]["IpcMode"] == "host"
    assert info["HostConfig"]["Privileged"] is False
    config = yaml.safe_load(host.file("/etc/inferops-vllm/vllm.yaml").content_string)
    record = json.loads(host.check_output(
        "docker exec vllm python3 -c \"import sys; sys.stdout.write(open('/tmp/vllm-launch.json').read())\""))
    assert record["argv"] == ["serve", "--config", "/etc/inferops-vllm/vllm.yaml"]
    assert {k: v for k, v in record["options"].items() if k != "config"} == config
    env_file = dict(line.split("=", 1) for line in host.file("/etc/inferops-vllm/vllm.env").content_string.splitlines()
                    if line and not line.startswith("#"))
    container_env = dict(e.split("=", 1) for e in info["Config"]["Env"])
    for key, value in env_file.items():
        assert container_env[key] == value
    assert record["env"]["VLLM_API_KEY"] == "<redacted>"


def test_roles_and_ranks(host):
    config = yaml.safe_load(host.file("/etc/inferops-vllm/vllm.yaml").content_string)
    rank = {"serve-node1": 0, "serve-node2": 1, "serve-node3": 2}[host.backend.get_hostname()]
    assert config["data-parallel-size"] == 3 and config.get("data-parallel-start-rank", 0) == rank
    assert config.get("headless", False) == (rank > 0)
    assert ("port" in config) == (rank == 0)


def test_secret_only_in_the_env_file(host):
    env = host.file("/etc/inferops-vllm/vllm.env")
    assert env.mode == 0o600 and env.user == "root" and env.contains(SECRET)
    assert not host.file("/etc/inferops-vllm/vllm.yaml").contains(SECRET)
    info = inspect(host)
    assert SECRET not in json.dumps(info["Config"]["Cmd"]) and SECRET not in json.dumps(info["Args"])


@pytest.mark.parametrize("unused", [None])
def test_head_serves_with_the_key(host, unused):
    if host.backend.get_hostname() != "serve-node1":
        pytest.skip("followers are headless")
    out = host.check_output("curl -s -H 'Authorization: Bearer %s' http://127.0.0.1:18400/v1/models" % SECRET)
    served = yaml.safe_load(host.file("/etc/inferops-vllm/vllm.yaml").content_string)["served-model-name"]
    assert json.loads(out)["data"][0]["id"] == served
    assert host.run("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18400/v1/models").stdout == "401"


def test_mirror_fetched_upstream_once(host):
    """Three nodes pulled; upstream sent each blob of the image exactly once."""
    if host.backend.get_hostname() != "serve-node1":
        pytest.skip("counted once, from the harness registry's log")
    cache = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm"))
    start = int((Path(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]) / "registry-log-start").read_text())
    lines = (cache / "logs/registry.log").read_text().splitlines()[start:]
    sent = {}
    for line in lines:
        m = re.search(r'http.request.method=GET .*uri="/v2/inferops/standin-vllm/blobs/(sha256:[0-9a-f]{64})"', line)
        if m and "response completed" in line:
            written = int(re.search(r"http.response.written=(\d+)", line).group(1))
            sent[m.group(1)] = sent.get(m.group(1), 0) + written
    manifest = json.loads(host.check_output(
        "curl -s -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "
        "http://127.0.0.1:5000/v2/inferops/standin-vllm/manifests/%s" % DIGEST))
    sizes = {b["digest"]: b["size"] for b in [manifest["config"]] + manifest["layers"]}
    assert set(sent) == set(sizes), sent
    assert sent == sizes
