"""The plan's capacity check (module_utils/controller/capacity_fit.py): the model's weights against one replica's
GPU memory at the compiled gpu-memory-utilization, through the real compiler, and through plan.yml."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clusters import compile_, members
from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware
from ansible_collections.inferops.vllm.plugins.module_utils.controller import capacity_fit as cf
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[2]
K3 = PROFILES["kimi_k3"]
# the synthetic clusters turn the check off (clusters.py); None gives the profile's figure back
ON = {"vllm_model_weight_gb": None}


def refusal(**kw):
    with pytest.raises(cluster.ClusterError) as err:
        compile_(**kw)
    text = str(err.value)
    assert "\n" not in text
    return text


def capacity(**kw):
    return compile_(**kw)["n0"]["cluster"]["capacity"]


# --- K3 on H200: one node cannot load it; two nodes as one replica can ------------------------------------

def test_k3_on_one_h200_node_is_refused_with_the_numbers_and_a_layout_that_fits():
    text = refusal(n=1, vllm_fabric=None, **ON)
    assert text.startswith("vllm_strategy='single' (cluster c1): one replica of this layout is 8 GPUs and cannot "
                           "hold the weights: 1.50 TB of weights (profile kimi_k3) over 8 x 141 GiB (H200) at 0.97 "
                           "= 1.17 TB. Fix: use 2 nodes with vllm_strategy: tp_pp (one replica over 16 GPUs: "
                           "2.18 TB at 0.9)")
    assert "or GPUs with more memory (one node of B300, MI350X or MI355X holds it)" in text


def test_k3_on_two_h200_nodes_plans_as_one_tp_pp_replica():
    got = capacity(vllm_strategy="tp_pp", **ON)
    # the profile's tp_pp layer (0.90) comes after the Hopper family's 0.97
    assert got["replica_gpus"] == 16 and got["replicas"] == 1 and got["gpu_memory_utilization"] == 0.9
    assert got["usable_bytes"] == int(16 * 141 * cf.GIB * 0.9)
    assert got["kv_bytes_left"] == got["usable_bytes"] - 1_500_000_000_000
    assert got["text"].endswith("680 GB (31 %) left for activations and the KV cache")


def test_tp_dp_on_h200_puts_a_replica_on_each_node_and_is_refused_for_k3():
    text = refusal(vllm_strategy="tp_dp", **ON)
    assert text.startswith("vllm_strategy='tp_dp' (cluster c1): one replica of this layout is 8 GPUs")
    assert "Fix: use vllm_strategy: tp_pp (one replica over 16 GPUs: 2.18 TB at 0.9)" in text


def test_the_default_strategy_on_h200_is_the_recipes_layout_that_holds_k3():
    out = compile_(**ON)["n0"]["cluster"]   # dep is not the recipe's on H200, and one node's tp_dp replica is short
    assert out["strategy"] == "tp_pp" and not [w for w in out["warnings"] if "recipe" in w]


def test_dep_set_on_h200_fits_but_the_recipe_warning_names_tp_pp_and_why_not_tp_dp():
    out = compile_(vllm_strategy="dep", **ON)["n0"]["cluster"]
    assert out["strategy"] == "dep" and out["capacity"]["replica_gpus"] == 16   # experts over all 16 GPUs
    warning, = [w for w in out["warnings"] if "recipe" in w]
    assert warning.startswith("cluster c1: the kimi_k3 recipe does not list strategy dep for H200 (it lists it for "
                              "GB300, GB200, B300, B200, MI355X, MI350X). Use vllm_strategy: tp_pp (one replica "
                              "over 16 GPUs: 2.18 TB at 0.9)")
    assert "the recipe also lists tp_dp, but its replica of 8 x 141 GiB (H200) at 0.97 = 1.17 TB cannot hold" \
        in warning


def test_without_the_weights_size_the_recipe_warning_still_names_a_strategy():
    assert compile_()["n0"]["cluster"]["strategy"] == "tp_dp"   # the default: the first the recipe lists for H200
    warning, = [w for w in compile_(vllm_strategy="dep")["n0"]["cluster"]["warnings"] if "recipe" in w]
    assert warning.endswith("Use vllm_strategy: tp_dp")


@pytest.mark.parametrize("gpu,gpus,strategy", [("MI355X", 8, "single"), ("B300", 8, "single"),
                                               ("GB300", 4, "dep"), ("B200", 8, "dep")])
def test_layouts_the_recipe_lists_that_hold_k3_plan_without_a_recipe_warning(gpu, gpus, strategy):
    n = 1 if strategy == "single" else 2
    out = compile_(n=n, vllm_gpu_model=gpu, vllm_gpus_per_node=gpus, vllm_strategy=strategy,
                   vllm_fabric=None if n == 1 else "infiniband", **ON)["n0"]["cluster"]
    assert out["capacity"]["checked"] and out["capacity"]["kv_bytes_left"] > 0
    assert not [w for w in out["warnings"] if "recipe" in w or "KV cache" in w]


def test_mi355x_dep_is_a_recipe_layout_now():
    out = compile_(vllm_gpu_model="MI355X", vllm_fabric="roce", **ON)["n0"]["cluster"]
    assert out["strategy"] == "dep" and out["all2all_backend"] == "mori_high_throughput"
    assert out["warnings"] == []


# --- what counts: the compiled utilization, the user's layout variables, a fixed KV cache ----------------

def test_the_sites_utilization_counts_and_too_little_left_warns_with_a_layout_that_has_room():
    out = compile_(vllm_strategy="tp_pp", vllm_site_args={"gpu-memory-utilization": 0.68}, **ON)["n0"]["cluster"]
    assert out["capacity"]["gpu_memory_utilization"] == 0.68
    warning, = [w for w in out["warnings"] if "KV cache" in w]
    assert warning.startswith("cluster c1: 1.50 TB of weights (profile kimi_k3) leave 147 GB (8 %) of one "
                              "replica's 16 x 141 GiB (H200) at 0.68 = 1.65 TB")
    assert warning.endswith("A layout with room: 3 nodes with vllm_strategy: tp_pp (one replica over 24 GPUs: "
                            "2.47 TB at 0.68)")


def test_a_lower_utilization_in_vllm_args_can_refuse_what_would_fit():
    text = refusal(vllm_strategy="tp_pp", vllm_args={"gpu-memory-utilization": 0.5}, **ON)
    assert "16 x 141 GiB (H200) at 0.5 = 1.21 TB" in text


def test_a_smaller_tensor_parallel_size_is_the_variable_named():
    text = refusal(n=1, vllm_fabric=None, vllm_gpu_model="MI355X", vllm_strategy="single",
                   vllm_tensor_parallel_size=4, **ON)
    assert text.startswith("vllm_tensor_parallel_size=4 (cluster c1): one replica of this layout is 4 GPUs")


def test_a_fixed_kv_cache_lets_the_weights_take_the_whole_gpu():
    got = capacity(n=1, vllm_fabric=None, vllm_gpu_model="B300",
                   vllm_site_args={"kv-cache-memory-bytes": "8G"}, **ON)
    assert got["gpu_memory_utilization"] == 1.0


# --- where the size comes from -------------------------------------------------------------------------------

def test_the_user_size_wins_and_zero_turns_the_check_off():
    assert capacity(n=1, vllm_fabric=None, vllm_model_weight_gb=600)["weights_source"] == "vllm_model_weight_gb"
    assert capacity(n=1, vllm_fabric=None, vllm_model_weight_gb=0) == {
        "checked": False, "reason": "vllm_model_weight_gb is 0 (check off)"}


def test_another_checkpoint_than_the_profiles_is_not_judged_by_the_profiles_size():
    got = capacity(n=1, vllm_fabric=None, vllm_model="RedHatAI/Kimi-K3-NVFP4", **ON)
    assert got["checked"] is False and "set vllm_model_weight_gb" in got["reason"]


def test_generic_profile_is_checked_only_with_a_size():
    base = dict(n=1, vllm_fabric=None, vllm_profile="generic", vllm_model="acme/big", vllm_model_source="hub")
    assert capacity(**base, **ON)["reason"] == \
        "profile generic does not know the weights' size (set vllm_model_weight_gb)"
    text = refusal(**base, vllm_model_weight_gb=2000)
    assert "2.00 TB of weights (vllm_model_weight_gb) over 8 x 141 GiB (H200) at 0.9 = 1.09 TB" in text


def test_the_cpu_lab_is_never_checked():
    got = capacity(n=1, vllm_profile="cpu_lab", vllm_gpu_model="CPU", vllm_fabric=None, vllm_model_source="hub",
                   vllm_model_weight_gb=5000)
    assert got == {"checked": False, "reason": "CPU nodes: no GPU memory to compare"}


def test_a_negative_size_is_one_line_before_anything():
    with pytest.raises(cluster.ClusterError, match=r"vllm_model_weight_gb=-1 \(hosts n0, n1\): must be a whole "
                                                   r"number >= 0"):
        cluster.build("c1", members(vllm_model_weight_gb=-1))


# --- the pieces -------------------------------------------------------------------------------------------

def test_replica_counts_every_expert_parallel_rank():
    assert cf.replica_gpus(tp=1, pp=1, dp=16, expert_parallel=True) == 16
    assert cf.replica_gpus(tp=8, pp=1, dp=2, expert_parallel=False) == 8
    assert cf.replica_gpus(tp=8, pp=2, dp=1, expert_parallel=False) == 16


def test_strategy_utilization_follows_the_launch_layers():
    h200 = hardware.lookup("H200")
    assert cf.strategy_utilization(K3, h200, "single") == 0.97
    assert cf.strategy_utilization(K3, h200, "tp_pp") == 0.9
    assert cf.strategy_utilization(K3, hardware.lookup("MI355X"), "dep") == 0.95
    assert cf.strategy_utilization(K3, h200, "tp_pp", [{"gpu-memory-utilization": 0.8}]) == 0.8
    assert cf.strategy_utilization(K3, h200, "single", [{"gpu-memory-utilization": None}]) == \
        cf.VLLM_DEFAULT_UTILIZATION
    assert cf.strategy_utilization(PROFILES["generic"], h200, "tp") == cf.VLLM_DEFAULT_UTILIZATION


def test_sizes_read_as_checkpoints_are_quoted():
    assert [cf.size(n) for n in (1.5e12, 595e9, 12.34e9, -2e12)] == ["1.50 TB", "595 GB", "12.3 GB", "2.00 TB"]


def test_a_gpu_model_the_recipe_never_lists_gets_its_familys_layout():
    profile = {"moe": True, "recipe_supports": {"tp_pp": ["H200"], "dep": ["B200"], "tp_dp": [], "tp": []}}
    shape = cf.Shape("dep", 1, 1, 16, True, 2, 8)
    text = cf.recipe_advice("c1", "p", profile, hardware.lookup("H100"), shape, None)
    assert text == ("cluster c1: the p recipe does not list strategy dep for H100 (it lists it for B200); it lists "
                    "no layout for H100 at all, so this names one it lists for H200 (hopper). Use vllm_strategy: "
                    "tp_pp")


def test_a_strategy_the_recipe_has_no_layout_for_says_so():
    shape = cf.Shape("dp", 8, 1, 2, False, 2, 8)
    text = cf.recipe_advice("c1", "kimi_k3", K3, hardware.lookup("B300"), shape,
                            cf.Weights(1_500_000_000_000, "profile kimi_k3"))
    assert text.startswith("cluster c1: the kimi_k3 recipe does not list strategy dp for B300 (it has no dp "
                           "layout). Use vllm_strategy: dep (one replica over 16 GPUs: 4.37 TB at 0.95)")


def test_every_recipe_model_is_in_the_catalog():
    for profile in PROFILES.values():
        assert set(cf.listed_models(profile)) <= set(hardware.CATALOG)


# --- through plan.yml: refused before any host, in one line -------------------------------------------------

def test_plan_refuses_k3_on_one_h200_node_before_any_host(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars/k3").mkdir(parents=True)
    (inv / "hosts.yml").write_text("all:\n  children:\n    vllm_clusters:\n      children:\n        k3:\n"
                                   "    k3:\n      hosts:\n        h200-01: {vllm_control_address: 10.0.0.1}\n")
    (inv / "group_vars/k3/vllm.yml").write_text(
        "vllm_cluster: k3\nvllm_version: '0.32.0'\nvllm_gpu_model: H200\nvllm_api_open: true\n"
        "vllm_model_revision: 0123456789abcdef0123456789abcdef01234567\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    result = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inv),
                             str(ROOT / "playbooks/plan.yml"), "-e", "cluster_plan_output_dir=%s" % (tmp_path / "out"),
                             "-e", "vllm_image=registry.example/vllm/vllm-openai@sha256:" + "1" * 64],
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert ("vllm_strategy='single' (default; cluster k3): one replica of this layout is 8 GPUs and cannot hold the weights: "
            "1.50 TB of weights (profile kimi_k3) over 8 x 141 GiB (H200) at 0.97 = 1.17 TB. Fix: use 2 nodes with "
            "vllm_strategy: tp_pp") in out
    assert "Traceback" not in out and not (tmp_path / "out").exists()


def test_a_layout_outside_the_recipe_is_named_as_such():
    profile = {"moe": True, "recipe_supports": {s: [] for s in ("single", "dep", "tp_dp", "tp_pp", "tp")}}
    found = cf.best(cf.Weights(1_500_000_000_000, "x"), hardware.lookup("H200"), 8, 1, True, profile)
    assert found.text(1) == ("2 nodes with vllm_strategy: dep (one replica over 16 GPUs: 2.18 TB at 0.9), which the "
                             "recipe does not list for this GPU")
