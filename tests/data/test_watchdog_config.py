"""The watchdog's config as the role renders it (vars/main.yml, with the launch the plan compiles, under
ansible-core 2.18 and 2.19): it holds every setting the node script reads, no other, each of the type the script
takes."""
import json

from role_render import Role
from ansible_collections.inferops.vllm.plugins.module_utils.scripts import watchdog


def test_the_role_writes_every_setting_the_script_reads():
    role = Role("vllm_watchdog", {})
    config = json.loads(role.render("{{ vllm_watchdog_wanted_settings.config_content }}"))
    # pd: only on a P/D side, weight_cache_url only with the weight cache (below)
    optional = {"pd", "weight_cache_url"}
    assert set(config) == set(watchdog.CONFIG_KEYS) - optional | set(watchdog.Policy.__dataclass_fields__)
    # the policy's numbers arrive as numbers, the launch's values as the plan compiled them
    policy = {name: config[name] for name in watchdog.Policy.__dataclass_fields__}
    assert all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in policy.values()), policy
    launch = role.variables["vllm_launch"]
    assert (config["cluster"], config["role"], config["endpoint"]) == (
        launch["cluster"]["name"], launch["role"], launch["cluster"]["endpoint"])
    assert config["model"] == launch["args"]["served-model-name"]


def test_a_pd_side_also_gets_its_deployment_and_role_and_the_weight_cache_its_health():
    role = Role("vllm_watchdog", {})
    launch = dict(role.variables["vllm_launch"])
    pd = {"deployment": "k3_pd", "role": "prefill", "kv_role": "kv_producer", "connector": "NixlConnector",
          "router_connector": "nixl", "side_channel_port": 5600, "transport": "rdma"}
    launch["cluster"] = dict(launch["cluster"], pd=pd)
    launch["weight_cache"] = {"url": "http://127.0.0.1:8098"}
    config = json.loads(role.render("{{ vllm_watchdog_wanted_settings.config_content }}", {"vllm_launch": launch}))
    assert set(config) == set(watchdog.CONFIG_KEYS) | set(watchdog.Policy.__dataclass_fields__)
    assert config["pd"] == pd and config["weight_cache_url"] == "http://127.0.0.1:8098"
