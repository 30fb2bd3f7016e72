# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus targets, scrape configs, rules and dashboards from the plan, written on the controller. Thin:
it reads every cluster node's vllm_launch, the hosts' addresses, the routers of group vllm_routers and the
settings, and hands them to observability.plan_files.files(); it writes only what changed (nothing in check
mode) and shows the changes with --diff."""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan_run import default_of
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import inputs, plan_files


def _getter(variables, templar):
    """A host's variable (hostvars template it on read), or the play's (templated here); None when unset or
    when its template cannot be resolved."""
    def get(name):
        try:
            value = variables.get(name)
            return templar.template(value) if isinstance(value, str) and templar.is_template(value) else value
        except AnsibleError:
            return None
    return get


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset({"output_dir", "settings"})

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        _spec, args = self.validate_argument_spec(argument_spec={"output_dir": {"type": "path", "required": True},
                                                                 "settings": {"type": "dict", "default": {}}})
        hostvars, groups = task_vars["hostvars"], task_vars["groups"]
        launches, addresses = {}, {}
        for host in groups.get("vllm_clusters") or ():
            hvars = hostvars[host]
            launch = hvars.get("vllm_launch")
            if launch:
                launches[host] = launch
                addresses[host] = inputs.address(_getter(hvars, self._templar), host)
        if not launches:
            result.update(failed=True, msg="inferops.vllm observability: no host of group vllm_clusters has "
                                           "vllm_launch; run the plan play (cluster_plan) earlier in the playbook")
            return result
        routers = {host: inputs.router(_getter(hostvars[host], self._templar), default_of, host)
                   for host in groups.get("vllm_routers") or ()}
        settings = inputs.settings(_getter(task_vars, self._templar), default_of)
        settings.update(args["settings"])
        try:
            files = plan_files.files(launches, addresses, routers, settings)
        except plan_files.ObservabilityError as exc:
            result.update(failed=True, variable=exc.variable, msg="inferops.vllm observability: %s" % exc)
            return result
        changed = inputs.write(args["output_dir"], files, self._task.check_mode)
        result.update(changed=bool(changed), files=files, output_dir=args["output_dir"])
        if self._task.diff and changed:
            result["diff"] = [{"before_header": path, "after_header": path, "before": texts["before"],
                               "after": texts["after"]} for path, texts in changed.items()]
        return result
