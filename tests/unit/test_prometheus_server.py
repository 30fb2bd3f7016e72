"""Role vllm_prometheus: Prometheus' ARGS and prometheus.yml from the role's variables and the generated
scrape jobs (module_utils/controller/observability/prometheus_server.py); bad input is one line with the fix. With Debian's promtool
at hand (INFEROPS_PROMETHEUS_DIR, tests/harness/lib.sh prometheus_binaries) the file is checked by it too."""
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import prometheus_server as ps

SETTINGS = {"vllm_prometheus_listen_address": "", "vllm_prometheus_port": 9090,
            "vllm_prometheus_retention": "15d", "vllm_prometheus_alertmanagers": []}
JOBS = [{"job_name": "inferops_vllm", "file_sd_configs": [{"files": ["/etc/prometheus/file_sd/inferops-vllm.yml"]}],
         "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": ".*_created", "action": "drop"}]}]


def settings(**over):
    return dict(SETTINGS, **{"vllm_prometheus_" + k: v for k, v in over.items()})


def test_args_bind_the_hosts_own_address_by_default():
    flags = ps.args(settings(), "10.0.0.5", "/etc/prometheus/prometheus.yml", "/var/lib/prometheus/metrics2/")
    assert flags == ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/var/lib/prometheus/metrics2/",
                     "--web.listen-address=10.0.0.5:9090", "--storage.tsdb.retention.time=15d"]
    assert ps.defaults_file(flags).splitlines()[-1] == 'ARGS="%s"' % " ".join(flags)


def test_an_ipv6_address_is_bracketed_and_a_wildcard_is_reached_on_loopback():
    assert ps.listen(settings(listen_address="fd00::5", port=19090), "h") == "[fd00::5]:19090"
    assert ps.local_url(settings(listen_address="0.0.0.0"), "10.0.0.5") == "http://127.0.0.1:9090"
    assert ps.local_url(settings(), "127.0.1.1") == "http://127.0.1.1:9090"


def test_config_has_prometheus_own_job_then_the_generated_ones():
    data = ps.config(settings(alertmanagers=["10.0.0.9:9093"]), "10.0.0.5", {"scrape_configs": JOBS},
                     "/etc/prometheus/rules/", "2s")
    assert data["global"] == {"scrape_interval": "2s", "evaluation_interval": "2s"}
    assert data["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    assert data["alerting"] == {"alertmanagers": [{"static_configs": [{"targets": ["10.0.0.9:9093"]}]}]}
    assert [j["job_name"] for j in data["scrape_configs"]] == ["prometheus", "inferops_vllm"]
    assert data["scrape_configs"][0]["static_configs"] == [{"targets": ["10.0.0.5:9090"]}]
    assert yaml.safe_load(ps.config_file(data)) == data   # the hand-written YAML reads back as the data
    assert "alerting" not in ps.config(settings(), "h", JOBS, "/r", "15s")   # a plain list of jobs works too


@pytest.mark.parametrize("over, variable, words", [
    ({"listen_address": "10.0.0.5:9090"}, "vllm_prometheus_listen_address", "the port has its own variable"),
    ({"port": 0}, "vllm_prometheus_port", "not a TCP port"),
    ({"port": "http"}, "vllm_prometheus_port", "not a TCP port"),
    ({"retention": "15 days"}, "vllm_prometheus_retention", "not a Prometheus duration"),
    ({"retention": "0d"}, "vllm_prometheus_retention", "not a Prometheus duration"),
    ({"alertmanagers": ["http://am:9093"]}, "vllm_prometheus_alertmanagers", "is not host:port"),
    ({"alertmanagers": "am:9093"}, "vllm_prometheus_alertmanagers", "not a list"),
])
def test_bad_input_is_one_line_with_the_variable_and_the_fix(over, variable, words):
    with pytest.raises(ps.PrometheusSettingError) as err:
        ps.check(settings(**over), "10.0.0.5")
    message = str(err.value)
    assert message.startswith(variable + "=") and words in message and ". Fix: " in message and "\n" not in message


def test_a_generated_job_may_not_take_prometheus_own_name():
    with pytest.raises(ps.PrometheusSettingError, match="Prometheus' own job"):
        ps.config(settings(), "h", [{"job_name": "prometheus"}], "/r", "15s")
    with pytest.raises(ps.PrometheusSettingError, match="not a list of scrape jobs"):
        ps.config(settings(), "h", {"jobs": []}, "/r", "15s")


PROMTOOL = Path(os.environ.get("INFEROPS_PROMETHEUS_DIR", "/nonexistent")) / "usr/bin/promtool"


@pytest.mark.skipif(not PROMTOOL.exists(), reason="no promtool (INFEROPS_PROMETHEUS_DIR: tests/harness/lib.sh prometheus_binaries)")
def test_promtool_accepts_the_file(tmp_path):
    jobs = [dict(JOBS[0], file_sd_configs=[{"files": [str(tmp_path / "inferops-vllm.yml")]}])]
    data = ps.config(settings(alertmanagers=["127.0.0.1:9093"]), "127.0.0.1", jobs, str(tmp_path / "rules"), "15s")
    (tmp_path / "prometheus.yml").write_text(ps.config_file(data))
    out = subprocess.run([str(PROMTOOL), "check", "config", str(tmp_path / "prometheus.yml")], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_plan_refuses_bad_prometheus_settings_before_any_host(tmp_path):
    # the lab runs Prometheus on lab-node1 (group vllm_prometheus): its settings are checked with the plan's
    from test_plan_playbook import PLAYBOOK, ROOT
    # JSON results: ansible-core 2.18's YAML callback wraps long messages, 2.19's does not
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    env.pop("INFEROPS_LAB_IMAGE", None)
    result = subprocess.run([PLAYBOOK, "-i", str(ROOT / "inventories/lab"), str(ROOT / "playbooks/plan.yml"),
                             "-e", "vllm_image=127.0.0.1:5000/inferops/vllm-cpu@sha256:" + "3" * 64,
                             "-e", "vllm_prometheus_retention=fortnight", "-e", '{"vllm_prometheus_alertmanagers": '
                             '["http://10.0.0.9:9093"]}'],
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode != 0
    assert ("vllm_prometheus_retention='fortnight': not a Prometheus duration. Fix: set a "
            "number with a unit (y, w, d, h, m, s, ms), e.g. 15d or 1m30s (host lab-node1)") in result.stdout, \
        result.stdout[-3000:]
    assert "UNREACHABLE" not in result.stdout and "Traceback" not in result.stdout
