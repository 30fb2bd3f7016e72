"""Copy an image pinned by digest from the harness registry into a registry that wants a login,
byte for byte (the collection's module_utils/node/registry.py), and print its reference there.

usage: python3 copy_image.py SOURCE_REF TARGET_HOST:PORT USER PASSWORD_FILE
       python3 copy_image.py 127.0.0.1:5000/inferops/standin-vllm@sha256:... 127.0.0.1:5002 inferops-ci pw
The password is read from the file, never from the command line."""
import importlib.util
import sys
from pathlib import Path

MODULE = Path(__file__).resolve().parents[2] / "plugins" / "module_utils" / "node" / "registry.py"


def main(source_ref, target, user, password_file):
    spec = importlib.util.spec_from_file_location("inferops_registry", MODULE)
    registry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(registry)   # stdlib only: no collection loader needed
    name, digest = source_ref.split("@", 1)
    host, repo = name.split("/", 1)
    password = Path(password_file).read_text().strip()
    result = registry.copy_image(registry.Registry("http://" + host), registry.Registry("http://" + target, user, password),
                                 repo, digest)
    if result["manifest"] != digest:
        sys.exit("copied %s but the target holds %s" % (digest, result["manifest"]))
    print("%s/%s@%s" % (target, repo, digest))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
