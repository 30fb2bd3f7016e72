# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's services beside vLLM and its routers (routers.py), compiled by the plan before any host: the image's
site registry and the reference each cluster's nodes pull (role vllm_image), the weights' store, registry and
peer-to-peer swarm (role vllm_model), and Prometheus with its scrape targets (roles vllm_prometheus, vllm_exporters).

Each is one typed object. A value its role would refuse on a host after the drivers, the image and the weights are in
place is one plan line here, naming the variable, the value and the fix. The plan writes each as <service>.json
beside the launches, shows it as one block, and hands the roles its decisions: the launch's cluster.pull (the
reference, the digest, the login URL, the mirror's host) and vllm_host_plan.weights (the store host, the registry, the
tracker) and vllm_host_plan.exporter_image, which they apply without deciding them again. A switch is read as the
role reads it (role_settings.flag: "true" from -e too). No Ansible imports here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import gpu_exporter
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_settings import flag
from ansible_collections.inferops.vllm.plugins.module_utils.controller.wrong_values import shown_hosts
from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref, p2p

Setting = Callable[[str, str], Any]   # (host, variable): the host's value, else its role's literal default


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _literal(value: Any) -> bool:
    """A value the plan can use as it is: set, and not a template the role resolves on its host."""
    return isinstance(value, str) and bool(value) and "{{" not in value


def _clusters(launches: Mapping[str, Mapping[str, Any]]) -> Dict[str, Mapping[str, Any]]:
    """Each cluster's summary, by name, in the plan's order."""
    return {launch["cluster"]["name"]: launch["cluster"] for launch in launches.values()}


# --- the image's site registry ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ImageService:
    """vllm_image_mirror and what each cluster pulls through it (image.json)."""
    mirror: str                      # host:port the nodes pull through ('' pulls from the image's own registry)
    mode: str                        # copy (each blob copied once) or proxy (pull-through); '' without a mirror
    host: str                        # the host that fills it (copy mode) and runs it where deploy; '' without one
    deploy: bool                     # vllm_image_mirror_deploy: the collection runs the registry on `host`
    port: Optional[int]              # its port there (deploy only)
    upstream: str                    # where it copies from or proxies to
    pulls: Dict[str, Dict[str, Any]] = field(default_factory=dict)   # cluster -> image, pull_ref, nodes
    exporters: Dict[str, Dict[str, Any]] = field(default_factory=dict)   # node -> its GPU exporter image's pull


def mirror_host(setting: Setting, groups: Mapping[str, Sequence[str]], first: str) -> str:
    """The host that fills the site registry (and runs it with vllm_image_mirror_deploy): the first host of
    vllm_image_mirror_group, else the site's first cluster node (`first`)."""
    group = list(groups.get(_text(setting(first, "vllm_image_mirror_group"))) or ())
    return group[0] if group else first


def pull(image: str, mirror: str, mode: str, host: str) -> Dict[str, Any]:
    """A cluster's `pull` (the launch's cluster.pull, which role vllm_image applies as it is): image_ref.pull_plan's
    reference, digest, repository and login URL, with the site registry, its mode and the host that fills it. An
    image that is not pinned is refused by the cluster's compile; here it is kept as it is."""
    if image_ref.pin_problem(image):
        planned = {"pull_ref": image, "digest": "", "repository": "", "registry": "", "login_url": ""}
    else:
        planned = image_ref.pull_plan(image, mirror)
    return dict(planned, mirror=mirror, mode=mode, mirror_host=host)


def compile_image(launches: Mapping[str, Mapping[str, Any]], setting: Setting,
                  groups: Mapping[str, Sequence[str]], first: str) -> Tuple[Optional[ImageService], List[str]]:
    """The site registry as the cluster heads set it, and each cluster's pull (its summary's, from pull()); first:
    the site's first cluster node, whose values the run-once steps read. Refused: clusters that pull through
    different mirrors (the registry is filled once for the site), and a registry the site runs
    (vllm_image_mirror_deploy) on a port that vllm_image_mirror does not name."""
    clusters = _clusters(launches)
    if not clusters:
        return None, []
    mirrors = {name: _text(setting(c["head"], "vllm_image_mirror")) for name, c in clusters.items()}
    mirror = mirrors[next(iter(mirrors))]
    refusals = []
    if len(set(mirrors.values())) > 1:
        refusals.append(str(ClusterError(
            "vllm_image_mirror", mirror, "clusters %s" % ", ".join(sorted(mirrors)),
            "the clusters pull through different site registries (%s); the site fills one"
            % ", ".join("%s: %s" % (name, value or "none") for name, value in sorted(mirrors.items())),
            "set one vllm_image_mirror for every host of the site (group_vars/all), or none")))
    host = mirror_host(setting, groups, first) if mirror else ""
    deploy = bool(mirror) and flag(setting(first, "vllm_image_mirror_deploy"))
    port = setting(host or first, "vllm_image_mirror_port")
    port = int(port) if deploy and isinstance(port, int) and not isinstance(port, bool) else None
    if port is not None and not mirror.endswith(":%d" % port):
        refusals.append(str(ClusterError(
            "vllm_image_mirror", mirror, "host %s" % host,
            "the site registry that %s runs (vllm_image_mirror_deploy) listens on port %d, which this address does "
            "not name, so no node would reach it" % (host, port),
            "set vllm_image_mirror to %s's address with :%d, or vllm_image_mirror_port to its port" % (host, port))))
    mode = _text(setting(first, "vllm_image_mirror_mode")) if mirror else ""
    upstream = _text(setting(first, "vllm_image_mirror_upstream")) if mirror else ""
    exporters, more = exporter_images(launches, setting, mirror, mode, upstream, host)
    service = ImageService(
        mirror=mirror, mode=mode, host=host, deploy=deploy, port=port, upstream=upstream,
        pulls={name: {"image": c["image"], "pull_ref": c["pull"]["pull_ref"], "nodes": list(c["nodes"])}
               for name, c in clusters.items()}, exporters=exporters)
    return service, refusals + more


def exporter_images(launches: Mapping[str, Mapping[str, Any]], setting: Setting, mirror: str, mode: str,
                    upstream: str, mirror_at: str) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """Each GPU node's exporter image (vllm_exporters_dcgm_image or _amd_image) as role vllm_exporters pulls it
    (vllm_host_plan.exporter_image), through the site registry like vLLM's image (gpu_exporter.image_plan, with the
    registry and the host that fills it); an empty or unpinned image, or one a pull-through registry cannot serve,
    is one refusal naming the hosts."""
    out: Dict[str, Dict[str, Any]] = {}
    found: Dict[str, List[str]] = {}
    for host, launch in launches.items():
        vendor = str(launch["cluster"].get("vendor") or "")
        gpu = setting(host, "vllm_exporters_gpu")
        if vendor not in gpu_exporter.IMAGE_VARIABLE or (gpu is not None and not flag(gpu)):   # unset: on
            continue
        try:
            out[host] = dict(gpu_exporter.image_plan(
                vendor, _text(setting(host, gpu_exporter.IMAGE_VARIABLE[vendor])), mirror, mode or "copy",
                upstream or gpu_exporter.DOCKER_HUB_API), mirror=mirror, mirror_host=mirror_at)
        except gpu_exporter.ExporterError as exc:
            found.setdefault(str(exc), []).append(host)
    return out, ["%s (%s)" % (line, shown_hosts(hosts)) for line, hosts in found.items()]


def image_lines(service: Optional[ImageService]) -> List[str]:
    """The plan's block: where the nodes pull from."""
    if service is None:
        return []
    out = ["== image: what each node pulls (image.json, with the files) =="]
    if service.mirror:
        out.append("site registry %s (mode %s), from %s; %s" % (
            service.mirror, service.mode, service.upstream,
            "%s runs it on port %s" % (service.host, service.port) if service.deploy else
            "the site runs it" + (", %s fills it" % service.host if service.mode == "copy" else "")))
    else:
        out.append("no site registry (vllm_image_mirror): each node pulls from the image's own registry")
    for name, pulled in service.pulls.items():
        out.append("%s: %s" % (name, pulled["pull_ref"]))
    # the exporter's reference with its digest cut to 12 digits (image.json holds it whole): one short line each
    shown = ["%s/%s@%s" % (plan["mirror"] or plan["registry"], plan["repository"], plan["digest"][:19])
             for plan in service.exporters.values()]
    for ref in sorted(set(shown)):
        out.append("GPU exporter on %d nodes: %s" % (shown.count(ref), ref))
    return out


# --- the weights' store, registry and swarm -----------------------------------------------------------------------

@dataclass(frozen=True)
class WeightsService:
    """Where the pinned weights come from (weights.json): the site store and registry, the swarm."""
    registry: str                    # host:port that carries the weights ('' without site-staged weights)
    store_host: str                  # downloads each revision once ('' without site-staged weights)
    models: List[Dict[str, Any]]     # each pinned revision staged through the store: repo, revision, digest, clusters
    sources: Dict[str, str]          # cluster -> site | local | hub (hub: vLLM downloads at start)
    p2p_nodes: List[str]             # nodes that take blobs from the swarm (vllm_model_p2p)
    tracker_address: str             # where the store host's tracker and seeders listen ('' without p2p)
    tracker_port: Optional[int]      # the first revision's tracker port (one more per revision); None without p2p
    peer_ports: str                  # the ports each node's aria2c listens on ('' without p2p)

    def share(self) -> Dict[str, Any]:
        """What role vllm_model applies (vllm_host_plan.weights)."""
        return {"store_host": self.store_host, "registry": self.registry, "tracker_address": self.tracker_address,
                "tracker_port": self.tracker_port}


def store_host(setting: Setting, groups: Mapping[str, Sequence[str]], first: str) -> str:
    """vllm_model_store_host as set, else the first host of vllm_model_store_group, else the site's first node."""
    named = setting(first, "vllm_model_store_host")
    if _literal(named):
        return str(named)
    group = list(groups.get(_text(setting(first, "vllm_model_store_group"))) or ())
    return group[0] if group else first


def registry_of(setting: Setting, host: str) -> str:
    """vllm_model_registry, whose default is vllm_image_mirror."""
    named = setting(host, "vllm_model_registry")
    return str(named) if _literal(named) else _text(setting(host, "vllm_image_mirror"))


def compile_weights(launches: Mapping[str, Mapping[str, Any]], setting: Setting,
                    groups: Mapping[str, Sequence[str]], first: str, address: Callable[[str], Any]
                    ) -> Tuple[Optional[WeightsService], List[str]]:
    """The store, registry and swarm for the clusters the plan compiled; first: the site's first cluster node;
    address(host): a host's vllm_control_address (None where it sets none). Refused here, before any host: weights staged through the site
    store without a registry, clusters staging through different registries, a store host the inventory does not
    hold, and the swarm without an address for its tracker."""
    clusters = _clusters(launches)
    if not clusters:
        return None, []
    sources = {name: _text((c.get("model") or {}).get("source")) or "hub" for name, c in clusters.items()}
    staged = [name for name, source in sources.items() if source == "site"]
    registries = {name: registry_of(setting, clusters[name]["head"]) for name in staged}
    refusals = []
    for name in staged:
        if not registries[name]:
            refusals.append(str(ClusterError(
                "vllm_model_registry", "", "cluster %s" % name,
                "the weights are staged once per site (vllm_model_source: site) but no site registry is set, so "
                "the model play would refuse it after drivers, image and fabric check",
                "set vllm_model_registry (or vllm_image_mirror) to the site registry's host:port, or "
                "vllm_model_source: local or hub")))
    if len(set(filter(None, registries.values()))) > 1:
        refusals.append(str(ClusterError(
            "vllm_model_registry", registries[staged[0]], "clusters %s" % ", ".join(staged),
            "the clusters stage their weights through different registries (%s); the site store fills one"
            % ", ".join("%s: %s" % item for item in sorted(registries.items())),
            "set one vllm_model_registry (or vllm_image_mirror) for every host of the site")))
    store = store_host(setting, groups, first) if staged else ""
    if store and store not in (groups.get("all") or ()) and store not in launches:
        refusals.append(str(ClusterError(
            "vllm_model_store_host", store, "host %s" % first, "no host of the inventory has this name, so no task "
            "can run there", "name a host of the inventory (or of group %s), or leave it empty"
            % _text(setting(first, "vllm_model_store_group")))))
        store = ""   # nothing more is read of a host the inventory lacks
    models: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for name in staged:
        model = clusters[name]["model"]
        entry = models.setdefault((model["repo"], model["revision"]), {
            "repo": model["repo"], "revision": model["revision"],
            "manifest_digest": model.get("manifest_digest") or "", "clusters": []})
        entry["clusters"].append(name)
    swarm = [host for host, launch in launches.items()
             if sources[launch["cluster"]["name"]] in ("site", "local") and flag(setting(host, "vllm_model_p2p"))]
    where, port = "", None
    if swarm and store:
        where = _text(setting(swarm[0], "vllm_model_p2p_address") or address(store))
        found = setting(store, "vllm_model_p2p_port")
        port = int(found) if isinstance(found, int) and not isinstance(found, bool) else None
        if not where:
            refusals.append(str(ClusterError(
                "vllm_model_p2p_address", "", "host %s" % swarm[0],
                "vllm_model_p2p is on, but the store host %s has no address the nodes reach for its tracker" % store,
                "set vllm_model_p2p_address to the store host's IP address that the nodes reach (or its "
                "vllm_control_address)")))
    service = WeightsService(
        registry=next(iter(filter(None, registries.values())), ""), store_host=store,
        models=list(models.values()), sources=sources, p2p_nodes=swarm if store else [], tracker_address=where,
        tracker_port=port, peer_ports=p2p.PEER_PORTS if swarm and store else "")
    return service, refusals


def weights_lines(service: Optional[WeightsService]) -> List[str]:
    """The plan's block: where each cluster's weights come from."""
    if service is None:
        return []
    out = ["== weights: where each cluster's come from (weights.json, with the files) =="]
    for model in service.models:
        out.append("%s@%s for %s: downloaded once by %s into the site registry %s%s" % (
            model["repo"], model["revision"][:12], ", ".join(model["clusters"]), service.store_host, service.registry,
            ", checked against manifest " + model["manifest_digest"] if model["manifest_digest"] else ""))
    if service.p2p_nodes:
        out.append("peer to peer: the tracker and seeders on %s from port %s (one per revision), %d nodes on ports %s"
                   % (service.tracker_address, service.tracker_port, len(service.p2p_nodes), service.peer_ports))
    for name, source in service.sources.items():
        if source == "hub":
            out.append("%s: vLLM downloads the weights from the Hub at start" % name)
        elif source == "local":
            out.append("%s: the nodes hold the weights already (vllm_model_source: local)" % name)
    return out


# --- Prometheus -------------------------------------------------------------------------------------------------

def prometheus_service(servers: Mapping[str, Mapping[str, Any]], jobs: Mapping[str, Sequence[str]]
                       ) -> Dict[str, Any]:
    """prometheus.json: each Prometheus host (where it listens, how long it keeps, its Alertmanagers) and each
    scrape job's targets, as the observability files give them to every Prometheus (the site's own too)."""
    return {"servers": {host: dict(server) for host, server in servers.items()},
            "jobs": {job: list(targets) for job, targets in jobs.items()}}


def prometheus_lines(service: Mapping[str, Any]) -> List[str]:
    """The plan's block: who scrapes what."""
    if not service.get("jobs"):
        return []
    out = ["== prometheus: what is scraped (prometheus.json, observability/) =="]
    for host, server in (service.get("servers") or {}).items():
        out.append("%s: listens on %s, keeps %s%s" % (
            host, server["listen"], server["retention"],
            ", alerts to " + ", ".join(server["alertmanagers"]) if server.get("alertmanagers") else ""))
    if not service.get("servers"):
        out.append("no host of group vllm_prometheus: the site's own Prometheus takes observability/")
    for job, targets in service["jobs"].items():
        out.append("%s: %s" % (job, ", ".join(targets) if targets else "no target"))
    return out


def as_json(service: Any) -> Dict[str, Any]:
    """A service object as its review file holds it."""
    return asdict(service) if hasattr(service, "__dataclass_fields__") else dict(service)
