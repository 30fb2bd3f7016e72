"""Write each role's README.md from its meta/argument_specs.yml, so the two never drift.

usage: python3 tests/tools/role_readmes.py            rewrite roles/*/README.md
       python3 tests/tools/role_readmes.py --check    fail when one is out of date (lint stage)
"""
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
HEADER = "<!-- Generated from meta/argument_specs.yml by tests/tools/role_readmes.py; edit the spec, not this file. -->"

# Ansible doc markup -> Markdown
_MARKUP = [
    (re.compile(r"[CVO]\(([^)]*)\)"), r"`\1`"),
    (re.compile(r"I\(([^)]*)\)"), r"*\1*"),
    (re.compile(r"B\(([^)]*)\)"), r"**\1**"),
    (re.compile(r"U\(([^)]*)\)"), r"<\1>"),
    (re.compile(r"L\(([^,]*),\s*([^)]*)\)"), r"[\1](\2)"),
    (re.compile(r"M\(([^)]*)\)"), r"`\1`"),
]


def markdown(text) -> str:
    if isinstance(text, list):
        text = " ".join(str(t) for t in text)
    text = str(text or "")
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return text.replace("|", "\\|").replace("\n", " ").strip()


def show_default(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return "`%s`" % value.replace("|", "\\|") if value else '`""`'
    return "`%s`" % json.dumps(value).replace("|", "\\|")


def option_rows(options: dict, prefix: str = ""):
    for name in sorted(options):
        spec = options[name] or {}
        kind = spec.get("type", "str")
        if spec.get("elements"):
            kind += " of " + spec["elements"]
        default = "*required*" if spec.get("required") else show_default(spec.get("default"))
        desc = markdown(spec.get("description"))
        if spec.get("choices"):
            desc += " Choices: %s." % ", ".join("`%s`" % c for c in spec["choices"])
        yield "| `%s%s` | %s | %s | %s |" % (prefix, name, kind, default, desc.strip())
        if spec.get("options"):
            yield from option_rows(spec["options"], prefix + name + ".")


def render(role: Path) -> str:
    specs = yaml.safe_load((role / "meta/argument_specs.yml").read_text())["argument_specs"]
    lines = [HEADER, "", "# inferops.vllm.%s" % role.name, ""]
    for entry, spec in specs.items():
        title = ("" if entry == "main" else " (`tasks_from: %s`)" % entry
                 if (role / "tasks" / (entry + ".yml")).exists() else " (`%s`: no tasks of its own)" % entry)
        lines += ["%s%s" % (markdown(spec.get("short_description")), title), ""]
        description = spec.get("description") or []
        for paragraph in description if isinstance(description, list) else [description]:
            lines += [markdown(paragraph), ""]
        options = spec.get("options") or {}
        if options:
            lines += ["| variable | type | default | description |", "|---|---|---|---|"]
            lines += list(option_rows(options)) + [""]
        else:
            lines += ["No variables.", ""]
    lines += ["Use it as `ansible.builtin.include_role: name=inferops.vllm.%s`; the playbook `inferops.vllm.site` "
              "shows the order the roles run in." % role.name, ""]
    return "\n".join(lines)


def main(argv) -> int:
    stale = []
    for role in sorted(p for p in (ROOT / "roles").iterdir() if (p / "meta/argument_specs.yml").exists()):
        text, target = render(role), role / "README.md"
        if target.exists() and target.read_text() == text:
            continue
        if "--check" in argv:
            stale.append(str(target.relative_to(ROOT)))
        else:
            target.write_text(text)
            print("wrote", target.relative_to(ROOT))
    if stale:
        print("out of date (run python3 tests/tools/role_readmes.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
