"""The observability files from the golden plans: which nodes are targets and with which labels, the settings'
refusals, and Debian's promtool accepting the scrape configs, the targets and the rules."""
import json
import random
import re

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import alerts, dashboards, metrics
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.plan_files import (
    ObservabilityError, files)

import clusters
from observability_plans import ROUTERS, addresses, golden, run_promtool, settings, write_tree

EXPECTED_FILES = {"targets/inferops-vllm.yml", "targets/inferops-gpu.yml", "targets/inferops-router.yml",
                  "scrape_configs.yml", "rules/inferops-vllm.rules.yml", "rules/inferops-gpu.rules.yml",
                  "rules/inferops-router.rules.yml", "rules/inferops-pd.rules.yml", "dashboards/inferops-cluster.json",
                  "dashboards/inferops-gpus.json", "dashboards/inferops-router.json", "dashboards/provisioning.yml"}


def generate(launches, routers=None, **overrides):
    return files(launches, addresses(launches), ROUTERS if routers is None else routers, settings(**overrides))


def targets(out, name):
    return yaml.safe_load(out["targets/inferops-%s.yml" % name])


def nodes_of(groups):
    return [g["labels"]["node"] for g in groups]


def test_every_file_of_the_shared_design():
    out = generate(golden())
    assert set(out) == EXPECTED_FILES
    assert set(generate(golden(), vllm_exporters_node_exporter=True)) == EXPECTED_FILES | {"targets/inferops-node.yml"}


def test_followers_are_never_vllm_targets():
    launches = golden()
    groups = targets(generate(launches), "vllm")
    assert nodes_of(groups) == sorted((h for h, l in launches.items() if l["serves_api"]),
                                      key=lambda h: launches[h]["cluster"]["name"])
    assert all(launches[h]["role"] == "head" for h in nodes_of(groups))
    assert "gb300-a02" not in nodes_of(groups) and "lab-node2" not in nodes_of(groups)
    head = next(g for g in groups if g["labels"]["node"] == "lab-node1")
    assert head["targets"] == ["%s:18300" % addresses(launches)["lab-node1"]]


def test_hybrid_load_balancing_lists_every_node():
    launches = clusters.compile_(2, vllm_strategy="dep", vllm_load_balancing="hybrid")
    groups = targets(generate(launches), "vllm")
    assert nodes_of(groups) == ["n0", "n1"]
    assert [g["labels"]["role"] for g in groups] == ["head", "follower"]
    assert {g["labels"]["load_balancing"] for g in groups} == {"hybrid"}


def test_gpu_targets_by_vendor():
    launches = golden()
    groups = targets(generate(launches), "gpu")
    ports = {g["labels"]["node"]: int(g["targets"][0].rsplit(":", 1)[1]) for g in groups}
    for host, launch in launches.items():
        vendor = launch["cluster"]["vendor"]
        assert ports.get(host) == {"nvidia": 9400, "amd": 5000}.get(vendor), host   # every node, none for cpu
    assert targets(generate(launches, vllm_exporters_dcgm_port=9500), "gpu")[0]["targets"][0].endswith(":9500")
    assert targets(generate(launches, vllm_exporters_gpu=False), "gpu") == []
    assert "InferopsGpuMissing" not in generate(launches, vllm_exporters_gpu=False)["rules/inferops-gpu.rules.yml"]


def test_node_exporter_targets_and_job_only_when_enabled():
    launches = golden("lab", "lab_dp")
    assert "targets/inferops-node.yml" not in generate(launches)
    assert "inferops_node" not in generate(launches)["scrape_configs.yml"]
    out = generate(launches, vllm_exporters_node_exporter=True, vllm_exporters_node_exporter_port=9101)
    groups = targets(out, "node")
    assert nodes_of(groups) == ["lab-node1", "lab-node2", "lab-node3", "lab-node4"]
    assert all(g["targets"][0].endswith(":9101") for g in groups)
    job = next(j for j in yaml.safe_load(out["scrape_configs.yml"]) if j["job_name"] == "inferops_node")
    assert job["honor_labels"] is True


def test_target_labels():
    launches = golden("k25_dep")
    group = targets(generate(launches, vllm_observability_extra_labels={"site": "fra1", "env": "prod"}), "gpu")[1]
    assert group == {"targets": ["10.1.0.2:9400"],
                     "labels": {"cluster": "k25_dep", "node": "h200-02", "role": "follower", "rank": "1",
                                "vendor": "nvidia", "gpu_model": "H200", "strategy": "dep",
                                "load_balancing": "internal", "model": "kimi-k2.5", "env": "prod", "site": "fra1"}}
    routers = targets(generate(launches, vllm_observability_extra_labels={"site": "fra1"}), "router")
    assert routers == [{"targets": ["10.9.0.1:29000"], "labels": {"node": "router-1", "role": "router", "site": "fra1"}}]


def test_ipv6_addresses_in_brackets():
    launches = golden("lab")
    out = files(launches, {h: "fd00::%d" % i for i, h in enumerate(sorted(launches), 1)}, {}, settings())
    assert targets(out, "vllm")[0]["targets"] == ["[fd00::1]:18300"]


def test_same_plan_same_bytes_in_any_order():
    launches = golden()
    hosts = list(launches)
    random.Random(7).shuffle(hosts)
    assert generate({h: launches[h] for h in hosts}) == generate(launches)


def test_scrape_jobs_read_the_file_sd_dir_and_drop_created_series():
    jobs = yaml.safe_load(generate(golden(), vllm_observability_file_sd_dir="/srv/prom/sd/",
                                   vllm_observability_scrape_interval="30s")["scrape_configs.yml"])
    assert [j["job_name"] for j in jobs] == ["inferops_vllm", "inferops_gpu", "inferops_router"]
    for job in jobs:
        assert job["scrape_interval"] == "30s"
        assert job["file_sd_configs"] == [{"files": ["/srv/prom/sd/%s.yml" % job["job_name"].replace("_", "-")]}]
        assert job["metric_relabel_configs"] == [{"source_labels": ["__name__"], "regex": ".*_created",
                                                  "action": "drop"}]


@pytest.mark.parametrize("name,value,words", [
    ("vllm_observability_extra_labels", {"cluster": "x"}, "'cluster' is a label the collection sets"),
    ("vllm_observability_extra_labels", {"9site": "x"}, "'9site' is not a Prometheus label name"),
    ("vllm_observability_extra_labels", {"site": {"a": 1}}, "the value of 'site' must be a string"),
    ("vllm_observability_extra_labels", ["site"], "must be a mapping"),
    ("vllm_observability_scrape_interval", "15 seconds", "not a Prometheus duration"),
    ("vllm_observability_scrape_interval", "0s", "not a Prometheus duration"),
    ("vllm_observability_file_sd_dir", "file_sd", "must be an absolute directory path"),
    ("vllm_exporters_dcgm_port", 70000, "must be a port from 1 to 65535"),
    ("vllm_exporters_node_exporter", "yes", "must be true or false"),
    ("vllm_observability_alerts", ["engine_down"], "must be a mapping of rule keys"),
])
def test_bad_settings_are_refused_in_one_line(name, value, words):
    with pytest.raises(ObservabilityError) as err:
        generate(golden("lab"), **{name: value})
    assert err.value.variable == name and words in str(err.value) and "Fix: " in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("alerts_value,words", [
    ({"engine_dwn": {"for": "1m"}}, "no alert rule 'engine_dwn'. Fix: did you mean engine_down"),
    ({"ttft_p95": {"second": 3}}, "ttft_p95 has no setting 'second'. Fix: did you mean seconds"),
    ({"engine_down": {"for": "ten minutes"}}, "not a Prometheus duration"),
    ({"engine_down": {"severity": "page"}}, "not a severity. Fix: set one of critical, warning, info"),
    ({"kv_cache_full": {"usage": "high"}}, "must be a number >= 0"),
    ({"ttft_p95": {"quantile": 95}}, "must be between 0 and 1"),
    ({"gpu_xid": {"enabled": "no"}}, "must be true or false"),
    ({"gpu_xid": 5}, "the overrides of gpu_xid must be a mapping"),
])
def test_bad_alert_overrides_are_refused_with_the_closest_names(alerts_value, words):
    with pytest.raises(ObservabilityError) as err:
        generate(golden("lab"), vllm_observability_alerts=alerts_value)
    assert err.value.variable.startswith("vllm_observability_alerts") and words in str(err.value), str(err.value)


def rule_of(out, alert_name, file="vllm"):
    groups = yaml.safe_load(out["rules/inferops-%s.rules.yml" % file])["groups"]
    return [r for g in groups for r in g["rules"] if r["alert"] == alert_name]


def test_alert_overrides_change_only_what_they_name():
    out = generate(golden("k25_dep"), vllm_observability_alerts={
        "engine_down": {"for": "15m", "severity": "warning"}, "ttft_p95": {"seconds": 3, "quantile": 0.99},
        "engines_missing": {"tolerated": 2}, "gpu_xid": {"enabled": False}})
    engine_down = rule_of(out, "InferopsVllmEngineDown")[0]
    assert engine_down["for"] == "15m" and engine_down["labels"] == {"severity": "warning"}
    ttft = rule_of(out, "InferopsVllmTimeToFirstTokenHigh")[0]
    assert ttft["expr"].startswith("histogram_quantile(0.99, ") and ttft["expr"].endswith(") > 3")
    assert "p99 time to first token has stayed above 3s for 10m" in ttft["annotations"]["description"]
    assert ") < 14 or max(" in rule_of(out, "InferopsVllmEnginesMissing")[0]["expr"]
    assert rule_of(out, "InferopsGpuXidError", "gpu") == []
    default = generate(golden("k25_dep"))
    assert rule_of(out, "InferopsVllmKvCacheFull") == rule_of(default, "InferopsVllmKvCacheFull")


def test_per_cluster_rules_carry_the_plan_numbers():
    out = generate(golden("k25_dep", "k3_gb300", "k3_mi355x_a", "lab_dp"))
    missing = {r["labels"]["cluster"]: r["expr"] for r in rule_of(out, "InferopsVllmEnginesMissing")}
    assert set(missing) == {"k25_dep", "k3_gb300", "k3_mi355x_a", "lab_dp"}
    assert missing["k25_dep"].endswith('inferops_vllm_watchdog_ranks_answered{cluster="k25_dep"}) < 16) unless on () '
                                       '(max(inferops_vllm_watchdog_state{cluster="k25_dep",role="head",state="grace"}) == 1)')
    assert "or vector(0)) < 2 " in missing["lab_dp"]
    gpus = {r["labels"]["cluster"]: r["expr"] for r in rule_of(out, "InferopsGpuMissing", "gpu")}
    assert set(gpus) == {"k25_dep", "k3_gb300", "k3_mi355x_a"}   # not the CPU cluster
    assert gpus["k25_dep"].startswith("(count by (cluster, node) (DCGM_FI_DEV_GPU_TEMP{") and gpus["k25_dep"].endswith(
        "< 8")
    assert gpus["k3_gb300"].endswith("< 4") and "gpu_junction_temperature{" in gpus["k3_mi355x_a"]


def test_every_alert_is_named_inferops_and_has_severity_and_annotations():
    out = generate(golden())
    for file in ("vllm", "gpu", "router"):
        for group in yaml.safe_load(out["rules/inferops-%s.rules.yml" % file])["groups"]:
            for rule in group["rules"]:
                assert rule["alert"].startswith("Inferops")
                assert rule["labels"]["severity"] in ("critical", "warning")
                assert rule["annotations"]["summary"] and "Fix: " in rule["annotations"]["description"]
    assert {a.name for a in alerts.DEFAULTS} == {r["alert"] for f in ("vllm", "gpu", "router", "pd")
                                                 for g in yaml.safe_load(out["rules/inferops-%s.rules.yml" % f])["groups"]
                                                 for r in g["rules"]}


# --- the metric names rules and panels use -------------------------------------------------------------

def rule_exprs(out):
    return [r["expr"] for f in ("vllm", "gpu", "router", "pd")
            for g in yaml.safe_load(out["rules/inferops-%s.rules.yml" % f])["groups"] for r in g["rules"]]


def panel_exprs(out):
    return [e for name in ("cluster", "gpus", "router")
            for e in dashboards.exprs(json.loads(out["dashboards/inferops-%s.json" % name]))]


def test_names_in_reads_metric_names_only():
    assert metrics.names_in('histogram_quantile(0.95, sum by (cluster, le) (rate(vllm:x_bucket{job="a",'
                            'cluster=~"$cluster"}[$__rate_interval]))) > 1e6 unless on (cluster) (up == 0) '
                            'or vector(0)') == {"vllm:x_bucket", "up"}


def test_every_metric_a_rule_or_panel_uses_is_in_a_table_or_the_roles_field_lists():
    out = generate(golden(), vllm_exporters_node_exporter=True)
    dcgm, amd = metrics.dcgm_metric_names(), metrics.amd_metric_names()
    vllm = metrics.exposed(metrics.VLLM)
    known = vllm | metrics.exposed(metrics.PD + metrics.ROUTER + metrics.WATCHDOG) | set(metrics.SCRAPE) | dcgm | amd
    used = set()
    for expr in rule_exprs(out) + panel_exprs(out):
        names = metrics.names_in(expr)
        assert names, expr
        assert names <= known, (expr, names - known)
        used |= names
        for removed in metrics.REMOVED_VLLM:
            assert removed not in expr
        assert "gpu_prefix_cache" not in expr
    gpu_used = {n for n in used if n.startswith("DCGM_") or n.startswith("gpu_")}
    assert gpu_used <= dcgm | amd and gpu_used & dcgm and gpu_used & amd
    assert {n for n in used if n.startswith("vllm:")} <= vllm | metrics.exposed(metrics.PD)


def test_the_roles_field_lists():
    fields = metrics.dcgm_fields()
    for name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                 "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_POWER_VIOLATION",
                 "DCGM_EXP_XID_ERRORS_COUNT", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                 *alerts.NVLINK_ERRORS):
        assert name in fields
    assert fields["DCGM_FI_DRIVER_VERSION"][0] == "label" and "DCGM_FI_DRIVER_VERSION" not in metrics.dcgm_metric_names()
    assert {kind for kind, _text in fields.values()} <= {"gauge", "counter", "label"}
    assert all(text for _kind, text in fields.values())
    assert all(re.match(r"^[A-Z][A-Z0-9_]+$", f) for f in metrics.amd_fields())
    assert "gpu_ecc_uncorrect_total" in metrics.amd_metric_names()


def test_dashboards_have_the_variables_and_every_panel_a_query():
    out = generate(golden())
    for name in ("cluster", "gpus", "router"):
        board = json.loads(out["dashboards/inferops-%s.json" % name])
        assert [v["name"] for v in board["templating"]["list"]][:2] == ["datasource", "cluster"]
        panels = [p for p in board["panels"] if p["type"] != "row"]
        assert panels and all(p["targets"] and all(t["expr"] for t in p["targets"]) for p in panels)
        assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    gpus = json.loads(out["dashboards/inferops-gpus.json"])
    assert {"NVIDIA GPUs", "AMD GPUs"} <= {p["title"] for p in gpus["panels"]}
    cpu_only = json.loads(generate(golden("lab"))["dashboards/inferops-gpus.json"])
    assert "NVIDIA GPUs" not in {p["title"] for p in cpu_only["panels"]}
    assert "providers:" in out["dashboards/provisioning.yml"]


# --- Debian's promtool ------------------------------------------------------------------------------------

def prometheus_config(tmp_path, out):
    """A prometheus.yml that pastes the scrape snippet (as on 2.42) with the file_sd dir pointing at the targets."""
    write_tree(tmp_path, out)
    jobs = yaml.safe_load(out["scrape_configs.yml"].replace("/etc/prometheus/file_sd", str(tmp_path / "targets")))
    config = {"global": {"scrape_interval": "15s", "evaluation_interval": "15s"},
              "rule_files": [str(tmp_path / "rules/*.rules.yml")], "scrape_configs": jobs}
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_promtool_accepts_config_targets_and_rules(tmp_path):
    out = generate(golden(), vllm_exporters_node_exporter=True, vllm_observability_extra_labels={"site": "lab"})
    config = prometheus_config(tmp_path, out)
    result = run_promtool("check", "config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
    result = run_promtool("check", "rules", *sorted(str(p) for p in (tmp_path / "rules").glob("*.yml")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == 4   # vllm, gpu, router and (the example P/D site's) pd


def test_promtool_service_discovery_shows_the_plan_labels(tmp_path):
    launches = golden()
    config = prometheus_config(tmp_path, generate(launches, vllm_observability_extra_labels={"site": "lab"}))
    result = run_promtool("check", "service-discovery", "--timeout=1s", str(config), "inferops_vllm")
    assert result.returncode == 0, result.stdout + result.stderr
    found = json.loads(result.stdout[result.stdout.index("["):result.stdout.rindex("]") + 1])
    labels = {t["labels"]["node"]: t["labels"] for t in found}
    assert set(labels) == {h for h, l in launches.items() if l["serves_api"]}
    head = labels["h200-01"]
    assert {k: head[k] for k in ("job", "cluster", "role", "rank", "vendor", "gpu_model", "strategy", "model",
                                 "site")} == {"job": "inferops_vllm", "cluster": "k25_dep", "role": "head", "rank": "0",
                                              "vendor": "nvidia", "gpu_model": "H200", "strategy": "dep",
                                              "model": "kimi-k2.5", "site": "lab"}
    assert head["instance"] == "%s:8000" % addresses(launches)["h200-01"]


# --- plan.yml -e cluster_plan_output_dir=D ---------------------------------------------------------------

def plan(tmp_path, out_dir, *extra):
    from test_plan_playbook import PLAYBOOK, ROOT, image_for
    import os
    import subprocess
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    env.pop("INFEROPS_LAB_IMAGE", None)
    return subprocess.run([PLAYBOOK, "-i", str(ROOT / "inventories/example-h200-ib"), str(ROOT / "playbooks/plan.yml"),
                           "-e", "cluster_plan_output_dir=%s" % out_dir,
                           "-e", "vllm_image=%s" % image_for(ROOT / "inventories/example-h200-ib"), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)


def test_plan_writes_the_files_once_and_check_mode_writes_none(tmp_path):
    out_dir = tmp_path / "plan"
    result = plan(tmp_path, out_dir, "--check")
    assert result.returncode == 0, result.stdout[-3000:]
    assert not (out_dir / "observability").exists()
    result = plan(tmp_path, out_dir, "-e", '{"vllm_observability_extra_labels": {"site": "fra1"}}')
    assert result.returncode == 0, result.stdout[-3000:]
    written = {str(p.relative_to(out_dir / "observability")) for p in (out_dir / "observability").rglob("*")
               if p.is_file()}
    assert written == EXPECTED_FILES - {"rules/inferops-pd.rules.yml"}   # a site without a P/D deployment
    groups = yaml.safe_load((out_dir / "observability/targets/inferops-vllm.yml").read_text())
    assert [(g["labels"]["node"], g["targets"], g["labels"]["site"]) for g in groups] == [
        ("h200-01", ["10.30.0.11:8000"], "fra1"), ("h200-03", ["10.30.0.13:8000"], "fra1")]
    again = plan(tmp_path, out_dir, "-e", '{"vllm_observability_extra_labels": {"site": "fra1"}}')
    assert re.search(r"h200-01 +: ok=\d+ +changed=0 ", again.stdout), again.stdout[-2000:]


def test_plan_refuses_bad_observability_settings_and_port_collisions(tmp_path):
    result = plan(tmp_path, tmp_path / "out", "-e", '{"vllm_observability_alerts": {"engine_dwn": {"for": "1m"}}}')
    assert result.returncode != 0
    assert ("vllm_observability_alerts={'engine_dwn': {'for': '1m'}}: no alert rule "
            "'engine_dwn'. Fix: did you mean engine_down") in result.stdout
    assert not (tmp_path / "out").exists()
    result = plan(tmp_path, tmp_path / "out", "-e", "vllm_exporters_dcgm_port=8000")
    assert result.returncode != 0
    assert ("vllm_port and vllm_exporters_dcgm_port=8000 (host h200-01): the vLLM API and the DCGM exporter would "
            "listen on the same port") in result.stdout, result.stdout[-2000:]


def test_the_yaml_writer_reads_back_as_written():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import yaml_text
    value = {"a": "yes", "b": "1.5", "c": "x: y", "d": "it's", "e": "", "f": [], "g": {}, "h": [{"x": [1, 2.5]}, "-a"],
             "i": "a\nb", "j": "#x", "k": True, "l": None, "m": " lead", "n": "trail ", "o": "@x", "p": "a - b",
             "q": "x #y", "r": 'up{job="x"} == 0', "s": "{{ $labels.node }}", "t": "0", "u": "null", "v": "~"}
    assert yaml.safe_load(yaml_text.dump(value)) == value
    out = generate(golden(), vllm_exporters_node_exporter=True)
    for path, text in out.items():
        if path.endswith(".yml"):
            assert yaml.safe_load(text) is not None, path


# --- the observability_files action -----------------------------------------------------------------------

def run_action(tmp_path, out_dir, *extra):
    from test_plan_playbook import PLAYBOOK, ROOT, image_for
    import os
    import subprocess
    inv = tmp_path / "inv"
    if not inv.exists():
        (inv / "host_vars").mkdir(parents=True)
        launches = golden("k25_dep", "lab")
        hosts = "".join("        %s: {vllm_control_address: %s}\n" % (h, a) for h, a in addresses(launches).items())
        (inv / "hosts.yml").write_text("all:\n  children:\n    vllm_clusters:\n      hosts:\n" + hosts +
                                       "    vllm_routers:\n      hosts:\n        router-1: {ansible_host: 10.9.0.1}\n")
        for host, launch in launches.items():
            (inv / "host_vars" / (host + ".yml")).write_text(json.dumps({"vllm_launch": launch}))
        (tmp_path / "play.yml").write_text(
            "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
            "    - inferops.vllm.observability_files:\n        output_dir: '{{ out_dir }}'\n      register: obs\n"
            "    - ansible.builtin.debug:\n        msg: 'FILES {{ obs.files | length }}'\n")
    # JSON results: ansible-core 2.18's YAML callback wraps long messages, 2.19's does not
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    return subprocess.run([PLAYBOOK, "-i", str(inv), str(tmp_path / "play.yml"), "-e", "out_dir=%s" % out_dir, *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)


def test_the_action_writes_what_changed_and_honours_check_and_diff(tmp_path):
    out_dir = tmp_path / "obs"
    result = run_action(tmp_path, out_dir, "--check")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "changed: [localhost]" in result.stdout and not out_dir.exists()
    result = run_action(tmp_path, out_dir)
    assert result.returncode == 0 and "FILES 11" in result.stdout, result.stdout[-3000:]
    routers = yaml.safe_load((out_dir / "targets/inferops-router.yml").read_text())
    assert routers == [{"targets": ["10.9.0.1:29000"], "labels": {"node": "router-1", "role": "router"}}]
    assert "ok: [localhost]" in run_action(tmp_path, out_dir).stdout   # a second run changes nothing
    result = run_action(tmp_path, out_dir, "--check", "--diff", "-e", "vllm_exporters_dcgm_port=9500")
    assert "changed: [localhost]" in result.stdout and "+    - '10.1.0.1:9500'" in result.stdout, result.stdout[-3000:]
    assert "9500" not in (out_dir / "targets/inferops-gpu.yml").read_text()
    result = run_action(tmp_path, out_dir, "-e", "vllm_exporters_dcgm_port=http")
    assert result.returncode != 0
    assert "inferops.vllm observability: vllm_exporters_dcgm_port='http': must be a port" in result.stdout
