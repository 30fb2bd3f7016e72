"""The site services compiled by the plan (site_services): the image's site registry and what each cluster pulls,
the weights' store, registry and swarm, Prometheus and its targets. What their roles used to decide or refuse on a
host is decided or refused here, before any host, and handed to the roles as it is."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan_output, plan_run, site_services
from test_plan_run import DictReader, IMAGE
from test_site_policy import refused
from clusters import REVISION

STORE = "10.0.0.5:5000"


def site(clusters=("c1",), extra_hosts=None, groups_extra=None, per_cluster=None, **extra):
    """The plan of inventory(...) over every cluster node, and those nodes."""
    reader, groups = inventory(clusters, extra_hosts, groups_extra, per_cluster, **extra)
    play = list(groups["vllm_clusters"])
    return plan_run.run(reader, play, groups), play


def inventory(clusters=("c1",), extra_hosts=None, groups_extra=None, per_cluster=None, **extra):
    """One two-node CPU cluster per name (10.0.c.x), staged through the site store; `extra` on every host,
    per_cluster[name] on that cluster's."""
    hostvars, groups = {}, {"all": [], "ungrouped": [], "vllm_clusters": []}
    for c, name in enumerate(clusters):
        common = {"vllm_cluster": name, "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
                  "vllm_strategy": "dp", "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True,
                  "vllm_version": "0.32.0", "vllm_model_source": "site", "vllm_model": "inferops/tiny-k3",
                  "vllm_model_registry": STORE}
        common.update(extra)
        common.update((per_cluster or {}).get(name, {}))
        names = ["%s-n%d" % (name, i + 1) for i in range(2)]
        for i, host in enumerate(names):
            hostvars[host] = dict(common, vllm_control_address="10.0.%d.%d" % (c, i + 1))
        groups[name] = names
        groups["vllm_clusters"] += names
    for host, hvars in (extra_hosts or {}).items():
        hostvars[host] = hvars
    groups["all"] = list(hostvars)
    groups.update(groups_extra or {})
    return DictReader(hostvars), groups


# --- the weights --------------------------------------------------------------------------------------------------

def test_the_store_is_the_site_s_first_node_and_every_node_is_handed_it():
    out, play = site(clusters=("c1", "c2"))
    assert out.refusals == []
    weights = out.services["weights"]
    assert (weights.store_host, weights.registry) == ("c1-n1", STORE)
    assert weights.models == [{"repo": "inferops/tiny-k3", "revision": REVISION, "manifest_digest": "",
                               "clusters": ["c1", "c2"]}]
    shares = plan_run.shares(out, play)
    assert {host: shares[host]["weights"]["store_host"] for host in play} == dict.fromkeys(play, "c1-n1")


def test_the_store_stays_on_its_host_in_a_limited_run():
    """--limit c2: the store is still the site's first node, whose download cache holds the revisions."""
    reader, groups = inventory(clusters=("c1", "c2"))
    limited = plan_run.run(reader, ["c2-n1", "c2-n2"], groups)
    assert sorted(limited.launches) == ["c2-n1", "c2-n2"]
    assert limited.services["weights"].store_host == "c1-n1"


def test_a_store_group_or_a_named_store_host_is_used():
    out, _play = site(extra_hosts={"reg": {"ansible_host": "10.0.9.1", "vllm_control_address": "10.0.9.1"}},
                      groups_extra={"vllm_registry_mirrors": ["reg"]})
    assert out.services["weights"].store_host == "reg"
    out, _play = site(extra_hosts={"reg": {"ansible_host": "10.0.9.1"}}, vllm_model_store_host="reg")
    assert out.services["weights"].store_host == "reg"


def test_a_store_host_the_inventory_lacks_is_refused():
    out, _play = site(vllm_model_store_host="nowhere")
    refused(out, "vllm_model_store_host='nowhere'", "no host of the inventory", "Fix:")


def test_staged_weights_need_a_registry():
    out, _play = site(vllm_model_registry="")
    refused(out, "vllm_model_registry=''", "cluster c1", "no site registry is set")


def test_clusters_staging_through_different_registries_are_refused():
    out, _play = site(clusters=("c1", "c2"), per_cluster={"c2": {"vllm_model_registry": "10.0.0.6:5000"}})
    refused(out, "vllm_model_registry=", "different registries", "c1: " + STORE, "c2: 10.0.0.6:5000")


def test_hub_weights_need_no_store():
    out, _play = site(vllm_model_source="hub", vllm_model_registry="")
    assert out.refusals == []
    weights = out.services["weights"]
    assert (weights.store_host, weights.models, weights.sources) == ("", [], {"c1": "hub"})


def test_the_swarm_s_tracker_is_on_the_store_host_s_address():
    out, play = site(vllm_model_p2p=True)
    weights = out.services["weights"]
    assert (weights.tracker_address, weights.tracker_port, weights.p2p_nodes) == ("10.0.0.1", 6969, play)
    assert plan_run.shares(out, play)["c1-n2"]["weights"]["tracker_address"] == "10.0.0.1"
    out, _play = site(vllm_model_p2p=True, vllm_model_p2p_address="10.0.0.2")
    assert out.services["weights"].tracker_address == "10.0.0.2"


def test_the_swarm_without_an_address_for_its_tracker_is_refused_before_any_host():
    out, _play = site(vllm_model_p2p=True, extra_hosts={"reg": {"ansible_host": "10.0.9.1"}},
                      groups_extra={"vllm_registry_mirrors": ["reg"]})
    refused(out, "vllm_model_p2p_address=''", "store host reg has no address", "Fix: set vllm_model_p2p_address")


# --- the image ------------------------------------------------------------------------------------------------------

def test_without_a_mirror_each_node_pulls_the_image_itself():
    out, _play = site()
    image = out.services["image"]
    assert (image.mirror, image.host, image.deploy, image.port) == ("", "", False, None)
    assert image.pulls == {"c1": {"image": IMAGE, "pull_ref": IMAGE, "nodes": ["c1-n1", "c1-n2"]}}


def test_a_mirror_the_site_runs_is_on_its_group_s_first_host_and_in_the_flows():
    out, _play = site(vllm_image_mirror="10.0.9.1:5000", vllm_image_mirror_deploy=True,
                      extra_hosts={"reg": {"ansible_host": "10.0.9.1", "vllm_control_address": "10.0.9.1"}},
                      groups_extra={"vllm_registry_mirrors": ["reg"]})
    assert out.refusals == []
    image = out.services["image"]
    assert (image.mirror, image.mode, image.host, image.deploy) == ("10.0.9.1:5000", "copy", "reg", True)
    assert image.port == 5000
    pull = out.launches["c1-n1"]["cluster"]["pull"]
    assert pull["pull_ref"] == "10.0.9.1:5000/" + IMAGE and pull["mirror_host"] == "reg"
    assert [(f.host, f.port, f.reached_by) for f in out.flows if f.variable == "vllm_image_mirror_port"] == [
        ("reg", "5000", ("c1-n1", "c1-n2"))]


def test_a_mirror_on_another_port_than_the_registry_it_runs_is_refused():
    out, _play = site(vllm_image_mirror="10.0.9.1:5001", vllm_image_mirror_deploy=True,
                      extra_hosts={"reg": {"ansible_host": "10.0.9.1"}}, groups_extra={"vllm_registry_mirrors": ["reg"]})
    refused(out, "vllm_image_mirror='10.0.9.1:5001'", "listens on port 5000", "Fix:")


def test_clusters_pulling_through_different_mirrors_are_refused():
    out, _play = site(clusters=("c1", "c2"), per_cluster={"c1": {"vllm_image_mirror": "10.0.9.1:5000"}})
    refused(out, "vllm_image_mirror=", "different site registries", "c2: none")


# --- Prometheus and the plan's blocks -----------------------------------------------------------------------------

def test_prometheus_and_its_targets_are_compiled():
    out, _play = site(extra_hosts={"prom": {"ansible_host": "10.0.9.2", "vllm_control_address": "10.0.9.2"}},
                      groups_extra={"vllm_prometheus": ["prom"]})
    assert out.refusals == []
    prometheus = out.services["prometheus"]
    assert prometheus["servers"] == {"prom": {"listen": "10.0.9.2:9090", "retention": "15d", "alertmanagers": []}}
    # the API is scraped where it is served (the head of a DP cluster), the GPU exporters on every node
    assert prometheus["jobs"]["inferops-vllm"] == ["10.0.0.1:%d" % out.launches["c1-n1"]["port"]]
    assert set(prometheus["jobs"]) >= {"inferops-vllm", "inferops-gpu", "inferops-router"}


def test_the_plan_shows_one_block_per_service_and_writes_one_file_each(tmp_path):
    out, _play = site(vllm_model_p2p=True)
    shown = "\n".join(plan_output.show_lines(out.launches, out.read, out.role_values, "", out.flows, out.hosts,
                                             out.routers, out.services))
    for block in ("== image:", "== weights:", "== prometheus:"):
        assert block in shown
    assert "peer to peer: the tracker and seeders on 10.0.0.1 from port 6969" in shown
    plan_output.write(str(tmp_path), out.launches, {}, False, services=out.services)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["image.json", "prometheus.json", "weights.json"]
    assert site_services.as_json(out.services["weights"])["store_host"] == "c1-n1"


def test_a_switch_given_as_text_on_the_command_line_is_read_as_the_role_reads_it():
    """-e vllm_model_p2p=true is the text "true": the role's `| bool` turns the swarm on, so the plan must too."""
    out, play = site(vllm_model_p2p="true")
    assert out.services["weights"].p2p_nodes == play and out.services["weights"].tracker_address == "10.0.0.1"
    out, _play = site(vllm_image_mirror="10.0.0.1:5000", vllm_image_mirror_deploy="yes")
    assert out.services["image"].deploy is True
