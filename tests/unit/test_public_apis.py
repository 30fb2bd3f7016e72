"""Every Python file under plugins/ uses ansible-core, Jinja and Python through their public interfaces only: nothing
imports `ansible._internal` (it changes in every ansible-core release), and nothing replaces a function or attribute
of a module it imports at run time (which would change that library for the whole controller)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "plugins").rglob("*.py"))
# what the collection imports of itself is its own to change
OWN = "ansible_collections.inferops.vllm"


def _root_name(node: ast.AST):
    """The name an attribute chain starts from (`jinja2` in `jinja2.Environment.compile`), or None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def problems(source: str) -> list[str]:
    """Each private import and each run-time replacement in `source`, as `line: what`."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}   # a name the file binds by import -> the module it came from
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for alias in node.names:
                imported[alias.asname or alias.name] = "%s.%s" % (node.module, alias.name)
    # a name bound to what an import gave (`cls = jinja2.Environment`) stands for it too
    aliases = [node for node in ast.walk(tree)
               if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute))]
    for _pass in range(3):
        for node in aliases:
            root = _root_name(node.value)
            for target in node.targets:
                if root in imported and isinstance(target, ast.Name) and target.id not in imported:
                    imported[target.id] = imported[root]
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = ["%s.%s" % (node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call):   # importlib.import_module("ansible._internal..."), __import__(...)
            names = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        found += ["%d: uses %s" % (node.lineno, name) for name in names if "ansible._internal" in name]
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, ast.Delete) else [node.target]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
              and node.args):
            targets = [ast.Attribute(value=node.args[0], attr="?", lineno=node.lineno)]
        for target in targets:
            root = _root_name(target) if isinstance(target, ast.Attribute) else None
            if root in imported and not imported[root].startswith(OWN):
                found.append("%d: replaces an attribute of %s (%s)" % (node.lineno, imported[root], root))
    return sorted(found, key=lambda line: int(line.split(":")[0]))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_plugins_use_public_apis_only(path):
    assert problems(path.read_text()) == [], path


def test_the_scan_finds_what_it_looks_for():
    bad = ("import jinja2\n"
           "from jinja2 import Environment as E\n"
           "import os.path\n"
           "from ansible._internal._templating import _jinja_bits\n"
           "jinja2.Environment.compile = len\n"
           "E.compile = len\n"
           "setattr(os.path, 'join', len)\n"
           "__import__('importlib').import_module('ansible._internal._json')\n"
           "def install(cls=None):\n"
           "    if cls is None:\n"
           "        cls = jinja2.Environment\n"
           "    cls.compile = len\n")
    assert [line.split(":")[0] for line in problems(bad)] == ["4", "5", "6", "7", "8", "12"], problems(bad)
    fine = ("from ansible_collections.inferops.vllm.plugins.module_utils.controller import fleet\n"
            "import jinja2\n"
            "fleet.CACHE = {}\n"
            "class A:\n    def f(self, env):\n        self.compile = jinja2\n        env.x = 1\n")
    assert problems(fine) == []
