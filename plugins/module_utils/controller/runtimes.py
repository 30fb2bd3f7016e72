# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each file of module_utils runs: its folder says it, so that whoever edits one knows which Python reads it.

controller/  the controller's Python (3.11 and later, as ansible-core needs there) with the collection's
             requirements: imported by the action, filter, lookup and test plugins, and by the modules of
             CONTROLLER_MODULES, which the roles run on localhost with ansible_playbook_python.
node/        imported by a module that runs on a node, shipped inside it and run by the node's python3:
             Python 3.9 (EL 9); the standard library and other node/ files only. Controller code may use them.
scripts/     copied to a node as a file and run there by a bare python3 (3.9 on EL 9), with only the files
             SCRIPT_SIBLINGS lists beside it: the standard library, those files and SCRIPT_PACKAGES only.

A file used in two places lies in the stricter folder. tests/unit/test_runtimes.py checks that every file lies
in one of them and imports only what its runtime has; tests/data/test_os_paths.py parses the node/ and scripts/
files with each tested OS's own python3. No imports: this is data.
"""

from __future__ import annotations

CONTROLLER = "controller"
MODULE = "node"
SCRIPT = "scripts"
RUNTIMES = (CONTROLLER, MODULE, SCRIPT)

# modules the roles run on the controller (the smoke test's; the action plugins' documentation)
CONTROLLER_MODULES = ("cluster_plan", "observability_files", "smoke_report", "vllm_smoke")

# what the role copies beside each script (vllm_watchdog, vllm_router), from node/
SCRIPT_SIBLINGS = {
    "watchdog.py": ("health.py", "node_state.py", "startup_log.py", "node_record.py"),
    "router_launch.py": (),
}

# packages a script's interpreter holds besides the standard library: the router's own venv
SCRIPT_PACKAGES = {
    "router_launch.py": ("vllm_router",),
}


def runtime_of(path: str) -> str:
    """The runtime of a file given by its path under module_utils ("node/health.py"): its folder; KeyError when
    it lies in none of them."""
    folder = path.partition("/")[0]
    if folder not in RUNTIMES or "/" not in path:
        raise KeyError(path)
    return folder
