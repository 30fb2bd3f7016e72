"""playbooks/plan.yml on every inventory in inventories/ (the real path: role,
action plugin, inventory layering), compared with golden files in
tests/golden/<inventory>/<cluster>/<host>.json. Regenerate with
UPDATE_GOLDEN=1 and review the diff."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden"
INVENTORIES = sorted(p.name for p in (ROOT / "inventories").iterdir() if p.is_dir())
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")


# The examples leave vllm_image to the site (the plan refuses a cluster without it): the goldens plan these.
IMAGES = {"nvidia": "registry.example/vllm/vllm-openai@sha256:" + "1" * 64,
          "amd": "registry.example/vllm/vllm-openai-rocm@sha256:" + "2" * 64,
          "cpu": "127.0.0.1:5000/inferops/vllm-cpu@sha256:" + "3" * 64}


def image_for(inventory):
    name = Path(inventory).name
    return IMAGES["amd" if "mi355x" in name else "cpu" if name == "lab" else "nvidia"]


# The AMD examples pin their GPU exporter's image as they pin vLLM's: the user's digest (an undef with the hint).
AMD_EXPORTER = "rocm/device-metrics-exporter@sha256:" + "5" * 64


def run_plan(inventory, out_dir, *extra, **env_extra):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", **env_extra)
    env.pop("INFEROPS_LAB_IMAGE", None)   # the goldens show the plan with a fixed image, not a built lab image
    images = ["-e", "vllm_image=%s" % image_for(inventory)]
    if "mi355x" in Path(inventory).name:
        images += ["-e", "vllm_exporters_amd_image=" + AMD_EXPORTER]
    return subprocess.run([PLAYBOOK, "-i", str(inventory), str(ROOT / "playbooks/plan.yml"),
                           "-e", "cluster_plan_output_dir=%s" % out_dir] + images + list(extra),
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def two_h200_nodes(tmp_path, cluster, group_vars, host_b_vars=""):
    """One cluster on two H200 nodes (gpu-a heads it) with group_vars after its vllm_cluster line;
    host_b_vars adds flow-mapping entries to gpu-b. Returns the inventory's folder."""
    inv = tmp_path / "inv"
    (inv / "group_vars" / cluster).mkdir(parents=True)
    (inv / "hosts.yml").write_text("all:\n  children:\n    vllm_clusters:\n      children:\n        %s:\n"
                                   "    %s:\n      hosts:\n        gpu-a: {vllm_control_address: 10.0.0.1}\n"
                                   "        gpu-b: {vllm_control_address: 10.0.0.2%s}\n"
                                   % (cluster, cluster, ", " + host_b_vars if host_b_vars else ""))
    (inv / "group_vars" / cluster / "vllm.yml").write_text("vllm_cluster: %s\nvllm_version: '0.32.0'\n" % cluster
                                                           + group_vars)
    return inv


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_plan_matches_golden(inventory, tmp_path):
    result = run_plan(ROOT / "inventories" / inventory, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # observability/ holds the Prometheus and Grafana files (tests/unit/test_observability.py)
    produced = {p.relative_to(tmp_path): json.loads(p.read_text()) for p in tmp_path.rglob("*.json")
                if p.relative_to(tmp_path).parts[0] != "observability"}
    assert produced, "the plan wrote no launches"
    golden_dir = GOLDEN / inventory
    if os.environ.get("UPDATE_GOLDEN"):
        for rel, data in produced.items():
            (golden_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / rel).write_text(json.dumps(data, indent=1) + "\n")
    expected = {p.relative_to(golden_dir): json.loads(p.read_text()) for p in golden_dir.rglob("*.json")}
    assert sorted(produced) == sorted(expected)
    for rel, data in produced.items():
        assert data == expected[rel], "%s differs from its golden file (UPDATE_GOLDEN=1 to accept)" % rel
    # the flow table as people read it and each host's firewall, as text
    texts = {p.relative_to(tmp_path): p.read_text() for p in [tmp_path / "flows.md", *tmp_path.glob("firewall/*.nft")]}
    if os.environ.get("UPDATE_GOLDEN"):
        for rel, text in texts.items():
            (golden_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / rel).write_text(text)
    kept = {p.relative_to(golden_dir): p.read_text() for p in [golden_dir / "flows.md", *golden_dir.glob("firewall/*.nft")]}
    assert texts == kept, "flows.md or a firewall/*.nft differs from its golden file (UPDATE_GOLDEN=1 to accept)"


# The upgrade each example is planned for: the next vLLM release, in an image of the same repository.
NEXT_VLLM = "0.33.0"
UPGRADE = ROOT / "tests/golden-upgrade"


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_upgrade_to_the_next_vllm_matches_golden(inventory, tmp_path):
    """upgrade.yml's plan to an image of vLLM 0.33.0: the new launches (tests/golden-upgrade, which vLLM 0.33.0's own
    parser reads in tests/integration) and version-change.md per cluster are goldens; the launch each node rolls back
    to is exactly its plan before the upgrade (tests/golden)."""
    before = image_for(inventory)
    after = before.rsplit(":", 1)[0] + ":" + "4" * 64
    result = run_plan(ROOT / "inventories" / inventory, tmp_path, "-e", "vllm_image=" + after,
                      "-e", "vllm_version=" + NEXT_VLLM, "-e", "vllm_version_before=0.32.0",
                      "-e", "vllm_image_before=" + before)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "vLLM 0.32.0 -> %s" % NEXT_VLLM in result.stdout
    clusters = sorted({p.parent.name for p in tmp_path.glob("*/version-change.md")})
    assert clusters
    for cluster in clusters:
        for rolled in (tmp_path / cluster / "before").glob("*.json"):
            assert json.loads(rolled.read_text()) == json.loads((GOLDEN / inventory / cluster / rolled.name).read_text())
    produced = {p.relative_to(tmp_path): p.read_text() for cluster in clusters
                for p in [tmp_path / cluster / "version-change.md", *(tmp_path / cluster).glob("*.json")]}
    golden_dir = UPGRADE / inventory
    if os.environ.get("UPDATE_GOLDEN"):
        for rel, text in produced.items():
            (golden_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / rel).write_text(json.dumps(json.loads(text), indent=1) + "\n" if rel.suffix == ".json" else text)
    kept = {p.relative_to(golden_dir): p.read_text() for p in golden_dir.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(kept)
    for rel, text in produced.items():
        same = json.loads(text) == json.loads(kept[rel]) if rel.suffix == ".json" else text == kept[rel]
        assert same, "%s differs from its golden file in tests/golden-upgrade (UPDATE_GOLDEN=1 to accept)" % rel


def test_bad_input_fails_before_any_host_with_a_clear_message(tmp_path):
    inv = two_h200_nodes(tmp_path, "bad", (
        "vllm_model_revision: 0123456789abcdef0123456789abcdef01234567\nvllm_gpu_model: H200\nvllm_fabric: infiniband\nvllm_strategy: dep\n"
        "vllm_moe_backend: deep_gemm_mega_moe\nvllm_api_key: hunter2\n"))
    # JSON results: ansible-core 2.18's YAML callback wraps long messages, 2.19's does not
    result = run_plan(inv, tmp_path / "out", ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "vllm_moe_backend='deep_gemm_mega_moe' (cluster bad)" in out
    assert "Fix:" in out and "Traceback" not in out and "hunter2" not in out
    assert not (tmp_path / "out").exists()


def test_wrong_types_are_one_line_each_not_the_argument_spec(tmp_path):
    inv = two_h200_nodes(tmp_path, "bad", host_b_vars="vllm_port: http", group_vars=(
        "vllm_model_revision: 0123456789abcdef0123456789abcdef01234567\nvllm_gpu_model: H200\nvllm_fabric: roce\nvllm_max_model_len: lots\n"
        "vllm_roce_gid_index: three\n"))
    # JSON results: the yaml result format folds a long refusal over several lines
    result = run_plan(inv, tmp_path / "out", ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    for line in ("vllm_max_model_len='lots' (hosts gpu-a, gpu-b): must be a whole number >= 1. Fix: ",
                 "vllm_roce_gid_index='three' (hosts gpu-a, gpu-b): must be a whole number from 0 to 255. Fix: ",
                 "vllm_port='http' (host gpu-b): must be a whole number from 1 to 65535. Fix: "):
        assert line in out
    assert "argument_spec_data" not in out and "Traceback" not in out and len(out.splitlines()) < 60


def test_the_plan_never_decrypts_a_vaulted_variable_it_does_not_need(tmp_path):
    """A vault-encrypted vllm_image_registry_password (read by vllm_image, not the plan) and a vaulted
    vllm_api_key: the plan runs without any vault secret and only notes that the key is set."""
    password = tmp_path / "vault-pass"
    password.write_text("not-given-to-the-plan\n")
    vaulted = subprocess.run([str(Path(sys.executable).parent / "ansible-vault"), "encrypt_string",
                              "--vault-password-file", str(password), "hunter2", "--name", "x"],
                             capture_output=True, text=True, check=True).stdout
    block = vaulted.split("x: ", 1)[1]
    inv = two_h200_nodes(tmp_path, "c1", (
        "vllm_model_revision: 0123456789abcdef0123456789abcdef01234567\nvllm_gpu_model: H200\nvllm_fabric: infiniband\n"
        "vllm_model_registry: 10.0.0.5:5000\nvllm_image_registry_password: " + block + "vllm_api_key: " + block))
    result = run_plan(inv, tmp_path / "out")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    launch = json.loads((tmp_path / "out/c1/gpu-a.json").read_text())
    assert launch["secret_env"] == {"VLLM_API_KEY": "vllm_api_key"}
    assert "hunter2" not in result.stdout + result.stderr and "plain text" not in result.stdout + result.stderr
    # a template of a vaulted variable is not plain text; a password written out is, and is named, never shown
    (inv / "group_vars/c1/vllm.yml").write_text(
        "vllm_cluster: c1\nvllm_version: '0.32.0'\nvllm_model_revision: 0123456789abcdef0123456789abcdef01234567\n"
        "vllm_gpu_model: H200\n"
        "vllm_fabric: infiniband\nvllm_model_registry: 10.0.0.5:5000\nvllm_image_registry_password: hunter3\n"
        "vllm_api_key: '{{ vault_vllm_api_key }}'\nvault_vllm_api_key: " + block)
    result = run_plan(inv, tmp_path / "out")
    out = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0 and "hunter" not in out, out[-3000:]
    assert "vllm_image_registry_password (cluster c1) is written in plain text" in out
    assert "vllm_api_key (cluster" not in out


def test_each_host_takes_its_own_launch_from_the_run_once_plan(tmp_path):
    """The role's main entry point (as molecule and user playbooks use it): compiled once, then each
    host's vllm_launch equals its golden launch."""
    playbook = tmp_path / "take.yml"
    playbook.write_text("- hosts: vllm_clusters\n  gather_facts: false\n  roles: [inferops.vllm.cluster_plan]\n"
                        "  tasks:\n    - ansible.builtin.debug: {var: vllm_launch}\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    inventory = ROOT / "inventories/example-gb300-2rack-ib"
    result = subprocess.run([PLAYBOOK, "-i", str(inventory), str(playbook), "-e", "vllm_image=%s" % image_for(inventory)],
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tasks = json.loads(result.stdout)["plays"][0]["tasks"]
    shown = tasks[-1]["hosts"]
    assert sorted(shown) == ["gb300-a01", "gb300-a02", "gb300-b01", "gb300-b02"]
    for host, res in shown.items():
        golden = json.loads((GOLDEN / ("example-gb300-2rack-ib/k3_2rack/%s.json" % host)).read_text())
        assert res["vllm_launch"] == golden


# --- the plan as printed: one short line per item under any stdout callback ---------------------------------

CALLBACKS = {"default": {"ANSIBLE_STDOUT_CALLBACK": "default", "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"},
             "yaml": {"ANSIBLE_STDOUT_CALLBACK": "default", "ANSIBLE_CALLBACK_RESULT_FORMAT": "yaml"},
             "minimal": {"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.minimal"}}


@pytest.mark.parametrize("callback", sorted(CALLBACKS))
def test_the_plan_prints_each_flag_once_on_its_own_line(callback, tmp_path):
    result = run_plan(ROOT / "inventories/example-h200-ib", tmp_path, **CALLBACKS[callback])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    shown = result.stdout[result.stdout.rindex("Compile every cluster's vLLM launch") if callback != "minimal"
                          else result.stdout.rindex("h200-01 | "):]
    assert "\\n" not in shown and "|-" not in shown   # no string with newlines, as JSON or as a YAML block
    # the head of k3_tp_pp is the only TP8 node; its follower prints only what differs
    assert shown.count("--tensor-parallel-size 8") == 1 and shown.count("--node-rank 1 (head 0)") == 1
    assert result.stdout.count("== cluster k3_tp_pp (profile kimi_k3, vLLM 0.32.0) ==") == 1   # the plan, once
    assert "max-num-seqs: " not in shown   # the config file is in the output directory, not printed again
    assert max(len(line) for line in shown.splitlines()) < 140, max(shown.splitlines(), key=len)


def test_the_plan_says_where_each_value_came_from(tmp_path):
    result = run_plan(ROOT / "inventories/example-h200-ib", tmp_path, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tasks = json.loads(result.stdout)["plays"][-1]["tasks"]
    lines = tasks[-1]["hosts"]["h200-01"]["show"]   # the compile task's own result: printed once
    assert all(isinstance(line, str) and "\n" not in line for line in lines)
    head = json.loads((tmp_path / "k3_tp_pp/h200-03.json").read_text())
    for name, source in head["sources"].items():
        if source == "vllm_compile_cache_dir":
            continue
        said = " ".join(line for line in lines if line.startswith(source + " sets ")
                        or line.startswith("site (%s) sets " % source))
        value = head["args"].get(name, head["env"].get(name))
        assert (name in said) if isinstance(value, bool) else ("%s %s" % (name, value) in said
                                                               or "%s=%s" % (name, value) in said), (name, source)
    assert "site (vllm_site_env) sets NCCL_DEBUG=WARN" in lines
    assert "inventory (vllm_max_model_len) sets max-model-len 131072" in lines   # k25_dep's group_vars
    assert any(line.startswith("host stack NVIDIA driver branch 580") for line in lines)
    assert lines[-1] == "files of each node (.yaml, .json, .sh) in %s/<cluster>/" % tmp_path


# --- refusals: each printed once, every problem of the inventory in one run --------------------------------

def test_every_problem_is_refused_in_one_run_and_printed_once(tmp_path):
    """A misspelt variable and the required one it shadows, a value whose template cannot be resolved in another
    cluster, and a third cluster without vllm_image: all in one failure, each line once under the default callback."""
    inv = tmp_path / "inv"
    for group in ("c1", "c2", "c3"):
        (inv / "group_vars" / group).mkdir(parents=True)
        (inv / "group_vars" / group / "vllm.yml").write_text(
            "vllm_cluster: %s\nvllm_version: '0.32.0'\nvllm_model_revision: %s\nvllm_gpu_model: B300\n"
            "vllm_api_open: true\n"
            "vllm_model_source: hub\n"
            % (group, "0123456789abcdef0123456789abcdef01234567"))
    (inv / "hosts.yml").write_text(
        "all:\n  children:\n    vllm_clusters:\n      children: {c1: {}, c2: {}, c3: {}}\n"
        "    c1:\n      hosts: {n1: {vllm_control_address: 10.0.0.1}}\n"
        "    c2:\n      hosts: {n2: {vllm_control_address: 10.0.0.2}}\n"
        "    c3:\n      hosts: {n3: {vllm_control_address: 10.0.0.3}}\n")
    c1 = inv / "group_vars/c1/vllm.yml"
    c1.write_text(c1.read_text().replace("vllm_gpu_model:", "vllm_gpu_modle:"))
    c2 = inv / "group_vars/c2/vllm.yml"
    c2.write_text(c2.read_text().replace("vllm_model_revision: 0123456789abcdef0123456789abcdef01234567",
                                         "vllm_model_revision: \"{{ undef(hint='pin the commit you tested') }}\""))
    expected = ("vllm_gpu_modle='<not read>' (host n1): no role, playbook or plugin of inferops.vllm reads this "
                "variable. Fix: did you mean vllm_gpu_model",
                "vllm_gpu_model=None (cluster c1): unknown or unset GPU model",
                "vllm_model_revision=None (host n2): its value cannot be resolved: pin the commit you tested. Fix: ",
                "vllm_image=None (cluster c3 (host n3)): unset")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    env.pop("INFEROPS_LAB_IMAGE", None)
    command = [PLAYBOOK, "-i", str(inv), str(ROOT / "playbooks/plan.yml")]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in out
    assert out.count("inferops.vllm launch plan: 4 refusals, listed below; no host was touched") == 2   # [ERROR], fatal
    for line in expected:
        assert out.count(line) == 1, (line, out[-4000:])
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    record = json.loads(subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                                       check=False).stdout)
    failed = [res for play in record["plays"] for task in play["tasks"] for res in task["hosts"].values()
              if res.get("failed")]
    assert len(failed) == 1 and len(failed[0]["refusals"]) == 4 and failed[0]["variable"] == "vllm_gpu_modle"
    assert all(any(line in refusal for refusal in failed[0]["refusals"]) for line in expected)
