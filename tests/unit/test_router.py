"""vllm_router: the router's arguments and workers from the role's variables, the refusals (each names the
variable, the value and the fix), the launcher's argv, the drain's reading of /metrics and the worker API logic."""
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.node import router
from ansible_collections.inferops.vllm.plugins.module_utils.scripts import router_launch

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles/vllm_router"


def defaults(**over):
    """The role's defaults as the role hands them to the filter (templated ones resolved as without vllm_api_key)."""
    values = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    values["vllm_router_api_key"] = ""
    values.update(over)
    return values


def summary(name, endpoint="http://10.0.0.5:8000"):
    return {"name": name, "endpoint": endpoint, "nodes": ["a", "b"]}


PLANNED = [summary("k3", "http://10.0.0.5:8000"), summary("k3", "http://10.0.0.5:8000"),
           summary("k25", "http://10.0.1.5:8000"), summary("k25", "http://10.0.1.5:8000")]


def launcher():
    return router_launch


def test_defaults_give_every_argument_and_one_worker_per_cluster():
    config = router.router_config(defaults(), PLANNED)
    assert config["worker-urls"] == ["http://10.0.1.5:8000", "http://10.0.0.5:8000"]   # sorted by cluster, deduplicated
    assert config["host"] == "0.0.0.0" and config["port"] == 8080 and config["policy"] == "round_robin"
    assert config["prometheus-port"] == 29000 and config["prometheus-host"] == "0.0.0.0"
    assert config["health-check-interval-secs"] == 10 and config["health-check-endpoint"] == "/health"
    assert config["retry-max-retries"] == 3 and config["cb-failure-threshold"] == 10
    assert config["worker-startup-timeout-secs"] == 120 and config["worker-startup-check-interval"] == 5
    assert "disable-retries" not in config and "disable-circuit-breaker" not in config
    assert "api-key" not in config
    json.dumps(config)   # the role writes it as JSON


def test_argument_specs_match_the_supported_policies_and_levels():
    options = yaml.safe_load((ROLE / "meta/argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert tuple(options["vllm_router_policy"]["choices"]) == router.POLICIES
    assert tuple(options["vllm_router_log_level"]["choices"]) == router.LOG_LEVELS
    assert options["vllm_router_api_key"].get("no_log") is True


def test_clusters_limit_the_workers_in_the_given_order():
    config = router.router_config(defaults(vllm_router_clusters=["k3", "k25"]), PLANNED)
    assert config["worker-urls"] == ["http://10.0.0.5:8000", "http://10.0.1.5:8000"]
    assert router.router_config(defaults(vllm_router_clusters=["k3"]), PLANNED)["worker-urls"] == ["http://10.0.0.5:8000"]


def test_explicit_workers_win_and_are_normalised():
    config = router.router_config(defaults(vllm_router_workers=["http://w1:8000/", "http://w2:8000", "http://w1:8000"]),
                                  PLANNED)
    assert config["worker-urls"] == ["http://w1:8000", "http://w2:8000"]


def test_unknown_cluster_is_refused_with_the_known_names():
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_clusters=["k9"]), PLANNED)
    assert err.value.variable == "vllm_router_clusters"
    assert "k9" in str(err.value) and "k25, k3" in str(err.value)


def test_no_planned_cluster_and_no_workers_says_what_to_do():
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(), [])
    assert err.value.variable == "vllm_router_workers"
    assert "cluster_plan" in err.value.fix


@pytest.mark.parametrize("url, problem", [("10.0.0.5:8000", "not an http(s) URL"), ("http://w1:8000/v1", "without a path"),
                                          ("ftp://w1", "not an http(s) URL"), ("", "not a URL"),
                                          ("http://w1:99999", "port")])
def test_bad_worker_urls_are_refused(url, problem):
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_workers=["http://ok:1", url]), [])
    assert err.value.variable == "vllm_router_workers[1]" and err.value.value == url
    assert problem in str(err.value)


def test_a_cluster_endpoint_that_is_not_a_url_is_refused():
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(), [summary("k3", "10.0.0.5")])
    assert "cluster k3" in err.value.variable


def test_unknown_policy_and_level_are_refused():
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_policy="least_loaded"), PLANNED)
    assert err.value.variable == "vllm_router_policy" and "round_robin" in err.value.fix
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_log_level="trace"), PLANNED)
    assert err.value.variable == "vllm_router_log_level"


@pytest.mark.parametrize("flag, variable", [("api-key", "vllm_router_api_key"), ("--worker-urls", "vllm_router_workers"),
                                            ("host", "vllm_router_host"), ("port", "vllm_router_port"),
                                            ("policy", "vllm_router_policy"), ("log_level", "vllm_router_log_level")])
def test_managed_flags_are_refused_in_extra_args(flag, variable):
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_extra_args={flag: "secret" if flag == "api-key" else "x"}), PLANNED)
    assert err.value.variable.startswith("vllm_router_extra_args")
    assert variable in err.value.fix and "remove it from vllm_router_extra_args" in err.value.fix
    assert "secret" not in str(err.value)


def test_extra_args_pass_through():
    config = router.router_config(defaults(vllm_router_extra_args={"max-concurrent-requests": 256, "queue_size": 512,
                                                                   "request-id-headers": ["x-a", "x-b"]}), PLANNED)
    assert config["max-concurrent-requests"] == 256 and config["queue-size"] == 512
    assert router_launch.argv({"request-id-headers": ["x-a", "x-b"]}) == ["--request-id-headers", "x-a", "x-b"]
    with pytest.raises(router.RouterError):
        router.router_config(defaults(vllm_router_extra_args={"bad flag": 1}), PLANNED)
    with pytest.raises(router.RouterError):
        router.router_config(defaults(vllm_router_extra_args={"x": {"a": 1}}), PLANNED)


def test_retries_and_circuit_breaker_can_be_disabled():
    config = router.router_config(defaults(vllm_router_retries=False, vllm_router_circuit_breaker=False), PLANNED)
    assert config["disable-retries"] is True and config["disable-circuit-breaker"] is True
    assert not any(k.startswith(("retry-", "cb-")) for k in config)


def test_numbers_are_checked():
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_port=70000), PLANNED)
    assert err.value.variable == "vllm_router_port"
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_prometheus_port=8080), PLANNED)
    assert err.value.variable == "vllm_router_prometheus_port"
    with pytest.raises(router.RouterError):
        router.router_config(defaults(vllm_router_health_check_interval=0), PLANNED)
    assert router.router_config(defaults(vllm_router_port="9000"), PLANNED)["port"] == 9000


def test_launcher_turns_the_config_into_router_words_and_reads_the_key(tmp_path):
    module = launcher()
    config = router.router_config(defaults(vllm_router_retries=False), PLANNED)
    assert "--disable-retries" in module.argv(config) and "--disable-circuit-breaker" not in module.argv(config)
    key = tmp_path / "key"
    assert module.read_key(str(key)) is None
    key.write_text("  s3cret\n")
    assert module.read_key(str(key)) == "s3cret"


def test_launcher_hands_the_key_to_the_router_parser_only(tmp_path, monkeypatch):
    """The key goes into the router's parser inside the process (as one --api-key=KEY word), never into the config."""
    import sys
    import types
    seen = {}
    fake = types.ModuleType("vllm_router.launch_router")
    fake.parse_router_args = lambda words: seen.setdefault("words", list(words))
    fake.launch_router = lambda args: seen.setdefault("launched", args)
    monkeypatch.setitem(sys.modules, "vllm_router", types.ModuleType("vllm_router"))
    monkeypatch.setitem(sys.modules, "vllm_router.launch_router", fake)
    config, key = tmp_path / "router.json", tmp_path / "api-key"
    config.write_text(json.dumps({"port": 8080, "worker-urls": ["http://w:1"], "disable-retries": True}))
    key.write_text("-s3cret\n")
    assert launcher().main([str(config), "--api-key-file", str(key)]) == 0
    assert seen["words"] == ["--port", "8080", "--worker-urls", "http://w:1", "--disable-retries", "--api-key=-s3cret"]
    assert seen["launched"] == seen["words"]
    seen.clear()
    assert launcher().main([str(config), "--check"]) == 0
    assert "launched" not in seen and not any("api-key" in w for w in seen["words"])
    config.write_text(json.dumps({"api-key": "x"}))
    with pytest.raises(SystemExit):
        launcher().main([str(config)])


METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="k3"} 2.0
vllm:num_requests_running{engine="1",model_name="k3"} 1.0
vllm:num_requests_waiting{engine="0",model_name="k3"} 4.0
vllm:num_requests_waiting{engine="1",model_name="k3"} 0.0
vllm:num_requests_running_total 99
vllm:kv_cache_usage_perc{engine="0",model_name="k3"} 0.5
"""


def test_in_flight_sums_running_and_waiting_over_every_label_set():
    assert router.in_flight(METRICS) == 7.0
    assert router.in_flight("") == 0


def test_drain_waits_until_nothing_is_in_flight(monkeypatch):
    readings = iter([3.0, 1.0, 0.0])
    now = [0.0]
    monkeypatch.setattr(router, "worker_in_flight", lambda *a, **k: next(readings))
    result = router.drain("http://w:1", 60, 5, interval=2, clock=lambda: now[0],
                          sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert result == {"drained": True, "drain_seconds": 4.0, "in_flight": 0.0}


def test_drain_times_out_with_what_is_left(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(router, "worker_in_flight", lambda *a, **k: 2.0)
    result = router.drain("http://w:1", 10, 5, interval=2, clock=lambda: now[0],
                          sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert result["drained"] is False and result["in_flight"] == 2.0 and result["drain_seconds"] <= 10
    assert "2 requests still in flight" in result["msg"]


def test_a_worker_that_no_longer_listens_counts_as_drained(monkeypatch):
    monkeypatch.setattr(router, "worker_in_flight", lambda *a, **k: None)
    assert router.drain("http://w:1", 10, 5, clock=lambda: 0.0, sleep=lambda s: None)["drained"] is True


class FakeRouter(BaseHTTPRequestHandler):
    """/list_workers, /add_worker and /remove_worker as vllm-router answers them (remove always says success)."""
    urls = []
    calls = []

    def _send(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, json.dumps({"urls": self.urls}))

    def do_POST(self):
        parts = urlsplit(self.path)
        url = parse_qs(parts.query)["url"][0]
        self.calls.append((parts.path, url))
        if parts.path == "/add_worker":
            if url in self.urls:
                return self._send(400, "Worker %s already exists" % url)
            self.urls.append(url)
        elif url in self.urls:
            self.urls.remove(url)
        return self._send(200, "Successfully done: %s" % url)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_router():
    handler = type("R", (FakeRouter,), {"urls": ["http://w1:8000"], "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d" % server.server_address[1], handler
    server.shutdown()
    server.server_close()


def test_ensure_is_idempotent_and_honours_check_mode(fake_router, monkeypatch):
    url, handler = fake_router
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")   # never used: the opener ignores proxies
    assert router.ensure(url, "http://w1:8000", "present") == {"changed": False, "workers": ["http://w1:8000"]}
    planned = router.ensure(url, "http://w2:8000/", "present", check_mode=True)
    assert planned == {"changed": True, "workers": ["http://w1:8000", "http://w2:8000"]} and not handler.calls
    assert router.ensure(url, "http://w2:8000", "present")["workers"] == ["http://w1:8000", "http://w2:8000"]
    assert handler.calls == [("/add_worker", "http://w2:8000")]
    result = router.ensure(url, "http://w1:8000", "absent")
    assert result == {"changed": True, "workers": ["http://w2:8000"]}
    assert router.ensure(url, "http://w1:8000", "absent")["changed"] is False
    assert len(handler.calls) == 2   # nothing posted for a worker already gone


def test_ensure_drains_again_when_the_worker_was_removed_before(fake_router, monkeypatch):
    url, _handler = fake_router
    monkeypatch.setattr(router, "worker_in_flight", lambda *a, **k: 0.0)
    result = router.ensure(url, "http://w9:8000", "absent", drain_after=True, drain_timeout=5)
    assert result["changed"] is False and result["drained"] is True
    assert router.ensure(url, "http://w9:8000", "absent", drain_after=True, check_mode=True)["drained"] is None


def test_ensure_refuses_a_bad_url():
    with pytest.raises(router.RouterError) as err:
        router.ensure("http://127.0.0.1:1", "w1:8000")
    assert err.value.variable == "worker_url"


# --- P/D mode: the prefill and decode sides of one deployment --------------------------------------------------

def side(name, role, endpoint, deployment="k3"):
    return dict(summary(name, endpoint), pd={"deployment": deployment, "role": role, "router_connector": "nixl"})


PD_PLANNED = [side("k3_prefill", "prefill", "http://10.0.0.5:8000"), side("k3_prefill2", "prefill", "http://10.0.2.5:8000"),
              side("k3_decode", "decode", "http://10.0.1.5:8000")]


def test_the_sides_of_a_deployment_put_the_router_in_pd_mode():
    config = router.router_config(defaults(vllm_router_decode_policy="power_of_two"), PD_PLANNED * 2)
    assert "worker-urls" not in config
    assert config["vllm-pd-disaggregation"] is True and config["kv-connector"] == "nixl"
    assert config["prefill"] == [["http://10.0.0.5:8000", "none"], ["http://10.0.2.5:8000", "none"]]
    assert config["decode"] == [["http://10.0.1.5:8000"]]
    assert config["decode-policy"] == "power_of_two" and "prefill-policy" not in config
    words = router_launch.argv(config)
    assert words[words.index("--prefill"):words.index("--prefill") + 6] == [
        "--prefill", "http://10.0.0.5:8000", "none", "--prefill", "http://10.0.2.5:8000", "none"]
    assert words[words.index("--decode"):words.index("--decode") + 2] == ["--decode", "http://10.0.1.5:8000"]
    assert "--vllm-pd-disaggregation" in words and words[words.index("--kv-connector") + 1] == "nixl"


@pytest.mark.parametrize("planned, wanted, problem", [
    (PD_PLANNED + PLANNED, [], "beside clusters that take requests whole (k25, k3)"),
    (PD_PLANNED + [side("other_p", "prefill", "http://10.0.3.5:8000", "other")], [], "several P/D deployments"),
    (PD_PLANNED, ["k3_prefill"], "has no decode cluster among the router's"),
    (PD_PLANNED, ["k3_prefill", "k3_decode", "k3_decoder"], "no cluster named k3_decoder in the inventory"),
])
def test_a_router_serves_one_deployment_or_whole_clusters(planned, wanted, problem):
    with pytest.raises(router.RouterError) as err:
        router.router_config(defaults(vllm_router_clusters=wanted), planned)
    assert problem in str(err.value) and "Fix:" in str(err.value)


def test_clusters_pick_the_deployment_and_workers_override_it():
    config = router.router_config(defaults(vllm_router_clusters=["k3_prefill", "k3_decode"]), PD_PLANNED + PLANNED)
    assert config["prefill"] == [["http://10.0.0.5:8000", "none"]]
    config = router.router_config(defaults(vllm_router_workers=["http://10.9.9.9:8000"]), PD_PLANNED)
    assert config["worker-urls"] == ["http://10.9.9.9:8000"] and "prefill" not in config


def test_a_bad_side_policy_is_refused():
    with pytest.raises(router.RouterError, match="vllm_router_prefill_policy='fastest'"):
        router.router_config(defaults(vllm_router_prefill_policy="fastest"), PD_PLANNED)


ROLE_OPTIONS_PLAY = """
- name: The role's options reach the filter by the names its spec declares
  hosts: all
  connection: local
  gather_facts: false
  vars_files: [%(defaults)s]
  vars:
    site_port: 8181
  tasks:
    - name: Every own option but the secret, templated, and the same router flags as each variable by name
      ansible.builtin.assert:
        that:
          - _options.keys() | sort == %(names)s | sort
          - _options.vllm_router_port == 8181
          - "'vllm_router_api_key' not in _options"
          - (_options | inferops.vllm.router_config(_planned)) == (_by_name | inferops.vllm.router_config(_planned))
      vars:
        _options: "{{ lookup('inferops.vllm.role_options', 'vllm_router') }}"
        _planned: [{name: k3, endpoint: "http://10.0.0.5:8000", nodes: [a]}]
        _by_name: "{{ %(by_name)s }}"
        # (task vars: above the defaults file)
        vllm_router_port: "{{ site_port }}"
        vllm_router_api_key: not-for-the-config
    - name: A role without options of its own is refused with its spec file named
      ansible.builtin.debug:
        msg: "{{ lookup('inferops.vllm.role_options', 'no_such_role') }}"
      register: _refused
      ignore_errors: true
    - name: The refusal names the file
      ansible.builtin.assert:
        that: "'roles/no_such_role/meta/argument_specs.yml' in _refused.msg"
"""


def test_the_role_options_lookup_gives_the_specs_options_to_the_filter(tmp_path):
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import specs
    names = specs.own_options("vllm_router")
    assert "vllm_router_api_key" not in names and "vllm_router_port" in names
    by_name = "{" + ", ".join("'%s': %s" % (n, n) for n in names) + "}"
    (tmp_path / "play.yml").write_text(ROLE_OPTIONS_PLAY % {"defaults": ROLE / "defaults/main.yml",
                                                            "names": json.dumps(names), "by_name": by_name})
    (tmp_path / "inventory.json").write_text(json.dumps({"all": {"hosts": {"router": {
        "ansible_python_interpreter": sys.executable}}}}))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    result = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "inventory.json"),
                             str(tmp_path / "play.yml")], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=False, timeout=180)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "failed=0" in out, out[-3000:]
