# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a cluster's weights come from and how they are pinned: the plan's half of the
weights (the vllm_model role stages them). No Ansible imports.

site:  one download per site into a store, fanned out to every node and verified there;
       the nodes serve offline from a read-only cache at one pinned commit.
local: the weights are already in vllm_model_cache_dir (a shared filesystem); verified
       and served offline, read-only, loaded with prefetch (lazy mmap is slow on NFS/Lustre).
hub:   every node downloads at start (vLLM's own behaviour); a branch is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights

SOURCES = ("site", "local", "hub")
# the commit and the manifest digest have the forms the weights engine checks on the nodes
COMMIT, MANIFEST_DIGEST = weights.SHA1, weights.DIGEST
# Env the compiler sets from vllm_model_source, or that the store step owns: a plain
# variable must not undo the pin (HF_HUB_OFFLINE) or send nodes to another hub.
OWNED_ENV = {
    "HF_HUB_OFFLINE": "set vllm_model_source instead (site and local serve offline; hub serves online)",
    "TRANSFORMERS_OFFLINE": "set vllm_model_source instead (site and local serve offline; hub serves online)",
    "HF_ENDPOINT": "set vllm_model_hf_endpoint instead: the store step downloads through it once per site",
}
# What the launch proposes for weights on a shared filesystem; vllm_args may override it.
LOCAL_ARGS = {"safetensors-load-strategy": "prefetch"}


@dataclass(frozen=True)
class ModelSource:
    repo: str
    source: str
    revision: Optional[str]
    manifest_digest: Optional[str]
    cache_dir: str

    @property
    def offline(self) -> bool:
        """The nodes serve staged weights: no Hub at start, the cache read-only."""
        return self.source != "hub"

    def summary(self) -> Dict[str, Any]:
        return {"repo": self.repo, "source": self.source, "revision": self.revision,
                "manifest_digest": self.manifest_digest, "cache_dir": self.cache_dir}


def _resolve_hint(repo: str, revision: Any) -> str:
    ref = revision if isinstance(revision, str) and revision else "main"
    return ("`hf models info %s --revision %s --expand sha` prints the commit (or `git ls-remote "
            "https://huggingface.co/%s %s`)" % (repo, ref, repo, ref))


def problem(settings: Mapping[str, Any], repo: Optional[str]) -> Optional[Tuple[str, Any, str, str]]:
    """(variable, value, problem, fix) for the first thing wrong with the cluster's weights, else None."""
    source = settings.get("vllm_model_source") or "site"
    revision = settings.get("vllm_model_revision")
    digest = settings.get("vllm_model_manifest_digest")
    if source not in SOURCES:
        return ("vllm_model_source", source, "not one of %s" % ", ".join(SOURCES), "set one of %s" % ", ".join(SOURCES))
    if source == "hub":
        if digest:
            return ("vllm_model_manifest_digest", digest, "only staged weights have a manifest (vllm_model_source "
                    "is hub)", "remove it, or set vllm_model_source: site")
        return None
    if not repo or str(repo).startswith(("/", ".")):
        return ("vllm_model", repo, "vllm_model_source %s stages a Hugging Face repository (org/name), not a path"
                % source, "set vllm_model to the repository id, or vllm_model_source: hub for a path baked into "
                "the image")
    if revision is None or revision == "":
        return ("vllm_model_revision", revision, "staged weights are pinned to a commit, like the image to a digest",
                "set vllm_model_revision to the 40-hex commit to serve; " + _resolve_hint(repo, revision))
    if not isinstance(revision, str) or not COMMIT.match(revision):
        return ("vllm_model_revision", revision, "is not a 40-hex commit (a branch or tag can move under a running "
                "cluster, so two nodes could load different weights)",
                "set the commit it points at; " + _resolve_hint(repo, revision))
    if digest is not None and (not isinstance(digest, str) or not MANIFEST_DIGEST.match(digest)):
        return ("vllm_model_manifest_digest", digest, "not sha256:<64 lowercase hex>",
                "set the digest a store step printed, or remove it")
    if digest and source == "local":
        return ("vllm_model_manifest_digest", digest, "weights on a shared filesystem have no store manifest",
                "remove it (local weights are verified against their blob names)")
    return None


def build(settings: Mapping[str, Any], repo: str) -> ModelSource:
    revision = settings.get("vllm_model_revision")
    return ModelSource(repo=repo, source=settings.get("vllm_model_source") or "site",
                       revision=str(revision) if revision not in (None, "") else None,
                       manifest_digest=settings.get("vllm_model_manifest_digest") or None,
                       cache_dir=str(settings["vllm_model_cache_dir"]))


def at_revision(launch: Mapping[str, Any], revision: str) -> Dict[str, Any]:
    """The node's launch serving `revision` instead of the planned one (a rollback to the
    revision still on disk): args, argv and the config file agree, nothing else changes."""
    out = dict(launch)
    planned = (launch.get("args") or {}).get("revision")
    if not revision or not planned or revision == planned:
        return out
    out["args"] = dict(launch["args"], revision=revision)
    argv = list(launch["argv"])
    argv[argv.index("--revision") + 1] = revision
    out["argv"] = argv
    out["config_yaml"] = str(launch["config_yaml"]).replace('\nrevision: "%s"\n' % planned,
                                                            '\nrevision: "%s"\n' % revision)
    cluster = dict(launch["cluster"])
    cluster["model"] = dict(cluster.get("model") or {}, revision=revision)
    out["cluster"] = cluster
    return out
