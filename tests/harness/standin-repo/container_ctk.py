"""Stand-in for nvidia-ctk / amd-ctk `runtime configure`: merges the runtime into
the Docker daemon config the way the real tool does (other keys kept)."""
import json
import os
import sys

RUNTIME = "@RUNTIME@"          # nvidia | amd
RUNTIME_BIN = "@RUNTIME_BIN@"  # nvidia-container-runtime | amd-container-runtime
VERSION = "@VERSION@"


def configure(argv):
    opts = dict(a.split("=", 1) if "=" in a else (a, "true") for a in argv)
    path = opts.get("--config", "/etc/docker/daemon.json")
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except FileNotFoundError:
        cfg = {}
    cfg.setdefault("runtimes", {})[RUNTIME] = {"args": [], "path": RUNTIME_BIN}
    if opts.get("--set-as-default") == "true":
        cfg["default-runtime"] = RUNTIME
    if opts.get("--cdi.enabled") == "true":
        cfg.setdefault("features", {})["cdi"] = True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cfg, fh, indent=4)
        fh.write("\n")
    print('INFO[0000] Loading config from %s\nINFO[0000] Wrote updated config to %s\n'
          'INFO[0000] It is recommended that docker daemon be restarted.' % (path, path))


def main(argv):
    if argv[:1] == ["--version"]:
        print("%s-ctk version %s" % (RUNTIME.upper() if RUNTIME == "amd" else "NVIDIA Container Toolkit CLI", VERSION))
    elif argv[:2] == ["runtime", "configure"]:
        configure(argv[2:])
    elif argv[:2] == ["cdi", "generate"]:
        out = dict(a.split("=", 1) for a in argv[2:] if "=" in a).get("--output", "/var/run/cdi/%s.yaml" % RUNTIME)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as fh:
            fh.write("cdiVersion: 0.5.0\nkind: %s.com/gpu\ndevices:\n- name: all\n  containerEdits: {}\n" % RUNTIME)
    else:
        print("unsupported stand-in command: %s" % " ".join(argv), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
