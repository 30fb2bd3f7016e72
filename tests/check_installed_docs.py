"""After `ansible-galaxy collection install`, every role, module and filter of the
collection must be documented by ansible-doc from the installed copy; each filter by
its own documentation (a file that exports several filters needs one doc per name)."""
import ast
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


def filter_names():
    """The names each plugins/filter/*.py exports: the string keys of FilterModule.filters()'s dict."""
    names = set()
    for path in sorted((ROOT / "plugins/filter").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef) and node.name == "filters":
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                        names.update(k.value for k in ret.value.keys if isinstance(k, ast.Constant))
    return sorted(names)


def check_filter(name):
    """The filter's own DOCUMENTATION (its name, not another filter's of the same file), EXAMPLES, and a RETURN
    whose every value has a sample."""
    fqcn = "%s.%s" % (COLLECTION, name)
    entry = doc("filter", fqcn).get(fqcn) or {}
    problems = []
    shown = entry.get("doc") or {}
    if shown.get("name") != name:
        problems.append("shows the documentation of %r (%s)" % (shown.get("name"), shown.get("filename")))
    if not (entry.get("examples") or "").strip():
        problems.append("has no EXAMPLES")
    returned = entry.get("return") or {}
    if not returned:
        problems.append("has no RETURN")
    problems += ["RETURN %s has no sample" % key for key, value in returned.items() if "sample" not in (value or {})]
    return ["filter %s %s" % (fqcn, p) for p in problems]


def main():
    roles = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta/argument_specs.yml").exists())
    modules = sorted(p.stem for p in (ROOT / "plugins/modules").glob("*.py") if p.stem != "__init__")
    filters = filter_names()
    for role in roles:
        doc("role", "%s.%s" % (COLLECTION, role))
    for module in modules:
        doc("module", "%s.%s" % (COLLECTION, module))
    listed_filters = subprocess.run(["ansible-doc", "-t", "filter", "-l", "--json", COLLECTION], capture_output=True,
                                    text=True, check=True).stdout
    problems = ["filter %s.%s is not listed by ansible-doc -t filter -l" % (COLLECTION, name)
                for name in filters if "%s.%s" % (COLLECTION, name) not in json.loads(listed_filters or "{}")]
    for name in filters:
        problems += check_filter(name)
    if problems:
        sys.exit("\n".join(problems))
    listed = subprocess.run(["ansible-doc", "-t", "role", "-l", COLLECTION], capture_output=True, text=True,
                            check=True).stdout
    print("installed %s: %d roles, %d modules, %d filters documented" % (COLLECTION, len(roles), len(modules),
                                                                         len(filters)))
    print(listed.strip())


if __name__ == "__main__":
    main()
