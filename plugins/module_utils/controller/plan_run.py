# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One plan run over the hosts of a play: every check of the inventory (the roles' variables, misspelt names,
names that become files, the clusters, the fleet, observability), then every cluster's launch. Nothing here
imports Ansible: the plan action hands in a Reader over its hostvars, which templates a value on read and
raises Unresolved where a template cannot be resolved."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    cluster, compile_cache, disagg, firewall, fleet, flows, known_vars, proxy, readiness, redact, role_vars, rollout,
    routers, site_policy, site_services, specs, version_change, vllm_surface, wrong_values)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import (
    DRIVER_VARS, SECRET_ENV, ClusterError, one_line)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import (
    inputs as observability_inputs)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import plan_files as observability
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import prometheus_server
from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan import (
    cluster_name_of, compile_cluster, read_names)

SECRET_VARS = frozenset(SECRET_ENV.values())
# Needed later by other roles, not by the plan: an example inventory may leave them required.
PLAN_OPTIONAL = frozenset({"vllm_image"})
# The roles playbooks/site.yml runs after the plan (tests/unit/test_site_role_vars.py keeps this in step):
# their inventory variables are checked here, before any host is contacted.
SITE_ROLES = ("host_proxy", "vllm_firewall", "node_read", "preflight", "nvidia_driver", "rocm", "container_runtime",
              "vllm_image", "vllm_exporters", "fabric_check", "vllm_model", "vllm_serve", "vllm_watchdog",
              "vllm_router", "vllm_prometheus", "vllm_observability", "smoke_test")
_ROLE_OPTIONS: Dict[str, Tuple[str, Mapping[str, Any]]] = {}


class Unresolved(Exception):
    """A host variable whose template cannot be resolved; undefined: it names a variable nobody set."""

    def __init__(self, message: str, undefined: bool = False):
        super().__init__(message)
        self.message, self.undefined = message, undefined


class Reader:
    """What the plan needs of the inventory, given by the plan action over Ansible's hostvars."""

    def names(self, host: str) -> List[str]:
        raise NotImplementedError

    def has(self, host: str, name: str) -> bool:
        raise NotImplementedError

    def get(self, host: str, name: str) -> Any:
        """The value, templated (None when unset); Unresolved for a template that cannot be resolved."""
        raise NotImplementedError


@dataclass
class Outcome:
    refusals: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    launches: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    observability: Dict[str, str] = field(default_factory=dict)
    flows: List[flows.Flow] = field(default_factory=list)                 # every listener and who reaches it
    firewall: Dict[str, str] = field(default_factory=dict)                # each host's nftables table (firewall.py)
    hosts: Dict[str, Dict[str, Any]] = field(default_factory=dict)        # what each host applies beside its launch
    routers: Dict[str, Dict[str, Any]] = field(default_factory=dict)      # each router's configuration (routers.py)
    services: Dict[str, Any] = field(default_factory=dict)   # image, weights, prometheus (site_services.py)
    read: Dict[str, Dict[str, Any]] = field(default_factory=dict)          # what the plan read, per host
    role_values: Dict[str, Dict[str, Any]] = field(default_factory=dict)   # the role variables hosts set


def secret_names() -> List[str]:
    """The secrets' variables: the launch's (SECRET_VARS) and every no_log option of the roles site.yml runs."""
    names = set(SECRET_VARS)
    for role in SITE_ROLES:
        names.update(name for name, option in specs.options(role).items() if (option or {}).get("no_log"))
    return sorted(names)


def role_options() -> Dict[str, Tuple[str, Mapping[str, Any]]]:
    """{variable: (role, option)} from the main entry point of every role site.yml runs, read once per
    process. Left out: what the plan checks itself (VAR_TYPES, the driver checks, with their own
    messages), the handoffs (facts) and secrets (no_log, SECRET_ENV): never read, so never decrypted nor shown."""
    if not _ROLE_OPTIONS:
        for role in SITE_ROLES:
            for name, option in specs.options(role).items():
                if (name in cluster.VAR_TYPES or name in DRIVER_VARS or name in SECRET_VARS or option.get("no_log")
                        or name in specs.HANDOFFS   # facts one role hands another, not inventory input
                        or name == proxy.VARIABLE):   # checked by proxy.problems, which hides a password
                    continue
                _ROLE_OPTIONS.setdefault(name, (role, option))
    return _ROLE_OPTIONS


def set_role_vars(reader: Reader, host: str, options: Iterable[str]) -> Dict[str, Any]:
    """The role variables a host sets in the inventory (or -e), templated on read; one whose template cannot be
    resolved yet (it needs facts or another play's variables) is skipped and left to its role. Role defaults
    are not in hostvars, so only what the user set is checked."""
    out = {}
    for name in options:
        if not reader.has(host, name):
            continue
        try:
            out[name] = reader.get(host, name)
        except Unresolved:
            continue
    return out


def optional_value(reader: Reader, host: str, name: str, fallback: Any = None) -> Any:
    """The value a host sets, else fallback (also for one that cannot be resolved: its role reports that)."""
    if not reader.has(host, name):
        return fallback
    try:
        return reader.get(host, name)
    except Unresolved:
        return None


def proxy_lines(reader: Reader, hosts: Sequence[str]) -> List[str]:
    """inferops_proxy checked once per distinct value (a site sets it once): one line per wrong value,
    naming the hosts, with any password shown as ***."""
    found: Dict[str, List[str]] = {}
    for host in hosts:
        if not reader.has(host, proxy.VARIABLE):
            continue
        try:
            value = reader.get(host, proxy.VARIABLE)
        except Unresolved:
            continue
        for problem in proxy.problems(value):
            found.setdefault(problem, []).append(host)
    return ["%s (%s)" % (problem, wrong_values.shown_hosts(shown)) for problem, shown in found.items()]


def unknown_var_lines(reader: Reader, hosts: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Misspelt variables (known_vars): (refusals, warnings); inferops_allow_unknown_vars: true on a host
    turns its refusals into warnings."""
    refused, warned = {}, {}
    for host in hosts:
        names = known_vars.unknown(reader.names(host))
        if names:
            allow = bool(optional_value(reader, host, known_vars.ALLOW, False))
            (warned if allow else refused)[host] = names
    return known_vars.lines(refused), known_vars.lines(warned)


def default_of(name: str) -> Any:
    """The role default of a vllm_exporters_* / vllm_observability_* / vllm_prometheus_* / vllm_router_* variable."""
    role = next((r for r in ("vllm_exporters", "vllm_observability", "vllm_prometheus", "vllm_router")
                 if name.startswith(r + "_")), None)
    return specs.role_default(role, name) if role else None


class Plan:
    """The state of one run: each host's variables read once, the role values, the compiled launches."""

    def __init__(self, reader: Reader, groups: Mapping[str, Sequence[str]]):
        self.reader, self.groups = reader, groups
        self.outcome = Outcome()
        self.notes: List[str] = []
        self.owners: Dict[str, Any] = {}
        self.refused_clusters: set = set()
        self.uses: Dict[str, List[fleet.PortUse]] = {}   # every listener of every host (fleet_lines)
        self.addresses: Dict[str, Any] = {}               # each host's own address (flow_table)
        self.jobs: Dict[str, List[str]] = {}              # each scrape job's targets (observability_files)

    def host_vars(self, host: str) -> Dict[str, Any]:
        """What the plan reads of a host (plan.read_names()): nothing else is templated, and a secret only as present."""
        read = self.outcome.read
        if host in read:
            return read[host]
        out: Dict[str, Any] = {}
        for key in read_names():
            if not self.reader.has(host, key):
                continue
            if key in SECRET_VARS:
                out[key] = True   # presence only: the plan never reads (or decrypts) a secret
                continue
            try:
                out[key] = self.reader.get(host, key)
            except Unresolved as exc:
                if key not in PLAN_OPTIONAL or not exc.undefined:
                    # a refusal line like any other, so the rest of the inventory is still checked
                    raise ClusterError(key, None, "host %s" % host, "its value cannot be resolved: %s"
                                       % one_line(exc.message), "set %s in the inventory, or define what "
                                       "its template needs" % key) from None
                out[key] = None
                if exc.message not in self.notes:
                    self.notes.append(exc.message)
        read[host] = out
        return out

    def cluster_of(self, host: str) -> Any:
        # each cluster scans the whole inventory for outsiders: look each host up once
        if host not in self.owners:
            try:
                read = self.outcome.read
                self.owners[host] = read[host].get("vllm_cluster") if host in read else \
                    self.reader.get(host, "vllm_cluster")
            except Unresolved:   # refused by name when its host is compiled
                self.owners[host] = None
        return self.owners[host]

    def pd_sides_outside(self, deployment: str, role: str) -> List[str]:
        """The clusters of group vllm_clusters outside this run (--limit) that are the deployment's `role` side."""
        found = set()
        for host in self.groups.get("vllm_clusters") or ():
            if host in self.outcome.launches:
                continue
            try:
                if (self.reader.get(host, "vllm_pd_deployment") == deployment
                        and self.reader.get(host, "vllm_pd_role") == role):
                    found.add(str(self.cluster_of(host)))
            except Unresolved:
                continue
        return sorted(found)

    def setting(self, host: str, name: str) -> Any:
        """A role variable on a host: what it sets, else its role's literal default."""
        values = self.outcome.role_values
        if host not in values:
            values[host] = set_role_vars(self.reader, host, role_options())
        if name in values[host]:
            return values[host][name]
        options = role_options()
        if name in options:
            return specs.role_default(options[name][0], name)
        return optional_value(self.reader, host, name, default_of(name))

    def address_get(self, host: str) -> Callable[[str], Any]:
        """A getter for observability: the address variables as the plan read them, the rest as the host sets."""
        def get(name: str) -> Any:
            if host in self.outcome.read and name in ("ansible_host", "vllm_control_address"):
                return self.outcome.read[host].get(name)
            return optional_value(self.reader, host, name)
        return get

    def compile(self, hosts: Sequence[str], overrides: Mapping[str, Any]) -> None:
        """Each cluster of the hosts compiled whole, once. A refused cluster does not stop the others: every
        problem of the inventory is reported in one run."""
        out, refused = self.outcome, self.refused_clusters   # clusters (or hosts without one) refused: reported once
        for host in hosts:
            if host in out.launches or host in refused:
                continue
            del self.notes[:]
            name = self.cluster_of(host) if isinstance(self.cluster_of(host), str) else host
            if name in refused:
                continue
            try:
                compiled = compile_cluster(cluster_name_of(host, self.host_vars(host)), self.groups, self.host_vars,
                                           self.cluster_of, overrides=overrides)
            except ClusterError as exc:
                refused.update([name, host] + list(self.groups.get(name, ())))
                out.refusals += [line for line in str(exc).splitlines() if line not in out.refusals]
                continue
            summary = self.site_parts(compiled)
            summary["warnings"] += self.notes
            try:
                before = self.compile_before(host, name, summary, overrides)
            except ClusterError as exc:
                refused.update([name, host] + list(self.groups.get(name, ())))
                out.refusals += ["the launch to roll back to: " + line for line in str(exc).splitlines()]
                continue
            if before:
                self.site_parts(before)
                summary["version_change"] = version_change.compare(before, compiled)
                for node, launch in compiled.items():
                    launch["before"] = before[node]   # the rollback's launch (vllm_rollout), not in the review .json
            out.warnings += summary["warnings"]
            out.launches.update(compiled)

    def site_parts(self, compiled: Mapping[str, Dict[str, Any]]) -> Dict[str, Any]:
        """What the site adds to a cluster's compile: the reference each node pulls (through the site registry when
        vllm_image_mirror names one, vllm_image's rule) and the compile cache's registry. Returns the summary."""
        summary = next(iter(compiled.values()))["cluster"]   # one summary, shared by the nodes
        mirror = str(self.setting(summary["head"], "vllm_image_mirror") or "")
        first = self.first_node()
        summary["pull"] = site_services.pull(
            summary["image"] or "", mirror, str(self.setting(first, "vllm_image_mirror_mode")) if mirror else "",
            site_services.mirror_host(self.setting, self.groups, first) if mirror else "")
        for host, launch in compiled.items():
            # the site compile cache goes through the weights' registry; a site without one keeps each node's
            launch["compile_cache_site"] = compile_cache.with_registry(
                launch["compile_cache_site"],
                str(self.setting(host, "vllm_model_registry") or self.setting(host, "vllm_image_mirror") or ""))
        return summary

    def first_node(self) -> str:
        """The site's first cluster node (group vllm_clusters, whatever --limit leaves): the run-once steps of the
        image and the weights read its values, and a site service without a group of its own runs there."""
        group = list(self.groups.get("vllm_clusters") or ())
        return group[0] if group else next(iter(self.outcome.launches), "")

    def services_lines(self) -> List[str]:
        """The image's site registry and the weights' store and swarm compiled (Outcome.services), and what their
        roles would refuse on a host, as plan lines."""
        launches, first = self.outcome.launches, self.first_node()
        image, refused = site_services.compile_image(launches, self.setting, self.groups, first)
        weights, more = site_services.compile_weights(
            launches, self.setting, self.groups, first,
            lambda host: self.host_vars(host).get("vllm_control_address") if host in launches else
            optional_value(self.reader, host, "vllm_control_address"))
        self.outcome.services.update(image=image, weights=weights)
        return refused + more

    def compile_before(self, host: str, name: str, summary: Mapping[str, Any],
                       overrides: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
        """The cluster's launch as its nodes run it now, where an upgrade moves it to another vLLM
        (vllm_version_before with vllm_image_before): the same inventory compiled for that version and image. {}
        when the version stays."""
        settings = self.host_vars(summary["head"])
        version = settings.get("vllm_version_before") or ""
        if not version or version == summary["vllm_version"]:
            return {}
        if vllm_surface.load(version) is None:
            raise ClusterError("vllm_version_before", version, "cluster %s" % name, "no flag data for this vLLM "
                               "version", "set the version the nodes run now, one of %s, or leave it empty"
                               % ", ".join(vllm_surface.supported_versions()))
        if not settings.get("vllm_image_before"):
            raise ClusterError("vllm_image_before", None, "cluster %s" % name, "an upgrade from vLLM %s names no "
                               "image to roll back to" % version, "set vllm_image_before to the image digest the "
                               "nodes run now, or empty vllm_version_before")
        older = dict(overrides, vllm_version=version, vllm_image=settings["vllm_image_before"], vllm_version_before="",
                     vllm_image_before="")
        return compile_cluster(cluster_name_of(host, self.host_vars(host)), self.groups, self.host_vars,
                               self.cluster_of, overrides=older)

    def fleet_lines(self) -> Tuple[List[str], List[str]]:
        """Across clusters: one machine under two names and ports that collide on a machine (refusals), IMEX set
        up for a launch without a channel, what site.yml will need, the API's exposure (refusals, warnings)."""
        launches, read, setting = self.outcome.launches, self.outcome.read, self.setting
        routers = list(self.groups.get("vllm_routers") or ())
        prometheus = list(self.groups.get("vllm_prometheus") or ())

        def address_vars(host: str) -> Dict[str, Any]:
            out = {}
            for key in ("ansible_host", "vllm_control_address", "ansible_port"):
                try:
                    out[key] = read[host].get(key) if host in read and key != "ansible_port" else \
                        self.reader.get(host, key)
                except Unresolved:
                    out[key] = None
            return out
        hosts = list(dict.fromkeys(list(launches) + routers + prometheus))
        lines = fleet.machine_problems({host: address_vars(host) for host in hosts})
        uses = {}
        for host in hosts:
            uses[host] = fleet.role_ports(listener_groups(host, launches, routers, prometheus,
                                                          lambda name, host=host: setting(host, name)),
                                          lambda name, host=host: setting(host, name))
            if host in launches:
                uses[host] = fleet.launch_ports(launches[host], setting(host, "fabric_check_port")) + uses[host]
        for host, use in self.service_ports():
            uses.setdefault(host, []).append(use)
        lines += fleet.port_problems(uses)
        self.uses = uses
        imex = fleet.imex_warnings(launches, lambda host: setting(host, "nvidia_driver_imex") in (True, "true", "yes"))
        # what site.yml will need, refused here rather than after drivers and runtime
        lines += readiness.image_problems(launches)
        lines += readiness.imex_problems(launches, lambda host: setting(host, "nvidia_driver_imex"))
        refused, notes = readiness.api_problems(launches, lambda host: bool(read.get(host, {}).get("vllm_api_key")),
                                                lambda host: read.get(host, {}).get(readiness.OPEN_API))
        notes += self.downtime_lines(routers)
        return lines + refused, imex + notes

    def service_ports(self) -> List[Tuple[str, fleet.PortUse]]:
        """The site services' listeners on a host the plan named (services_lines first): the site registry on its
        host (vllm_image_mirror_deploy), the peer-to-peer tracker on the store host."""
        out = []
        image, weights = self.outcome.services.get("image"), self.outcome.services.get("weights")
        if image is not None and image.port is not None:
            out.append((image.host, fleet.PortUse(image.port, "the site registry", "vllm_image_mirror_port")))
        if weights is not None and weights.p2p_nodes and weights.tracker_port is not None:
            out.append((weights.store_host, fleet.PortUse(weights.tracker_port, "the peer-to-peer tracker",
                                                          "vllm_model_p2p_port")))
        return out

    def downtime_lines(self, routers: Sequence[str]) -> List[str]:
        """A note per cluster that no router of group vllm_routers fronts: an upgrade or rolling restart stops
        it while it moves (vllm_rollout refuses that unless vllm_rollout_allow_downtime, read on its head)."""
        heads: Dict[str, str] = {}
        for host, launch in self.outcome.launches.items():
            heads.setdefault(launch["cluster"]["name"], launch["cluster"].get("head") or host)

        def accepted(name: str) -> bool:
            try:
                value = self.reader.get(heads[name], rollout.ALLOW_DOWNTIME) \
                    if self.reader.has(heads[name], rollout.ALLOW_DOWNTIME) else None
            except Unresolved:
                return False
            return rollout.accepted(value) is True
        return rollout.downtime_notes([launch["cluster"] for launch in self.outcome.launches.values()],
                                      [{name: self.setting(host, name) for name in rollout.ROUTER_SETTINGS}
                                       for host in routers], accepted)

    def on_controller(self, host: str) -> bool:
        """Whether the host runs on the controller's machine (the lab's and Molecule's nodes): reached over a
        loopback address, or by the local or docker connection."""
        try:
            connection = optional_value(self.reader, host, "ansible_connection")
            address = self.outcome.read.get(host, {}).get("ansible_host") or optional_value(
                self.reader, host, "ansible_host")
        except Unresolved:
            return False
        if str(connection or "").rsplit(".", 1)[-1] in ("local", "docker"):
            return True
        return address is not None and fleet.loopback(str(address))

    def policy_lines(self) -> List[str]:
        """The site policy over the compiled launches and the site's listeners (site_policy)."""
        launches, role_values = self.outcome.launches, self.outcome.role_values
        lines = site_policy.text_lines(launches) + site_policy.model_lines(launches)
        lines += site_policy.address_lines(launches, self.on_controller)
        roots = {host: optional_value(self.reader, host, site_policy.ROOTS_VAR)
                 for host in set(launches) | set(role_values)}
        lines += site_policy.roots_lines(roots) or site_policy.path_lines(
            site_policy.site_paths(launches, role_values), lambda host: roots.get(host) or ())
        clusters = {launch["cluster"]["name"]: launch["cluster"] for launch in launches.values()}
        lines += site_policy.reserved_lines(clusters)
        if launches and self.complete():
            # every cluster compiled (no --limit): each router is compiled here, and its role writes the result
            self.outcome.routers, refused = routers.compile_routers(
                list(self.groups.get("vllm_routers") or ()), specs.own_options("vllm_router"), self.setting,
                list(clusters.values()))
            lines += refused
        p2p = self.p2p_nodes()
        if p2p:
            lines += site_policy.p2p_address_lines(self.setting(p2p[0], "vllm_model_p2p_address"), p2p[0],
                                                   all(self.on_controller(h) for h in launches))
        lines += site_policy.port_range_lines(self.uses, {host: [site_policy.P2P_PEERS] for host in p2p})
        return lines

    def p2p_nodes(self) -> List[str]:
        """The nodes that take weights from the site's swarm (the compiled weights service)."""
        weights = self.outcome.services.get("weights")
        return list(weights.p2p_nodes) if weights is not None else []

    def router_fronts(self, host: str, clusters: Mapping[str, Mapping[str, Any]]) -> List[str]:
        """The clusters whose API a router host reaches: those its explicit workers name, else vllm_router_clusters
        (or every cluster)."""
        explicit = self.setting(host, "vllm_router_workers") or []
        if explicit:
            wanted = {str(url).rstrip("/") for url in explicit}
            return [name for name, summary in clusters.items() if str(summary.get("endpoint")).rstrip("/") in wanted]
        return [str(name) for name in self.setting(host, "vllm_router_clusters") or clusters]

    def flow_table(self) -> List[flows.Flow]:
        """Every listener the plan knows (fleet_lines' uses), SSH and the peer-to-peer range, with who reaches it."""
        launches = self.outcome.launches
        clusters = {launch["cluster"]["name"]: launch["cluster"] for launch in launches.values()}

        def own_address(host: str) -> Any:   # vllm_control_address, else ansible_host, as Prometheus reaches it
            return observability_inputs.address(self.address_get(host))

        def binds(host: str, use: fleet.PortUse) -> Optional[str]:
            launch = launches.get(host) or {}
            address = {"vllm_port": (launch.get("args") or {}).get("host"),
                       "vllm_kv_side_channel_port": (launch.get("env") or {}).get("VLLM_NIXL_SIDE_CHANNEL_HOST"),
                       "vllm_router_port": self.setting(host, "vllm_router_host"),
                       "vllm_router_prometheus_port": self.setting(host, "vllm_router_prometheus_host")
                       or self.setting(host, "vllm_router_host"),
                       "vllm_prometheus_port": self.setting(host, "vllm_prometheus_listen_address") or own_address(host),
                       }.get(use.variable)
            if use.variable.startswith("vllm_exporters_"):
                address = self.setting(host, "vllm_exporters_listen_address") or own_address(host)
            return None if str(address or "") in ("", "0.0.0.0", "::", "[::]") else str(address)

        def ssh_port(host: str) -> Optional[int]:
            if str(optional_value(self.reader, host, "ansible_connection") or "ssh").rsplit(".", 1)[-1] != "ssh":
                return None
            port = optional_value(self.reader, host, "ansible_port")
            return int(port) if isinstance(port, int) or str(port or "").isdigit() else 22
        hosts = list(self.uses)
        self.addresses = {host: own_address(host) for host in hosts}
        return flows.compile_flows(flows.Site(
            uses=self.uses, launches=launches,
            routers={host: self.router_fronts(host, clusters) for host in self.groups.get("vllm_routers") or ()},
            prometheus=list(self.groups.get("vllm_prometheus") or ()),
            p2p=self.p2p_nodes(),
            p2p_range=site_policy.P2P_PEERS,
            ssh_ports={host: port for host, port in ((h, ssh_port(h)) for h in hosts) if port is not None},
            binds=binds))

    def firewall_rules(self) -> Tuple[Dict[str, str], List[str], Dict[str, bool]]:
        """Each host's firewall, compiled from the flow table (flow_table first), a note per open API that it
        leaves open to everyone, and each host's vllm_firewall (read once, for the notes and host_shares);
        FirewallError for a vllm_firewall_allow it cannot use."""
        table = self.outcome.flows
        hosts = list(dict.fromkeys(flow.host for flow in table))
        allow = {host: firewall.allow_networks(optional_value(self.reader, host, firewall.ALLOW)) for host in hosts}
        enabled = {host: self.firewall_on(host) for host in hosts}
        return (firewall.rulesets(table, self.addresses, allow, firewall.peers(self.outcome.launches)),
                firewall.open_notes(table, self.addresses, allow, enabled), enabled)

    def firewall_on(self, host: str) -> bool:
        """vllm_firewall as Ansible's bool reads it ("false" from -e too); a value that is none, role_vars refuses."""
        return rollout.accepted(optional_value(self.reader, host, firewall.ENABLED, True)) is not False

    def host_shares(self, enabled: Mapping[str, bool]) -> Dict[str, Dict[str, Any]]:
        """What each host of the site applies beside its launch: its firewall (role vllm_firewall), present, absent
        (vllm_firewall: false, as firewall_rules read it into `enabled`) or kept as it is (a --limit run compiles part
        of the site, and a table compiled from part of it would shut out the peers it left out)."""
        complete = self.complete()
        out: Dict[str, Dict[str, Any]] = {}
        weights, image = self.outcome.services.get("weights"), self.outcome.services.get("image")
        for host in self.outcome.launches:
            # the store host, the registry and the tracker role vllm_model uses, the GPU exporter's image that
            # vllm_exporters pulls (neither role decides them again)
            out[host] = {"weights": weights.share() if weights is not None else None,
                         "exporter_image": image.exporters.get(host) if image is not None else None}
        for host in self.groups.get("vllm_routers") or ():
            # None: this run compiled part of the site, and the role leaves the router's configuration as it is
            out.setdefault(host, {})["router"] = self.outcome.routers.get(host) if complete else None
        for host, ruleset in self.outcome.firewall.items():
            if not enabled[host]:
                state, why = "absent", "vllm_firewall is false: the host's firewall is the site's"
            elif not complete:
                state, why = "kept", "this run compiled part of the site (--limit): the firewall stays as it is"
            else:
                state, why = "present", ""
            out.setdefault(host, {})["firewall"] = {"state": state, "ruleset": ruleset if state == "present" else "",
                                                    "why": why}
        return out

    def complete(self) -> bool:
        """Whether this run compiled every cluster (no --limit, no refused cluster): what each router serves and who
        reaches each host is then known."""
        return not self.refused_clusters and set(self.groups.get("vllm_clusters") or ()) <= set(self.outcome.launches)

    def observability_files(self, settings_host: str) -> Dict[str, str]:
        """The observability files (targets, scrape configs, rules, dashboards), or ObservabilityError for a bad
        vllm_observability_* / vllm_exporters_* value: checked on every plan, written with output_dir."""
        def getter(host: str) -> Callable[[str], Any]:
            return lambda name: optional_value(self.reader, host, name)
        launches = self.outcome.launches
        addresses = {host: observability_inputs.address(self.address_get(host), host) for host in launches}
        routers = {host: observability_inputs.router(getter(host), default_of, host)
                   for host in self.groups.get("vllm_routers") or ()}
        settings = observability_inputs.settings(getter(settings_host), default_of)
        self.jobs = observability.jobs(launches, addresses, routers, settings)
        return observability.files(launches, addresses, routers, settings)

    def prometheus_lines(self) -> List[str]:
        """Each Prometheus host's server (Outcome.services["prometheus"], with every scrape job's targets), or one
        refusal per bad vllm_prometheus_* value of a host of group vllm_prometheus (role vllm_prometheus would fail on
        it only after the package is installed), naming the host."""
        lines, servers = [], {}
        for host in self.groups.get("vllm_prometheus") or ():
            address_get = self.address_get(host)

            def get(name: str, host: str = host, address_get: Callable[[str], Any] = address_get) -> Any:
                if name in ("ansible_host", "vllm_control_address"):
                    return address_get(name)
                return optional_value(self.reader, host, name, default_of(name))
            settings = {name: get(name) for name in ("vllm_prometheus_listen_address", "vllm_prometheus_port",
                                                     "vllm_prometheus_retention", "vllm_prometheus_alertmanagers")}
            own = observability_inputs.address(get, host)
            try:
                prometheus_server.check(settings, own)
            except prometheus_server.PrometheusSettingError as exc:
                lines.append("%s (host %s)" % (exc, host))
                continue
            servers[host] = {"listen": prometheus_server.listen(settings, own),
                             "retention": settings["vllm_prometheus_retention"],
                             "alertmanagers": list(settings["vllm_prometheus_alertmanagers"] or ())}
        self.outcome.services["prometheus"] = site_services.prometheus_service(
            servers, self.jobs)
        return lines


def listener_groups(host: str, launches: Mapping[str, Any], routers: Sequence[str], prometheus: Sequence[str],
                    setting: Callable[[str], Any]) -> List[str]:
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


def default_marked(line: str, reader: Reader, hosts: Sequence[str], overrides: Mapping[str, Any]) -> str:
    """A refusal about a variable that no host sets (nor cluster_plan_overrides) says that its value is the default:
    "name=value (default; where): ...". The user did not write that value, so the fix is to set the variable."""
    match = re.match(r"([a-z][a-z0-9_]*)=", line)
    name = match.group(1) if match else ""
    if not name or name in overrides or (name not in role_options() and name not in cluster.VAR_TYPES):
        return line
    if any(reader.has(host, name) for host in hosts):
        return line
    head, sep, rest = line.partition(" (")
    if not sep or head.endswith("=None"):   # unset, with no default: the line says so itself
        return line
    return "%s (default; %s" % (head, rest)


def inventory_problems(reader: Reader, groups: Mapping[str, Sequence[str]]) -> List[str]:
    """Before the plays over vllm_clusters (a play on localhost): an inventory whose vllm_clusters holds no host
    would skip every play with "no hosts matched" and exit 0; a cluster left out of it would be skipped."""
    return fleet.cluster_group_problems(groups, Plan(reader, groups).cluster_of)


def shares(out: Outcome, play: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """What each host of the play applies beside its launch (Outcome.hosts); a host the plan compiled nothing for
    keeps its firewall as it is."""
    kept = {"state": "kept", "ruleset": "", "why": "the plan compiled no firewall for this host"}
    return {host: dict(out.hosts.get(host) or {}, firewall=(out.hosts.get(host) or {}).get("firewall") or kept)
            for host in play}


def run(reader: Reader, hosts: Sequence[str], groups: Mapping[str, Sequence[str]],
        overrides: Optional[Mapping[str, Any]] = None) -> Outcome:
    """Every check of the inventory and every launch of the clusters the hosts belong to."""
    plan = Plan(reader, groups)
    out = plan.outcome
    options = role_options()
    out.role_values = {host: set_role_vars(reader, host, options) for host in hosts}
    out.refusals += role_vars.check(options, out.role_values.items())
    out.refusals += proxy_lines(reader, hosts)
    out.refusals += fleet.cluster_group_problems(groups, plan.cluster_of)
    unknown_refused, unknown_warned = unknown_var_lines(reader, hosts)
    out.refusals += unknown_refused
    out.refusals += readiness.name_problems(hosts, sorted({n for n in map(plan.cluster_of, hosts) if isinstance(n, str)}))
    plan.compile(hosts, overrides or {})
    pd_refused, pd_notes = disagg.deployment_problems(out.launches, complete=not plan.refused_clusters,
                                                      elsewhere=plan.pd_sides_outside)
    out.refusals += pd_refused
    out.warnings += pd_notes
    out.warnings += fleet.optional_group_warnings(groups)
    try:
        out.refusals += plan.services_lines()
        fleet_refused, fleet_warned = plan.fleet_lines()
        out.refusals += fleet_refused
        out.refusals += plan.policy_lines()
        out.warnings += fleet_warned + unknown_warned
        if out.launches and not out.refusals:
            out.observability = plan.observability_files(hosts[0])
            out.refusals += plan.prometheus_lines()
            out.flows = plan.flow_table()
            out.firewall, notes, enabled = plan.firewall_rules()
            out.hosts = plan.host_shares(enabled)
            out.warnings += notes
    except ClusterError as exc:
        out.refusals += str(exc).splitlines()
    except (observability.ObservabilityError, firewall.FirewallError) as exc:
        out.refusals.append(str(exc))
    everyone = list(groups.get("all") or ()) or list(hosts)
    out.refusals = [default_marked(line, reader, everyone, overrides or {}) for line in out.refusals]
    # secrets never echoed, whichever check made the line (redact)
    out.refusals = list(dict.fromkeys(redact.line(line) for line in out.refusals))
    out.warnings = [redact.line(line) for line in out.warnings]
    for summary in {id(launch["cluster"]): launch["cluster"] for launch in out.launches.values()}.values():
        summary["warnings"] = [redact.line(line) for line in summary["warnings"]]
    return out
