"""A driver another party manages (issue #18): DGX OS, the distribution's packages, a .run install, or any
driver the nvidia_driver role did not install. The role stops (fail) or leaves it alone (skip), never
replaces or downgrades it."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_read
from ansible_collections.inferops.vllm.plugins.module_utils.controller import preflight
from ansible_collections.inferops.vllm.plugins.module_utils.node import vendor_driver as v

OURS = ["nvidia-open", "cuda-drivers", "nvidia-driver-cuda", "nvidia-kernel-open-dkms", "nvidia-kernel-dkms"]
NONE_INSTALLED = {name: None for name in OURS}
INSTALLED = dict(NONE_INSTALLED, **{"nvidia-open": {"version": "580.95.05-1", "hold": True}})
DGX = {"DGX_NAME": "DGX Server", "DGX_PRETTY_NAME": "NVIDIA DGX Server", "DGX_SWBUILD_VERSION": "7.1.0"}
UBUNTU_PKGS = [{"name": "linux-modules-nvidia-580-server-open-6.8.0-60-generic", "version": "6.8.0-60.63"},
               {"name": "nvidia-driver-580-server-open", "version": "580.95.05-0ubuntu0.24.04.1"}]


def facts(driver="580.95.05", loaded=None, **vendor):
    base = {"dgx_release": None, "run_installer": False, "packages": []}
    base.update(vendor)
    return {"vendor": "nvidia" if driver else None, "driver_version": driver, "loaded_module_version": loaded,
            "vendor_driver": base}


def decide(f, packages=NONE_INSTALLED, mode="fail", branch="580"):
    return v.decide(f, packages, OURS, mode, branch, "gpu1")


# --- parsing what gpu_facts reads ---------------------------------------------------------------

def test_parse_dgx_release():
    text = ('DGX_NAME="DGX Server"\nDGX_PRETTY_NAME="NVIDIA DGX Server"\nDGX_SWBUILD_DATE="2025-01-01"\n'
            'DGX_SWBUILD_VERSION="7.0.0"\n# comment\nDGX_SERIAL_NUMBER=ABC\nDGX_SWBUILD_VERSION="7.1.0"\n')
    release = v.parse_release(text)
    assert release["DGX_NAME"] == "DGX Server" and release["DGX_SWBUILD_VERSION"] == "7.1.0"
    assert release["DGX_SERIAL_NUMBER"] == "ABC"


def test_parse_dpkg_keeps_installed_packages_only():
    text = ("linux-modules-nvidia-580-server-open-generic\tii \t6.8.0-60.63\n"
            "nvidia-driver-580-server\tun \t\n"
            "nvidia-driver-570-server\trc \t570.172.08-0ubuntu1\n"
            "linux-signatures-nvidia-6.8.0-60-generic:amd64\thi \t6.8.0-60.63\n")
    assert v.parse_dpkg(text) == [
        {"name": "linux-modules-nvidia-580-server-open-generic", "version": "6.8.0-60.63"},
        {"name": "linux-signatures-nvidia-6.8.0-60-generic", "version": "6.8.0-60.63"}]


def test_parse_rpm():
    expected = [{"name": "kmod-nvidia-580", "version": "580.95.05-1.el9"}]
    assert v.parse_rpm("kmod-nvidia-580\t580.95.05-1.el9\n\n") == expected


class FakeModule:
    def __init__(self, bins, outputs):
        self.bins, self.outputs, self.calls = bins, outputs, []

    def get_bin_path(self, name):
        return self.bins.get(name)

    def run_command(self, args, environ_update=None):
        self.calls.append(args)
        return 1, self.outputs.get(args[0], ""), ""


def test_gpu_facts_reads_the_evidence(tmp_path, monkeypatch):
    (tmp_path / "dgx-release").write_text('DGX_NAME="DGX Server"\nDGX_SWBUILD_VERSION="7.1.0"\n')
    (tmp_path / "nvidia-uninstall").write_text("#!/bin/sh\n")
    monkeypatch.setattr(v, "DGX_RELEASE", str(tmp_path / "dgx-release"))
    monkeypatch.setattr(v, "RUN_INSTALLER", str(tmp_path / "nvidia-uninstall"))
    fake = FakeModule({"dpkg-query": "/usr/bin/dpkg-query"},
                      {"/usr/bin/dpkg-query": "linux-modules-nvidia-580-server-open-generic\tii \t6.8.0-60.63\n"})
    out = gpu_read.vendor_driver(fake.run_command, fake.get_bin_path)
    assert out == {"dgx_release": {"DGX_NAME": "DGX Server", "DGX_SWBUILD_VERSION": "7.1.0"}, "run_installer": True,
                   "packages": [{"name": "linux-modules-nvidia-580-server-open-generic", "version": "6.8.0-60.63"}]}
    assert fake.calls[0][1:3] == ["-W", "-f"] and "linux-modules-nvidia-*" in fake.calls[0]


def test_gpu_facts_on_a_plain_node(tmp_path, monkeypatch):
    monkeypatch.setattr(v, "DGX_RELEASE", str(tmp_path / "absent"))
    monkeypatch.setattr(v, "RUN_INSTALLER", str(tmp_path / "absent-too"))
    fake = FakeModule({"rpm": "/usr/bin/rpm"}, {"/usr/bin/rpm": ""})
    assert gpu_read.vendor_driver(fake.run_command, fake.get_bin_path) == {"dgx_release": None, "run_installer": False, "packages": []}
    assert "kmod-nvidia*" in fake.calls[0]


# --- the decision ---------------------------------------------------------------------------------

def test_a_node_without_a_driver_gets_the_role_s_install():
    assert decide(facts(driver=None))["action"] == "install"


def test_the_role_s_own_driver_is_not_foreign():
    assert decide(facts(), INSTALLED) == {"action": "install", "evidence": [], "message": ""}


@pytest.mark.parametrize("f,packages,expect", [
    (facts(dgx_release=DGX), INSTALLED, "/etc/dgx-release (DGX Server 7.1.0): DGX OS installs and updates the driver"),
    (facts(run_installer=True), NONE_INSTALLED, "/usr/bin/nvidia-uninstall: a driver installed with NVIDIA's .run"),
    (facts(packages=UBUNTU_PKGS), NONE_INSTALLED,
     "the distribution's driver packages linux-modules-nvidia-580-server-open-6.8.0-60-generic 6.8.0-60.63, "
     "nvidia-driver-580-server-open 580.95.05-0ubuntu0.24.04.1"),
    (facts(), NONE_INSTALLED, "nvidia-smi reports driver 580.95.05, but none of the packages this role installs "
                              "(nvidia-open, cuda-drivers, nvidia-driver-cuda, nvidia-kernel-open-dkms, "
                              "nvidia-kernel-dkms) is installed"),
    (facts(driver=None, loaded="580.95.05"), NONE_INSTALLED,
     "the loaded nvidia kernel module is driver 580.95.05, but none of the packages"),
])
def test_each_kind_of_vendor_driver_stops_the_role_by_default(f, packages, expect):
    out = decide(f, packages)
    assert out["action"] == "fail"
    assert expect in out["message"], out["message"]
    msg = out["message"]
    assert msg.startswith("gpu1 has an NVIDIA driver")
    assert "nvidia_driver_vendor_managed: skip" in msg and "remove it yourself" in msg and "never" in msg


def test_dgx_os_is_vendor_managed_even_with_packages_of_the_same_names():
    # DGX OS ships nvidia-open from its own repository: /etc/dgx-release decides
    assert decide(facts(dgx_release=DGX), INSTALLED)["action"] == "fail"


def test_many_distribution_packages_are_summarised():
    pkgs = [{"name": "linux-modules-nvidia-580-%d" % i, "version": "1"} for i in range(6)]
    assert "and 2 more" in v.node_evidence(facts(packages=pkgs))[0]


def test_skip_leaves_a_new_enough_vendor_driver_alone():
    out = decide(facts(dgx_release=DGX), INSTALLED, mode="skip")
    assert out["action"] == "skip"
    assert "leaving the vendor-managed NVIDIA driver 580.95.05 (branch 580, at least 580) alone" in out["message"]


def test_skip_reads_the_branch_from_the_loaded_module_when_nvidia_smi_fails():
    assert decide(facts(driver=None, loaded="590.44.01", run_installer=True), mode="skip")["action"] == "skip"


def test_skip_still_refuses_an_old_vendor_driver():
    out = decide(facts(driver="570.172.08", packages=UBUNTU_PKGS), mode="skip")
    assert out["action"] == "fail"
    assert ("gpu1 runs the vendor-managed NVIDIA driver 570.172.08 (branch 570), older than nvidia_driver_branch=580"
            in out["message"])
    assert "upgrade it through its vendor" in out["message"] and "linux-modules-nvidia-580-*" in out["message"]


def test_skip_refuses_a_driver_whose_branch_cannot_be_read():
    out = decide(facts(driver=None, run_installer=True), mode="skip")
    assert out["action"] == "fail" and "its branch cannot be checked" in out["message"]


def test_a_wrong_mode_is_named():
    out = decide(facts(), INSTALLED, mode="ignore")
    assert out["action"] == "fail" and "nvidia_driver_vendor_managed='ignore' is not one of fail, skip" in out["message"]


def test_preflight_points_an_old_vendor_driver_at_its_vendor():
    f = facts(driver="570.172.08", dgx_release=DGX)
    f["driver_branch"] = 570
    [problem] = preflight.node_problems(f, "gpu1", 580)
    assert "Its vendor manages it (/etc/dgx-release" in problem and "upgrade it through the vendor" in problem
    f["vendor_driver"] = {}
    [problem] = preflight.node_problems(f, "gpu1", 580)
    assert "run the nvidia_driver role" in problem
