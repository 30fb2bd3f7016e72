#!/usr/bin/env python3
"""Every role's defaults/main.yml and meta/argument_specs.yml name the same
variables (the entry point `main`), so no tunable goes undocumented."""
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def main():
    problems = []
    for role in sorted(p for p in (ROOT / "roles").iterdir() if p.is_dir()):
        defaults_file = role / "defaults/main.yml"
        specs_file = role / "meta/argument_specs.yml"
        if not specs_file.exists():
            problems.append("%s: meta/argument_specs.yml is missing" % role.name)
            continue
        defaults = set((yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else {})
        options = yaml.safe_load(specs_file.read_text())["argument_specs"]["main"].get("options", {})
        for name in sorted(defaults - set(options)):
            problems.append("%s: default %s is not in meta/argument_specs.yml" % (role.name, name))
        for name, spec in sorted(options.items()):
            if name not in defaults and not spec.get("required"):
                problems.append("%s: optional argument %s has no default in defaults/main.yml" % (role.name, name))
    if problems:
        sys.exit("\n".join(problems))
    print("argument specs match defaults")


if __name__ == "__main__":
    main()
