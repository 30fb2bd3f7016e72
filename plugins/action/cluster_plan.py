# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile the vLLM launch of every cluster that has a host in the play, once, on the controller (the role runs
it with run_once and hands each host its launch), and write the review files in the same step. Touches no host.
The checks and the compile are module_utils/controller/plan_run.py; this gathers the arguments, reads hostvars
for it and formats the result."""

from __future__ import annotations

from ansible import constants as C
from collections.abc import Mapping

from ansible.errors import AnsibleError, AnsibleUndefinedVariable
from ansible.parsing.vault import VaultHelper
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary, plan_output, plan_run, secret_source
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import one_line

ARGS = {"output_dir": {"type": "str", "default": ""}, "show": {"type": "bool", "default": False},
        "overrides": {"type": "dict", "default": {}}, "check_inventory": {"type": "bool", "default": False}}


class HostReader(plan_run.Reader):
    """hostvars, looked up once per host (each lookup gathers the host's variables anew); a value is templated
    by Ansible on read, and strictly: an unresolvable template raises Unresolved."""

    def __init__(self, hostvars):
        self.hostvars, self.seen = hostvars, {}

    def _vars(self, host):
        if host not in self.seen:
            self.seen[host] = self.hostvars[host]
        return self.seen[host]

    def names(self, host):
        return list(self._vars(host))

    def has(self, host, name):
        return name in self._vars(host)

    def get(self, host, name):   # ansible-core 2.19+ templates a host variable on read, strictly
        try:
            return self._vars(host).get(name)
        except AnsibleError as exc:
            raise plan_run.Unresolved(exc.message, isinstance(exc, AnsibleUndefinedVariable)) from None


def plain_secrets(hostvars, launches):
    """A warning per secret written in plain text, judged on each cluster head's raw (untemplated, undecrypted)
    variables: Ansible's own test says which are vaulted."""
    raw = {}
    for launch in launches.values():
        cluster = launch["cluster"]
        if cluster["name"] not in raw:
            values = hostvars.raw_get(cluster["head"])
            raw[cluster["name"]] = values if isinstance(values, Mapping) else {}
    return secret_source.warnings(raw, plan_run.secret_names(),
                                  lambda value: VaultHelper.get_ciphertext(value, with_tags=False) is not None)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGS)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGS)
        reader = HostReader(task_vars["hostvars"])
        if args["check_inventory"]:   # a play on localhost, before the plays over vllm_clusters
            lines = plan_run.inventory_problems(reader, task_vars["groups"])
            return self._refuse(result, lines) if lines else dict(result, changed=False)
        play = task_vars.get("ansible_play_batch") or [task_vars["inventory_hostname"]]
        # the play holds the site's other hosts too (routers, Prometheus): they take a share, no launch
        clusters = set(task_vars["groups"].get("vllm_clusters") or ())
        hosts = [host for host in play if host in clusters]
        out = plan_run.run(reader, hosts, task_vars["groups"], args["overrides"])
        if out.refusals:
            return self._refuse(result, out.refusals)
        try:
            changed = plan_output.write(args["output_dir"], out.launches, out.observability, self._task.check_mode,
                                        out.flows, out.firewall, out.routers, out.services)
            folder = plan_output.stash(out.launches, C.DEFAULT_LOCAL_TMP, plan_run.shares(out, play))
        except boundary.BoundaryError as exc:
            return dict(result, failed=True, msg="inferops.vllm launch plan: %s" % exc)
        shown = plan_output.show_lines(out.launches, out.read, out.role_values, args["output_dir"],
                                       out.flows, out.hosts, out.routers, out.services) if args["show"] else []
        # every warning, the clusters' included, as Ansible's own: a line inside the shown plan went unread
        warnings = out.warnings + plain_secrets(task_vars["hostvars"], out.launches)
        if shown:   # the plan as people read it is this task's output
            result["_ansible_verbose_always"] = True
        result.update(changed=bool(changed), stash=folder, warnings=warnings, show=shown,
                      version_changes=plan_output.version_change_lines(out.launches))
        return result

    @staticmethod
    def _refuse(result, lines):
        """A failed result with one refusal per line under `refusals` and a one-line `msg`: ansible-core 2.19+
        prints msg twice (an [ERROR] block, then the result), every callback prints a list one item per line,
        and _ansible_verbose_always asks the default callback to indent the result instead of one JSON line."""
        refusals = [one_line(line) for line in lines]
        result.update(failed=True, variable=refusals[0].split("=", 1)[0].split(" ", 1)[0], refusals=refusals,
                      _ansible_verbose_always=True, msg="inferops.vllm launch plan: %d refusal%s, listed below; no "
                      "host was touched" % (len(refusals), "" if len(refusals) == 1 else "s"))
        return result
