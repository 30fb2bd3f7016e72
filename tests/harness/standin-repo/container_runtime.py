"""Stand-in for nvidia-container-runtime / amd-container-runtime: an OCI runtime
shim like the real ones. On `create`/`run` it adds what the vendor toolkit
would inject (here: the stand-in vendor tool and the node's GPU profile, bind
mounted read-only) to the bundle's config.json, then hands the call to runc."""
import json
import os
import sys

TOOL = "@TOOL@"   # /usr/bin/nvidia-smi or /usr/bin/amd-smi
PROFILE = "/etc/inferops-standin/gpu.json"


def bundle_dir(argv):
    for i, arg in enumerate(argv):
        if arg in ("--bundle", "-b") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--bundle="):
            return arg.split("=", 1)[1]
    return os.getcwd()


def inject(bundle):
    path = os.path.join(bundle, "config.json")
    with open(path, encoding="utf-8") as fh:
        spec = json.load(fh)
    mounts = spec.setdefault("mounts", [])
    present = {m.get("destination") for m in mounts}
    for src in (TOOL, PROFILE):
        if src not in present and os.path.exists(src):
            mounts.append({"destination": src, "type": "bind", "source": src, "options": ["rbind", "ro"]})
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)


def main(argv):
    if "create" in argv or "run" in argv:
        inject(bundle_dir(argv))
    os.execvp("runc", ["runc"] + argv)


if __name__ == "__main__":
    main(sys.argv[1:])
