"""The site's proxy (inferops_proxy, issue #18): checks, rendering, and the host_proxy role writing the files.

The role test runs the real role on this machine into a scratch root (host_proxy_root), so it
never touches this machine's apt, systemd or dockerd; a Molecule scenario can set inferops_proxy
and assert the same files on a node."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.filter.proxy_settings import proxy_settings
from ansible_collections.inferops.vllm.plugins.module_utils.controller import proxy as p

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
URL = "http://proxy.example.com:3128"


# --- checks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [None, {}, "", {"http": "", "https": None}])
def test_empty_is_no_proxy(value):
    proxy = p.parse(value)
    assert not proxy.enabled
    out = p.render(value, ["registry.site:5000"])
    assert out["environment"] == {} and out["apt_conf"] == "" and out["docker_env"] == "" and out["docker_dropin"] == ""


@pytest.mark.parametrize("value,expect", [
    ("http://proxy:3128", "inferops_proxy='http://proxy:3128' is not a dict"),
    ({"http": "socks5://proxy:1080"}, "inferops_proxy.http='socks5://proxy:1080' has scheme 'socks5'"),
    ({"http": "proxy.example.com:3128"}, "has scheme"),
    ({"https": "http://proxy:99999"}, "inferops_proxy.https='http://proxy:99999' has a port that is not a number"),
    ({"https": "http://proxy:port"}, "has a port that is not a number"),
    ({"http": "http://:3128"}, "names no host"),
    ({"http": "http://proxy:3128/squid"}, "has a path, query or fragment"),
    ({"http": "http://pro xy:3128"}, "holds a space"),
    ({"http": 3128}, "inferops_proxy.http=3128 is not a string"),
    ({"htps": URL}, "unknown key(s) htps"),
    ({"http": URL, "no_proxy": ["bad host!"]}, "has 'bad host!', which is not a host name"),
    ({"http": URL, "no_proxy": {"a": 1}}, "is not a list of host names"),
    ({"no_proxy": ["a.example.com"]}, "sets no_proxy but neither http nor https"),
])
def test_bad_values_name_the_variable_the_value_and_the_fix(value, expect):
    [problem] = p.problems(value)
    assert expect in problem and "Fix:" in problem and "inferops_proxy" in problem


def test_a_password_never_shows_in_a_message():
    [problem] = p.problems({"http": "http://ops:s3cret@proxy:3128/path"})
    assert "s3cret" not in problem and "ops:***@proxy:3128" in problem
    [problem] = p.problems({"https": "ftp://token@proxy"})
    assert "token" not in problem and "***@proxy" in problem
    out = proxy_settings({"http": "http://ops:s3cret@proxy:3128"})
    assert out["secret"] and out["shown"]["http"] == "http://ops:***@proxy:3128"


def test_good_values_pass():
    for value in ({"http": URL}, {"https": "https://proxy.example.com"}, {"http": "http://10.0.0.1:8080/"},
                  {"http": "http://[fd00::1]:3128"}, {"http": URL, "https": URL, "no_proxy": "a.b, .c.d,10.0.0.0/8"},
                  {"http": "http://u:p%40ss@proxy:3128", "no_proxy": ["*.example.com", "host:5000", "fd00::/8"]}):
        assert p.problems(value) == [], value
    assert p.parse({"http": "http://10.0.0.1:8080/"}).http == "http://10.0.0.1:8080"


# --- rendering ----------------------------------------------------------------------------------

def test_no_proxy_always_holds_the_node_and_the_registry_mirror():
    proxy = p.parse({"http": URL, "no_proxy": ["localhost", ".example.com"]})
    assert p.no_proxy(proxy, ["registry.site.example:5000"]) == [
        "127.0.0.1", "localhost", "::1", "registry.site.example", ".example.com"]
    assert p.no_proxy(proxy, ["http://10.1.2.3:5000"])[3] == "10.1.2.3"
    assert p.no_proxy(proxy, ["[fd00::5]:5000"])[3] == "fd00::5"
    assert p.no_proxy(proxy, [""]) == ["127.0.0.1", "localhost", "::1", ".example.com"]


def test_environment_carries_both_spellings():
    env = p.environment(p.parse({"http": URL, "https": URL}), ["mirror:5000"])
    assert env["http_proxy"] == env["HTTP_PROXY"] == URL and env["https_proxy"] == env["HTTPS_PROXY"] == URL
    assert env["no_proxy"] == env["NO_PROXY"] == "127.0.0.1,localhost,::1,mirror"


def test_apt_conf():
    text = p.apt_conf(p.parse({"http": URL, "https": URL, "no_proxy": [".example.com", "repo.local", "10.0.0.0/8"]}))
    assert text.splitlines() == [
        "// Managed by inferops.vllm (inferops_proxy)",
        'Acquire::http::Proxy "%s";' % URL, 'Acquire::https::Proxy "%s";' % URL,
        'Acquire::http::Proxy::127.0.0.1 "DIRECT";', 'Acquire::https::Proxy::127.0.0.1 "DIRECT";',
        'Acquire::http::Proxy::localhost "DIRECT";', 'Acquire::https::Proxy::localhost "DIRECT";',
        'Acquire::http::Proxy::repo.local "DIRECT";', 'Acquire::https::Proxy::repo.local "DIRECT";']
    only_http = p.apt_conf(p.parse({"http": URL}))
    assert "https" not in only_http and 'Acquire::http::Proxy "%s";' % URL in only_http


def test_dnf_takes_the_https_proxy_where_set():
    assert p.dnf_proxy(p.parse({"http": "http://a:1", "https": "http://b:2"})) == "http://b:2"
    assert p.dnf_proxy(p.parse({"http": "http://a:1"})) == "http://a:1"
    assert p.dnf_proxy(p.parse({})) == ""


def test_dockerd_gets_an_environment_file_and_a_drop_in_without_the_url():
    proxy = p.parse({"http": "http://ops:pw@proxy:3128", "https": URL})
    env = p.docker_env(proxy, ["mirror.site:5000"])
    assert "HTTP_PROXY=http://ops:pw@proxy:3128\n" in env and "HTTPS_PROXY=%s\n" % URL in env
    assert "NO_PROXY=127.0.0.1,localhost,::1,mirror.site\n" in env
    dropin = p.docker_dropin(proxy)
    assert dropin.splitlines()[1:] == ["[Service]", "EnvironmentFile=/etc/docker/http-proxy.env"]
    assert "proxy:3128" not in dropin


def test_the_filter_never_raises():
    out = proxy_settings({"http": "gopher://x"})
    assert out["problems"] and not out["enabled"] and out["environment"] == {}
    assert proxy_settings(None)["problems"] == []


# --- the role, on this machine, into a scratch root ----------------------------------------------

def run_role(tmp_path, proxy, *extra):
    playbook = tmp_path / "play.yml"
    playbook.write_text("- name: Proxy\n  hosts: localhost\n  connection: local\n  gather_facts: false\n"
                        "  roles: [inferops.vllm.host_proxy]\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")   # 2.18 wraps long YAML messages
    (tmp_path / "vars.yml").write_text(json.dumps(
        {"inferops_proxy": proxy, "host_proxy_root": str(tmp_path / "root"), "vllm_image_mirror": "mirror.site:5000",
         "ansible_python_interpreter": sys.executable}))
    result = subprocess.run([PLAYBOOK, "-i", "localhost,", str(playbook), "-e", "@" + str(tmp_path / "vars.yml"),
                             *extra], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=180)
    return result, result.stdout + result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/etc/debian_version").exists(),
                    reason="writes root-owned files the way a Debian node has them")
def test_the_role_writes_the_files_and_a_second_run_changes_nothing(tmp_path):
    root = tmp_path / "root"
    (root / "etc/apt/apt.conf.d").mkdir(parents=True)   # a Debian node before dockerd is installed
    proxy = {"http": "http://ops:s3cret@proxy.example.com:3128", "https": URL, "no_proxy": [".example.com"]}
    result, out = run_role(tmp_path, proxy, "--check", "--diff")
    assert result.returncode == 0, out[-3000:]
    assert not (root / "etc/apt/apt.conf.d/90inferops-proxy").exists()   # check mode writes nothing
    assert "s3cret" not in out                                           # no_log hides the diff of a secret
    result, out = run_role(tmp_path, proxy)
    assert result.returncode == 0, out[-3000:]
    assert "s3cret" not in out
    apt = root / "etc/apt/apt.conf.d/90inferops-proxy"
    env_file = root / "etc/docker/http-proxy.env"
    dropin = root / "etc/systemd/system/docker.service.d/http-proxy.conf"
    assert apt.read_text() == p.apt_conf(p.parse(proxy), ["mirror.site:5000"])
    assert env_file.read_text() == p.docker_env(p.parse(proxy), ["mirror.site:5000"])
    assert "NO_PROXY=127.0.0.1,localhost,::1,mirror.site,.example.com" in env_file.read_text()
    assert dropin.read_text() == p.docker_dropin(p.parse(proxy))
    assert stat.S_IMODE(apt.stat().st_mode) == 0o640 and stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(dropin.stat().st_mode) == 0o644
    result, out = run_role(tmp_path, proxy)
    assert result.returncode == 0 and "changed=0" in out, out[-3000:]
    # no proxy: what the role wrote goes, and nothing else changes
    result, out = run_role(tmp_path, {})
    assert result.returncode == 0, out[-3000:]
    assert not apt.exists() and not env_file.exists() and not dropin.exists()
    result, out = run_role(tmp_path, {})
    assert "changed=0" in out


def test_the_role_refuses_a_bad_proxy_before_writing(tmp_path):
    result, out = run_role(tmp_path, {"http": "http://ops:s3cret@proxy:3128/x"})
    assert result.returncode != 0
    assert "inferops_proxy.http='http://ops:***@proxy:3128/x' has a path" in out and "s3cret" not in out
    assert not (tmp_path / "root").exists()


def test_a_bad_proxy_stops_site_yml_at_the_plan(tmp_path):
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text(
        "all:\n  vars: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh,\n"
        "         inferops_proxy: {http: 'socks5://ops:s3cret@proxy:1080'}}\n"
        "  children:\n    vllm_clusters:\n      children:\n        c:\n"
        "    c:\n      vars: {vllm_cluster: c, vllm_version: 0.32.0, vllm_gpu_model: H200, vllm_fabric: nvlink}\n"
        "      hosts:\n        gpu-a: {vllm_control_address: 10.0.0.1}\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")   # 2.18 wraps long YAML messages
    env.pop("INFEROPS_LAB_IMAGE", None)
    result = subprocess.run([PLAYBOOK, "-i", str(inv), str(ROOT / "playbooks/site.yml"),
                             "-e", "vllm_image=vllm/vllm-openai@sha256:" + "ab" * 32],
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert ("inferops_proxy.http='socks5://***@proxy:1080' has scheme 'socks5'"
            in out), out[-3000:]
    assert "s3cret" not in out and "UNREACHABLE" not in out


# --- the site_proxy lookup: the one place that names the variables behind a host's proxy --------

LOOKUP_PLAY = """
- name: The lookup reads the host's variables as the roles' expression did
  hosts: all
  connection: local
  gather_facts: false
  tasks:
    - name: Same settings and environment as the filter over the same variables
      ansible.builtin.assert:
        that:
          - lookup('inferops.vllm.site_proxy') == (inferops_proxy | default({}) | inferops.vllm.proxy_settings([vllm_image_mirror | default('')]))
          - lookup('inferops.vllm.site_proxy', 'environment') == _env
          - lookup('inferops.vllm.site_proxy', 'environment', 'problems', wantlist=true) == [_env, _problems]
          - _env == (want_environment | from_json)
      vars:
        _env: "{{ (inferops_proxy | default({}) | inferops.vllm.proxy_settings([vllm_image_mirror | default('')])).environment }}"
        _problems: "{{ (inferops_proxy | default({}) | inferops.vllm.proxy_settings([vllm_image_mirror | default('')])).problems }}"
"""


def test_the_site_proxy_lookup_reads_the_hosts_variables(tmp_path):
    proxy = {"http": URL, "https": URL, "no_proxy": [".example.com"]}
    env_with_mirror = p.environment(p.parse(proxy), ["mirror.site:5000"])
    hosts = {
        # templated inventory values, as group_vars give them
        "templated": {"site_proxy_url": URL, "inferops_proxy": {"http": "{{ site_proxy_url }}", "https": "{{ site_proxy_url }}",
                                                                "no_proxy": [".example.com"]},
                      "mirror_host": "mirror.site", "vllm_image_mirror": "{{ mirror_host }}:5000",
                      "want_environment": json.dumps(env_with_mirror)},
        "unset": {"want_environment": "{}"},
        "null": {"inferops_proxy": None, "vllm_image_mirror": None, "want_environment": "{}"},
        "wrong": {"inferops_proxy": {"http": "gopher://x"}, "want_environment": "{}"},
    }
    for host in hosts.values():
        host["ansible_python_interpreter"] = sys.executable
    (tmp_path / "inventory.json").write_text(json.dumps({"all": {"hosts": hosts}}))
    (tmp_path / "play.yml").write_text(LOOKUP_PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    result = subprocess.run([PLAYBOOK, "-i", str(tmp_path / "inventory.json"), str(tmp_path / "play.yml")], cwd=ROOT,
                            env=env, capture_output=True, text=True, check=False, timeout=180)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "ok=1" in out and "failed=1" not in out, out[-3000:]
