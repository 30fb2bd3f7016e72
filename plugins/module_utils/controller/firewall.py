# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each host's firewall, compiled from the flow table (flows.py): one nftables table of the collection's own that
lets each listener be reached only by the hosts the table names. Its chain accepts by default, so it filters only
the collection's listeners; SSH, connections already open and the host's own traffic pass, and no other table or
rule of the host is touched. Written beside the launches as firewall/<host>.nft (nft -f replaces the table whole).
No Ansible imports."""

from __future__ import annotations

import ipaddress
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fleet
from ansible_collections.inferops.vllm.plugins.module_utils.controller.flows import CONTROLLER, Flow

TABLE = "inferops_vllm"
ALLOW = "vllm_firewall_allow"
ENABLED = "vllm_firewall"
# Listeners reached from outside the inventory (the controller, clients, a site's own Prometheus): the addresses in
# vllm_firewall_allow reach them; without that list they stay open to everyone, so that no one is locked out.
OUTSIDE_PREFIXES = (CONTROLLER, "clients", "anyone", "the site's Prometheus")

Network = Any   # ipaddress.IPv4Network | ipaddress.IPv6Network


class FirewallError(ValueError):
    """A value the firewall cannot be compiled from: the variable, the value and the fix in one line."""


def allow_networks(value: Any) -> List[Network]:
    """vllm_firewall_allow: addresses or networks (CIDR), each as nftables takes it."""
    if value in (None, ""):
        return []
    if not isinstance(value, (list, tuple)):
        raise FirewallError("%s=%r is not a list: set it to a list of addresses or networks, e.g. [10.0.0.5, "
                            "10.8.0.0/16]" % (ALLOW, value))
    out = []
    for item in value:
        try:
            out.append(ipaddress.ip_network(str(item).strip(), strict=False))
        except ValueError:
            raise FirewallError("%s=%r: %r is not an address or network: write each as 10.0.0.5 or 10.8.0.0/16"
                                % (ALLOW, list(value), item)) from None
    return out


def _network(address: Any) -> Optional[Network]:
    try:
        return ipaddress.ip_network(str(address), strict=False)
    except ValueError:
        return None   # a DNS name: nftables would resolve it once, at load; the listener is left open instead


def sources(flow: Flow, addresses: Mapping[str, Any], allow: Sequence[Network]
            ) -> Tuple[Optional[List[Network]], str]:
    """The networks that may reach a listener, or None for everyone, and why when it is left open."""
    outside = [who for who in flow.reached_by if who.startswith(OUTSIDE_PREFIXES)]
    if outside and not allow:
        return None, "reached from outside the inventory (%s) and %s is empty" % (", ".join(outside), ALLOW)
    nets: List[Network] = list(allow) if outside else []
    for who in flow.reached_by:
        if who.startswith(OUTSIDE_PREFIXES):
            continue
        net = _network(addresses.get(who))
        if net is None:
            return None, "%s's address %r is not an IP address" % (who, addresses.get(who))
        nets.append(net)
    return list(dict.fromkeys(nets)), ""


def _set(nets: Iterable[Network]) -> str:
    """An nftables set: a host as its address, a network as CIDR."""
    return "{ %s }" % ", ".join(str(n.network_address) if n.prefixlen == n.max_prefixlen else str(n) for n in nets)


def peers(launches: Mapping[str, Mapping[str, Any]]) -> Dict[str, List[str]]:
    """{host: the other nodes of its cluster and of its P/D deployment}: they reach each other on any port, since
    NCCL, Gloo and NIXL bootstrap on ports they choose themselves."""
    deployments: Dict[str, List[str]] = {}
    for host, launch in launches.items():
        name = (launch["cluster"].get("pd") or {}).get("deployment")
        if name:
            deployments.setdefault(str(name), []).append(host)
    out = {}
    for host, launch in launches.items():
        cluster = launch["cluster"]
        mates = list(cluster.get("nodes") or ()) + deployments.get(str((cluster.get("pd") or {}).get("deployment")), [])
        out[host] = sorted(set(mates) - {host})
    return out


def _peer_rules(mates: Sequence[str], addresses: Mapping[str, Any]) -> List[str]:
    nets = [_network(addresses.get(mate)) for mate in mates]
    rules = []
    for family, kind in (("ip", 4), ("ip6", 6)):
        chosen = list(dict.fromkeys(n for n in nets if n is not None and n.version == kind))
        if chosen:
            rules.append('%s saddr %s accept comment "its peers, on any port (NCCL, Gloo and NIXL pick their own)"'
                         % (family, _set(chosen)))
    for mate in mates:
        if _network(addresses.get(mate)) is None:
            rules.append("# peer %s (address %r) is not an IP address: its ports are reached as the rules below say"
                         % (mate, addresses.get(mate)))
    return rules


def ruleset(host: str, flows: Sequence[Flow], addresses: Mapping[str, Any], allow: Sequence[Network],
            mates: Sequence[str] = ()) -> str:
    """The host's table, for nft -f: created if missing, deleted, then defined whole (one atomic load). mates: the
    hosts that reach it on any port (peers())."""
    rules: List[str] = _peer_rules(mates, addresses)
    for flow in flows:
        if flow.host != host or flow.variable == "ansible_port" or fleet.loopback(flow.binds):
            continue   # SSH is never filtered; a loopback listener is out of reach anyway
        nets, why = sources(flow, addresses, allow)
        port = flow.port   # a range as nftables writes one: 51413-51612
        label = '"%s"' % flow.purpose.replace('"', "'")
        if nets is None:
            rules.append("# tcp %s (%s) stays open: %s" % (port, flow.purpose, why))
            continue
        for family, kind in (("ip", 4), ("ip6", 6)):
            chosen = [n for n in nets if n.version == kind]
            if chosen:
                rules.append("tcp dport %s %s saddr %s accept comment %s" % (port, family, _set(chosen), label))
        rules.append("tcp dport %s reject with tcp reset comment %s" % (port, label))
    head = ["# inferops.vllm: the firewall of %s, compiled by the plan from its flow table (flows.md, docs/ports.md)."
            % host,
            "# nft -f replaces table inet %s whole; no other table or rule of the host is touched." % TABLE,
            "table inet %s {}" % TABLE, "delete table inet %s" % TABLE, "table inet %s {" % TABLE,
            "\tchain input {", "\t\ttype filter hook input priority filter; policy accept;",
            '\t\tct state established,related accept comment "connections already open, Ansible\'s SSH among them"',
            '\t\tiif "lo" accept comment "the host itself"']
    body = ["\t\t" + rule for rule in rules]
    return "\n".join(head + body + ["\t}", "}"]) + "\n"


def rulesets(flows: Sequence[Flow], addresses: Mapping[str, Any], allow: Mapping[str, Sequence[Network]],
             mates: Optional[Mapping[str, Sequence[str]]] = None) -> Dict[str, str]:
    """{host: its ruleset} for every host of the flow table; allow: each host's vllm_firewall_allow; mates: peers()."""
    hosts = list(dict.fromkeys(flow.host for flow in flows))
    return {host: ruleset(host, flows, addresses, allow.get(host) or (), (mates or {}).get(host) or ())
            for host in hosts}


def open_notes(flows: Sequence[Flow], addresses: Mapping[str, Any], allow: Mapping[str, Sequence[Network]],
               enabled: Optional[Mapping[str, bool]] = None) -> List[str]:
    """A plan note per open API left open to everyone: vllm_firewall_allow is empty, or vllm_firewall is false. A
    router's API is one (vllm-router checks no client key) unless it listens on loopback."""
    out = []
    for flow in flows:
        if flow.variable == "vllm_router_port" and not fleet.loopback(flow.binds):
            nets, _why = sources(flow, addresses, allow.get(flow.host) or ())
            off = enabled is not None and enabled.get(flow.host) is False
            if nets is None or off:
                out.append("router %s: its API (port %s) reaches anyone who reaches the host, since vllm-router checks "
                           "no client key: %s" % (flow.host, flow.port, "close it in the site's own firewall to all but "
                                                  "your clients (%s is false)" % ENABLED if off else
                                                  "set %s on it to your clients' addresses, and its firewall "
                                                  "(firewall/%s.nft) closes it to everyone else" % (ALLOW, flow.host)))
            continue
        if flow.variable == "vllm_port" and any(w.startswith("anyone") for w in flow.reached_by):
            if enabled is not None and enabled.get(flow.host) is False:
                out.append("host %s: its open API (port %s) reaches anyone and %s is false: close it in the site's "
                           "own firewall to all but %s" % (flow.host, flow.port, ENABLED, _inside(flow)))
                continue
            nets, _why = sources(flow, addresses, allow.get(flow.host) or ())
            if nets is None:
                out.append("host %s: its open API (port %s) reaches anyone: set %s on it to the addresses of your "
                           "clients, and its firewall (firewall/%s.nft) closes it to everyone else but %s"
                           % (flow.host, flow.port, ALLOW, flow.host, _inside(flow)))
    return out


def _inside(flow: Flow) -> str:
    hosts = [who for who in flow.reached_by if not who.startswith(OUTSIDE_PREFIXES)]
    return ", ".join(hosts) if hosts else "the controller"


def summary_lines(shares: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """The plan's block: what site.yml does with each host's firewall (plan_run.Plan.host_shares)."""
    by_state: Dict[str, List[str]] = {}
    for host, share in shares.items():
        state = (share.get("firewall") or {}).get("state")
        if state:
            by_state.setdefault(state, []).append(host)
    if not by_state:
        return []
    said = {"present": "site.yml loads it on %s",
            "absent": "vllm_firewall is false on %s: site.yml removes the collection's table there, and the host's "
                      "firewall is the site's",
            "kept": "site.yml leaves %s as they are: this run compiled part of the site (--limit)"}
    return (["== firewall: each host's table (firewall/<host>.nft, docs/ports.md) =="]
            + [said[state] % ", ".join(hosts) for state, hosts in sorted(by_state.items()) if state in said])
