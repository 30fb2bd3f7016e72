# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each file of module_utils runs, so that whoever edits one knows which Python reads it.

CONTROLLER  the controller's Python (3.11 and later, as ansible-core needs there) with the collection's
            requirements: imported by the action, filter, lookup and test plugins, and by the modules of
            CONTROLLER_MODULES, which the roles run on localhost with ansible_playbook_python.
MODULE      imported by a module that runs on a node, shipped inside it and run by the node's python3:
            Python 3.9 (EL 9); the standard library and other MODULE or SCRIPT files only.
SCRIPT      copied to a node as a file and run there by a bare python3 (3.9 on EL 9), with only the files
            SCRIPT_SIBLINGS lists beside it: the standard library, those files and SCRIPT_PACKAGES only.

A file used in two places is listed under the stricter one. tests/unit/test_runtimes.py checks that every
file is listed and imports only what its runtime has; tests/data/test_os_paths.py parses the MODULE and
SCRIPT files with each tested OS's own python3. No imports: this is data.
"""

from __future__ import annotations

CONTROLLER = "controller"
MODULE = "module"
SCRIPT = "script"

# modules the roles run on the controller (the smoke test's; the action plugins' documentation)
CONTROLLER_MODULES = ("cluster_plan", "observability_files", "smoke_report", "vllm_smoke")

# a package's files share its runtime, unless FILES names one
PACKAGES = {
    "observability": CONTROLLER,
    "profiles": CONTROLLER,
    "smoke": CONTROLLER,
}

FILES = {
    "cluster.py": CONTROLLER,
    "fabric.py": CONTROLLER,
    "fleet.py": CONTROLLER,
    "gpu_exporter.py": CONTROLLER,
    "group.py": CONTROLLER,
    "host_stack.py": CONTROLLER,
    "known_vars.py": CONTROLLER,
    "launch.py": CONTROLLER,
    "launch_check.py": CONTROLLER,
    "model_source.py": CONTROLLER,
    "node_layout.py": CONTROLLER,
    "plain_input.py": CONTROLLER,
    "plan.py": CONTROLLER,
    "preflight.py": CONTROLLER,
    "proxy.py": CONTROLLER,
    "render.py": CONTROLLER,
    "role_vars.py": CONTROLLER,
    "rollout.py": CONTROLLER,
    "rules.py": CONTROLLER,
    "runtimes.py": CONTROLLER,
    "url_host.py": CONTROLLER,
    "vllm_surface.py": CONTROLLER,
    "vllm_surface_0_32_0.py": CONTROLLER,
    "wrong_values.py": CONTROLLER,
    "gpu_facts.py": MODULE,
    "hardware.py": MODULE,
    "health.py": MODULE,
    "image_record.py": MODULE,
    "image_ref.py": MODULE,
    "node_record.py": MODULE,
    "node_state.py": MODULE,
    "registry.py": MODULE,
    "registry_blobs.py": MODULE,
    "router.py": MODULE,
    "vendor_driver.py": MODULE,
    "weights.py": MODULE,
    "weights_fetch.py": MODULE,
    "weights_store.py": MODULE,
    "smoke/prom.py": MODULE,   # router_worker reads the router's metrics on the router host
    "router_launch.py": SCRIPT,
    "watchdog.py": SCRIPT,
}

# what the role copies beside each script (vllm_watchdog, vllm_router)
SCRIPT_SIBLINGS = {
    "watchdog.py": ("health.py", "node_state.py"),
    "router_launch.py": (),
}

# packages a script's interpreter holds besides the standard library: the router's own venv
SCRIPT_PACKAGES = {
    "router_launch.py": ("vllm_router",),
}


def runtime_of(path: str) -> str:
    """The runtime of a file given by its path under module_utils ("smoke/run.py"); KeyError when unlisted."""
    if path in FILES:
        return FILES[path]
    return PACKAGES[path.rpartition("/")[0]]
