"""node_state: reading what a node has, and deciding what a role must change."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ansible.utils.hashing import checksum_s

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state  # noqa: E402


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_dpkg_status_lines():
    out = ("docker.io\thold ok installed\t20.10.24+dfsg1-1+deb12u1+b6\n"
           "python3-requests\tinstall ok installed\t2.28.1+dfsg-1\n"
           "nvidia-container-toolkit\tdeinstall ok config-files\t1.17.0-1\n"
           "libfoo:amd64\tinstall ok half-installed\t1.0\n")
    assert node_state.parse_dpkg_query(out) == {
        "docker.io": {"version": "20.10.24+dfsg1-1+deb12u1+b6", "hold": True},
        "python3-requests": {"version": "2.28.1+dfsg-1", "hold": False}}


def test_rpm_lines_skip_unknown_names():
    out = "docker-ce\t27.3.1-1.el9\npackage nope is not installed\n"
    assert node_state.parse_rpm_query(out) == {"docker-ce": {"version": "27.3.1-1.el9", "hold": False}}


def test_packages_from_this_machines_dpkg():
    dpkg_query = shutil.which("dpkg-query")
    if not dpkg_query:
        return  # not a Debian controller
    found = node_state.packages(["dpkg", "inferops-no-such-package"], run, dpkg_query, None)
    assert found["dpkg"]["version"] and found["inferops-no-such-package"] is None


def test_missing_packages_honours_version_pins():
    state = {"docker-ce": {"version": "5:27.3.1-1~debian.12~bookworm", "hold": True},
             "containerd.io": {"version": "1.7.22-1", "hold": False}, "docker-ce-cli": None}
    names = ["docker-ce", "docker-ce-cli", "containerd.io"]
    assert node_state.missing_packages(state, names) == ["docker-ce-cli"]
    assert node_state.missing_packages(state, names, {"docker-ce": "5:27.3.1"}) == ["docker-ce-cli"]
    assert node_state.missing_packages(state, names, {"docker-ce": "5:28.0"}) == ["docker-ce", "docker-ce-cli"]


def test_each_step_says_what_its_package_tasks_must_do():
    """todo.install: not installed or off the pin (version, or version_of another package); todo.hold: wanted on
    hold, installed and not held, or installed by the step; present null judges the hold only (of an installed
    package), present false is never installed."""
    found = {"docker.io": {"version": "20.10.24+dfsg1-1+b3", "hold": False},
             "nvidia-open": {"version": "580.95.05-1", "hold": True},
             "nvidia-fabricmanager": {"version": "580.65.06-1", "hold": True},
             "cuda-drivers": {"version": "580.95.05-1", "hold": False}, "nvidia-imex": None, "old": None}
    step = {"packages": {"docker.io": {"version": "20.10.24", "hold": True}, "containerd": {},
                         "nvidia-open": {"version": "580.95.05", "hold": True},
                         "nvidia-fabricmanager": {"version_of": "nvidia-open", "hold": True},
                         "cuda-drivers": {"present": None, "hold": True}, "nvidia-imex": {"present": None, "hold": True},
                         "old": {"present": False}}}
    found["containerd"] = None
    assert node_state.package_todo(step, found) == {
        "install": ["containerd", "nvidia-fabricmanager"],
        "hold": ["docker.io", "nvidia-fabricmanager", "cuda-drivers"]}
    assert node_state.judge({"s": step, "off": None}, {"packages": found, "files": {}, "text": {}, "services": {},
                                                       "containers": {}, "groups": {}, "users": []})["s"]["todo"] == \
        node_state.package_todo(step, found)


def test_systemctl_show():
    out = "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n"
    assert node_state.parse_systemctl_show(out) == {"installed": True, "active": True, "enabled": True}
    assert node_state.parse_systemctl_show("LoadState=not-found\nActiveState=inactive\nUnitFileState=\n") == {
        "installed": False, "active": False, "enabled": False}


def test_files_give_the_checksum_copy_compares(tmp_path):
    config = tmp_path / "vllm.yaml"
    config.write_text("model: tiny\n")
    config.chmod(0o640)
    secret = tmp_path / "vllm.env"
    secret.write_text("VLLM_API_KEY=s3cret\n")
    states = node_state.files([str(secret), str(tmp_path / "absent"), str(tmp_path)], [str(config)])
    assert states[str(config)] == {"exists": True, "isdir": False, "mode": "0640", "content": "model: tiny\n",
                                   "mtime": round(config.stat().st_mtime, 3),
                                   "checksum": checksum_s("model: tiny\n")}  # what copy and hash('sha1') give
    assert "content" not in states[str(secret)]  # only what `read` names is returned whole
    assert states[str(tmp_path / "absent")] == {"exists": False}
    assert states[str(tmp_path)]["isdir"] and "checksum" not in states[str(tmp_path)]


def test_docker_inspect_output():
    image = json.dumps([{"Id": "sha256:b78", "RepoDigests": ["r/vllm@sha256:43be"]}])
    assert node_state.parse_image_inspect(image) == {"present": True, "id": "sha256:b78",
                                                     "repo_digests": ["r/vllm@sha256:43be"]}
    container = json.dumps([{"State": {"Running": True, "Restarting": True, "Status": "restarting"},
                             "Config": {"Image": "r/vllm@sha256:43be", "Labels": {"inferops.vllm.launch": "ab"}}}])
    assert node_state.parse_container_inspect(container) == {
        "exists": True, "running": False, "status": "restarting", "image": "r/vllm@sha256:43be",
        "labels": {"inferops.vllm.launch": "ab"}, "started_at": None, "restart_count": 0, "exit_code": None, "restart_policy": "", "env": []}


def test_container_start_time_and_restarts():
    container = json.dumps([{"State": {"Running": True, "Status": "running", "ExitCode": 0,
                                       "StartedAt": "2026-11-30T19:01:09.123456789Z"},
                             "RestartCount": 2, "Config": {"Image": "r/vllm@sha256:43be"}}])
    state = node_state.parse_container_inspect(container)
    assert state["started_at"] == 1796065269.123 and state["restart_count"] == 2
    assert node_state.docker_time("0001-01-01T00:00:00Z") is None
    assert node_state.docker_time("2026-11-30T20:01:09+01:00") == 1796065269.0


def test_without_docker_everything_reads_absent():
    assert node_state.images(["r/vllm@sha256:43be"], run, None)["r/vllm@sha256:43be"]["present"] is False
    assert node_state.containers(["vllm"], run, None)["vllm"]["exists"] is False


def test_installed_version_drops_the_release_and_is_empty_when_not_installed():
    assert node_state.installed_version({"version": "580.95.05-1", "hold": True}) == "580.95.05"
    assert node_state.installed_version({"version": "580.95.05-0ubuntu1-1"}) == "580.95.05"
    assert node_state.installed_version({"version": "6.4.1"}) == "6.4.1"
    assert node_state.installed_version(None) == ""
    assert node_state.installed_version({"version": ""}) == ""


def node(**parts):
    """What read_node hands judge: nothing installed, read or running unless given."""
    return dict({"packages": {}, "services": {}, "files": {}, "text": {}, "containers": {}, "groups": {}, "users": []},
                **parts)


def test_packages_present_pinned_held_and_following_the_driver():
    packages = {"nvidia-open": {"version": "580.95.05-1", "hold": True},
                "nvidia-fabricmanager": {"version": "580.82.07-1", "hold": False},
                "nvidia-kernel-dkms": None, "nvidia-driver-pinning-580": {"version": "580-1", "hold": False}}
    wanted = {
        "install": {"packages": {"nvidia-open": {"version": "580.95.05", "hold": True},
                                 "nvidia-driver-pinning-580": {},
                                 "nvidia-kernel-dkms": {"present": None, "hold": True}}},
        "fabric_manager": {"packages": {"nvidia-fabricmanager": {"version_of": "nvidia-open", "hold": True}}},
        "pinned_elsewhere": {"packages": {"nvidia-open": {"version": "580.82"}, "cuda-drivers": {"version": None}}},
        "unwanted": {"packages": {"nvidia-open": {"present": False}}},
        "off": None}
    steps = node_state.judge(wanted, node(packages=packages))
    assert steps["install"] == {"differs": False, "why": [], "todo": {"install": [], "hold": []}}
    assert steps["fabric_manager"]["why"] == ["nvidia-fabricmanager: 580.82.07-1, not 580.95.05",
                                              "nvidia-fabricmanager: not on hold"]
    assert steps["pinned_elsewhere"]["why"] == ["nvidia-open: 580.95.05-1, not 580.82", "cuda-drivers: not installed"]
    assert steps["unwanted"]["why"] == ["nvidia-open: installed, not wanted"]
    assert "off" not in steps
    # a driver that is not installed yet pins nothing: any add-on version will do
    alone = {"nvidia-fabricmanager": {"version": "580.82.07-1", "hold": True}}
    assert not node_state.judge(wanted, node(packages=alone))["fabric_manager"]["differs"]


def test_files_by_content_mode_lines_and_lineinfile():
    pin = "Package: nvidia-open\nPin: version 580.95.05-*\n"
    config = "# IMEX\nIMEX_NODE_CONFIG_FILE=/old\nIMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg\n"
    files = {"/pin": {"exists": True, "isdir": False, "mode": "0644", "checksum": checksum_s(pin)},
             "/sources": {"exists": True, "isdir": False, "mode": "0644", "checksum": "x"},
             "/imex": {"exists": True, "isdir": False, "mode": "0644", "checksum": "y"},
             "/keyrings": {"exists": True, "isdir": True, "mode": "0755"},
             "/gone": {"exists": False}}
    text = {"/sources": "Types: deb\nURIs: https://repo/\nSigned-By: /k.gpg\n", "/imex": config}
    last = {"regexp": "^IMEX_NODE_CONFIG_FILE=", "line": "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg"}
    wanted = {"same": {"files": {"/pin": {"content": pin, "mode": "0644"}, "/keyrings": {"isdir": True, "mode": 0o755},
                                 "/sources": {"lines": ["URIs: https://repo/", "Signed-By: /k.gpg"]},
                                 "/imex": {"last_line_matching": last}, "/gone": {"exists": False}}},
              "other": {"files": {"/pin": {"content": pin + "\n", "mode": "0600"}, "/keyrings": {"isdir": False},
                                  "/sources": {"lines": ["URIs: https://repo", "Signed-By: /k.gpg"]},
                                  "/imex": {"last_line_matching": dict(last, line="IMEX_NODE_CONFIG_FILE=/old")},
                                  "/gone": {"content": "x"}, "/never-read": {"mode": "0644"}}},
              "absent": {"files": {"/pin": {"exists": False}, "/gone": {"exists": None}}}}
    steps = node_state.judge(wanted, node(files=files, text=text))
    # a step's directories come back as what to create, so a role applies them without writing their modes again
    assert steps["same"] == {"differs": False, "why": [], "todo": {"dirs": {"/keyrings": 0o755}}}
    assert steps["other"]["why"] == [
        "/pin: mode 0644, not 0600", "/pin: content differs", "/keyrings: a directory",
        "/sources: no line 'URIs: https://repo'",
        "/imex: the last line matching '^IMEX_NODE_CONFIG_FILE=' is not 'IMEX_NODE_CONFIG_FILE=/old'",
        "/gone: missing", "/never-read: missing"]
    assert steps["absent"]["why"] == ["/pin: exists, not wanted"]


def test_json_subset_is_what_a_recursive_merge_would_not_change():
    daemon = {"live-restore": True, "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}},
              "features": {"cdi": False}, "dns": ["10.0.0.1"]}
    files = {"/d.json": {"exists": True, "isdir": False, "mode": "0644", "checksum": "z"}}
    text = {"/d.json": json.dumps(daemon)}
    wanted = {"kept": {"files": {"/d.json": {"json_subset": {"live-restore": True, "runtimes": {"nvidia": {}}}}}},
              "merged": {"files": {"/d.json": {"json_subset": {"features": {"cdi": True}, "dns": ["10.0.0.2"],
                                                               "runtimes": {"amd": {}}}}}},
              "broken": {"files": {"/d.json": {"json_subset": {}}}}}
    steps = node_state.judge(wanted, node(files=files, text=text))
    assert steps["kept"]["why"] == []
    assert steps["merged"]["why"] == ["/d.json: features.cdi differs", "/d.json: dns differs", "/d.json: runtimes.amd differs"]
    assert node_state.judge(wanted, node(files=files, text={"/d.json": "{"}))["broken"]["why"] == ["/d.json: not JSON"]


def test_a_json_subset_step_says_what_to_write_as_ansible_would_merge_it():
    """todo.json is the file with the subset merged in: the bytes combine(recursive=true) and to_nice_json(indent=2)
    give, which the role wrote before (a converged node's daemon.json reads unchanged)."""
    from ansible.plugins.filter.core import combine, to_nice_json
    daemon = {"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}, "features": {"cdi": False},
              "dns": ["10.0.0.1"], "label": "caf\u00e9"}
    subset = {"live-restore": True, "features": {"cdi": True}, "dns": ["10.0.0.2"]}
    files = {"/d.json": {"exists": True, "isdir": False, "mode": "0644", "checksum": "z"}, "/new.json": {"exists": False}}
    wanted = {"daemon": {"files": {"/d.json": {"json_subset": subset}, "/new.json": {"json_subset": {"a": 1}},
                                   "/other": {"exists": True}}}}
    todo = node_state.judge(wanted, node(files=files, text={"/d.json": json.dumps(daemon)}))["daemon"]["todo"]
    assert todo == {"json": {"/d.json": to_nice_json(combine(daemon, subset, recursive=True), indent=2) + "\n",
                             "/new.json": '{\n  "a": 1\n}\n'}}
    # not JSON: nothing to write that would keep the file's settings
    broken = node_state.judge(wanted, node(files=files, text={"/d.json": "{"}))["daemon"]["todo"]["json"]
    assert broken["/d.json"] == ""
    # a step without json_subset files has no json to-do
    assert "todo" not in node_state.judge({"plain": {"files": {"/other": {"exists": True}}}}, node(files=files))["plain"]


def test_services_groups_users_containers_and_always():
    wanted = {"units": {"services": {"nvidia-imex": {"active": True, "enabled": True}, "old": {"active": False}}},
              "gpu_groups": {"groups": {"render": ["alice", "bob"], "video": ["alice"], "kvm": []},
                             "users": ["alice", "carol"]},
              "container": {"containers": {"vllm": {"running": True, "labels": {"inferops.vllm.launch": "ab"}},
                                           "other": {"running": True}}},
              "dnf": {"always": "dnf nodes are not judged"}}
    state = node(services={"nvidia-imex": {"installed": True, "active": True, "enabled": False},
                           "old": {"installed": True, "active": True, "enabled": True}},
                 groups=node_state.parse_group("render:x:992:alice\nvideo:x:44:bob,alice\n"),
                 users=node_state.parse_passwd("root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n"),
                 containers={"vllm": {"exists": True, "running": False, "labels": {"inferops.vllm.launch": "cd"}},
                             "other": {"exists": False}})
    steps = node_state.judge(wanted, state)
    assert steps["units"]["why"] == ["nvidia-imex: not enabled", "old: active, not wanted"]
    assert steps["gpu_groups"]["why"] == ["bob: not in group render", "group kvm: missing", "user carol: missing"]
    assert steps["container"]["why"] == ["vllm: not running", "vllm: label inferops.vllm.launch differs",
                                         "other: no such container"]
    assert steps["dnf"] == {"differs": True, "why": ["dnf nodes are not judged"]}
    # a container that must not exist (the weight cache's daemon once the launch no longer has it)
    gone = {"daemon": {"containers": {"vllm": {"exists": False}, "other": {"exists": False}}}}
    assert node_state.judge(gone, state)["daemon"]["why"] == ["vllm: exists, and should not"]


def test_wanted_bools_from_an_older_templating():
    state = node(services={"docker": {"active": True, "enabled": True}})
    assert not node_state.judge({"s": {"services": {"docker": {"active": "True", "enabled": "true"}}}}, state)["s"]["differs"]
    assert node_state.judge({"s": {"services": {"docker": {"active": "False"}}}}, state)["s"]["differs"]


def test_read_node_reads_what_the_wanted_state_names_and_returns_no_judged_text(tmp_path):
    secret = tmp_path / "vllm.env"
    secret.write_text("VLLM_API_KEY=s3cret\n")
    secret.chmod(0o600)
    sources = tmp_path / "cuda.sources"
    sources.write_text("URIs: https://repo/\n")
    (tmp_path / "group").write_text("render:x:992:alice\nvideo:x:44:alice\n")
    (tmp_path / "passwd").write_text("alice:x:1000:1000::/home/alice:/bin/sh\n")
    calls = []

    def fake_run(argv):
        calls.append(argv)
        if argv[0] == "dpkg-query":
            return 0, "nvidia-open\thold ok installed\t580.95.05-1\n", ""
        return 0, "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n", ""

    wanted = {"env": {"files": {str(secret): {"checksum": checksum_s("VLLM_API_KEY=s3cret\n"), "mode": "0600"}}},
              "repo": {"files": {str(sources): {"lines": ["URIs: https://repo/"]}}},
              "driver": {"packages": {"nvidia-fabricmanager": {"version_of": "nvidia-open"}},
                         "services": {"nvidia-persistenced": {"active": True}}},
              "groups": {"groups": {"render": ["alice"], "video": ["alice"]}, "users": ["alice"]}}
    bins = {"dpkg-query": "dpkg-query", "rpm": None, "systemctl": "systemctl", "docker": None}
    result = node_state.read_node(fake_run, bins, packages_=["nvidia-open"], read=[], wanted=wanted, etc=str(tmp_path))
    assert {name: step["why"] for name, step in result["steps"].items()} == {
        "env": [], "repo": [], "driver": ["nvidia-fabricmanager: not installed"], "groups": []}
    # one dpkg-query for the explicit and the wanted names together, the explicit ones first
    assert [argv[4:] for argv in calls if argv[0] == "dpkg-query"] == [["nvidia-open", "nvidia-fabricmanager"]]
    assert result["packages"]["nvidia-fabricmanager"] is None
    assert "content" not in result["files"][str(sources)] and "s3cret" not in json.dumps(result)
    assert result["files"][str(secret)]["mode"] == "0600"
    # no wanted state: the result of before, with no steps
    bare = node_state.read_node(fake_run, bins, files_=[str(secret)])
    assert bare["steps"] == {} and set(bare) == {"packages", "services", "files", "images", "containers", "steps"}


# EL 9 as dnf leaves it: /etc/dnf/modules.d after `dnf module install nvidia-driver:580-open` and
# `dnf module disable nodejs`, Rocky's repository file with CRB as shipped (disabled) and after
# `dnf config-manager --set-enabled crb`, and the versionlock plugin's list after locking '*nvidia*580*'.
NVIDIA_MODULE = "[nvidia-driver]\nname=nvidia-driver\nstream=580-open\nprofiles=default\nstate=enabled\n\n"
NODEJS_MODULE = "[nodejs]\nname=nodejs\nstream=\nprofiles=\nstate=disabled\n\n"
ROCKY_REPO = """[baseos]
name=Rocky Linux $releasever - BaseOS
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=BaseOS-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/os/
gpgcheck=1
enabled=1
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[crb]
name=Rocky Linux $releasever - CRB
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=CRB-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/CRB/$basearch/os/
gpgcheck=1
enabled={crb}
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9
"""
CUDA_REPO = ("[cuda]\nbaseurl = https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/\ngpgcheck = 1\n"
             "gpgkey = https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub\n"
             "name = NVIDIA CUDA\n\n")
VERSIONLOCK_LIST = ("# Added lock on Tue Dec  1 10:00:00 2026\nnvidia-driver-3:580.95.05-1.el9.*\n"
                    "# Added lock on Tue Dec  1 10:00:00 2026\nkmod-nvidia-open-dkms-3:580.95.05-1.el9.*\n"
                    "!nvidia-driver-cuda-3:590.44.01-1.el9.*\n")


def test_dnf_modules_d_files():
    modules = node_state.parse_dnf_modules([NVIDIA_MODULE, NODEJS_MODULE, "not ini\n"])
    assert modules == {"nvidia-driver": {"stream": "580-open", "state": "enabled", "profiles": ["default"]},
                       "nodejs": {"stream": "", "state": "disabled", "profiles": []}}


def test_yum_repos_d_files():
    repos = node_state.parse_dnf_repos([ROCKY_REPO.format(crb=0), CUDA_REPO, "[broken\nenabled=1\n"])
    assert repos == {"baseos": {"enabled": True}, "crb": {"enabled": False}, "cuda": {"enabled": True}}
    assert node_state.parse_dnf_repos([ROCKY_REPO.format(crb="1")])["crb"] == {"enabled": True}


def test_rpm_lines_with_epoch_and_arch_versionlock_and_names_with_versions():
    out = ("nvidia-driver\t580.95.05-1.el9\t3\tx86_64\n"
           "nvidia-driver-cuda\t590.44.01-1.el9\t3\tx86_64\n"
           "kernel-devel\t5.14.0-503.14.1.el9_5\t0\tx86_64\n"
           "package nvidia-fabric-manager is not installed\n")
    entries = [line for line in VERSIONLOCK_LIST.splitlines() if line and not line.startswith("#")]
    found = node_state.parse_rpm_query(out, ["nvidia-driver", "kernel-devel-5.14.0-503.14.1.el9_5.x86_64"], entries)
    assert found["nvidia-driver"] == {"version": "580.95.05-1.el9", "hold": True}
    assert found["nvidia-driver-cuda"]["hold"] is False  # an exclude (!spec) is no lock
    assert found["kernel-devel-5.14.0-503.14.1.el9_5.x86_64"] == {"version": "5.14.0-503.14.1.el9_5", "hold": False}
    # a lock at another version, and a raw glob (dnf_versionlock raw=true) as dnf matches it
    assert not node_state.parse_rpm_query(out, (), ["nvidia-driver-3:580.82.07-1.el9.*"])["nvidia-driver"]["hold"]
    assert node_state.parse_rpm_query(out, (), ["*nvidia*580*"])["nvidia-driver"]["hold"]


def test_versionlock_list_where_versionlock_conf_says(tmp_path):
    plugins = tmp_path / "dnf" / "plugins"
    plugins.mkdir(parents=True)
    assert node_state.versionlock_entries(str(tmp_path)) == []  # no plugin
    (plugins / "versionlock.list").write_text(VERSIONLOCK_LIST)
    assert node_state.versionlock_entries(str(tmp_path))[0] == "nvidia-driver-3:580.95.05-1.el9.*"
    elsewhere = tmp_path / "locks.list"
    elsewhere.write_text("nvidia-imex-3:580.95.05-1.el9.*\n")
    (plugins / "versionlock.conf").write_text("[main]\nenabled = 1\nlocklist = %s\n" % elsewhere)
    assert node_state.versionlock_entries(str(tmp_path)) == ["nvidia-imex-3:580.95.05-1.el9.*"]


def test_module_streams_and_repositories_judged():
    state = node(modules=node_state.parse_dnf_modules([NVIDIA_MODULE, NODEJS_MODULE]),
                 repos=node_state.parse_dnf_repos([ROCKY_REPO.format(crb=0), CUDA_REPO]))
    wanted = {"same": {"modules": {"nvidia-driver": "580-open"}, "repos": {"cuda": {"enabled": True},
                                                                           "baseos": {"enabled": None}}},
              "other": {"modules": {"nvidia-driver": "580-dkms", "nodejs": "20", "nvidia-imex": "580"},
                        "repos": {"crb": {"enabled": True}, "codeready-builder-for-rhel-9-x86_64-rpms": {"enabled": True},
                                  "baseos": {"enabled": False}, "epel": {"enabled": False}}}}
    steps = node_state.judge(wanted, state)
    assert steps["same"] == {"differs": False, "why": []}
    assert steps["other"]["why"] == [
        "dnf module nvidia-driver: stream 580-open enabled, not 580-dkms",
        "dnf module nodejs: disabled, wanted stream 20",
        "dnf module nvidia-imex: no stream enabled, wanted 580",
        "repository crb: disabled",
        "repository codeready-builder-for-rhel-9-x86_64-rpms: not defined in yum.repos.d",
        "repository baseos: enabled, not wanted"]


def test_read_node_on_el9_reads_dnf_files_not_dnf(tmp_path):
    (tmp_path / "dnf" / "modules.d").mkdir(parents=True)
    (tmp_path / "dnf" / "plugins").mkdir()
    (tmp_path / "yum.repos.d").mkdir()
    (tmp_path / "dnf" / "modules.d" / "nvidia-driver.module").write_text(NVIDIA_MODULE)
    (tmp_path / "dnf" / "plugins" / "versionlock.list").write_text(VERSIONLOCK_LIST)
    (tmp_path / "yum.repos.d" / "rocky.repo").write_text(ROCKY_REPO.format(crb=1))
    calls = []

    def fake_run(argv):
        calls.append(argv)
        assert argv[:4] == ["rpm", "-q", "--qf", node_state.RPM_QUERY_FORMAT], argv  # never dnf
        return 0, "nvidia-driver\t580.95.05-1.el9\t3\tx86_64\npackage epel-release is not installed\n", ""

    wanted = {"install": {"packages": {"nvidia-driver": {"hold": True}, "epel-release": {}},
                          "modules": {"nvidia-driver": "580-open"}, "repos": {"crb": {"enabled": True}}}}
    bins = {"dpkg-query": None, "rpm": "rpm", "systemctl": None, "docker": None}
    result = node_state.read_node(fake_run, bins, wanted=wanted, etc=str(tmp_path))
    assert result["steps"]["install"]["why"] == ["epel-release: not installed"]
    assert result["packages"]["nvidia-driver"] == {"version": "580.95.05-1.el9", "upstream": "580.95.05", "hold": True}
    assert len(calls) == 1 and "modules" not in result and "repos" not in result
    (tmp_path / "dnf" / "modules.d" / "nvidia-driver.module").write_text(NVIDIA_MODULE.replace("580-open", "570-open"))
    assert node_state.read_node(fake_run, bins, wanted=wanted, etc=str(tmp_path))["steps"]["install"]["why"] == [
        "epel-release: not installed", "dnf module nvidia-driver: stream 570-open enabled, not 580-open"]
    # dpkg nodes keep apt-mark's hold: the versionlock list is not theirs
    bins = {"dpkg-query": "dpkg-query", "rpm": "rpm", "systemctl": None, "docker": None}
    dpkg = node_state.read_node(lambda argv: (0, "nvidia-driver\tinstall ok installed\t580.95.05-1\n", ""), bins,
                                packages_=["nvidia-driver"], etc=str(tmp_path))
    assert dpkg["packages"]["nvidia-driver"]["hold"] is False


def test_a_container_started_before_its_launch_files_were_written_differs():
    """A run that wrote the launch files and stopped before the restart (Ctrl-C, a lost controller) leaves
    the container on the files before: the next run must restart it, though files and labels match."""
    want = {"containers": {"vllm": {"running": True, "labels": {"l": "1"},
                                    "started_after": ["/etc/vllm.yaml", "/etc/vllm.env"]}}}
    assert node_state.wanted_reads({"container": want})["files"] == ["/etc/vllm.yaml", "/etc/vllm.env"]

    def node(started, yaml_written, env_written):
        return {"packages": {}, "services": {}, "text": {}, "groups": {}, "users": [],
                "files": {"/etc/vllm.yaml": {"exists": True, "mtime": yaml_written},
                          "/etc/vllm.env": {"exists": True, "mtime": env_written}},
                "containers": {"vllm": {"exists": True, "running": True, "labels": {"l": "1"}, "started_at": started}}}

    assert node_state.judge_step(want, node(1000.0, 990.0, 999.5)) == []
    assert node_state.judge_step(want, node(1000.0, 990.0, 1137.2)) == [
        "vllm: started before /etc/vllm.env was last written (137s later): it runs the file before"]
    # a file not there, or a container that never started: the other rules judge them
    assert node_state.judge_step(want, dict(node(1000.0, 990.0, 990.0), files={})) == []
    never = node(None, 990.0, 1137.2)
    assert node_state.judge_step(want, never) == []


def test_a_container_created_before_its_env_file_was_written_differs(tmp_path):
    """docker copies the env file into a container when it creates it: a restart never applies a new one. The
    reason names the variables, never their values (the file holds the API key)."""
    env = tmp_path / "vllm.env"
    env.write_text("# Managed by inferops.vllm\nVLLM_HOST_IP=127.0.1.1\nVLLM_API_KEY=s3cret\n\n")
    assert node_state.parse_env_file(env.read_text()) == {"VLLM_HOST_IP": "127.0.1.1", "VLLM_API_KEY": "s3cret"}
    inspect = {"State": {"Running": True, "Status": "running", "StartedAt": "2026-11-30T19:01:09Z"},
               "Config": {"Image": "r/vllm", "Labels": {}, "Env": ["PATH=/usr/bin", "VLLM_HOST_IP=127.0.1.1",
                                                                   "VLLM_API_KEY=old"]}}

    def run_(argv):
        return (0, json.dumps([inspect]), "") if argv[1:3] == ["container", "inspect"] else (1, "", "")

    wanted = {"container": {"containers": {"vllm": {"running": True, "env_file": str(env)}}}}
    read = node_state.read_node(run_, {"docker": "docker"}, wanted=wanted)
    assert read["steps"]["container"] == {"differs": True, "why": [
        "vllm: its environment lacks VLLM_API_KEY of %s: it was created before that file was written" % env]}
    assert "env" not in read["containers"]["vllm"] and "s3cret" not in json.dumps(read)
    inspect["Config"]["Env"][2] = "VLLM_API_KEY=s3cret"
    assert node_state.read_node(run_, {"docker": "docker"}, wanted=wanted)["steps"]["container"]["differs"] is False


def test_the_wanted_state_refuses_keys_that_are_never_judged():
    """A typo in a role's wanted state (mod for mode, a misspelt step key) would make the step look converged."""
    wanted = {"config": {"files": {"/etc/x": {"mod": "0644", "content": "x"}}, "service": {"docker": {}}},
              "engine": {"packages": {"docker.io": {"present": True, "pin": "1"}},
                         "containers": {"vllm": {"running": True, "label": {}}}},
              "skipped": None, "empty": {}}
    assert node_state.schema_problems(wanted) == [
        "wanted.config.files['/etc/x'].mod: not judged (files takes exists, isdir, mode, content, checksum, lines, "
        "last_line_matching, json_subset)",
        "wanted.config.service: not a step key (packages, modules, repos, files, services, groups, users, containers, "
        "always)",
        "wanted.engine.packages['docker.io'].pin: not judged (packages takes present, version, version_of, hold)",
        "wanted.engine.containers['vllm'].label: not judged (containers takes exists, running, labels, started_after, "
        "env_file)"]


def test_every_key_the_judges_read_is_in_the_schema():
    """The schema lists what the judges read: a well-formed step of every kind has no problem."""
    step = {"packages": {"p": {"present": True, "version": "1", "version_of": "q", "hold": True}},
            "modules": {"nvidia-driver": "580-open"}, "repos": {"crb": {"enabled": True}},
            "files": {"/f": {"exists": True, "isdir": False, "mode": "0644", "content": "x", "checksum": "ab",
                             "lines": ["a"], "last_line_matching": {"regexp": "^a", "line": "a"},
                             "json_subset": {"a": 1}}},
            "services": {"s": {"active": True, "enabled": True}}, "groups": {"video": ["root"]}, "users": ["root"],
            "containers": {"c": {"running": True, "labels": {"a": "b"}, "started_after": ["/f"], "env_file": "/e"}},
            "always": "because"}
    assert node_state.schema_problems({"step": step}) == []
