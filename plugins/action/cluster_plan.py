# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile this host's vLLM launch on the controller from its cluster's
inventory. Touches no host: nothing is sent to the node."""

from __future__ import annotations

from ansible.errors import AnsibleUndefinedVariable
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.cluster import SECRET_ENV, ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.plan import cluster_name_of, compile_cluster, wanted


SECRET_VARS = frozenset(SECRET_ENV.values())
# Needed later by other roles, not by the plan: an example inventory may leave them required.
PLAN_OPTIONAL = frozenset({"vllm_image"})


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset()

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        hostvars = task_vars["hostvars"]
        host = task_vars["inventory_hostname"]

        notes = []

        def host_vars(name):
            hvars = hostvars[name]
            out = {}
            for key in hvars:
                if not wanted(key):
                    continue
                if key in SECRET_VARS:
                    out[key] = True   # presence only: the plan never reads (or decrypts) a secret
                    continue
                try:
                    out[key] = hvars[key]
                except AnsibleUndefinedVariable as exc:
                    if key not in PLAN_OPTIONAL:
                        raise
                    out[key] = None
                    if exc.message not in notes:
                        notes.append(exc.message)
            return out

        def cluster_of(name):
            try:
                return hostvars[name].get("vllm_cluster")
            except AnsibleUndefinedVariable:
                return None

        try:
            launches = compile_cluster(cluster_name_of(host, host_vars(host)), task_vars["groups"], host_vars,
                                       cluster_of, scan_as=host)
        except ClusterError as exc:
            # one line per refusal (ClusterErrors carries several), never a traceback or a spec dump
            result.update(failed=True, variable=exc.variable,
                          msg="\n".join("inferops.vllm launch plan: %s" % line for line in str(exc).splitlines()))
            return result
        launch = launches[host]
        launch["cluster"]["warnings"] += notes
        result.update(changed=False, ansible_facts={"vllm_launch": launch},
                      warnings=list(launch["cluster"]["warnings"]) if launch["rank"] == 0 else [])
        return result
