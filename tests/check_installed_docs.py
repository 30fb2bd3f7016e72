"""After `ansible-galaxy collection install`, every role and module of the
collection must be documented by ansible-doc from the installed copy."""
import json
import subprocess
import sys
from pathlib import Path

COLLECTION = sys.argv[1] if len(sys.argv) > 1 else "inferops.vllm"
ROOT = Path(__file__).resolve().parent.parent


def doc(kind, name):
    out = subprocess.run(["ansible-doc", "-t", kind, "--json", name], capture_output=True, text=True, check=False)
    if out.returncode != 0 or not json.loads(out.stdout or "{}"):
        sys.exit("ansible-doc -t %s %s failed: %s" % (kind, name, out.stderr.strip()))
    return json.loads(out.stdout)


def main():
    roles = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta/argument_specs.yml").exists())
    modules = sorted(p.stem for p in (ROOT / "plugins/modules").glob("*.py") if p.stem != "__init__")
    for role in roles:
        doc("role", "%s.%s" % (COLLECTION, role))
    for module in modules:
        doc("module", "%s.%s" % (COLLECTION, module))
    listed = subprocess.run(["ansible-doc", "-t", "role", "-l", COLLECTION], capture_output=True, text=True,
                            check=True).stdout
    print("installed %s: %d roles, %d modules documented" % (COLLECTION, len(roles), len(modules)))
    print(listed.strip())


if __name__ == "__main__":
    main()
