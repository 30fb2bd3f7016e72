"""Every module_utils file lies in the folder of where it runs (controller/, node/, scripts/: module_utils/
controller/runtimes.py), and the files that run on a node import only what is there: a node module's imports are
node/ or scripts/ files, a node/ file imports the standard library and other node/ files, a script (and what lies
beside it) the standard library, its siblings and its declared packages. (tests/data/test_os_paths.py parses these
files with each OS's python3.)"""
import ast
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import runtimes
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_settings import watchdog_sources

ROOT = Path(__file__).resolve().parents[2]
MODULE_UTILS = ROOT / "plugins/module_utils"
PACKAGE = "ansible_collections.inferops.vllm.plugins.module_utils"
FILES = sorted(p.relative_to(MODULE_UTILS).as_posix() for p in MODULE_UTILS.rglob("*.py") if p.name != "__init__.py")


def runtime(path: str):
    try:
        return runtimes.runtime_of(path)
    except KeyError:
        return None


NODE_SIDE = [f for f in FILES if runtime(f) not in (None, runtimes.CONTROLLER)]
# a script's siblings (from node/) lie beside it on the node, without the collection: they obey the script's rule
BESIDE = {"%s/%s" % (runtimes.MODULE, sibling): "%s/%s" % (runtimes.SCRIPT, script)
          for script, siblings in runtimes.SCRIPT_SIBLINGS.items() for sibling in siblings}


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
    unplaced = [f for f in FILES if runtime(f) is None]
    assert not unplaced, "move into module_utils/controller, node or scripts (controller/runtimes.py): %s" % (
        ", ".join(unplaced))
    stale = sorted(m for m in runtimes.CONTROLLER_MODULES if not (ROOT / "plugins/modules" / (m + ".py")).is_file())
    assert not stale, "module_utils/controller/runtimes.py names modules that are gone: %s" % ", ".join(stale)
    scripts = {f for f in FILES if runtime(f) == runtimes.SCRIPT}
    assert scripts == {"%s/%s" % (runtimes.SCRIPT, s) for s in runtimes.SCRIPT_SIBLINGS}, \
        "each script says what lies beside it (SCRIPT_SIBLINGS)"
    assert all((MODULE_UTILS / s).is_file() for s in BESIDE), "a script's siblings are node/ files"


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
    assert not controller, ("module %s reaches %s, controller code (module_utils/controller): the "
                            "target's python3 runs it (3.9 on EL 9); move it to module_utils/node" % (module, ", ".join(controller)))


@pytest.mark.parametrize("path", NODE_SIDE)
def test_node_side_files_import_only_what_the_node_has(path):
    script = path if runtime(path) == runtimes.SCRIPT else BESIDE.get(path)
    if script:
        name = script.rpartition("/")[2]
        allowed_files = {"%s/%s" % (runtimes.MODULE, s) for s in runtimes.SCRIPT_SIBLINGS[name]} | {script}
        packages = set(runtimes.SCRIPT_PACKAGES.get(name, ()))
    else:
        allowed_files, packages = set(NODE_SIDE), set()
    wrong = []
    for name, names in imports(MODULE_UTILS / path):
        top = name.split(".")[0]
        if name.startswith(PACKAGE):
            wrong += sorted(collection_files(name, names) - allowed_files)
        elif (top not in sys.stdlib_module_names and top not in packages
              and top + ".py" not in {f.rpartition("/")[2] for f in allowed_files}):
            wrong.append(name)
    assert not wrong, "%s runs on a node (%s) but imports %s" % (
        path, "beside " + script if script and script != path else runtime(path), ", ".join(wrong))


def test_the_watchdog_role_ships_the_script_with_exactly_its_siblings():
    """vllm_watchdog copies what SCRIPT_SIBLINGS says lies beside the script: a sibling left out fails on the node only."""
    shipped = [str(Path(path).resolve().relative_to(MODULE_UTILS.resolve())) for path in watchdog_sources()]
    assert shipped == ["scripts/watchdog.py"] + ["node/" + s for s in runtimes.SCRIPT_SIBLINGS["watchdog.py"]]
    assert all(Path(path).is_file() for path in watchdog_sources())
