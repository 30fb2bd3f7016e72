"""Every module_utils file is listed in module_utils/runtimes.py with where it runs, and the files that run on
a node import only what is there: a node module's imports are MODULE or SCRIPT files, a MODULE file imports the
standard library and other node-side files, a script (and what lies beside it) the standard library, its
siblings and its declared packages. (tests/data/test_os_paths.py parses these files with each OS's python3.)"""
import ast
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils import runtimes

ROOT = Path(__file__).resolve().parents[2]
MODULE_UTILS = ROOT / "plugins/module_utils"
PACKAGE = "ansible_collections.inferops.vllm.plugins.module_utils"
FILES = sorted(p.relative_to(MODULE_UTILS).as_posix() for p in MODULE_UTILS.rglob("*.py"))


def runtime(path: str):
    try:
        return runtimes.runtime_of(path)
    except KeyError:
        return None


NODE_SIDE = [f for f in FILES if runtime(f) not in (None, runtimes.CONTROLLER)]
# a script's siblings lie beside it on the node, without the collection: they obey the script's rule
BESIDE = {sibling: script for script, siblings in runtimes.SCRIPT_SIBLINGS.items() for sibling in siblings}


def imports(path: Path):
    """(module, imported names) of every import in the file, wherever it sits (a try block, a function)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "%s: a relative import" % path
            yield node.module, tuple(alias.name for alias in node.names)


def collection_files(module: str, names) -> set:
    """The module_utils files an import of the collection's module_utils reaches."""
    rest = module[len(PACKAGE):].lstrip(".").replace(".", "/")
    found = set()
    for name in names:
        for candidate in ((rest + "/" if rest else "") + name + ".py", rest + ".py", rest + "/__init__.py"):
            if (MODULE_UTILS / candidate).is_file():
                found.add(candidate)
                break
    return found


def test_every_file_says_where_it_runs():
    unlisted = [f for f in FILES if runtime(f) is None]
    assert not unlisted, "add to module_utils/runtimes.py (FILES or PACKAGES): %s" % ", ".join(unlisted)
    stale = sorted(set(runtimes.FILES) - set(FILES)) + sorted(
        m for m in runtimes.CONTROLLER_MODULES if not (ROOT / "plugins/modules" / (m + ".py")).is_file())
    assert not stale, "module_utils/runtimes.py lists files that are gone: %s" % ", ".join(stale)
    assert set(runtimes.FILES.values()) | set(runtimes.PACKAGES.values()) <= {
        runtimes.CONTROLLER, runtimes.MODULE, runtimes.SCRIPT}
    scripts = {f for f in FILES if runtime(f) == runtimes.SCRIPT}
    assert scripts == set(runtimes.SCRIPT_SIBLINGS), "each script says what lies beside it (SCRIPT_SIBLINGS)"
    assert all(runtime(s) != runtimes.CONTROLLER for s in BESIDE), "a script's siblings run on the node"


NODE_MODULES = sorted(p.name for p in (ROOT / "plugins/modules").glob("*.py") if p.stem not in runtimes.CONTROLLER_MODULES)


@pytest.mark.parametrize("module", NODE_MODULES)
def test_what_a_module_imports_runs_on_the_target(module):
    reached, todo = set(), [ROOT / "plugins/modules" / module]
    while todo:
        for name, names in imports(todo.pop()):
            if name and name.startswith(PACKAGE):
                new = collection_files(name, names) - reached
                reached |= new
                todo += [MODULE_UTILS / f for f in new]
    controller = sorted(f for f in reached if runtime(f) == runtimes.CONTROLLER)
    assert not controller, ("module %s reaches %s, listed as controller code in module_utils/runtimes.py: the "
                            "target's python3 runs it (3.9 on EL 9); list it as MODULE" % (module, ", ".join(controller)))


@pytest.mark.parametrize("path", NODE_SIDE)
def test_node_side_files_import_only_what_the_node_has(path):
    script = path if runtime(path) == runtimes.SCRIPT else BESIDE.get(path)
    if script:
        allowed_files = set(runtimes.SCRIPT_SIBLINGS[script]) | {script}
        packages = set(runtimes.SCRIPT_PACKAGES.get(script, ()))
    else:
        allowed_files, packages = set(NODE_SIDE), set()
    wrong = []
    for name, names in imports(MODULE_UTILS / path):
        top = name.split(".")[0]
        if name.startswith(PACKAGE):
            wrong += sorted(collection_files(name, names) - allowed_files)
        elif top not in sys.stdlib_module_names and top not in packages and top + ".py" not in allowed_files:
            wrong.append(name)
    assert not wrong, "%s runs on a node (%s in module_utils/runtimes.py) but imports %s" % (
        path, "beside " + script if script and script != path else runtime(path), ", ".join(wrong))
