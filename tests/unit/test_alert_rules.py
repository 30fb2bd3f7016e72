"""Every generated alert rule under Debian's `promtool test rules`: one case that fires and one that does not, on
input series shaped like the real exporters' (vLLM 0.32: model_name and engine; DCGM exporter 4.8.2: gpu, UUID,
pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION; AMD's device-metrics-exporter: gpu_id, gpu_uuid,
...; vllm-router: worker), with the target labels the generated file_sd files add."""
import re

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import alerts, targets
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.plan_files import files

from observability_plans import addresses, golden, run_promtool, settings, write_tree

NVIDIA, AMD = "k25_dep", "k3_mi355x_a"    # DP 16 over 2 x 8 H200; one MI355X node with 8 GPUs
LAUNCHES = golden(NVIDIA, AMD)
ADDRESSES = addresses(LAUNCHES)
ROUTER = {"router-1": {"address": "10.9.0.1", "metrics_port": 29000, "port": 8080}}
WORKER = "http://10.30.0.11:8000"
CASES = []   # (alert name, fires?, test case)


def target(host, job, port):
    labels = targets.node_labels(host, LAUNCHES[host], {})
    return dict(labels, job=job, instance="%s:%d" % (ADDRESSES[host], port))


VLLM_HEAD = target("h200-01", "inferops_vllm", 8000)
AMD_HEAD = target("mi355x-01", "inferops_vllm", 8000)
WATCHDOG = target("h200-02", "inferops_node", 9100)    # honor_labels: the textfile's cluster, rank, role
HEAD_WATCHDOG = target("h200-01", "inferops_node", 9100)
GPU_NODE = target("h200-01", "inferops_gpu", 9400)
GPU_NODE_2 = target("h200-02", "inferops_gpu", 9400)
AMD_NODE = target("mi355x-01", "inferops_gpu", 5000)
ROUTER_TARGET = {"job": "inferops_router", "instance": "10.9.0.1:29000", "node": "router-1", "role": "router"}


def vllm(host_labels, engine="0", **extra):
    return dict(host_labels, model_name=host_labels["model"], engine=engine, **extra)


def dcgm(node_labels, gpu=0, **extra):
    host = node_labels["node"]
    return dict(node_labels, gpu=str(gpu), UUID="GPU-5c8d3f2a-0000-4000-8000-%012d" % gpu,
                pci_bus_id="00000000:%02X:00.0" % (0x18 + gpu), device="nvidia%d" % gpu, modelName="NVIDIA H200",
                Hostname=host, DCGM_FI_DRIVER_VERSION="580.95.05", **extra)


def amd(gpu=0):
    return dict(AMD_NODE, gpu_id=str(gpu), gpu_uuid="1eff74a1-0000-4000-8000-%012d" % gpu, gpu_partition_id="0",
                gpu_compute_partition_type="spx", gpu_memory_partition_type="nps1", hostname="mi355x-01",
                serial_number="PCB0%07d" % gpu, card_model="AMD Instinct MI355X", driver_version="6.14.14")


def series(name, labels, values):
    body = ",".join('%s="%s"' % (k, v) for k, v in labels.items())
    return {"series": "%s{%s}" % (name, body), "values": values}


def rule_labels(out):
    """{alert name: [(rule labels, annotations)]} of the generated rules."""
    found = {}
    for file in ("vllm", "gpu", "router"):
        for group in yaml.safe_load(out["rules/inferops-%s.rules.yml" % file])["groups"]:
            for rule in group["rules"]:
                found.setdefault(rule["alert"], []).append(rule)
    return found


OUT = files(LAUNCHES, ADDRESSES, ROUTER, settings(vllm_exporters_node_exporter=True))
RULES = rule_labels(OUT)
TEMPLATE = re.compile(r"\{\{ \$labels\.(\w+) \}\}")


def expected(alert_name, labels, rule_index=0):
    """The alert Prometheus raises: the result's labels and the rule's, annotations templated from the result's
    labels (Go's text/template writes <no value> for a missing one)."""
    rule = RULES[alert_name][rule_index]
    alert_labels = dict(labels, **rule["labels"])
    annotations = {k: TEMPLATE.sub(lambda m: labels.get(m.group(1), "<no value>"), v)
                   for k, v in rule["annotations"].items()}
    return {"exp_labels": alert_labels, "exp_annotations": annotations}


def case(alert_name, fires, input_series, eval_time, alerts_=()):
    CASES.append((alert_name, fires, {"interval": "1m", "input_series": input_series,
                                      "alert_rule_test": [{"eval_time": eval_time, "alertname": alert_name,
                                                           "exp_alerts": list(alerts_)}]}))


def amd_engine():
    """The AMD cluster's one engine, alive: its own fewer-engines rule stays quiet."""
    return series("vllm:num_requests_running", vllm(AMD_HEAD), "0x30")


def nvidia_engines(count):
    return [series("vllm:num_requests_running", vllm(VLLM_HEAD, str(e)), "1x30") for e in range(count)]


def grace(values_grace, values_failing, watchdog=None):
    watchdog = watchdog or WATCHDOG
    return [series("inferops_vllm_watchdog_state", dict(watchdog, state="grace"), values_grace),
            series("inferops_vllm_watchdog_state", dict(watchdog, state="failing"), values_failing)]


def counter(name, labels, step, minutes=30):
    return series(name, labels, "0+%sx%d" % (step, minutes))


def hist(name, labels, buckets, minutes=30):
    """A histogram whose observations all fall in the bucket of `buckets` given with a count per minute."""
    return [series(name + "_bucket", dict(labels, le=le), "0+%dx%d" % (per_minute, minutes))
            for le, per_minute in buckets]


# --- vLLM ----------------------------------------------------------------------------------------------

up_head = dict(VLLM_HEAD)
case("InferopsVllmEngineDown", True, [series("up", up_head, "0x30")] + grace("0x30", "1x30"), "10m",
     [expected("InferopsVllmEngineDown", up_head)])
case("InferopsVllmEngineDown", False, [series("up", up_head, "1x30")] + grace("0x30", "0x30"), "10m")
# a model load: the watchdog's grace keeps the down head quiet, and the alert comes once the grace ends
case("InferopsVllmEngineDown", False, [series("up", up_head, "0x30")] + grace("1x30", "0x30"), "25m")
case("InferopsVllmEngineDown", True, [series("up", up_head, "0x30")] + grace("1x14 0x15", "0x14 1x15"), "25m",
     [expected("InferopsVllmEngineDown", up_head)])
case("InferopsVllmEngineDown", False, [series("up", up_head, "0x30")] + grace("1x14 0x15", "0x14 1x15"), "18m")

gave_up = dict(WATCHDOG)
case("InferopsVllmWatchdogGaveUp", True, [series("inferops_vllm_watchdog_gave_up", gave_up, "0 0 1x20")], "10m",
     [expected("InferopsVllmWatchdogGaveUp", gave_up)])
case("InferopsVllmWatchdogGaveUp", False, [series("inferops_vllm_watchdog_gave_up", gave_up, "0x20")], "10m")

cache = dict(WATCHDOG)
case("InferopsVllmWeightCacheDown", True, [series("inferops_vllm_weight_cache_up", cache, "1 1 0x20")], "15m",
     [expected("InferopsVllmWeightCacheDown", cache)])
case("InferopsVllmWeightCacheDown", False, [series("inferops_vllm_weight_cache_up", cache, "1 1 0x20")], "8m")
case("InferopsVllmWeightCacheDown", False, [series("inferops_vllm_weight_cache_up", cache, "1x20")], "15m")

missing = {"cluster": NVIDIA}
case("InferopsVllmEnginesMissing", True, nvidia_engines(14) + [amd_engine()] + grace("0x30", "0x30"), "10m",
     [expected("InferopsVllmEnginesMissing", missing)])
# a dead head: no series at all counts as 0 engines
case("InferopsVllmEnginesMissing", True, [amd_engine()] + grace("0x30", "1x30"), "10m",
     [expected("InferopsVllmEnginesMissing", missing)])
case("InferopsVllmEnginesMissing", False, nvidia_engines(16) + [amd_engine()] + grace("0x30", "0x30"), "10m")
# the whole group loads (a deploy, the head restarted): the head's watchdog is in grace
case("InferopsVllmEnginesMissing", False, [amd_engine()] + grace("1x30", "0x30", HEAD_WATCHDOG), "10m")
# a dead DP follower: the head still shows its engine's last values, the watchdogs' probe finds a rank silent
answered = [series("inferops_vllm_watchdog_ranks_answered", dict(WATCHDOG), "15x30"),
            series("inferops_vllm_watchdog_ranks_answered", dict(HEAD_WATCHDOG), "15x30")]
case("InferopsVllmEnginesMissing", True, nvidia_engines(16) + [amd_engine()] + answered + grace("0x30", "0x30"), "10m",
     [expected("InferopsVllmEnginesMissing", missing)])
# ... brought back at once by docker's restart policy: the follower loads (grace), its rank still gone from the group
case("InferopsVllmEnginesMissing", True, nvidia_engines(16) + [amd_engine()] + answered + grace("1x30", "0x30")
     + grace("0x30", "1x30", HEAD_WATCHDOG), "10m", [expected("InferopsVllmEnginesMissing", missing)])
case("InferopsVllmEnginesMissing", False, nvidia_engines(16) + [amd_engine()] + answered + grace("1x30", "0x30")
     + grace("1x30", "0x30", HEAD_WATCHDOG), "10m")
case("InferopsVllmEnginesMissing", False, nvidia_engines(16) + [amd_engine()] + grace("0x30", "0x30")
     + [series("inferops_vllm_watchdog_ranks_answered", dict(WATCHDOG), "16x30")], "10m")

kv = {"cluster": NVIDIA, "node": "h200-01", "engine": "3", "model_name": "kimi-k2.5"}
kv_full = series("vllm:kv_cache_usage_perc", vllm(VLLM_HEAD, "3"), "0.97x30")
case("InferopsVllmKvCacheFull", True, [kv_full, series("vllm:num_requests_waiting", vllm(VLLM_HEAD, "3"), "4x30"),
                                       counter("vllm:num_preemptions_total", vllm(VLLM_HEAD, "3"), 0)], "20m",
     [expected("InferopsVllmKvCacheFull", kv)])
case("InferopsVllmKvCacheFull", True, [kv_full, series("vllm:num_requests_waiting", vllm(VLLM_HEAD, "3"), "0x30"),
                                       counter("vllm:num_preemptions_total", vllm(VLLM_HEAD, "3"), 30)], "20m",
     [expected("InferopsVllmKvCacheFull", kv)])
# a full cache that serves without queueing or preemption is working as intended
case("InferopsVllmKvCacheFull", False, [kv_full, series("vllm:num_requests_waiting", vllm(VLLM_HEAD, "3"), "0x30"),
                                        counter("vllm:num_preemptions_total", vllm(VLLM_HEAD, "3"), 0)], "20m")

latency = {"cluster": NVIDIA, "model_name": "kimi-k2.5"}
case("InferopsVllmTimeToFirstTokenHigh", True,
     hist("vllm:time_to_first_token_seconds", vllm(VLLM_HEAD), [("1.0", 0), ("5.0", 0), ("10.0", 10), ("+Inf", 10)]),
     "20m", [expected("InferopsVllmTimeToFirstTokenHigh", latency)])
case("InferopsVllmTimeToFirstTokenHigh", False,
     hist("vllm:time_to_first_token_seconds", vllm(VLLM_HEAD), [("1.0", 10), ("5.0", 10), ("10.0", 10), ("+Inf", 10)]),
     "20m")
case("InferopsVllmInterTokenLatencyHigh", True,
     hist("vllm:inter_token_latency_seconds", vllm(VLLM_HEAD), [("0.05", 0), ("0.2", 0), ("0.5", 50), ("+Inf", 50)]),
     "20m", [expected("InferopsVllmInterTokenLatencyHigh", latency)])
case("InferopsVllmInterTokenLatencyHigh", False,
     hist("vllm:inter_token_latency_seconds", vllm(VLLM_HEAD), [("0.05", 50), ("0.2", 50), ("0.5", 50),
                                                                ("+Inf", 50)]), "20m")

per_cluster = {"cluster": NVIDIA}
case("InferopsVllmRequestErrors", True,
     [counter("vllm:request_success_total", vllm(VLLM_HEAD, finished_reason="error"), 1),
      counter("vllm:request_success_total", vllm(VLLM_HEAD, finished_reason="stop"), 9)], "20m",
     [expected("InferopsVllmRequestErrors", per_cluster)])
case("InferopsVllmRequestErrors", False,
     [counter("vllm:request_success_total", vllm(VLLM_HEAD, finished_reason="error"), 0),
      counter("vllm:request_success_total", vllm(VLLM_HEAD, finished_reason="length"), 9)], "20m")

http = dict(VLLM_HEAD, handler="/v1/chat/completions", method="POST")
case("InferopsVllmHttp5xx", True, [counter("http_requests_total", dict(http, status="5xx"), 2),
                                   counter("http_requests_total", dict(http, status="2xx"), 8)], "20m",
     [expected("InferopsVllmHttp5xx", per_cluster)])
case("InferopsVllmHttp5xx", False, [counter("http_requests_total", dict(http, status="5xx"), 0),
                                    counter("http_requests_total", dict(http, status="2xx"), 8)], "20m")

# --- router --------------------------------------------------------------------------------------------

worker = dict(ROUTER_TARGET, worker=WORKER)
case("InferopsRouterWorkerUnhealthy", True, [series("vllm_router_worker_health", worker, "1 1 0x20")], "10m",
     [expected("InferopsRouterWorkerUnhealthy", worker)])
case("InferopsRouterWorkerUnhealthy", False, [series("vllm_router_worker_health", worker, "1x20")], "10m")
case("InferopsRouterCircuitOpen", True, [series("vllm_router_cb_state", worker, "0 0 1x20")], "10m",
     [expected("InferopsRouterCircuitOpen", worker)])
case("InferopsRouterCircuitOpen", False, [series("vllm_router_cb_state", worker, "0 2 0x20")], "10m")
case("InferopsRouterDown", True, [series("up", ROUTER_TARGET, "1 0x20")], "10m",
     [expected("InferopsRouterDown", ROUTER_TARGET)])
case("InferopsRouterDown", False, [series("up", ROUTER_TARGET, "1x20")], "10m")

# --- GPUs ----------------------------------------------------------------------------------------------

xid = dcgm(GPU_NODE, 3, xid="79")
case("InferopsGpuXidError", True, [series("DCGM_EXP_XID_ERRORS_COUNT", xid, "0x5 1x10")], "8m",
     [expected("InferopsGpuXidError", xid)])
case("InferopsGpuXidError", False, [series("DCGM_EXP_XID_ERRORS_COUNT", xid, "0x15")], "8m")

gpu3 = dcgm(GPU_NODE, 3)
case("InferopsGpuEccUncorrectable", True, [series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu3, "0x5 1x10")], "8m",
     [expected("InferopsGpuEccUncorrectable", gpu3)])
case("InferopsGpuEccUncorrectable", False, [series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu3, "2x15")], "8m")
case("InferopsGpuRowRemapFailure", True, [series("DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu3, "0x5 1x10")], "8m",
     [expected("InferopsGpuRowRemapFailure", gpu3)])
case("InferopsGpuRowRemapFailure", False, [series("DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu3, "0x15")], "8m")
case("InferopsGpuRowsRemapped", True, [series("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", gpu3, "0x5 2x10")], "8m",
     [expected("InferopsGpuRowsRemapped", gpu3)])
case("InferopsGpuRowsRemapped", False, [series("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", gpu3, "2x15")], "8m")
# microseconds throttled per minute: 30 s of every minute, then 1 s
case("InferopsGpuThermalThrottling", True, [counter("DCGM_FI_DEV_THERMAL_VIOLATION", gpu3, 30000000)], "20m",
     [expected("InferopsGpuThermalThrottling", gpu3)])
case("InferopsGpuThermalThrottling", False, [counter("DCGM_FI_DEV_THERMAL_VIOLATION", gpu3, 1000000)], "20m")
flat_nvlink = [counter(name, gpu3, 0) for name in alerts.NVLINK_ERRORS]
case("InferopsGpuNvlinkErrors", True, flat_nvlink[:2] + [series(alerts.NVLINK_ERRORS[2], gpu3, "0x5 7x10")]
     + flat_nvlink[3:], "8m", [expected("InferopsGpuNvlinkErrors", gpu3)])
case("InferopsGpuNvlinkErrors", False, flat_nvlink, "8m")

amd0 = amd(0)
case("InferopsAmdGpuEccUncorrectable", True, [series("gpu_ecc_uncorrect_total", amd0, "0x5 1x10")], "8m",
     [expected("InferopsAmdGpuEccUncorrectable", amd0)])
case("InferopsAmdGpuEccUncorrectable", False, [series("gpu_ecc_uncorrect_total", amd0, "0x15")], "8m")


def gpus(node, count, name="DCGM_FI_DEV_GPU_TEMP"):
    return [series(name, dcgm(node, g), "40x20") for g in range(count)]


ups = [series("up", GPU_NODE, "1x20"), series("up", GPU_NODE_2, "1x20")]
# the rule is per cluster: the NVIDIA cluster's is the first, the AMD cluster's the second
case("InferopsGpuMissing", True, ups + gpus(GPU_NODE, 8) + gpus(GPU_NODE_2, 7), "10m",
     [expected("InferopsGpuMissing", {"cluster": NVIDIA, "node": "h200-02"})])
# the exporter answers but sees no GPU at all (the driver lost them): absent counts as 0
case("InferopsGpuMissing", True, ups + gpus(GPU_NODE, 8), "10m",
     [expected("InferopsGpuMissing", {"cluster": NVIDIA, "node": "h200-02"})])
case("InferopsGpuMissing", True, [series("up", AMD_NODE, "1x20")]
     + [series("gpu_junction_temperature", amd(g), "50x20") for g in range(6)], "10m",
     [expected("InferopsGpuMissing", {"cluster": AMD, "node": "mi355x-01"}, 1)])
case("InferopsGpuMissing", False, ups + gpus(GPU_NODE, 8) + gpus(GPU_NODE_2, 8) + [series("up", AMD_NODE, "1x20")]
     + [series("gpu_junction_temperature", amd(g), "50x20") for g in range(8)], "10m")

case("InferopsExporterDown", True, [series("up", GPU_NODE_2, "1 0x20"), series("up", GPU_NODE, "1x20")], "10m",
     [expected("InferopsExporterDown", GPU_NODE_2)])
case("InferopsExporterDown", True, [series("up", WATCHDOG, "1 0x20")], "10m",
     [expected("InferopsExporterDown", WATCHDOG)])
case("InferopsExporterDown", False, [series("up", GPU_NODE_2, "1x20"), series("up", WATCHDOG, "1x20")], "10m")


def test_every_alert_has_a_firing_and_a_quiet_case():
    names = {a.name for a in alerts.DEFAULTS if a.file != "pd"}   # the P/D rules: test_pd_rules below
    assert names == set(RULES)
    assert {n for n, fires, _case in CASES if fires} == names
    assert {n for n, fires, _case in CASES if not fires} == names


def test_promtool_test_rules(tmp_path):
    write_tree(tmp_path, OUT)
    spec = {"rule_files": sorted(str(p) for p in (tmp_path / "rules").glob("*.yml")), "evaluation_interval": "1m",
            "tests": [c for _name, _fires, c in CASES]}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False, width=1000))
    result = run_promtool("test", "rules", str(tmp_path / "tests.yml"))
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("broken", ["InferopsVllmEngineDown", "InferopsGpuMissing"])
def test_promtool_catches_a_wrong_expectation(tmp_path, broken):
    """The harness itself: a case that expects the opposite fails."""
    write_tree(tmp_path, OUT)
    wrong = [dict(c, alert_rule_test=[dict(t, exp_alerts=[] if t["exp_alerts"] else [{"exp_labels": {}}])
                                      for t in c["alert_rule_test"]])
             for name, fires, c in CASES if name == broken and fires][:1]
    spec = {"rule_files": sorted(str(p) for p in (tmp_path / "rules").glob("*.yml")), "evaluation_interval": "1m",
            "tests": wrong}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False, width=1000))
    result = run_promtool("test", "rules", str(tmp_path / "tests.yml"))
    assert result.returncode != 0 and broken in result.stdout + result.stderr


# --- P/D deployments: written only for a plan with one (the example site's two sides) --------------------

PD_LAUNCHES = golden("k3_prefill", "k3_decode")
PD_ADDRESSES = addresses(PD_LAUNCHES)


def pd_target(host):
    labels = targets.node_labels(host, PD_LAUNCHES[host], {})
    return dict(labels, job="inferops_vllm", instance="%s:8000" % PD_ADDRESSES[host])


def test_pd_rules_exist_only_for_a_plan_with_a_deployment():
    assert "rules/inferops-pd.rules.yml" not in OUT
    out = files(PD_LAUNCHES, PD_ADDRESSES, ROUTER, settings())
    names = {rule["alert"] for group in yaml.safe_load(out["rules/inferops-pd.rules.yml"])["groups"]
             for rule in group["rules"]}
    assert names == {a.name for a in alerts.DEFAULTS if a.file == "pd"}
    assert pd_target("b200-d01")["pd_role"] == "decode" and pd_target("b200-p01")["pd_deployment"] == "k3_pd"


def test_pd_rules(tmp_path):
    out = files(PD_LAUNCHES, PD_ADDRESSES, ROUTER, settings())
    rules = {rule["alert"]: rule for group in yaml.safe_load(out["rules/inferops-pd.rules.yml"])["groups"]
             for rule in group["rules"]}
    decode = vllm(pd_target("b200-d01"))
    prefill = pd_target("b200-p01")
    grace = {"cluster": "k3_prefill", "node": "b200-p01", "role": "head", "state": "grace", "job": "inferops_node"}
    moved = dict(decode, source="external_kv_transfer")
    computed = dict(decode, source="local_compute")
    wanted = {"cluster": "k3_decode", "pd_deployment": "k3_pd"}

    def alert(name):
        annotations = {k: TEMPLATE.sub(lambda m: wanted.get(m.group(1), "<no value>"), v)
                       for k, v in rules[name]["annotations"].items()}
        return {"exp_labels": dict(wanted, **rules[name]["labels"]), "exp_annotations": annotations}

    def side_down(role):
        labels = {"pd_deployment": "k3_pd", "pd_role": role}
        annotations = {k: TEMPLATE.sub(lambda m: labels.get(m.group(1), "<no value>"), v)
                       for k, v in rules["InferopsVllmPdSideDown"]["annotations"].items()}
        return {"exp_labels": dict(labels, **rules["InferopsVllmPdSideDown"]["labels"]), "exp_annotations": annotations}

    def test(name, input_series, fires):
        return {"interval": "1m", "input_series": input_series,
                "alert_rule_test": [{"eval_time": "20m", "alertname": name,
                                     "exp_alerts": [alert(name)] if fires else []}]}
    cases = [
        test("InferopsVllmKvNotMoving", [counter("vllm:prompt_tokens_by_source_total", computed, 100),
                                         counter("vllm:prompt_tokens_by_source_total", moved, 0)], True),
        test("InferopsVllmKvNotMoving", [counter("vllm:prompt_tokens_by_source_total", computed, 2),
                                         counter("vllm:prompt_tokens_by_source_total", moved, 100)], False),
        test("InferopsVllmKvTransferFailed", [counter("vllm:nixl_num_failed_transfers_total", decode, 1)], True),
        test("InferopsVllmKvTransferFailed", [counter("vllm:nixl_num_failed_transfers_total", decode, 0)], False),
        {"interval": "1m", "input_series": [series("up", prefill, "0x30"), series("up", pd_target("b200-d01"), "1x30")],
         "alert_rule_test": [{"eval_time": "20m", "alertname": "InferopsVllmPdSideDown",
                              "exp_alerts": [side_down("prefill")]}]},
        # the prefill side loading its model (its watchdog in grace) is quiet
        {"interval": "1m", "input_series": [series("up", prefill, "0x30"), series("up", pd_target("b200-d01"), "1x30"),
                                            series("inferops_vllm_watchdog_state", grace, "1x30")],
         "alert_rule_test": [{"eval_time": "20m", "alertname": "InferopsVllmPdSideDown", "exp_alerts": []}]},
    ]
    write_tree(tmp_path, out)
    spec = {"rule_files": [str(tmp_path / "rules/inferops-pd.rules.yml")], "evaluation_interval": "1m", "tests": cases}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False, width=1000))
    result = run_promtool("test", "rules", str(tmp_path / "tests.yml"))
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
