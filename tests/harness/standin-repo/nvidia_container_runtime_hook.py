"""Stand-in for nvidia-container-runtime-hook, which Docker runs as an OCI
prestart hook for `--gpus`. The real hook mounts the driver's tools and
libraries into the container; this one copies the stand-in nvidia-smi and the
node's GPU profile into the container's root filesystem."""
import json
import os
import shutil
import sys

FILES = ("/usr/bin/nvidia-smi", "/etc/inferops-standin/gpu.json")


def main():
    if sys.argv[1:2] != ["prestart"]:
        return
    state = json.load(sys.stdin)
    bundle = state.get("bundle") or state.get("bundlePath")
    with open(os.path.join(bundle, "config.json"), encoding="utf-8") as fh:
        root = json.load(fh)["root"]["path"]
    rootfs = root if os.path.isabs(root) else os.path.join(bundle, root)
    for src in FILES:
        if os.path.exists(src):
            dest = os.path.join(rootfs, src.lstrip("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy(src, dest)


if __name__ == "__main__":
    main()
