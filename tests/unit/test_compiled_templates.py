"""module_utils/controller/compiled_templates.py: a template compiled by one process is loaded by the next one that
needs it, and only where everything its compilation read is the same."""
import os
import subprocess
import sys
import textwrap

import jinja2
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import compiled_templates


@pytest.fixture
def shared(tmp_path, monkeypatch):
    """The cache installed on a subclass (not on jinja2.Environment itself), counting real compilations."""
    compiled = []

    class Counting(jinja2.Environment):
        def compile(self, source, name=None, filename=None, raw=False, defer_init=False):
            compiled.append(source)
            return super().compile(source, name, filename, raw, defer_init)

    class Env(Counting):
        pass

    context = {"value": ""}
    cache = compiled_templates.SharedCompiles(str(tmp_path), lambda: context["value"])
    cache.install(Counting)
    return Env, compiled, context, tmp_path


def test_a_template_compiled_once_is_loaded_after(shared):
    env_class, compiled, _context, folder = shared
    first = env_class().from_string("{{ a }}-{% for i in b %}{{ i }}{% endfor %}")
    second = env_class().from_string("{{ a }}-{% for i in b %}{{ i }}{% endfor %}")
    assert len(compiled) == 1
    assert first.render(a=1, b=[2, 3]) == second.render(a=1, b=[2, 3]) == "1-23"
    assert len([f for f in os.listdir(folder) if not f.startswith(".")]) == 1


def test_expressions_are_shared_by_their_parsed_tree(shared):
    env_class, compiled, _context, _folder = shared
    assert env_class().compile_expression("a + 1")(a=1) == 2
    assert env_class().compile_expression("a + 1")(a=2) == 3
    assert env_class().compile_expression("a - 1")(a=2) == 1
    assert len(compiled) == 2


@pytest.mark.parametrize("settings", [{"variable_start_string": "<<", "variable_end_string": ">>"},
                                      {"trim_blocks": True}, {"keep_trailing_newline": True},
                                      {"autoescape": True}, {"finalize": str.upper}])
def test_an_environment_that_compiles_differently_compiles_again(shared, settings):
    env_class, compiled, _context, _folder = shared
    source = "<< a >> {{ a }}\n{% if true %}\nx{% endif %}\n"
    plain, other = env_class().from_string(source), env_class(**settings).from_string(source)
    assert len(compiled) == 2
    assert other.render(a="<i>") == jinja2.Environment(**settings).from_string(source).render(a="<i>")
    assert plain.render(a="<i>") == jinja2.Environment().from_string(source).render(a="<i>")


def test_ambient_compile_state_is_part_of_the_key(shared):
    env_class, compiled, context, _folder = shared
    env_class().from_string("{{ a }}")
    context["value"] = "escape_backslashes=False"
    env_class().from_string("{{ a }}")
    assert len(compiled) == 2


def test_raw_source_and_unreadable_entries_compile(shared):
    env_class, compiled, _context, folder = shared
    env = env_class()
    assert isinstance(env.compile("{{ a }}", raw=True), str)
    env.from_string("{{ b }}")
    for name in os.listdir(folder):
        (folder / name).write_bytes(b"not marshal")
    assert env_class().from_string("{{ b }}").render(b=5) == "5"
    assert len(compiled) == 3


def test_installing_twice_wraps_the_original_once(tmp_path):
    class Env(jinja2.Environment):
        pass

    original = Env.compile
    compiled_templates.SharedCompiles(str(tmp_path)).install(Env)
    compiled_templates.SharedCompiles(str(tmp_path)).install(Env)
    assert Env.compile._shared_compiles is original


def test_a_forked_process_loads_what_another_compiled(tmp_path):
    """Across processes, as between Ansible's task workers: the second process compiles nothing."""
    script = textwrap.dedent("""
        import sys, jinja2
        from ansible_collections.inferops.vllm.plugins.module_utils.controller import compiled_templates
        compiled = []
        original = jinja2.Environment._compile
        jinja2.Environment._compile = lambda self, source, filename: compiled.append(1) or original(self, source, filename)
        compiled_templates.SharedCompiles(sys.argv[1]).install()
        print(jinja2.Environment().from_string("{{ x * 2 }}").render(x=21), len(compiled))
    """)
    runs = [subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout.split()
            for _run in range(2)]
    assert runs == [["42", "1"], ["42", "0"]]
