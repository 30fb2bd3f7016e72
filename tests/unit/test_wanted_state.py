"""The roles' wanted state built in Python from their settings (module_utils/controller/wanted_state.py), as the
node_state action plugin builds it. tests/data renders each role's settings on every tested OS and judges the
result; here: the settings' schema and each step's shape."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import wanted_state as ws

PIN = "# Managed by inferops.vllm: nvidia_driver_version=580.95.05\\n"
NVIDIA_APT = {
    "family": "Debian", "packages": ["nvidia-open"], "version_package": "nvidia-open", "version": "580.95.05",
    "pinning_package": "nvidia-driver-pinning-580", "hold_packages": True,
    "held_packages": ["nvidia-open", "nvidia-kernel-open-dkms", "nvidia-fabricmanager"],
    "own_packages": ["nvidia-open", "nvidia-kernel-open-dkms"], "setup_packages": ["python3-debian"],
    "kernel_headers": "install", "kernel_headers_package": "linux-headers-6.1.0-28-amd64",
    "repo": "https://mirror.site/cuda/", "repo_file": "/etc/apt/sources.list.d/cuda.sources", "key_url": "",
    "keyring_path": "/usr/share/keyrings/cuda-archive-keyring.gpg", "keyring_cache": "/var/cache/apt/k.deb",
    "keyring_list": "/etc/apt/sources.list.d/cuda-debian12-x86_64.list", "remove_keyring_list": True,
    "pin_file": "/etc/apt/preferences.d/00-inferops-nvidia-driver", "pin_content": PIN,
    "blacklist_nouveau": True, "nouveau_file": "/etc/modprobe.d/blacklist-nouveau.conf",
    "block_unattended_upgrades": False, "unattended_file": "/etc/apt/apt.conf.d/51x", "unattended_content": "x",
    "want_epel": False, "epel_packages": [], "epel_repo_url": "", "epel_key_url": "", "epel_mirror": "epel-mirror",
    "crb": "", "persistenced": True, "fabric_manager": True, "fabric_manager_package": "nvidia-fabricmanager",
    "hold_companions": True, "imex": False, "imex_peers": [], "imex_package": "nvidia-imex",
    "imex_channel_file": "/etc/modprobe.d/c.conf", "imex_channel_content": "options nvidia NVreg_CreateImexChannel0=1\\n",
    "imex_config_file": "/etc/nvidia-imex/config.cfg", "imex_config_regexp": "^IMEX_NODE_CONFIG_FILE=",
    "imex_config_line": "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg",
    "imex_nodes_file": "/etc/nvidia-imex/nodes_config.cfg", "imex_nodes_content": "",
    "imex_domain": "", "gpudirect": "off", "probe_packages": ["nvidia-open"], "reboot_file": "/var/run/reboot-required"}


def test_an_hgx_node_on_apt():
    wanted = ws.build("nvidia_driver", NVIDIA_APT)
    packages = wanted["install"]["packages"]
    assert packages["nvidia-open"] == {"present": True, "hold": True, "version": "580.95.05"}
    assert packages["nvidia-kernel-open-dkms"] == {"present": None, "hold": True}   # held where installed
    assert packages["linux-headers-6.1.0-28-amd64"] == {"present": True}
    assert packages["python3-debian"] == {"present": True}   # what deb822_repository needs, from the settings
    files = wanted["install"]["files"]
    assert files[NVIDIA_APT["keyring_list"]] == {"exists": False}   # a mirror: NVIDIA's list goes
    assert files[NVIDIA_APT["pin_file"]] == {"content": PIN, "mode": "0644"}
    assert NVIDIA_APT["unattended_file"] not in files
    assert wanted["fabric_manager"]["packages"] == {"nvidia-fabricmanager": {"version_of": "nvidia-open", "hold": True}}
    assert wanted["persistenced"]["services"] and wanted["imex"] == {}
    # no exact version: no pin file (it must be gone), no version on the packages
    loose = ws.build("nvidia_driver", dict(NVIDIA_APT, version=""))
    assert loose["install"]["files"][NVIDIA_APT["pin_file"]] == {"exists": False}
    assert "version" not in loose["install"]["packages"]["nvidia-open"]


def test_an_el9_node_enables_the_stream_epel_and_crb():
    settings = dict(NVIDIA_APT, family="RedHat", packages=["@nvidia-driver:580-open"], version_package="nvidia-driver",
                    repo_file="/etc/yum.repos.d/cuda.repo", key_url="https://mirror.site/cuda/D42D0685.pub",
                    want_epel=True, epel_packages=["dnf-plugins-core"], epel_repo_url="https://mirror.site/epel/",
                    epel_key_url="https://mirror.site/epel.key", crb="crb", hold_companions=False)
    install = ws.build("nvidia_driver", settings)["install"]
    assert install["modules"] == {"nvidia-driver": "580-open"} and install["repos"] == {"crb": {"enabled": True}}
    assert install["packages"]["nvidia-driver"] == {"present": True, "hold": True}
    assert set(install["packages"]) == {"nvidia-driver", "python3-dnf-plugin-versionlock",
                                        "linux-headers-6.1.0-28-amd64", "dnf-plugins-core"}
    assert install["files"]["/etc/yum.repos.d/epel-mirror.repo"]["lines"][0] == "baseurl = https://mirror.site/epel/"
    assert install["files"]["/etc/yum.repos.d/cuda.repo"]["lines"] == [
        "baseurl = https://mirror.site/cuda/", "gpgcheck = 1", "gpgkey = https://mirror.site/cuda/D42D0685.pub"]


def test_imex_lists_the_domains_trays_or_runs_always_without_a_group():
    tray = dict(NVIDIA_APT, fabric_manager=False, imex=True, imex_peers=["10.0.0.1", "10.0.0.2"],
                imex_nodes_content="10.0.0.1\\n10.0.0.2\\n")
    imex = ws.build("nvidia_driver", tray)["imex"]
    assert imex["files"]["/etc/nvidia-imex/nodes_config.cfg"] == {"content": "10.0.0.1\\n10.0.0.2\\n", "mode": "0644"}
    assert imex["services"] == {"nvidia-imex": {"active": True, "enabled": True}}
    assert ws.build("nvidia_driver", dict(tray, imex_peers=None))["imex"] == {
        "always": "the NVLink domain is not an inventory group"}


CR = {"engine_packages": ["docker.io", "python3-requests"], "engine_versioned": ["docker.io"], "docker_version": "",
      "live_restore": True, "daemon_options": {"features": {"buildkit": True}}, "vendor": "nvidia",
      "toolkit_package": "nvidia-container-toolkit", "toolkit_version": "1.17.8-1",
      "cdi_spec": "/var/run/cdi/nvidia.yaml", "cdi": True, "docker_repo": "", "docker_suite": "trixie", "toolkit": {},
      "checks_gpus": True}


def test_the_container_runtime_by_vendor():
    wanted = ws.build("container_runtime", CR)
    assert wanted["daemon_json"] == {"files": {"/etc/docker/daemon.json": {"json_subset": {
        "live-restore": True, "features": {"cdi": True, "buildkit": True}}}}}
    assert wanted["engine"]["packages"] == {"docker.io": {}, "python3-requests": {}}
    assert wanted["toolkit"]["packages"] == {"nvidia-container-toolkit": {"version": "1.17.8-1", "hold": True}}
    assert wanted["toolkit"]["files"] == {"/etc/docker/daemon.json": {"json_subset": {"runtimes": {"nvidia": {}}}},
                                          "/var/run/cdi/nvidia.yaml": {"exists": True}}
    pinned = ws.build("container_runtime", dict(CR, docker_version="20.10.24", vendor="amd", cdi_spec=""))
    assert pinned["engine"]["packages"]["docker.io"] == {"version": "20.10.24", "hold": True}
    assert set(pinned["toolkit"]["files"]) == {"/etc/docker/daemon.json"}
    assert ws.build("container_runtime", dict(CR, vendor="none"))["toolkit"] == {}
    # CDI only for NVIDIA's toolkit; the site's options win over the role's keys
    assert ws.build("container_runtime", dict(CR, vendor="amd", daemon_options={"live-restore": False}))[
        "daemon_json"]["files"]["/etc/docker/daemon.json"]["json_subset"] == {"live-restore": False}


def test_a_wrong_setting_stops_the_task_naming_it():
    with pytest.raises(ws.SettingsError) as refused:
        ws.build("container_runtime", dict({k: v for k, v in CR.items() if k != "cdi"}, vendr="amd", engine_packages="docker.io"))
    assert str(refused.value) == ("node_state role=container_runtime settings: vendr: not a setting of container_runtime; "
                                  "cdi: missing; engine_packages='docker.io': must be List[str]")
    with pytest.raises(ws.SettingsError, match="no wanted state is built for it"):
        ws.build("vllm_model", {})


def test_values_as_ansible_core_2_18_renders_them():
    """2.18 reads a template's text back as a literal: "580" becomes 580, None becomes ""."""
    wanted = ws.build("nvidia_driver", dict(NVIDIA_APT, version=580, imex=True, imex_peers="", hold_packages="True"))
    assert wanted["install"]["packages"]["nvidia-open"]["version"] == "580"
    assert wanted["imex"] == {"always": "the NVLink domain is not an inventory group"}


def test_rocm_holds_where_installed_and_lists_the_users():
    wanted = ws.build("rocm", {"packages": ["python3-debian", "gnupg", "rocm", "amdgpu-dkms"], "hold_packages": True,
                               "held_packages": ["rocm", "amdgpu-dkms", "rocm-core"], "key_file": "/etc/apt/keyrings/rocm.asc",
                               "repo_lines": {"/etc/apt/sources.list.d/rocm.sources": ["URIs: https://r/"]},
                               "users": ["ops"], "repos": {}, "key_url": "", "suite": "jammy",
                               "setup_packages": ["python3-debian", "gnupg"], "dkms_package": "amdgpu-dkms",
                               "kernel_headers_package": "linux-headers-6.12"})["changes"]
    assert wanted["packages"]["rocm"] == {"present": True, "hold": True}
    assert wanted["packages"]["rocm-core"] == {"present": None, "hold": True}
    assert wanted["files"]["/etc/apt/sources.list.d/rocm.sources"] == {"lines": ["URIs: https://r/"]}
    assert wanted["groups"] == {"render": ["ops"], "video": ["ops"]} and wanted["users"] == ["ops"]


def test_host_proxy_by_checksum_or_gone():
    settings = {"family": "Debian", "enabled": True, "apt_file": "/etc/apt/apt.conf.d/90inferops-proxy",
                "apt_checksum": "a" * 40, "apt_mode": "0640", "docker": True,
                "docker_env_file": "/etc/docker/http-proxy.env", "docker_env_checksum": "b" * 40,
                "docker_dropin": "/etc/systemd/system/docker.service.d/http-proxy.conf", "docker_dropin_checksum": "c" * 40,
                "docker_service": True, "problems": [], "dnf_conf": "/etc/dnf/dnf.conf", "live": True}
    files = ws.build("host_proxy", settings)["changes"]["files"]
    assert files["/etc/docker/http-proxy.env"] == {"checksum": "b" * 40, "mode": "0600"}
    gone = ws.build("host_proxy", dict(settings, enabled=False))["changes"]
    assert set(v["exists"] for v in gone["files"].values()) == {False} and gone["always"] == ""
    el = ws.build("host_proxy", dict(settings, family="RedHat", docker=False))["changes"]
    assert el == {"files": {}, "always": "dnf.conf: its proxy= line is set on every run"}
    # a wrong inferops_proxy stops the read with its problems, before anything is written
    with pytest.raises(ws.SettingsError, match=r"^inferops_proxy.http='http://ops:\*\*\*@p:3128/x' has a path"):
        ws.build("host_proxy", dict(settings, problems=["inferops_proxy.http='http://ops:***@p:3128/x' has a path."]))


SERVE = {"config_dir": "/etc/inferops-vllm", "config_checksum": "a" * 40, "env_checksum": "b" * 40,
         "container_name": "vllm", "launch_hash": "c" * 64, "full_compare": False,
         "checks_path": "/var/lib/inferops-vllm/launch-checks.json", "compile_cache_dir": "",
         "image": "registry.site/vllm@sha256:" + "a" * 64, "container_options": {"name": "vllm"},
         "check_input": {"argv": []}, "check_key": "c" * 64, "probe_ranks": 1,
         "weight_cache_container": "vllm-weight-cache", "weight_cache": {}}


def test_vllm_serve_and_the_watchdog():
    serve = ws.build("vllm_serve", dict(SERVE, full_compare=True))
    assert serve["env"] == {"files": {"/etc/inferops-vllm/vllm.env": {"checksum": "b" * 40, "mode": "0600"}}}
    assert serve["container"]["containers"]["vllm"] == {
        "running": True, "labels": {"inferops.vllm.launch": "c" * 64}, "env_file": "/etc/inferops-vllm/vllm.env",
        "started_after": ["/etc/inferops-vllm/vllm.yaml"]}
    assert serve["container"]["always"].startswith("vllm_serve_full_compare")
    assert serve["dir"] == {"files": {"/etc/inferops-vllm": {"isdir": True, "mode": "0755"}}}
    cached = ws.build("vllm_serve", dict(SERVE, compile_cache_dir="/var/lib/inferops-vllm/compile-cache"))
    assert cached["dir"]["files"]["/var/lib/inferops-vllm/compile-cache"] == {"isdir": True, "mode": "0700"}
    # without the weight cache its daemon must not exist (it would hold a copy of the weights in GPU memory)
    assert serve["weight_cache"] == {"containers": {"vllm-weight-cache": {"exists": False}}}
    daemon = ws.build("vllm_serve", dict(SERVE, weight_cache={
        "options": {}, "launch_hash": "e" * 64, "dir": "/run/inferops-vllm/weight-cache", "url": "http://x"}))
    assert daemon["weight_cache"]["containers"]["vllm-weight-cache"] == {
        "running": True, "labels": {"inferops.vllm.launch": "e" * 64}, "env_file": "/etc/inferops-vllm/vllm.env"}
    assert daemon["dir"]["files"]["/run/inferops-vllm/weight-cache"] == {"isdir": True, "mode": "0700"}
    watchdog = {"dirs": ["/usr/local/lib/inferops-vllm"], "lib_files": ["/usr/local/lib/inferops-vllm/watchdog.py"],
                "lib_checksums": ["d" * 40], "config_file": "/etc/inferops-vllm/watchdog.json", "config_content": "{}\n",
                "unit_dir": "/etc/systemd/system", "unit_contents": {"vllm-watchdog.timer": "[Timer]\n"},
                "sources": [], "units": ["vllm-watchdog.timer"], "files": []}
    files = ws.build("vllm_watchdog", watchdog)["install"]["files"]
    assert files["/usr/local/lib/inferops-vllm/watchdog.py"] == {"checksum": "d" * 40, "mode": "0644"}
    assert files["/etc/systemd/system/vllm-watchdog.timer"] == {"content": "[Timer]\n", "mode": "0644"}
    with pytest.raises(ws.SettingsError, match="differ in length"):
        ws.build("vllm_watchdog", dict(watchdog, lib_checksums=[]))


def test_a_roles_whole_read_is_its_role_and_settings():
    """node_state's arguments from role + settings: the wanted state and the role's own reads, beside the task's
    lists (what node_read reads ahead for the role, and what the role's task is answered with)."""
    args = ws.module_args({"role": "vllm_serve", "settings": SERVE, "read": ["/etc/extra"]})
    assert set(args) == {"wanted", "read", "containers"}
    assert args["containers"] == ["vllm", "vllm-weight-cache"]
    assert args["read"] == ["/etc/extra", "/var/lib/inferops-vllm/launch-checks.json"]
    assert args["wanted"] == ws.build("vllm_serve", SERVE)
    driver = ws.module_args({"role": "nvidia_driver", "settings": NVIDIA_APT, "wanted": {"extra": {}}})
    assert driver["packages"] == ["nvidia-open"] and driver["files"] == ["/var/run/reboot-required"]
    assert driver["wanted"]["extra"] == {} and "install" in driver["wanted"]
    plain = {"packages": ["docker.io"], "wanted": {"engine": {}}}
    assert ws.module_args(plain) == plain
    with pytest.raises(ws.SettingsError, match="checks_path: missing"):
        ws.module_args({"role": "vllm_serve", "settings": {k: v for k, v in SERVE.items() if k != "checks_path"}})
