"""The plan run without Ansible (plan_run over a Reader), and the plan's types read from the argument spec.

The Reader here is a dict of host variables with one way to fail that Ansible's hostvars have: a template that
cannot be resolved (Unresolved), raised on read."""
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from clusters import REVISION
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, plan_run, specs

IMAGE = "vllm/vllm-openai@sha256:" + "a" * 64


class DictReader(plan_run.Reader):
    """Host variables as a dict; a value that is an Unresolved instance raises it on read."""

    def __init__(self, hostvars):
        self.hostvars = hostvars

    def names(self, host):
        return list(self.hostvars[host])

    def has(self, host, name):
        return name in self.hostvars[host]

    def get(self, host, name):
        value = self.hostvars[host].get(name)
        if isinstance(value, plan_run.Unresolved):
            raise value
        return value


def inventory(**extra):
    common = {"vllm_cluster": "c1", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
              "vllm_strategy": "dp", "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True,
              "vllm_model_source": "hub", "vllm_version": "0.32.0"}
    common.update(extra)
    hostvars = {"n1": dict(common, ansible_host="10.0.0.1"), "n2": dict(common, ansible_host="10.0.0.2")}
    groups = {"all": ["n1", "n2"], "ungrouped": [], "vllm_clusters": ["n1", "n2"], "c1": ["n1", "n2"]}
    return DictReader(hostvars), groups


def test_a_clean_inventory_plans_every_host():
    reader, groups = inventory()
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert out.refusals == [] and sorted(out.launches) == ["n1", "n2"]
    assert out.launches["n1"]["cluster"]["name"] == "c1" and out.observability


def test_an_image_nobody_set_yet_is_a_note_and_a_readiness_refusal():
    reader, groups = inventory(vllm_image=plan_run.Unresolved("'site_image' is undefined", undefined=True))
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert any(line.startswith("vllm_image=None") for line in out.refusals)


def test_an_unresolvable_plan_variable_is_one_refusal_naming_it():
    reader, groups = inventory(vllm_model=plan_run.Unresolved("'nope' is undefined", undefined=True))
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert out.launches == {}
    assert [line for line in out.refusals if line.startswith("vllm_model=None (host n1): its value cannot be resolved")]


def test_every_problem_of_the_inventory_in_one_run():
    reader, groups = inventory(vllm_port=70000, vllm_gpu_modle="H200", container_runtime_docker_source="podman")
    out = plan_run.run(reader, ["n1", "n2"], groups)
    text = "\n".join(out.refusals)
    assert "vllm_port=70000" in text and "did you mean vllm_gpu_model" in text and "container_runtime_docker_source" in text


# --- the types come from the spec ---------------------------------------------------------------------------

def inventory_options():
    with open(specs.os.path.join(specs.ROLES_DIR, "cluster_plan", "meta", "argument_specs.yml"), encoding="utf-8") as f:
        return yaml.safe_load(f)["argument_specs"]["inventory"]["options"]


def test_the_plan_types_are_the_spec():
    options = inventory_options()
    for name, option in options.items():
        if not name.startswith("vllm_"):
            continue
        kind = cluster.VAR_TYPES[name]
        assert kind.kind == option.get("type", "str"), name
        if kind.kind == "int":
            assert name in cluster.INT_BOUNDS or kind.minimum == 1, name
        assert set(kind.choices) == set(option.get("choices") or ()), name
        if name in cluster.CLUSTER_DEFAULTS and "default" in option:
            assert cluster.CLUSTER_DEFAULTS[name] == option["default"], name


@pytest.mark.parametrize("name", sorted(n for n, t in cluster.VAR_TYPES.items() if t.kind == "int"))
def test_each_whole_number_is_refused_outside_its_bounds(name):
    kind = cluster.VAR_TYPES[name]
    below = cluster._type_problem(name, kind.minimum - 1)   # pylint: disable=protected-access
    assert below is not None and ("from %d" % kind.minimum in below[0] or ">= %d" % kind.minimum in below[0])
    assert cluster._type_problem(name, kind.minimum) is None   # pylint: disable=protected-access
    if kind.maximum is not None:
        assert cluster._type_problem(name, kind.maximum + 1) is not None   # pylint: disable=protected-access


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(n for n, t in cluster.VAR_TYPES.items() if t.choices)), st.text(max_size=12))
def test_a_string_outside_the_declared_choices_is_refused(name, value):
    kind = cluster.VAR_TYPES[name]
    problem = cluster._type_problem(name, value)   # pylint: disable=protected-access
    if value.upper() in {c.upper() for c in kind.choices}:
        assert problem is None
    else:
        assert problem is not None


def test_a_refusal_about_a_value_nobody_set_says_default():
    reader, groups = inventory()
    for values in reader.hostvars.values():
        del values["vllm_model_source"]   # the default, site, wants a site registry that nobody set
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert any(line.startswith("vllm_model_registry='' (default; cluster c1") for line in out.refusals), out.refusals
    reader, groups = inventory(vllm_strategy="dep")   # set by the user: no "(default)"
    assert plan_run.run(reader, ["n1", "n2"], groups).refusals[0].startswith("vllm_strategy='dep' (cluster c1)")


def test_the_plan_names_the_reference_each_node_pulls_through_the_site_registry():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan_view
    reader, groups = inventory(vllm_image_mirror="registry.site:5000")
    out = plan_run.run(reader, ["n1", "n2"], groups)
    pull = out.launches["n1"]["cluster"]["pull"]
    # what role vllm_image applies as it is: no reference, digest or host is worked out again on the node
    assert pull == {"pull_ref": "registry.site:5000/vllm/vllm-openai@sha256:" + "a" * 64, "digest": "sha256:" + "a" * 64,
                    "repository": "vllm/vllm-openai", "registry": "docker.io", "login_url": "https://index.docker.io/v1/",
                    "mirror": "registry.site:5000", "mode": "copy", "mirror_host": "n1"}
    shown = " ".join(plan_view.plan_lines(out.launches))
    assert "pulled through the site registry registry.site:5000 as " + pull["pull_ref"] + " (mode copy" in shown
    reader, groups = inventory()
    pull = plan_run.run(reader, ["n1", "n2"], groups).launches["n1"]["cluster"]["pull"]
    assert (pull["pull_ref"], pull["mirror"], pull["mode"], pull["mirror_host"]) == (IMAGE, "", "", "")


def test_each_host_of_the_site_gets_its_firewall_state_from_the_plan():
    reader, groups = inventory()
    out = plan_run.run(reader, ["n1", "n2"], groups)
    shares = plan_run.shares(out, ["n1", "n2", "router"])
    assert shares["n1"]["firewall"]["state"] == "present" and "table inet inferops_vllm {" in \
        shares["n1"]["firewall"]["ruleset"]
    # its peer reaches it on any port; a host the plan compiled nothing for keeps its firewall
    assert 'ip saddr { 10.0.0.2 } accept comment "its peers' in shares["n1"]["firewall"]["ruleset"]
    assert shares["router"]["firewall"] == {"state": "kept", "ruleset": "",
                                            "why": "the plan compiled no firewall for this host"}
    reader.hostvars["n1"]["vllm_firewall"] = "false"   # as -e vllm_firewall=false gives it
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert out.hosts["n1"]["firewall"]["state"] == "absent" and out.hosts["n1"]["firewall"]["ruleset"] == ""
    assert any("n1: its open API" in line and "vllm_firewall is false" in line for line in out.warnings), out.warnings
    del reader.hostvars["n1"]["vllm_firewall"]
    # --limit n1 with a second cluster outside the run: a table from part of the site would shut its peers out
    reader.hostvars["n3"] = dict(reader.hostvars["n1"], ansible_host="10.0.0.3", vllm_cluster="c2")
    groups = dict(groups, all=["n1", "n2", "n3"], vllm_clusters=["n1", "n2", "n3"], c2=["n3"])
    out = plan_run.run(reader, ["n1"], groups)
    assert out.hosts["n1"]["firewall"]["state"] == "kept" and "--limit" in out.hosts["n1"]["firewall"]["why"]
