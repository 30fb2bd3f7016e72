# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's image record (image.json): the digest it runs, the one before it for rollback,
and the digests that a rollout rolled back, which a converge refuses unless told otherwise.

Record: {"current": ref, "previous": ref | None, "vllm_version": str | None,
         "previous_vllm_version": str | None, "failed": [ref, ...],
         "pulled_at": when the node first had current to run (UTC, the startup report's image phase) | None}
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node.image_ref import ENDS_IN_DIGEST, digest

Record = Dict[str, Any]
# the one line vllm_image's probe prints ({"vllm_version": "0.32.0"} or null), among whatever the image's entrypoint says
_PROBE_LINE = re.compile(r'[{]"vllm_version": [^}]*[}]')


def version_in_probe(output: str) -> Optional[str]:
    """The vLLM version the image's probe printed; None where it printed none (no python3 in the image, no vLLM)."""
    for found in _PROBE_LINE.findall(output or ""):
        try:
            version = json.loads(found).get("vllm_version")
        except ValueError:
            continue
        return version if isinstance(version, str) and version else None
    return None


def failed_with(record: Record, ref: str) -> Optional[str]:
    """The recorded failed reference with ref's digest, or None."""
    return next((f for f in record.get("failed") or [] if digest(f) == digest(ref)), None)


def after_pull(record: Record, ref: str, vllm_version: Optional[str], now: Optional[str] = None) -> Record:
    """The record once the node has ref to run (since `now`): unchanged when it already runs it."""
    if record.get("current") == ref:
        return record
    return {
        "pulled_at": now,
        "current": ref,
        "previous": record.get("current"),
        "vllm_version": vllm_version,
        "previous_vllm_version": record.get("vllm_version"),
        # tried again on purpose: it is no longer known to fail
        "failed": [f for f in record.get("failed") or [] if digest(f) != digest(ref)],
    }


def after_rollback(record: Record) -> Record:
    """The record once the node went back to its previous digest: that one runs again, the
    one it left is failed, and nothing older is known to roll back to."""
    if not record.get("previous"):
        return record
    failed: List[str] = list(record.get("failed") or [])
    if record.get("current") and not failed_with(record, record["current"]):
        failed.append(record["current"])
    return {
        "pulled_at": None,   # the previous image came long before: when, the record does not know
        "current": record["previous"],
        "previous": None,
        "vllm_version": record.get("previous_vllm_version"),
        "previous_vllm_version": None,
        "failed": failed,
    }


def refusal(record: Record, ref: str, node: str, allow_failed: bool) -> str:
    """Why this node must not move to ref (a digest a rollout rolled back here), or ""."""
    failed = failed_with(record, ref)
    if not failed or allow_failed or record.get("current") == ref:
        return ""
    return (
        "vllm_image %s was rolled back on %s by an upgrade that failed with it (%s records it as failed; "
        "the rollout report in reports/rollout says why). Set vllm_image back to the digest the node runs (%s), "
        "or set vllm_image_retry_failed=true to try this digest again."
        % (ref, node, "image.json", record.get("current") or "none recorded")
    )


def to_run(record: Record, previous: bool, unrecorded: str = "") -> str:
    """The image a node runs: the recorded digest, the one before it when rolling back (or "" when there
    is none), or, with no record yet (check mode before the first pull), the reference being pulled."""
    if not record.get("current"):
        return unrecorded or ""
    return (record.get("previous") if previous else record["current"]) or ""


def choose(result: Dict[str, Any], previous: bool, node: str, path: str) -> Tuple[str, str]:
    """The image a node runs next from an image_record result (its to_run, or rollback_to when rolling back), and
    the refusal with the fix where that is no pinned reference ("" when there is one)."""
    image = (result.get("rollback_to") if previous else result.get("to_run")) or ""
    if ENDS_IN_DIGEST.match(image):
        return image, ""
    return image, "%s has %s (%s). Run the vllm_image role first." % (
        node, "no previous digest to roll back to" if previous else "no pulled image", path)
