# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile the vLLM launch of every cluster that has a host in the play, once, on the
controller (the role runs it with run_once and hands each host its launch), and write the
review files in the same step. Touches no host: nothing is sent to the nodes."""

from __future__ import annotations

import json
import os
import tempfile

import yaml

from ansible import constants as C
from ansible.errors import AnsibleError, AnsibleUndefinedVariable
from ansible.plugins.action import ActionBase
from ansible.template import Templar

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    boundary, fleet, known_vars, plan_view, proxy, readiness, role_vars, rollout, wrong_values)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import (
    DRIVER_VARS, SECRET_ENV, VAR_TYPES, ClusterError, one_line)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import (
    inputs as observability_inputs)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import plan_files as observability
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import prometheus_server
from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan import (
    READ_NAMES, cluster_name_of, compile_cluster)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_run_command


SECRET_VARS = frozenset(SECRET_ENV.values())
# Needed later by other roles, not by the plan: an example inventory may leave them required.
PLAN_OPTIONAL = frozenset({"vllm_image"})
# The roles playbooks/site.yml runs after the plan (tests/unit/test_site_role_vars.py keeps this in step):
# their inventory variables are checked here, before any host is contacted.
SITE_ROLES = ("host_proxy", "node_read", "preflight", "nvidia_driver", "rocm", "container_runtime", "vllm_image",
              "vllm_exporters", "fabric_check", "vllm_model", "vllm_serve", "vllm_watchdog", "vllm_router",
              "vllm_prometheus", "vllm_observability", "smoke_test")
ROLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles")
_ROLE_OPTIONS = {}


def role_options():
    """{variable: (role, option)} from the main entry point of every role site.yml runs, read once per
    process. Left out: what the plan checks itself (VAR_TYPES, the driver checks, with their own
    messages) and secrets (no_log, SECRET_ENV): never read, so never decrypted nor shown."""
    if not _ROLE_OPTIONS:
        for role in SITE_ROLES:
            with open(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
                spec = yaml.safe_load(handle)["argument_specs"]["main"]
            for name, option in (spec.get("options") or {}).items():
                if (name in VAR_TYPES or name in DRIVER_VARS or name in SECRET_VARS or option.get("no_log")
                        or name == proxy.VARIABLE):   # checked by proxy.problems, which hides a password
                    continue
                _ROLE_OPTIONS.setdefault(name, (role, option))
    return _ROLE_OPTIONS


def read_var(hvars, key, loader):
    """hvars[key], templated; one that cannot be resolved raises AnsibleUndefinedVariable (with its
    undef() hint) on every supported ansible-core. 2.18's hostvars return such a template unchanged
    (they template with fail_on_undefined=False): template it again, strictly, to fail as 2.19 does."""
    value = hvars[key]
    if isinstance(value, str) and "{{" in value:
        templar = Templar(loader=loader, variables=hvars)
        if templar.is_template(value):
            value = templar.template(value, fail_on_undefined=True)
    return value


def set_role_vars(hvars, options, loader):
    """The role variables a host sets in the inventory (or -e), templated by Ansible on read; one whose
    template cannot be resolved yet (it needs facts or another play's variables) is skipped and left to
    its role. Role defaults are not in hostvars, so only what the user set is checked."""
    out = {}
    for name in options:
        if name not in hvars:
            continue
        try:
            out[name] = read_var(hvars, name, loader)
        except AnsibleError:
            continue
    return out


def proxy_lines(vars_of, hosts):
    """inferops_proxy checked once per distinct value (a site sets it once): one line per wrong value,
    naming the hosts, with any password shown as ***."""
    found = {}
    for host in hosts:
        hvars = vars_of(host)
        if proxy.VARIABLE not in hvars:
            continue
        try:
            value = hvars[proxy.VARIABLE]
        except AnsibleError:
            continue
        for problem in proxy.problems(value):
            found.setdefault(problem, []).append(host)
    return ["%s (%s)" % (problem, wrong_values.shown_hosts(hosts)) for problem, hosts in found.items()]


_ROLE_DEFAULTS = {}


def role_default(role, name):
    """A literal default from roles/<role>/defaults/main.yml (None for a template or none)."""
    if role not in _ROLE_DEFAULTS:
        try:
            with open(os.path.join(ROLES_DIR, role, "defaults", "main.yml"), encoding="utf-8") as handle:
                _ROLE_DEFAULTS[role] = yaml.safe_load(handle) or {}
        except OSError:
            _ROLE_DEFAULTS[role] = {}
    value = _ROLE_DEFAULTS[role].get(name)
    return None if isinstance(value, str) and "{{" in value else value


def cluster_children(hostvars):
    """The groups listed under vllm_clusters (None where the inventory cannot be asked)."""
    inventory = getattr(hostvars, "_inventory", None)
    group = inventory.groups.get("vllm_clusters") if inventory is not None else None
    return [child.name for child in group.child_groups] if group is not None else None


def unknown_var_lines(vars_of, hosts, loader):
    """Misspelt variables (known_vars): (refusals, warnings); inferops_allow_unknown_vars: true on a host
    turns its refusals into warnings."""
    refused, warned = {}, {}
    for host in hosts:
        hvars = vars_of(host)
        names = known_vars.unknown(list(hvars))
        if not names:
            continue
        try:
            allow = known_vars.ALLOW in hvars and bool(read_var(hvars, known_vars.ALLOW, loader))
        except AnsibleError:
            allow = False
        (warned if allow else refused)[host] = names
    return known_vars.lines(refused), known_vars.lines(warned)


def fleet_lines(launches, vars_of, read, groups, role_values, loader):
    """Across clusters: one machine under two names and ports that collide on a machine (refusals), IMEX
    set up for a launch without a channel (warnings)."""
    routers = list(groups.get("vllm_routers") or ())
    options = role_options()

    def setting(host, name):
        if host not in role_values:
            role_values[host] = set_role_vars(vars_of(host), options, loader)
        if name in role_values[host]:
            return role_values[host][name]
        if name in options:
            return role_default(options[name][0], name)
        return observability_setting(vars_of(host), name, loader)

    def address_vars(host):
        out = {}
        for key in ("ansible_host", "vllm_control_address", "ansible_port"):
            try:
                out[key] = read[host].get(key) if host in read and key != "ansible_port" else vars_of(host).get(key)
            except AnsibleError:
                out[key] = None
        return out
    prometheus = list(groups.get("vllm_prometheus") or ())
    hosts = list(dict.fromkeys(list(launches) + routers + prometheus))
    lines = fleet.machine_problems({host: address_vars(host) for host in hosts})
    uses = {}
    for host in hosts:
        uses[host] = fleet.role_ports(listener_groups(host, launches, routers, prometheus,
                                                      lambda name: setting(host, name)),
                                      lambda name: setting(host, name))
        if host in launches:
            uses[host] = fleet.launch_ports(launches[host], setting(host, "fabric_check_port")) + uses[host]
    lines += fleet.port_problems(uses)
    imex = fleet.imex_warnings(launches, lambda host: setting(host, "nvidia_driver_imex") in (True, "true", "yes"))
    # what site.yml will need, refused here rather than after drivers and runtime
    lines += readiness.image_problems(launches)
    lines += readiness.registry_problems(
        launches, lambda host: setting(host, "vllm_model_registry") or setting(host, "vllm_image_mirror"))
    lines += readiness.imex_problems(launches, lambda host: setting(host, "nvidia_driver_imex"))
    refused, notes = readiness.api_problems(launches, lambda host: bool(read.get(host, {}).get("vllm_api_key")),
                                            lambda host: read.get(host, {}).get(readiness.OPEN_API))
    notes += downtime_lines(launches, vars_of, routers, setting, loader)
    return lines + refused, imex + notes


def downtime_lines(launches, vars_of, routers, setting, loader):
    """A note per cluster that no router of group vllm_routers fronts: an upgrade or rolling restart stops it
    while it moves (vllm_rollout refuses that unless vllm_rollout_allow_downtime, read on the cluster's head)."""
    heads = {}
    for host, launch in launches.items():
        heads.setdefault(launch["cluster"]["name"], launch["cluster"].get("head") or host)

    def accepted(name):
        hvars = vars_of(heads[name])
        try:
            value = read_var(hvars, rollout.ALLOW_DOWNTIME, loader) if rollout.ALLOW_DOWNTIME in hvars else None
        except AnsibleError:
            return False
        return rollout.accepted(value) is True
    return rollout.downtime_notes([launch["cluster"] for launch in launches.values()],
                                  [{name: setting(host, name) for name in rollout.ROUTER_SETTINGS} for host in routers],
                                  accepted)


def observability_setting(hvars, name, loader):
    """A vllm_exporters_* / vllm_prometheus_* / vllm_observability_* value a host sets, else its role's default
    (these roles are not in SITE_ROLES until site.yml runs them)."""
    if name in hvars:
        try:
            return read_var(hvars, name, loader)
        except AnsibleError:
            return None
    return default_of(name)


def listener_groups(host, launches, routers, prometheus, setting):
    """The groups whose listeners (fleet.ROLE_PORTS, METRICS_PORTS) run on the host; a cluster node's GPU exporter
    and node_exporter are pseudo-groups of vllm_clusters."""
    out = ["vllm_routers"] if host in routers else []
    out += ["vllm_prometheus"] if host in prometheus else []
    if host in launches:
        if setting("vllm_exporters_gpu") in (True, None):
            out.append("vllm_clusters:%s" % launches[host]["cluster"]["vendor"])
        if setting("vllm_exporters_node_exporter") is True:
            out.append("vllm_clusters:node_exporter")
    return out


def default_of(name):
    """The role default of a variable, its role known by its prefix."""
    role = next((r for r in ("vllm_exporters", "vllm_observability", "vllm_prometheus", "vllm_router")
                 if name.startswith(r + "_")), None)
    return role_default(role, name) if role else None


def observability_files(launches, vars_of, read, groups, settings_host, loader):
    """The observability files of the plan (targets, scrape configs, rules, dashboards), or ObservabilityError
    for a bad vllm_observability_* / vllm_exporters_* value: checked on every plan, written with output_dir."""
    def getter(hvars):
        def get(name):
            return observability_setting(hvars, name, loader) if name in hvars else None
        return get

    def host_get(host):
        def get(name):
            if host in read and name in ("ansible_host", "vllm_control_address"):
                return read[host].get(name)
            return getter(vars_of(host))(name)
        return get
    addresses = {host: observability_inputs.address(host_get(host), host) for host in launches}
    routers = {host: observability_inputs.router(getter(vars_of(host)), default_of, host)
               for host in groups.get("vllm_routers") or ()}
    settings = observability_inputs.settings(getter(vars_of(settings_host)), default_of)
    return observability.files(launches, addresses, routers, settings)


def prometheus_lines(vars_of, read, groups, loader):
    """One refusal per bad vllm_prometheus_* value of a host of group vllm_prometheus (role vllm_prometheus
    would fail on it only after the package is installed), naming the host."""
    lines = []
    for host in groups.get("vllm_prometheus") or ():
        def get(name, host=host):
            if host in read and name in ("ansible_host", "vllm_control_address"):
                return read[host].get(name)
            return observability_setting(vars_of(host), name, loader)
        settings = {name: get(name) for name in ("vllm_prometheus_listen_address", "vllm_prometheus_port",
                                                 "vllm_prometheus_retention", "vllm_prometheus_alertmanagers")}
        try:
            prometheus_server.check(settings, observability_inputs.address(get, host))
        except prometheus_server.PrometheusSettingError as exc:
            lines.append("%s (host %s)" % (exc, host))
    return lines


def _write(path, text, mode, check):
    """Write only what changed (nothing in check mode); True when the file changes."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    if check:
        return True
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)
    return True


def write_review(output_dir, launches, check=False):
    """<dir>/<cluster>/<host>.yaml (the vLLM config), .json (the whole launch) and .sh (docker run)."""
    changed = 0
    for host, launch in launches.items():
        folder = boundary.inside(output_dir, launch["cluster"]["name"])
        if not check:
            os.makedirs(folder, mode=0o755, exist_ok=True)
        image = launch["cluster"]["image"] or "IMAGE"
        files = {".yaml": launch["config_yaml"],
                 ".json": json.dumps(launch, indent=4, separators=(",", ": "), ensure_ascii=False) + "\n",
                 ".sh": docker_run_command(launch, image) + "\n"}
        for suffix, text in files.items():
            changed += _write(boundary.inside(folder, host + suffix), text, 0o644, check)
    return changed


def show_lines(launches, read, role_values, output_dir):
    """The plan as people read it (plan_view), with the driver each node gets: its nvidia_driver_branch or
    rocm_version, else the role's default."""
    drivers = {}
    for host, launch in launches.items():
        vendor = launch["cluster"]["vendor"]
        if vendor == "nvidia":
            drivers[host] = read.get(host, {}).get("nvidia_driver_branch") or \
                role_default("nvidia_driver", "nvidia_driver_branch")
        elif vendor == "amd":
            drivers[host] = role_values.get(host, {}).get("rocm_version") or role_default("rocm", "rocm_version")
    return plan_view.plan_lines(launches, drivers, output_dir)


def stash(launches):
    """One small JSON file per host in this run's local temp dir (Ansible removes it at exit). A
    registered result holding every launch would be copied into every host's variables, and the first
    task after it costs three times a plain task at 512 hosts (docs/benchmarks.md)."""
    folder = tempfile.mkdtemp(prefix="cluster-plan-", dir=C.DEFAULT_LOCAL_TMP)
    for host, launch in launches.items():
        with open(boundary.inside(folder, host + ".json"), "w", encoding="utf-8") as handle:
            json.dump(launch, handle)
    return folder


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset({"output_dir", "show", "take", "overrides", "check_inventory"})

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        # checked here once: site.yml's entry point has no per-host argument validation
        _spec, args = self.validate_argument_spec(argument_spec={"output_dir": {"type": "str", "default": ""},
                                                                 "show": {"type": "bool", "default": False},
                                                                 "overrides": {"type": "dict", "default": {}},
                                                                 "check_inventory": {"type": "bool", "default": False},
                                                                 "take": {"type": "str"}})
        if args["take"]:
            return self._take(result, args["take"], task_vars["inventory_hostname"])
        hostvars = task_vars["hostvars"]
        output_dir = args["output_dir"] or ""
        notes = []
        read = {}
        looked_up = {}

        def vars_of(name):
            # hostvars[name] gathers the host's variables anew on each lookup: once per host
            if name not in looked_up:
                looked_up[name] = hostvars[name]
            return looked_up[name]

        def host_vars(name):
            if name in read:
                return read[name]
            hvars = vars_of(name)
            out = {}
            for key in READ_NAMES:   # only what the plan checks (and role_options()): nothing else is templated
                if key not in hvars:
                    continue
                if key in SECRET_VARS:
                    out[key] = True   # presence only: the plan never reads (or decrypts) a secret
                    continue
                try:
                    out[key] = read_var(hvars, key, self._loader)
                except AnsibleError as exc:
                    if key not in PLAN_OPTIONAL or not isinstance(exc, AnsibleUndefinedVariable):
                        # a refusal line like any other, so the rest of the inventory is still checked
                        raise ClusterError(key, None, "host %s" % name, "its value cannot be resolved: %s"
                                           % one_line(exc.message), "set %s in the inventory, or define what "
                                           "its template needs" % key) from None
                    out[key] = None
                    if exc.message not in notes:
                        notes.append(exc.message)
            read[name] = out
            return out

        owners = {}

        def cluster_of(name):
            # each cluster scans the whole inventory for outsiders: look each host up once
            if name not in owners:
                try:
                    owners[name] = read[name].get("vllm_cluster") if name in read else \
                        vars_of(name).get("vllm_cluster")
                except AnsibleError:   # refused by name when its host is compiled
                    owners[name] = None
            return owners[name]

        # every role variable the hosts set, checked before the plan: all wrong values in one failure
        options = role_options()
        play_hosts = task_vars.get("ansible_play_batch") or [task_vars["inventory_hostname"]]
        if args["check_inventory"]:
            return self._check_inventory(result, task_vars)
        role_values = {host: set_role_vars(vars_of(host), options, self._loader) for host in play_hosts}
        lines = role_vars.check(options, role_values.items())
        lines += proxy_lines(vars_of, play_hosts)
        lines += fleet.cluster_group_problems(cluster_children(hostvars), task_vars["groups"])
        unknown_refused, unknown_warned = unknown_var_lines(vars_of, play_hosts, self._loader)
        lines += unknown_refused
        lines += readiness.name_problems(play_hosts, cluster_children(hostvars) or ())
        launches = {}
        warnings = []
        obs_files = {}
        refused = set()   # clusters (or hosts without one) already refused: each is reported once
        # the hosts of this play (or serial batch); each of their clusters is compiled whole, once. A refused
        # cluster does not stop the others: every problem of the inventory is reported in one run.
        for host in play_hosts:
            if host in launches or host in refused:
                continue
            del notes[:]
            name = cluster_of(host) if isinstance(cluster_of(host), str) else host
            if name in refused:
                continue
            try:
                compiled = compile_cluster(cluster_name_of(host, host_vars(host)), task_vars["groups"], host_vars,
                                           cluster_of, overrides=args["overrides"])
            except ClusterError as exc:
                refused.update([name, host] + list(task_vars["groups"].get(name, ())))
                lines += [line for line in str(exc).splitlines() if line not in lines]
                continue
            summary = next(iter(compiled.values()))["cluster"]   # one summary, shared by the nodes
            summary["warnings"] += notes
            warnings += summary["warnings"]
            launches.update(compiled)
        warnings += fleet.optional_group_warnings(task_vars["groups"])
        try:
            fleet_refused, fleet_warned = fleet_lines(launches, vars_of, read, task_vars["groups"], role_values,
                                                      self._loader)
            lines += fleet_refused
            warnings += fleet_warned + unknown_warned
            if launches and not lines:
                obs_files = observability_files(launches, vars_of, read, task_vars["groups"], play_hosts[0],
                                                self._loader)
                lines += prometheus_lines(vars_of, read, task_vars["groups"], self._loader)
        except ClusterError as exc:
            lines += str(exc).splitlines()
        except observability.ObservabilityError as exc:
            lines.append(str(exc))
        if lines:
            return self._refuse(result, lines)
        try:
            changed = write_review(output_dir, launches, self._task.check_mode) if output_dir else 0
            if output_dir and obs_files:
                changed += len(observability_inputs.write(os.path.join(output_dir, "observability"), obs_files,
                                                          self._task.check_mode))
            folder = stash(launches)
        except boundary.BoundaryError as exc:
            result.update(failed=True, msg="inferops.vllm launch plan: %s" % exc)
            return result
        shown = show_lines(launches, read, role_values, output_dir) if args["show"] else []
        if shown:   # the plan prints each cluster's warnings with the cluster: not twice
            with_clusters = {w for launch in launches.values() for w in launch["cluster"]["warnings"]}
            warnings = [w for w in warnings if w not in with_clusters]
        result.update(changed=bool(changed), stash=folder, warnings=warnings, show=shown)
        if shown:   # the default callback prints an ok result only when asked: the plan is this task's output
            result["_ansible_verbose_always"] = True
        return result

    @staticmethod
    def _refuse(result, lines):
        """A failed result with one refusal per line under `refusals` and a one-line `msg`: ansible-core 2.19+
        prints msg twice (an [ERROR] block, then the result), every callback prints a list one item per line,
        and _ansible_verbose_always asks the default callback to indent the result instead of one JSON line."""
        refusals = [one_line(line) for line in lines]
        result.update(failed=True, variable=refusals[0].split("=", 1)[0].split(" ", 1)[0], refusals=refusals,
                      _ansible_verbose_always=True,
                      msg="inferops.vllm launch plan: %d refusal%s, listed below; no host was touched"
                          % (len(refusals), "" if len(refusals) == 1 else "s"))
        return result

    @staticmethod
    def _check_inventory(result, task_vars):
        """Before the plays over vllm_clusters (a play on localhost): an inventory whose vllm_clusters holds no
        host would skip every play with "no hosts matched" and exit 0."""
        lines = fleet.cluster_group_problems(cluster_children(task_vars["hostvars"]), task_vars["groups"])
        if lines:
            return ActionModule._refuse(result, lines)
        result.update(changed=False)
        return result

    @staticmethod
    def _take(result, folder, host):
        """This host's launch from the run's plan (the run_once task's stash)."""
        try:
            with open(boundary.inside(folder, host + ".json"), encoding="utf-8") as handle:
                launch = json.load(handle)
        except (OSError, boundary.BoundaryError):
            result.update(failed=True, msg="inferops.vllm launch plan: no launch for %s in %s; compile the plan in "
                                           "the same play as this task" % (host, folder))
            return result
        result.update(changed=False, ansible_facts={"vllm_launch": launch})
        return result
