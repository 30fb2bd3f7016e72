"""Argument specs stay in step with what the code reads:
- every key of a role's defaults/main.yml is documented in meta/argument_specs.yml,
  and every documented option with the role's prefix has a default;
- the cluster_plan role documents exactly the inventory variables that the
  launch compiler reads (secrets and the image are documented by their roles);
  the plan's types are built from that documentation (specs.INVENTORY_TYPES).
"""
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (  # noqa: E402
    cluster, model_source, rules)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import PROFILES  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware  # noqa: E402


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
            if name.startswith(role.name + "_") and name not in defaults and not spec.get("required"):
                problems.append("%s: optional argument %s has no default in defaults/main.yml" % (role.name, name))
        if role.name == "cluster_plan":
            # the inventory variables live in their own entry point (the plan checks them, not Ansible)
            specs = yaml.safe_load(specs_file.read_text())["argument_specs"]
            options = {n: o for entry in specs.values() for n, o in (entry.get("options") or {}).items()}
            read = (set(cluster.CLUSTER_DEFAULTS) | set(cluster.HOST_VARS) | {"vllm_cluster"}) - {"vllm_image"}
            documented = {n for n in options if n.startswith("vllm_")}
            # the plan's types come from this spec; where code acts on each choice, it knows every one
            handled = {"vllm_profile": PROFILES, "vllm_gpu_model": hardware.MODELS, "vllm_fabric": rules.FABRICS,
                       "vllm_strategy": cluster.STRATEGIES, "vllm_load_balancing": cluster.LOAD_BALANCING,
                       "vllm_gpu_access": cluster.GPU_ACCESS, "vllm_model_source": model_source.SOURCES}
            for name, known in handled.items():
                if set(options[name].get("choices") or ()) != set(known):
                    problems.append("cluster_plan: %s choices %s differ from the code's %s"
                                    % (name, options[name].get("choices"), sorted(known)))
            for name in sorted(read - set(cluster.VAR_TYPES)):
                problems.append("cluster_plan: the compiler reads %s but cluster.VAR_TYPES does not check it" % name)
            for name in sorted(read - documented):
                problems.append("cluster_plan: the compiler reads %s but the argument spec omits it" % name)
            for name in sorted(documented - read):
                problems.append("cluster_plan: %s is documented but the compiler does not read it" % name)
    if problems:
        sys.exit("\n".join(problems))
    print("argument specs match defaults and the compiler's inputs")


if __name__ == "__main__":
    main()
