#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: model_fetch
short_description: Stage pinned model weights from the site registry into a node's Hugging Face cache
description:
  - Reads the model's OCI artifact (one raw layer per file, the file manifest as config) from the site registry
    under the tag O(revision), and makes O(cache_dir) a genuine Hugging Face cache of it
    (C(hub/models--ORG--NAME/blobs/ETAG) and C(snapshots/REVISION/PATH) symlinks), which vLLM reads with
    C(HF_HOME=cache_dir), C(HF_HUB_OFFLINE=1) and C(--revision).
  - Only missing or bad blobs are fetched. A partial download (C(blobs/ETAG.incomplete)) is resumed with a Range
    request; each blob is hashed as it streams (sha256, and the git sha1 for non-LFS files) and renamed to its
    final name only when whole and correct.
  - Every registry request has a timeout and a bounded number of retries, so a store that does not answer fails
    within about (O(retries) + 1) x O(timeout) seconds, with the registry named. A store that answers but
    trickles (each read returns within O(timeout)) is ended by the rate floor O(min_rate_mbps) over
    O(rate_window), so a blob's transfer takes at most about its size / O(min_rate_mbps) + O(rate_window).
  - A registry answer that does not fit (416 to a resume, a wrong C(Content-Range), a short body, a reset) fails
    with one line naming the file, the registry and the fix; a 416 first discards the partial and asks for the
    whole blob once.
  - Nothing below C(cache_dir/hub) is followed. A blob, partial or directory of the repository's cache that is a
    symlink, fifo, device or directory where a file belongs is removed (the entry itself, never what a link points
    to) and fetched or made again inside the cache.
  - One run at a time per repository cache. The lock C(cache_dir/.locks/inferops-models--ORG--NAME.lock) is taken
    before the fetch is planned, so a second run waits (at most O(lock_timeout)) and then finds the blobs present.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  state:
    description:
      - V(check) reads the artifact and the cache, and reports what is missing, the free space and any problem
          (filesystem, space, artifact absent); it changes nothing and does not fail on those problems.
      - V(present) fetches what is missing, links the snapshot, writes O(record) once everything is verified, and
          prunes revisions beyond O(keep_revisions). It fails on a problem that O(state=check) reports.
      - V(verified) is for a cache that another party fills (a shared filesystem), without a registry. It checks
          that the snapshot exists, every link resolves and no blob is partial (and with O(verify=full) that each
          blob hashes to its name). It fails with every problem found.
      - V(rolled_back) rewrites only O(record), after a rollout took the node from O(revision) back to
          O(rolled_back_to). That one is current again and O(revision) is listed as failed, so that O(state=check)
          and O(state=present) refuse it unless O(retry_failed). No registry.
    type: str
    choices: [check, present, verified, rolled_back]
    default: present
  registry:
    description: Site registry base URL, for example C(http://store1:5000). Empty for O(state=verified).
    type: str
    default: ""
  repo:
    description: Hugging Face repository, C(ORG/NAME).
    type: str
    required: true
  revision:
    description: The pinned commit (40 hex).
    type: str
    required: true
  cache_dir:
    description: The node's Hugging Face cache root (C(HF_HOME)); the files go under C(hub/).
    type: path
    required: true
  record:
    description: The node's model record (JSON; C(current) and C(previous)).
    type: path
    default: /var/lib/inferops-vllm/model.json
  verify:
    description:
      - V(size) trusts a blob whose name and size match (blob names are checksums, and each blob was hashed when
          it was fetched); V(full) hashes every blob of the revision again.
    type: str
    choices: [size, full]
    default: size
  margin_percent:
    description: Free space to keep beyond the missing bytes, in percent of the whole model.
    type: float
    default: 5
  keep_revisions:
    description: Snapshots of this repository to keep, most recent first; the record's current and previous are never
      pruned.
    type: int
    default: 2
  concurrency:
    description: Files fetched in parallel.
    type: int
    default: 4
  timeout:
    description: Seconds each registry request may wait for an answer.
    type: float
    default: 60
  retries:
    description: Further tries of a request or a broken transfer (with backoff) before the module fails.
    type: int
    default: 3
  expected_digest:
    description: The manifest digest (C(sha256:...)) the artifact must have; it pins the whole file set.
    type: str
    default: ""
  retry_failed:
    description: Stage a revision that the record lists as failed (a rollout rolled it back on this node).
    type: bool
    default: false
  rolled_back_to:
    description: With O(state=rolled_back), the revision the node serves again (the record's previous).
    type: str
    default: ""
  min_rate_mbps:
    description:
      - The slowest a blob's transfer may be, in megabytes (10^6 bytes) per second averaged over O(rate_window),
        after a first O(rate_window) of grace. A slower transfer fails with the rate seen. V(0) turns the floor off
        (then only O(timeout) per read bounds a transfer).
    type: float
    default: 1.0
  rate_window:
    description:
      - Seconds over which O(min_rate_mbps) is averaged, and the grace at the start of each transfer. It is raised to
        at least the time four reads of 4 MiB take at O(min_rate_mbps).
    type: float
    default: 60
  lock_timeout:
    description:
      - Seconds to wait for another run's fetch of this repository into the same O(cache_dir) (the cache lock) before
        failing with the lock file and the process holding it.
    type: float
    default: 3600
  swarm:
    description:
      - With O(state=present), the site's BitTorrent swarm that the store host runs (M(inferops.vllm.model_store)
        O(inferops.vllm.model_store#module:state=seeding)). The missing blobs come from the swarm first, by C(aria2c)
        (Debian package C(aria2)), every node serving the pieces it holds to the others; each blob is then checked
        whole (size, sha256, git sha1) before it is linked into the cache, and whatever the swarm does not bring
        (no aria2c, no seeder, a stall past O(rate_window), a blob that does not match) is fetched from O(registry).
        The node then seeds what it holds until no peer has been downloading for 5 s (at most five times
        O(rate_window)).
      - C(aria2c) writes only into the repository's own staging folder (C(.inferops-p2p), made without following a
        link and emptied of anything but its partial blobs first), removed after the run.
    type: dict
    suboptions:
      announce:
        description: The tracker, C(http://ADDRESS:PORT/announce).
        type: str
        required: true
      torrents:
        description: Each blob's sha256 mapped to its torrent's info-hash (40 hex), as the store's seeding step returns.
        type: dict
        required: true
      bind:
        description: The node's address for BitTorrent (its peers connect to it there); empty for the system's choice.
        type: str
        default: ""
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.check_mode
  - inferops.vllm.attributes.posix
attributes:
  check_mode:
    details: O(state=present) reports what it would fetch, link and prune, and O(state=rolled_back) the record it
      would write, without writing. The other states only read.
  platform:
    details: A node that reaches the site registry (Python 3.9 or later).
"""

EXAMPLES = r"""
- name: See what the node lacks
  inferops.vllm.model_fetch:
    state: check
    registry: http://store1:5000
    repo: inferops/tiny-k3
    revision: 4a1f7b2c9d0e8f7a6b5c4d3e2f1a0b9c8d7e6f5a
    cache_dir: /var/lib/inferops-vllm/huggingface
  register: model_check

- name: Stage the weights
  inferops.vllm.model_fetch:
    registry: http://store1:5000
    repo: inferops/tiny-k3
    revision: 4a1f7b2c9d0e8f7a6b5c4d3e2f1a0b9c8d7e6f5a
    cache_dir: /var/lib/inferops-vllm/huggingface
    expected_digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
"""

RETURN = r"""
digest:
  description: The artifact's manifest digest.
  type: str
  returned: states check and present
  sample: sha256:4db07c16a5b81f57b30c4cbddd750a05f7ebcaeb1538deb75b7ac61d3f7b1374
missing_files:
  description: Files whose blob is missing or bad (path, size, reason, resume_from); null when the artifact is absent.
  type: list
  elements: dict
  returned: states check and present
missing_bytes:
  description: Bytes still to fetch (a kept partial counts as fetched); null when the artifact is absent.
  type: int
  returned: state check
free_bytes:
  description: Free bytes on the cache's filesystem (for unprivileged users).
  type: int
  returned: state check
fstype:
  description: The cache filesystem's type, from /proc/self/mountinfo.
  type: str
  returned: state check
problems:
  description: One line per problem (a revision rolled back here, filesystem unfit, not enough space, artifact
    absent, a bad snapshot), each with the path, the figures and the fix.
  type: list
  elements: str
  returned: states check and verified
record_current:
  description: The record's C(current) entry before this run (repo, revision, manifest, bytes, files, verified_at).
  type: dict
  returned: states check and verified
up_to_date:
  description: Nothing is missing and the record's current entry is this revision with this digest.
  type: bool
  returned: state check
fetched_files:
  description: Blobs fetched (or, in check mode, to fetch).
  type: int
  returned: state present
fetched_bytes:
  description: Bytes moved over the network (in check mode, the bytes to move).
  type: int
  returned: state present
linked:
  description: Snapshot links made.
  type: int
  returned: state present
pruned:
  description: Revisions removed, and the count and bytes of the blobs no kept snapshot used.
  type: dict
  returned: state present
seconds:
  description: Wall time of the run.
  type: float
  returned: state present
flush_seconds:
  description:
    - Time the fetch waited for the disk (each blob's flush and fsync before its rename), summed over the blobs;
      with one blob at a time, its share of RV(seconds) is the disk's share of the run.
  type: float
  returned: state present, when it fetched
p2p:
  description:
    - What the swarm brought (O(swarm)) as C(files), C(bytes), C(seconds), and C(problem), why it brought less than
      every blob (C(off) without O(swarm); the registry fetched the rest).
    - C(seeded_seconds) and C(seeding_ended) say how long the node then served its blobs to the peers still
      downloading, and why it stopped (none downloading for 5 s, or five times O(rate_window)).
  type: dict
  returned: state present, when it fetched
  sample: {"files": 3, "bytes": 9437184, "seconds": 4.1, "problem": "", "seeded_seconds": 6.2,
           "seeding_ended": "no peer has been downloading for 5 s"}
throughput_mbps:
  description: Megabytes (10^6 bytes) per second moved by this run.
  type: float
  returned: state present
record:
  description: The node's record after the run (C(current), C(previous), C(history), C(failed)).
  type: dict
  returned: states present and rolled_back
files:
  description: Files in the snapshot.
  type: int
  returned: state verified
bytes:
  description: Bytes in the snapshot's blobs.
  type: int
  returned: state verified
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights, weights_fetch
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry, one_line


def main():
    module = AnsibleModule(argument_spec={
        "state": {"type": "str", "choices": ["check", "present", "verified", "rolled_back"], "default": "present"},
        "registry": {"type": "str", "default": ""},
        "repo": {"type": "str", "required": True},
        "revision": {"type": "str", "required": True},
        "cache_dir": {"type": "path", "required": True},
        "record": {"type": "path", "default": "/var/lib/inferops-vllm/model.json"},
        "verify": {"type": "str", "choices": ["size", "full"], "default": "size"},
        "margin_percent": {"type": "float", "default": 5},
        "keep_revisions": {"type": "int", "default": 2},
        "concurrency": {"type": "int", "default": 4},
        "timeout": {"type": "float", "default": 60},
        "retries": {"type": "int", "default": 3},
        "expected_digest": {"type": "str", "default": ""},
        "retry_failed": {"type": "bool", "default": False},
        "rolled_back_to": {"type": "str", "default": ""},
        "min_rate_mbps": {"type": "float", "default": 1.0},
        "rate_window": {"type": "float", "default": 60},
        "lock_timeout": {"type": "float", "default": 3600},
        "swarm": {"type": "dict", "options": {
            "announce": {"type": "str", "required": True},
            "torrents": {"type": "dict", "required": True},
            "bind": {"type": "str", "default": ""},
        }},
    }, supports_check_mode=True)
    p = module.params
    if not weights.SHA1.fullmatch(p["revision"]):
        module.fail_json(msg="revision %r is not a 40-hex commit" % p["revision"])
    if not weights.REPO.fullmatch(p["repo"]):
        module.fail_json(msg="repo %r is not ORG/NAME (letters, digits, . _ -): set it to the model's Hugging Face id"
                         % p["repo"])
    what = "%s@%s in %s" % (p["repo"], p["revision"], p["cache_dir"])
    try:
        result = run(module, p, what)
    except (RegistryError, weights_fetch.FetchError, weights.WeightsError) as exc:
        module.fail_json(msg=one_line("staging %s failed: %s" % (what, exc), limit=4000))
    except Exception as exc:  # pylint: disable=broad-except  # a user sees one line, never a traceback
        module.fail_json(msg=one_line("staging %s failed: %s: %s; re-run, and report it if it stays"
                                      % (what, type(exc).__name__, exc), limit=4000))
    module.exit_json(**result)


def run(module, p, what):
    """The state's result; a problem the state reports (verified) fails here, with every problem."""
    if p["state"] == "rolled_back":
        if not weights.SHA1.fullmatch(p["rolled_back_to"]):
            module.fail_json(msg="rolled_back_to %r is not a 40-hex commit" % p["rolled_back_to"])
        return weights_fetch.rolled_back(p["record"], p["revision"], p["rolled_back_to"], dry_run=module.check_mode)
    if p["state"] == "verified":
        result = weights_fetch.verified(p["repo"], p["revision"], p["cache_dir"], p["record"], p["verify"])
        if result["problems"]:
            module.fail_json(msg=one_line("%s is not complete: %s" % (what, "; ".join(result["problems"])),
                                          limit=4000), **result)
        return dict(result, changed=False)
    if not p["registry"]:
        module.fail_json(msg="registry is required with state=%s" % p["state"])
    reg = BoundedRegistry(p["registry"], timeout=p["timeout"], retries=p["retries"])
    if p["state"] == "check":
        result = weights_fetch.check(reg, p["repo"], p["revision"], p["cache_dir"], p["record"], p["verify"],
                                     p["margin_percent"], p["expected_digest"], p["retry_failed"])
        return dict(result, changed=False)
    return weights_fetch.present(reg, p["repo"], p["revision"], p["cache_dir"], p["record"], p["verify"],
                                 p["margin_percent"], p["keep_revisions"], p["concurrency"], p["retries"],
                                 p["expected_digest"], dry_run=module.check_mode, retry_failed=p["retry_failed"],
                                 min_rate_mbps=p["min_rate_mbps"], rate_window=p["rate_window"],
                                 lock_timeout=p["lock_timeout"], swarm=p["swarm"])


if __name__ == "__main__":
    main()
