"""A role's settings derived in Python (module_utils/controller/role_settings.py): what the role's tasks apply and
what node_state judges come from one result. tests/data renders them on every tested OS through the role's
vars/main.yml; here: the derivations, and that every result is a valid set of wanted-state settings."""
import json

import pytest
from ansible.module_utils.parsing.convert_bool import boolean
from hypothesis import given, settings as hypothesis_settings, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller import proxy
from ansible_collections.inferops.vllm.plugins.module_utils.controller import role_settings as rs
from ansible_collections.inferops.vllm.plugins.module_utils.controller import wanted_state as ws
from clusters import compile_

APT_OS = {
    "repo_url": "https://developer.download.nvidia.com/compute/cuda/repos/debian13/x86_64/",
    "keyring_file": "cuda-keyring_1.1-1_all.deb", "keyring_path": "/usr/share/keyrings/cuda-archive-keyring.gpg",
    "keyring_list": "/etc/apt/sources.list.d/cuda-debian13-x86_64.list",
    "repo_file": "/etc/apt/sources.list.d/cuda.sources",
    "packages": {"open": ["nvidia-open"], "proprietary": ["cuda-drivers"]},
    "version_package": {"open": "nvidia-open", "proprietary": "cuda-drivers"},
    "held_packages": ["nvidia-open", "cuda-drivers", "nvidia-kernel-open-dkms", "nvidia-fabricmanager", "nvidia-imex"],
    "fabric_manager_package": "nvidia-fabricmanager", "imex_package": "nvidia-imex",
    "kernel_headers_package": "linux-headers-6.12.57+deb13-amd64"}
EL_OS = {
    "repo_url": "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/", "key_file": "D42D0685.pub",
    "repo_file": "/etc/yum.repos.d/cuda.repo",
    "packages": {"open": ["@nvidia-driver:580-open"], "proprietary": ["@nvidia-driver:580-dkms"]},
    "version_package": {"open": "nvidia-driver", "proprietary": "nvidia-driver"}, "held_packages": ["*nvidia*580*"],
    "fabric_manager_package": "nvidia-fabric-manager", "imex_package": "nvidia-imex",
    "kernel_headers_package": "kernel-devel-5.14.0", "dkms_needs_epel": {"open": True, "proprietary": True},
    "epel_release_package": "epel-release", "crb_repo": "crb"}
STACK = {"fabric_manager": False, "imex": None, "gpudirect": "off"}
DEFAULTS = {"nvidia_driver_branch": "580", "nvidia_driver_version": "", "nvidia_driver_kernel_modules": "open",
            "nvidia_driver_repo_url": "", "nvidia_driver_keyring_url": "", "nvidia_driver_enable_epel": True,
            "nvidia_driver_hold_packages": True}


def settings(options=None, os_data=None, family="Debian", stack=None):
    return rs.build("nvidia_driver", dict(DEFAULTS, **(options or {})), os_data=os_data or APT_OS, family=family,
                    stack=stack or STACK)


def test_nvidias_repository_on_apt():
    s = settings()
    assert s["key_url"] == APT_OS["repo_url"] + "cuda-keyring_1.1-1_all.deb"
    assert not s["remove_keyring_list"] and s["pinning_package"] == "nvidia-driver-pinning-580"
    assert s["own_packages"] == ["nvidia-open", "cuda-drivers", "nvidia-kernel-open-dkms"]   # not FM, not IMEX
    assert s["setup_packages"] == ["python3-debian"]   # os_packages' default, named there only
    assert s["want_epel"] is False and s["epel_packages"] == [] and s["crb"] == ""
    ws.build("nvidia_driver", s)


def test_a_site_mirror_drops_nvidias_list_and_takes_the_keyring_from_the_mirror():
    s = settings({"nvidia_driver_repo_url": "https://mirror.site/cuda//", "nvidia_driver_version": "580.95.05"})
    assert s["remove_keyring_list"] and s["key_url"] == "https://mirror.site/cuda/cuda-keyring_1.1-1_all.deb"
    assert s["pin_content"].splitlines() == [
        "# Managed by inferops.vllm: nvidia_driver_version=580.95.05",
        "Package: nvidia-open cuda-drivers nvidia-kernel-open-dkms nvidia-fabricmanager nvidia-imex",
        "Pin: version 580.95.05-*", "Pin-Priority: 1001"]
    # the same repository but for trailing slashes is NVIDIA's: its list stays
    assert not settings({"nvidia_driver_repo_url": APT_OS["repo_url"].rstrip("/")})["remove_keyring_list"]


def test_el9_takes_epel_and_crb_for_dkms_unless_a_mirror_or_the_switch_says_otherwise():
    s = settings(os_data=EL_OS, family="RedHat")
    assert s["key_url"] == EL_OS["repo_url"] + "D42D0685.pub" and s["probe_packages"] == ["nvidia-driver"]
    assert s["want_epel"] and s["epel_packages"] == ["dnf-plugins-core", "epel-release"] and s["crb"] == "crb"
    assert not s["hold_companions"] and not s["remove_keyring_list"]
    mirrored = settings({"nvidia_driver_epel_repo_url": "https://m/epel", "nvidia_driver_crb_repo": "mycrb"},
                        os_data=EL_OS, family="RedHat")
    assert mirrored["epel_packages"] == ["dnf-plugins-core"] and mirrored["crb"] == "mycrb"
    off = settings({"nvidia_driver_enable_epel": "no"}, os_data=EL_OS, family="RedHat")
    assert not off["want_epel"] and off["epel_packages"] == [] and off["crb"] == ""
    ws.build("nvidia_driver", s)


def test_imex_follows_the_host_stack():
    tray = dict(STACK, fabric_manager=True, gpudirect="dmabuf",
                imex={"domain": "rack1", "peers": ["127.0.1.1", "127.0.1.2"], "nodes_config": "127.0.1.1\n127.0.1.2\n"})
    s = settings(stack=tray)
    assert (s["imex"], s["imex_domain"], s["imex_peers"], s["imex_nodes_content"]) == (
        True, "rack1", ["127.0.1.1", "127.0.1.2"], "127.0.1.1\n127.0.1.2\n")
    assert s["fabric_manager"] and s["gpudirect"] == "dmabuf"
    no_group = settings(stack=dict(tray, imex={"domain": "rack2", "peers": None, "nodes_config": ""}))
    assert no_group["imex_peers"] is None and no_group["imex_nodes_content"] == ""
    assert ws.build("nvidia_driver", no_group)["imex"] == {"always": "the NVLink domain is not an inventory group"}
    assert settings()["imex_peers"] == [] and settings()["imex_domain"] == ""


def test_a_kernel_module_flavour_the_os_lacks_names_the_variable_and_the_fix():
    with pytest.raises(rs.RoleSettingsError) as refused:
        settings({"nvidia_driver_kernel_modules": "closed"})
    assert str(refused.value) == ("nvidia_driver_kernel_modules='closed': not one of open, proprietary. "
                                  "Fix: set open or proprietary")
    with pytest.raises(rs.RoleSettingsError, match="no settings are derived for role 'vllm_model'"):
        rs.build("vllm_model", {})


@given(st.one_of(st.booleans(), st.integers(-2, 2), st.sampled_from(["yes", "No", "ON", "off", "1", "0", "t", "y",
                                                                    " true ", "maybe", ""]), st.text(max_size=5)))
def test_flag_reads_a_value_as_ansibles_bool_filter(value):
    assert rs.flag(value) is boolean(value, strict=False)


VERSION = st.from_regex(r"\A[0-9]{3}(\.[0-9]{1,3}){1,2}\Z")
URL = st.from_regex(r"\Ahttps://[a-z]{1,8}\.example(/[a-z0-9]{1,4}){0,3}/{0,2}\Z")


@given(version=VERSION, repo=st.one_of(st.just(""), URL), modules=st.sampled_from(["open", "proprietary"]),
       family=st.sampled_from(["Debian", "RedHat"]), hold=st.booleans())
def test_every_derived_setting_is_a_valid_wanted_state(version, repo, modules, family, hold):
    s = settings({"nvidia_driver_version": version, "nvidia_driver_repo_url": repo,
                  "nvidia_driver_kernel_modules": modules, "nvidia_driver_hold_packages": hold},
                 os_data=APT_OS if family == "Debian" else EL_OS, family=family)
    wanted = ws.build("nvidia_driver", s)
    assert s["key_url"].startswith((repo or (APT_OS if family == "Debian" else EL_OS)["repo_url"]).rstrip("/") + "/")
    assert "//" not in s["key_url"].split("://", 1)[1]
    assert ("Pin: version %s-*" % version) in s["pin_content"].splitlines()
    assert s["hold_companions"] is (hold and family == "Debian")
    if family == "Debian":
        assert wanted["install"]["files"][s["pin_file"]] == {"content": s["pin_content"], "mode": "0644"}


CR_OS = {"distro_packages": ["docker.io", "python3-requests"],
         "docker_ce_packages": ["docker-ce", "docker-ce-cli", "containerd.io", "python3-requests"],
         "docker_repo_url": "https://download.docker.com/linux/debian", "docker_suite": "trixie",
         "nvidia_repo_url": "https://nvidia.github.io/libnvidia-container/stable/deb/amd64",
         "nvidia_key_url": "https://nvidia.github.io/libnvidia-container/gpgkey",
         "amd_repo_url": "https://repo.radeon.com/amd-container-toolkit/apt/",
         "amd_key_url": "https://repo.radeon.com/rocm/rocm.gpg.key", "amd_suite": "noble"}


def runtime(options=None, stack=None):
    return rs.build("container_runtime", dict(options or {}), os_data=CR_OS, family="Debian", stack=stack)


def test_the_container_runtime_takes_the_plans_toolkit_and_the_sites_mirrors():
    s = runtime(stack={"toolkit": "nvidia"})
    assert (s["vendor"], s["toolkit_package"], s["cdi_spec"], s["checks_gpus"]) == (
        "nvidia", "nvidia-container-toolkit", "/var/run/cdi/nvidia.yaml", True)
    assert s["toolkit"]["suites"] == ["/"] and s["toolkit"]["key_file"] == "/etc/apt/keyrings/nvidia-container-toolkit.asc"
    assert s["engine_packages"] == ["docker.io", "python3-requests"] and s["engine_versioned"] == ["docker.io"]
    amd = runtime({"container_runtime_toolkit_repo_url": "https://m/tk", "container_runtime_docker_source": "docker",
                   "container_runtime_docker_repo_url": "https://m/docker", "container_runtime_gpu_check": "no"},
                  stack={"toolkit": "amd"})
    assert amd["toolkit"]["repo_url"] == "https://m/tk" and amd["toolkit"]["suites"] == ["noble"]
    assert amd["cdi_spec"] == "" and amd["docker_repo"] == "https://m/docker" and not amd["checks_gpus"]
    assert amd["engine_versioned"] == ["docker-ce", "docker-ce-cli"]
    cpu = runtime(stack={"toolkit": "none"})
    assert cpu["toolkit"] == {} and not cpu["checks_gpus"]
    for s in (s, amd, cpu):
        ws.build("container_runtime", s)


def test_without_a_plan_the_vendor_is_the_tunable_and_auto_names_the_fix():
    assert runtime({"container_runtime_gpu_vendor": "amd"})["vendor"] == "amd"
    with pytest.raises(rs.RoleSettingsError) as refused:
        runtime({"container_runtime_gpu_vendor": "auto"})
    assert str(refused.value).startswith("container_runtime_gpu_vendor=auto is decided by the launch plan")
    assert "set container_runtime_gpu_vendor to nvidia, amd or none" in str(refused.value)


def test_the_proxy_files_by_checksum_under_the_root_with_a_password_kept_unreadable():
    site = proxy.settings({"http": "http://user:pa55@proxy.site:3128"})
    s = rs.build("host_proxy", {"host_proxy_root": "/srv/tree//", "host_proxy_docker": "yes"}, proxy=site, family="Debian")
    assert s["apt_file"] == "/srv/tree/etc/apt/apt.conf.d/90inferops-proxy" and s["apt_mode"] == "0640"
    assert not s["live"] and not s["docker_service"] and s["enabled"]
    assert "pa55" not in repr(s)   # the settings are node_state's arguments: checksums, never the text
    live = rs.build("host_proxy", {"host_proxy_root": "/"}, proxy=proxy.settings(None), family="RedHat")
    assert live["live"] and live["docker_service"] and live["dnf_conf"] == "/etc/dnf/dnf.conf" and not live["enabled"]
    wrong = rs.build("host_proxy", {}, proxy=proxy.settings({"http": "ftp://x y"}), family="Debian")
    with pytest.raises(ws.SettingsError):
        ws.build("host_proxy", wrong)   # the read stops, naming the problem, before anything is written
    with pytest.raises(rs.RoleSettingsError, match=r"takes the inputs proxy, family, not family"):
        rs.build("host_proxy", {}, family="Debian")


def test_rocm_from_amds_repositories_or_the_sites_mirrors():
    os_data = {"suite": "jammy", "dkms_package": "amdgpu-dkms", "version_package": "rocm-core",
               "kernel_headers_package": "linux-headers-6.12.57+deb13-amd64"}
    s = rs.build("rocm", {"rocm_version": "7.2.1", "rocm_packages": ["rocm"], "rocm_users": ["ops"]}, os_data=os_data)
    assert s["repos"] == {"rocm": "https://repo.radeon.com/rocm/apt/7.2.1",
                          "amdgpu": "https://repo.radeon.com/amdgpu/7.2.1/ubuntu"}
    assert s["packages"] == ["python3-debian", "gnupg", "rocm", "linux-headers-6.12.57+deb13-amd64", "amdgpu-dkms"]
    assert s["held_packages"] == ["rocm", "amdgpu-dkms", "rocm-core"] and s["setup_packages"] == ["python3-debian", "gnupg"]
    assert s["repo_lines"]["/etc/apt/sources.list.d/amdgpu.sources"][:2] == [
        "URIs: https://repo.radeon.com/amdgpu/7.2.1/ubuntu", "Suites: jammy"]
    mirror = rs.build("rocm", {"rocm_version": "7.2.1", "rocm_amdgpu_version": "7.2.2", "rocm_suite": "noble",
                               "rocm_install_dkms": "no", "rocm_repo_url": "https://m/rocm"}, os_data=os_data)
    assert mirror["repos"] == {"rocm": "https://m/rocm", "amdgpu": "https://repo.radeon.com/amdgpu/7.2.2/ubuntu"}
    assert mirror["suite"] == "noble" and mirror["packages"] == ["python3-debian", "gnupg"]
    ws.build("rocm", s)


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                           max_leaves=12)


@hypothesis_settings(deadline=None)   # the first call imports Ansible's filters
@given(value=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=5))
def test_the_launch_hash_is_the_one_jinja_computed(value):
    """Every running container carries this hash as its launch label: if it changed, every container would be
    recreated. It is what `to_json(sort_keys=true) | hash('sha256')` gave, byte for byte."""
    # pylint: disable-next=import-outside-toplevel
    from ansible.plugins.filter.core import to_json
    # pylint: disable-next=import-outside-toplevel
    from ansible.plugins.filter.core import get_hash
    # pylint: disable-next=protected-access
    assert rs._sha256_json(value) == get_hash(to_json(value, sort_keys=True), "sha256")


def test_vllm_serve_names_the_container_and_its_check_without_a_secret():
    launch = compile_(vllm_api_key=True)["n1"]
    options = {"vllm_serve_config_dir": "/etc/inferops-vllm", "vllm_serve_container_name": "vllm",
               "vllm_serve_restart_policy": "unless-stopped", "vllm_serve_log_max_size": "100m",
               "vllm_serve_log_max_files": 5, "vllm_serve_full_compare": False,
               "vllm_serve_state_dir": "/var/lib/inferops-vllm"}
    image = "registry.site/vllm@sha256:" + "a" * 64
    s = rs.build("vllm_serve", options, launch=launch, image=image, secrets={"VLLM_API_KEY": "S3CR3T-key"})
    assert "S3CR3T" not in repr(s)   # node_state's arguments: the env file by checksum only
    assert s["container_options"]["env_file"] == "/etc/inferops-vllm/vllm.env"
    assert s["container_options"]["log_options"] == {"max-size": "100m", "max-file": "5"}
    assert s["check_input"]["env"] == sorted(list(launch["env"]) + ["VLLM_API_KEY"])
    assert s["env_checksum"] != rs.build("vllm_serve", options, launch=launch, image=image,
                                         secrets={"VLLM_API_KEY": "other"})["env_checksum"]
    ws.build("vllm_serve", s)


def test_the_gpu_exporter_of_the_clusters_vendor_on_the_scraped_address():
    launch = {"cluster": {"vendor": "nvidia"}}
    options = {"vllm_exporters_gpu": True, "vllm_exporters_dcgm_port": 9400, "vllm_exporters_amd_port": 5000,
               "vllm_exporters_listen_address": "", "vllm_exporters_node_exporter": "yes",
               "vllm_exporters_node_exporter_port": 9100}
    node_exporter = {"node_exporter_service": "prometheus-node-exporter", "node_exporter_package": "prometheus-node-exporter"}
    s = rs.build("vllm_exporters", options, launch=launch, address="fd00::5", prom_file="/var/lib/inferops-vllm/watchdog.prom",
                 os_data=node_exporter)
    assert (s["vendor"], s["listen"], s["url"]) == ("nvidia", "[fd00::5]:9400", "http://[fd00::5]:9400/metrics")
    assert s["fields_file"] == "/etc/inferops-vllm/gpu-exporter/dcgm-counters.csv" and s["fields_content"].startswith("#")
    assert s["textfile_dir"] == "/var/lib/inferops-vllm" and s["node_exporter_listen"] == "[fd00::5]:9100"
    assert s["read"] == {"services": ["nvidia-dcgm", "prometheus-node-exporter"], "packages": ["prometheus-node-exporter"]}
    amd = rs.build("vllm_exporters", dict(options, vllm_exporters_node_exporter=False), launch={"cluster": {"vendor": "amd"}},
                   address="127.0.1.3", prom_file="/x/w.prom", os_data={})
    assert amd["listen"] == "127.0.1.3:5000" and json.loads(amd["fields_content"])["ServerPort"] == 5000
    assert amd["read"] == {"services": ["nvidia-dcgm"], "packages": []}
    cpu = rs.build("vllm_exporters", dict(options, vllm_exporters_node_exporter=False), launch={"cluster": {"vendor": "cpu"}},
                   address="127.0.1.3", prom_file="/x/w.prom", os_data={})
    assert cpu["vendor"] == "none" and not cpu["reads_node"]
