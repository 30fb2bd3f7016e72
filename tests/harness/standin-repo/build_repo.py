"""Build signed file:// apt repositories of stand-in vendor packages.

The packages carry the real names, versions and layouts that the roles install
(CUDA network repo, libnvidia-container, ROCm/amdgpu, AMD container toolkit);
their binaries are stand-ins (see the sibling files) that print realistic
output for the GPUs described in /etc/inferops-standin/gpu.json.

usage: build_repo.py OUT_DIR
Layout (mirrors the vendors' URLs so only the base URL differs in tests):
  cuda/debian12/x86_64/           flat repo + cuda-keyring_1.1-1_all.deb
  libnvidia-container/stable/deb/amd64/  flat repo; libnvidia-container/gpgkey
  rocm/apt/7.2.1/                 dists/{jammy,noble}/main; rocm/rocm.gpg.key
  amdgpu/7.2.1/ubuntu/            dists/{jammy,noble}/main
  amd-container-toolkit/apt/      dists/{jammy,noble}/main
"""
import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from email.utils import formatdate
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARDWARE = HERE.parents[2] / "plugins/module_utils/node/hardware.py"
DRIVERS = ["580.95.05", "580.105.08", "590.48.01"]
ROCM = "7.2.1"
ROCM_BUILD = "7.2.1.70201-1"
CTK_VERSIONS = ["1.17.8-1", "1.18.0-1"]


def script(name, **subst):
    """A stand-in tool's source with its placeholders filled; Python ones get their shebang here."""
    path = HERE / name
    if not path.exists():
        path = HERE / (name.replace("-", "_") + ".py")
    text = (HERE / name).read_text() if path.name == name else "#!/usr/bin/python3\n" + path.read_text()
    for key, value in subst.items():
        text = text.replace("@%s@" % key, value)
    return text


def tree_catalog():
    """hardware.CATALOG of this checkout, from the file alone (it imports only the standard library)."""
    spec = importlib.util.spec_from_file_location("inferops_hardware", HARDWARE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.CATALOG


def gpu_rows(catalog=None):
    """The catalog's GPU rows as the stand-in nvidia-smi and amd-smi read them (their @CATALOG@): a row added
    to hardware.CATALOG prints on a node with no edit here."""
    rows = {model: {"vendor": a.vendor, "family": a.family, "memory_gib": a.memory_gib, "sm100": a.sm100}
            for model, a in (tree_catalog() if catalog is None else catalog).items() if a.vendor != "cpu"}
    return json.dumps(rows, sort_keys=True)


def unit(description, exec_start, after="network-online.target"):
    return ("[Unit]\nDescription=%s (inferops stand-in)\nAfter=%s\n\n[Service]\nExecStart=%s\nRestart=on-failure\n\n"
            "[Install]\nWantedBy=multi-user.target\n" % (description, after, exec_start))


def driver_packages(v):
    """The CUDA repo's open-kernel driver split, one set per driver version."""
    rev = v + "-1"
    branch = v.split(".")[0]
    daemon = script("standin-daemon")
    return [
        dict(name="nvidia-kernel-open-dkms", version=rev, files={
            "/usr/src/nvidia-%s/dkms.conf" % v: 'PACKAGE_NAME="nvidia"\nPACKAGE_VERSION="%s"\n' % v}),
        dict(name="nvidia-driver-cuda", version=rev, files={
            "/usr/bin/nvidia-smi": (script("nvidia-smi", DRIVER_VERSION=v, CATALOG=gpu_rows()), 0o755),
            "/usr/bin/nvidia-persistenced": (daemon, 0o755),
            "/lib/systemd/system/nvidia-persistenced.service":
                unit("NVIDIA Persistence Daemon", "/usr/bin/nvidia-persistenced --verbose", "syslog.target")}),
        dict(name="nvidia-open", version=rev,
             depends="nvidia-kernel-open-dkms (= %s), nvidia-driver-cuda (= %s)" % (rev, rev)),
        dict(name="nvidia-fabricmanager", version=rev, provides="nvidia-fabricmanager-%s" % branch, files={
            "/usr/bin/nv-fabricmanager": (daemon, 0o755),
            "/usr/share/nvidia/nvswitch/fabricmanager.cfg": "LOG_LEVEL=4\nFABRIC_MODE=0\n",
            "/lib/systemd/system/nvidia-fabricmanager.service":
                unit("NVIDIA fabric manager service",
                     "/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg")}),
        dict(name="nvidia-imex", version=rev, provides="nvidia-imex-%s" % branch, files={
            "/usr/bin/nvidia-imex": (daemon, 0o755),
            "/usr/bin/nvidia-imex-ctl": (script("nvidia-imex-ctl", DRIVER_VERSION=v), 0o755),
            "/etc/nvidia-imex/config.cfg": "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg\nSERVER_PORT=50000\n",
            "/etc/nvidia-imex/nodes_config.cfg": "",
            "/lib/systemd/system/nvidia-imex.service":
                unit("NVIDIA IMEX service", "/usr/bin/nvidia-imex -c /etc/nvidia-imex/config.cfg")}),
    ]


def pinning_package(branch):
    prefs = ("# Keeps the NVIDIA driver stack on the %s branch (inferops stand-in of the CUDA repo package)\n"
             "Package: nvidia-open nvidia-driver-cuda nvidia-kernel-open-dkms nvidia-fabricmanager nvidia-imex\n"
             "Pin: version %s.*\nPin-Priority: 1000\n" % (branch, branch))
    return dict(name="nvidia-driver-pinning-%s" % branch, version="%s-1" % branch, arch="all",
                files={"/etc/apt/preferences.d/nvidia-driver-pinning-%s" % branch: prefs})


def ctk_package(name, runtime, version, runtime_bin, tool):
    upstream = version.split("-")[0]
    files = {
        "/usr/bin/%s-ctk" % runtime: (script("container-ctk", RUNTIME=runtime, RUNTIME_BIN=runtime_bin,
                                             VERSION=upstream), 0o755),
        "/usr/bin/%s" % runtime_bin: (script("container-runtime", TOOL=tool), 0o755)}
    if runtime == "nvidia":   # Docker runs this prestart hook for --gpus
        files["/usr/bin/nvidia-container-runtime-hook"] = (script("nvidia-container-runtime-hook"), 0o755)
    return dict(name=name, version=version, files=files)


def rocm_packages():
    opt = "/opt/rocm-%s" % ROCM
    return [
        dict(name="amdgpu-dkms", version="1:6.14.14.70201-1", arch="all",
             files={"/usr/src/amdgpu-6.14.14/dkms.conf": 'PACKAGE_NAME="amdgpu"\nPACKAGE_VERSION="6.14.14"\n'}),
        dict(name="rocm-core", version=ROCM_BUILD, files={
            opt + "/.info/version": ROCM + "\n", "/opt/rocm": ("rocm-%s" % ROCM, "symlink")}),
        dict(name="amd-smi-lib", version="26.2.0.70201-1", depends="rocm-core (= %s)" % ROCM_BUILD, files={
            opt + "/bin/amd-smi": (script("amd-smi", ROCM_VERSION=ROCM, CATALOG=gpu_rows()), 0o755),
            "/usr/bin/amd-smi": (opt + "/bin/amd-smi", "symlink")}),
        dict(name="rocm", version=ROCM_BUILD, depends="rocm-core (= %s), amd-smi-lib" % ROCM_BUILD),
    ]


def build_deb(pkg, pool):
    """Write one .deb with dpkg-deb; files map path -> content | (content, mode) | (target, 'symlink')."""
    arch = pkg.get("arch", "amd64")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        root.chmod(0o755)   # dpkg-deb records the root's mode; mkdtemp's 0700 would be wrong
        conffiles = []
        for path, spec in pkg.get("files", {}).items():
            dest = root / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            text, mode = spec if isinstance(spec, tuple) else (spec, 0o644)
            if mode == "symlink":
                os.symlink(text, dest)
                continue
            if isinstance(text, bytes):
                dest.write_bytes(text)
            else:
                dest.write_text(text)
            dest.chmod(mode)
            if path.startswith("/etc/"):
                conffiles.append(path)
        control = ["Package: " + pkg["name"], "Version: " + pkg["version"], "Architecture: " + arch,
                   "Maintainer: inferops stand-in <noreply@inferops.invalid>", "Section: utils", "Priority: optional"]
        for field in ("depends", "provides"):
            if pkg.get(field):
                control.append("%s: %s" % (field.capitalize(), pkg[field]))
        control.append("Description: %s (inferops test stand-in)\n Stand-in package with the real name; "
                       "its tools print realistic output for simulated GPUs." % pkg["name"])
        (root / "DEBIAN").mkdir()
        (root / "DEBIAN/control").write_text("\n".join(control) + "\n")
        if conffiles:
            (root / "DEBIAN/conffiles").write_text("\n".join(conffiles) + "\n")
        out = pool / ("%s_%s_%s.deb" % (pkg["name"], pkg["version"].split(":")[-1], arch))
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)],
                       check=True, stdout=subprocess.DEVNULL)
        return out


def packages_index(debs, base):
    entries = []
    for deb in sorted(debs):
        control = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True).stdout
        data = deb.read_bytes()
        entries.append(control.rstrip("\n") + "\nFilename: %s\nSize: %d\nMD5sum: %s\nSHA256: %s\n" % (
            deb.relative_to(base).as_posix(), len(data), hashlib.md5(data).hexdigest(),
            hashlib.sha256(data).hexdigest()))
    return "\n".join(entries)


def write_release(release_dir, index_files, gpg, suite=None):
    lines = ["Origin: inferops-standin", "Label: inferops stand-in vendor packages",
             "Date: " + formatdate(usegmt=True), "Architectures: amd64 all"]
    if suite:
        lines += ["Suite: " + suite, "Codename: " + suite, "Components: main"]
    lines.append("SHA256:")
    for path in index_files:
        data = path.read_bytes()
        lines.append(" %s %d %s" % (hashlib.sha256(data).hexdigest(), len(data), path.relative_to(release_dir)))
    release = release_dir / "Release"
    release.write_text("\n".join(lines) + "\n")
    gpg("--clearsign", "-o", str(release_dir / "InRelease"), str(release))
    gpg("--detach-sign", "-o", str(release_dir / "Release.gpg"), str(release))


def write_index(directory, text):
    (directory / "Packages").write_text(text)
    with gzip.open(directory / "Packages.gz", "wt") as fh:
        fh.write(text)
    return [directory / "Packages", directory / "Packages.gz"]


def flat_repo(root, pkgs, gpg):
    root.mkdir(parents=True, exist_ok=True)
    debs = [build_deb(p, root) for p in pkgs]
    write_release(root, write_index(root, packages_index(debs, root)), gpg)
    return debs


def suite_repo(root, pkgs, gpg, suites=("jammy", "noble", "bookworm")):
    pool = root / "pool/main"
    pool.mkdir(parents=True, exist_ok=True)
    debs = [build_deb(p, pool) for p in pkgs]
    text = packages_index(debs, root)
    for suite in suites:
        dist = root / "dists" / suite
        binary = dist / "main/binary-amd64"
        binary.mkdir(parents=True)
        write_release(dist, write_index(binary, text), gpg, suite)


def main(out):
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    home = Path(tempfile.mkdtemp(prefix="standin-gpg-"))
    try:
        def gpg(*args):
            subprocess.run(["gpg", "--batch", "--quiet", "--yes", "--homedir", str(home), "--pinentry-mode",
                            "loopback", "--passphrase", "", *args], check=True)
        gpg("--quick-gen-key", "inferops stand-in vendor repo <noreply@inferops.invalid>", "ed25519", "sign", "never")
        keys = out / "keys"
        keys.mkdir()
        gpg("--export", "-o", str(keys / "standin.gpg"))
        gpg("--armor", "--export", "-o", str(keys / "standin.asc"))
        keyring = (keys / "standin.gpg").read_bytes()
        armored = (keys / "standin.asc").read_text()

        keyring_pkg = dict(name="cuda-keyring", version="1.1-1", arch="all",
                           files={"/usr/share/keyrings/cuda-archive-keyring.gpg": keyring})
        nvidia = [keyring_pkg, pinning_package("580"), pinning_package("590")]
        for v in DRIVERS:
            nvidia += driver_packages(v)
        # NVIDIA's layout: one flat repository per distribution release (Debian 13 nodes read debian13)
        for distro in ("debian12", "debian13"):
            cuda = out / "cuda" / distro / "x86_64"
            flat_repo(cuda, nvidia, gpg)
            (cuda / "3bf863cc.pub").write_text(armored)

        ctk = out / "libnvidia-container"
        flat_repo(ctk / "stable/deb/amd64", [ctk_package("nvidia-container-toolkit", "nvidia", v, "nvidia-container-runtime",
                                                         "/usr/bin/nvidia-smi") for v in CTK_VERSIONS], gpg)
        (ctk / "gpgkey").write_text(armored)

        suite_repo(out / "rocm/apt" / ROCM, rocm_packages()[1:], gpg)
        suite_repo(out / "amdgpu" / ROCM / "ubuntu", rocm_packages()[:1], gpg)
        suite_repo(out / "amd-container-toolkit/apt",
                   [ctk_package("amd-container-toolkit", "amd", "1.2.0-1", "amd-container-runtime", "/usr/bin/amd-smi")],
                   gpg)
        (out / "rocm/rocm.gpg.key").write_text(armored)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("stand-in repositories written to %s" % out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "standin-repo")
