"""Small synthetic clusters for rule tests: inventory-like host variables."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, launch


REVISION = "0123456789abcdef0123456789abcdef01234567"


def members(n=2, host_overrides=None, **cluster_vars):
    base = {"vllm_cluster": "c1", "vllm_profile": "kimi_k3", "vllm_gpu_model": "H200", "vllm_fabric": "infiniband",
            "vllm_control_interface": "bond0", "vllm_ib_hcas": ["mlx5_0"],
            "vllm_model_revision": REVISION, "vllm_version": "0.32.0",
            # K3 on one H200 node cannot load (capacity_fit); these small clusters test other rules, so the
            # capacity check is off unless a test sets the weights' size (tests/unit/test_capacity_fit.py)
            "vllm_model_weight_gb": 0}
    base.update(cluster_vars)
    out = []
    for i in range(n):
        hvars = dict(base, vllm_control_address="10.0.0.%d" % (i + 1))
        hvars.update((host_overrides or {}).get("n%d" % i, {}))
        out.append(("n%d" % i, hvars))
    return out


def compile_(n=2, host_overrides=None, **cluster_vars):
    return launch.compile_cluster(cluster.build("c1", members(n, host_overrides, **cluster_vars)))
