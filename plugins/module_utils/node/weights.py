# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Model weights as a pinned, verified artifact: the manifest (our file list), its OCI form in the
site registry, and what a node's Hugging Face cache lacks.

The node cache is a genuine HF cache, so vLLM reads it with HF_HUB_OFFLINE=1 --revision <sha>:
<root>/hub/models--<org>--<name>/{blobs/<etag>, snapshots/<revision>/<path> -> ../../blobs/<etag>, refs/}.
An LFS file's etag is its sha256 and a git file's its git sha1, so a blob's name is its checksum
and a node can verify offline. Stdlib only; runs on the nodes (Python 3.9).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref

SCHEMA = "inferops.vllm/model-manifest/v1"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
ARTIFACT_TYPE = "application/vnd.cncf.model.manifest.v1+json"
CONFIG_TYPE = "application/vnd.cncf.model.config.v1+json"
LAYER_TYPE = "application/vnd.cncf.model.weight.v1.raw"
PATH_ANNOTATION = "org.cncf.model.filepath"
REGISTRY_PREFIX = "inferops-models"
INCOMPLETE = ".incomplete"
# snapshots/<rev>/<path> + LINK_TMP: the new link, renamed over the old one so a reader never sees none
LINK_TMP = ".inferops-tmp"
CHUNK = 1 << 20

# Whole-string rules, used with fullmatch: "$" would also match before a trailing newline.
SHA1 = re.compile(r"\A[0-9a-f]{40}\Z")
SHA256 = re.compile(r"\A[0-9a-f]{64}\Z")
DIGEST = image_ref.DIGEST
REPO = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# Linux limits: one name (NAME_MAX) and a whole path (PATH_MAX), in bytes.
NAME_MAX = 255
PATH_MAX = 4096
# Control (C0, DEL, C1), format (bidi overrides), surrogates and line or paragraph separators: none
# belongs in a file name, and each would break the one-line messages that name the file.
_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
# A cache on these vanishes at reboot (tmpfs, ramfs), sits in a container's layer (overlay) or cannot be written.
REFUSED_FS = {
    "tmpfs": "it lives in RAM and is lost at reboot",
    "ramfs": "it lives in RAM and is lost at reboot",
    "overlay": "it is a container's overlay layer, not the host's disk",
    "squashfs": "it is read-only",
}

Manifest = Dict[str, Any]
Entry = Dict[str, Any]


class WeightsError(ValueError):
    pass


# --- hashes -------------------------------------------------------------------------------------

def git_sha1_bytes(data: bytes) -> str:
    """git's blob id: sha1 of 'blob <size>\\0' + content (the etag of a non-LFS file)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def git_sha1_start(size: int) -> Any:
    return hashlib.sha1(b"blob %d\0" % size)


def file_hashes(path: str, git: bool = True) -> Tuple[int, str, str]:
    """(size, sha256, git sha1 or "") of a file, in one read."""
    size = os.path.getsize(path)
    sha256 = hashlib.sha256()
    sha1 = git_sha1_start(size) if git else None
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            sha256.update(chunk)
            if sha1 is not None:
                sha1.update(chunk)
    return size, sha256.hexdigest(), sha1.hexdigest() if sha1 is not None else ""


# --- the manifest -------------------------------------------------------------------------------

def build_manifest(repo: str, revision: str, files: List[Entry]) -> Manifest:
    """The manifest from file entries {path, size, sha256, etag, lfs}; validated, files sorted by path."""
    doc = {"schema": SCHEMA, "repo": repo, "revision": revision,
           "files": sorted(({"path": f["path"], "size": int(f["size"]), "sha256": f["sha256"],
                             "etag": f["etag"], "lfs": bool(f["lfs"])} for f in files), key=lambda f: f["path"])}
    problems = manifest_problems(doc)
    if problems:
        raise WeightsError("model manifest for %s@%s: %s" % (repo, revision, "; ".join(problems)))
    return doc


def _refused_character(path: str) -> str:
    """The first character a file name must not hold (control, format, separator, surrogate), or ""."""
    for ch in path:
        if unicodedata.category(ch) in _REFUSED_CATEGORIES:
            return ch
    return ""


def _path_problem(path: Any) -> str:
    if not isinstance(path, str) or not path:
        return "a file has no path"
    bad = _refused_character(path)
    if bad:
        return "file path %r holds the control character %r: rename the file in the model repository" % (path, bad)
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or any(p in ("", ".", "..") or not p.strip() for p in parts):
        return "file path %r is not a plain relative path" % path
    if any(p.endswith(LINK_TMP) for p in parts):
        return "file path %r ends in %s, the name the fetcher uses while it links a file" % (path, LINK_TMP)
    encoded = path.encode("utf-8")
    if len(encoded) > PATH_MAX - 512 or any(len(p.encode("utf-8")) > NAME_MAX for p in parts):
        return ("file path %r is longer than Linux allows (%d bytes a name, %d a path)"
                % (path[:80] + ("..." if len(path) > 80 else ""), NAME_MAX, PATH_MAX - 512))
    return ""


def _file_and_directory(paths: List[str]) -> List[str]:
    """Paths that are both a file and another file's directory (a and a/b): no snapshot can hold both."""
    files = set(paths)
    clashes = set()
    for path in paths:
        parts = path.split("/")
        clashes.update("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in files)
    return sorted(clashes)


def manifest_problems(doc: Any) -> List[str]:
    """Every problem with a manifest document, or []."""
    if not isinstance(doc, dict):
        return ["the manifest is not a JSON object"]
    problems = []
    if doc.get("schema") != SCHEMA:
        problems.append("schema is %r, not %s" % (doc.get("schema"), SCHEMA))
    if not isinstance(doc.get("repo"), str) or not REPO.fullmatch(doc["repo"]):
        problems.append("repo %r is not org/name" % doc.get("repo"))
    if not isinstance(doc.get("revision"), str) or not SHA1.fullmatch(doc["revision"]):
        problems.append("revision %r is not a 40-hex commit" % doc.get("revision"))
    files = doc.get("files")
    if not isinstance(files, list) or not files:
        return problems + ["it lists no files"]
    seen = set()
    for f in files:
        if not isinstance(f, dict):
            problems.append("a file entry is not an object")
            continue
        problem = _path_problem(f.get("path"))
        if problem:
            problems.append(problem)
            continue
        where = f["path"]
        if where in seen:
            problems.append("%s is listed twice" % where)
        seen.add(where)
        if not isinstance(f.get("size"), int) or isinstance(f.get("size"), bool) or f["size"] < 0:
            problems.append("%s: size %r is not a byte count" % (where, f.get("size")))
        if not isinstance(f.get("sha256"), str) or not SHA256.fullmatch(f["sha256"]):
            problems.append("%s: sha256 %r is not 64 hex" % (where, f.get("sha256")))
        if not isinstance(f.get("lfs"), bool):
            problems.append("%s: lfs is not true or false" % where)
        elif f["lfs"] and f.get("etag") != f.get("sha256"):
            problems.append("%s: an LFS file's etag must be its sha256" % where)
        elif not f["lfs"] and not (isinstance(f.get("etag"), str) and SHA1.fullmatch(f["etag"])):
            problems.append("%s: a git file's etag %r is not a 40-hex git sha1" % (where, f.get("etag")))
    problems += ["%s is both a file and a directory of other files" % p for p in _file_and_directory(sorted(seen))]
    if [f.get("path") for f in files if isinstance(f, dict)] != sorted(seen) and not problems:
        problems.append("files are not sorted by path")
    return problems


def canonical(doc: Any) -> bytes:
    """The one byte form of a JSON document, so equal content gives equal digests at every site."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parse_manifest(data: bytes) -> Manifest:
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise WeightsError("the model manifest is not JSON: %s" % exc)
    problems = manifest_problems(doc)
    if problems:
        raise WeightsError("the model manifest is not valid: %s" % "; ".join(problems))
    return doc


def total_bytes(manifest: Manifest) -> int:
    return sum(f["size"] for f in manifest["files"])


# --- the OCI artifact ---------------------------------------------------------------------------

def registry_repository(repo: str) -> str:
    """The site registry repository of an HF repo (registries want lowercase paths)."""
    return ("%s/%s" % (REGISTRY_PREFIX, repo)).lower()


def oci_manifest(manifest: Manifest) -> bytes:
    """The OCI image manifest (canonical bytes) of a model: the manifest as config, one raw layer per file."""
    config = canonical(manifest)
    doc = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": ARTIFACT_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": digest_of(config), "size": len(config)},
        "layers": [{"mediaType": LAYER_TYPE, "digest": "sha256:" + f["sha256"], "size": f["size"],
                    "annotations": {PATH_ANNOTATION: f["path"]}} for f in manifest["files"]],
    }
    return canonical(doc)


def check_artifact(oci: bytes, config: bytes, repo: str, revision: str) -> Manifest:
    """The manifest carried by an artifact, after checking that the layers are its files and it is this model."""
    doc = json.loads(oci)
    if doc.get("config", {}).get("digest") != digest_of(config):
        raise WeightsError("the artifact's config blob does not match its digest")
    manifest = parse_manifest(config)
    if (manifest["repo"], manifest["revision"]) != (repo, revision):
        raise WeightsError("the artifact holds %s@%s, not %s@%s"
                           % (manifest["repo"], manifest["revision"], repo, revision))
    if oci_manifest(manifest) != canonical(doc):
        raise WeightsError("the artifact's layers are not the files its manifest lists")
    return manifest


# --- the cache layout ---------------------------------------------------------------------------

def repo_dir(cache_root: str, repo: str) -> str:
    if not isinstance(repo, str) or not REPO.fullmatch(repo):
        raise WeightsError("repo %r is not org/name (letters, digits, . _ -): set the model's repo to its "
                           "Hugging Face id" % (repo,))
    org, name = repo.split("/", 1)
    return os.path.join(cache_root, "hub", "models--%s--%s" % (org, name))


def blob_path(cache_root: str, repo: str, etag: str) -> str:
    return os.path.join(repo_dir(cache_root, repo), "blobs", etag)


def snapshot_dir(cache_root: str, repo: str, revision: str) -> str:
    return os.path.join(repo_dir(cache_root, repo), "snapshots", revision)


def link_target(path: str, etag: str) -> str:
    """The relative symlink target from snapshots/<rev>/<path> to blobs/<etag> (one '..' per directory level)."""
    return "/".join([".."] * (path.count("/") + 2) + ["blobs", etag])


# --- what a cache lacks -------------------------------------------------------------------------

def _content_ok(path: str, f: Entry) -> bool:
    sha256, sha1 = file_hashes(path, git=not f["lfs"])[1:]
    return sha256 == f["sha256"] and (f["lfs"] or sha1 == f["etag"])


def lstat_or_none(path: str) -> Optional[os.stat_result]:
    """The entry itself (a link is not followed), or None when there is none."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def kind_of(st: os.stat_result) -> str:
    """What a cache entry is, in words for a message."""
    mode = st.st_mode
    for test, word in ((stat.S_ISLNK, "a symlink"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a fifo"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return word
    return "a file" if stat.S_ISREG(mode) else "not a file"


def bad_directory(path: str) -> str:
    """Why path cannot be trusted as a directory of the cache (missing, a symlink, not a directory), or ""."""
    st = lstat_or_none(path)
    if st is None:
        return "%s is missing" % path
    if not stat.S_ISDIR(st.st_mode):
        return "%s is %s, not a directory" % (path, kind_of(st))
    return ""


def _first_bad_directory(top: str, parts: List[str]) -> str:
    """The first of top, top/parts[0], top/parts[0]/parts[1]... that is no real directory, as bad_directory says."""
    path = top
    for part in [""] + parts:
        path = os.path.join(path, part) if part else path
        why = bad_directory(path)
        if why:
            return why
    return ""


def repo_directory_problem(cache_root: str, repo: str) -> Tuple[str, str]:
    """(blobs problem, snapshots problem): why the repo's blobs/ or snapshots/ cannot be read without
    following a link ("" when they are real directories). The cache root and its hub/ are the operator's
    (they may be links on purpose); everything below them is the fetcher's and is never followed."""
    base = repo_dir(cache_root, repo)
    return (_first_bad_directory(base, ["blobs"]), _first_bad_directory(base, ["snapshots"]))


def _judge_blob(blob: str, f: Entry, verify: str, blobs_bad: str) -> str:
    """Why blobs/<etag> must be fetched again, or "" when it is a regular file of the right size (and content)."""
    if blobs_bad:
        return "missing (%s)" % blobs_bad
    st = lstat_or_none(blob)
    if st is None:
        return "missing"
    if not stat.S_ISREG(st.st_mode):
        return "%s, not a file" % kind_of(st)
    if st.st_size != f["size"]:
        return "size %d, not %d" % (st.st_size, f["size"])
    if verify == "full" and not _content_ok(blob, f):
        return "content does not match its checksum"
    return ""


def _judge_link(snap: str, f: Entry, snaps_bad: str) -> str:
    """Why snapshots/<rev>/<path> must be made again, or "". Its text must be exactly the relative
    target the fetcher writes: one that merely resolves may resolve anywhere."""
    if snaps_bad:
        return "missing"
    parts = f["path"].split("/")
    if _first_bad_directory(snap, parts[:-1]):
        return "missing"
    where = os.path.join(snap, f["path"])
    st = lstat_or_none(where)
    if st is None:
        return "missing"
    if not stat.S_ISLNK(st.st_mode):
        return "not a symlink"
    text = os.readlink(where)
    if text != link_target(f["path"], f["etag"]):
        return "points to %s" % text
    return ""


def plan_fetch(cache_root: str, manifest: Manifest, verify: str = "size") -> Dict[str, Any]:
    """What the cache lacks for this manifest. verify=size stats only; full also hashes each blob.
    Nothing below the repo's directory is followed: a blob that is a link (to any file of the right
    size) is bad, and a linked blobs/ or snapshot directory holds nothing.

    fetch: [{path, etag, size, lfs, sha256, reason, resume}] blobs to (re)fetch, resume = bytes of a kept
                                                             .incomplete partial to continue from
    link:  [{path, etag, reason}]                           snapshot links to (re)make
    remove: [path]                                          bad blobs and partials (in blobs/) to delete first
    missing_bytes: bytes still to move
    """
    repo, revision = manifest["repo"], manifest["revision"]
    snap = snapshot_dir(cache_root, repo, revision)
    blobs_bad, snaps_bad = repo_directory_problem(cache_root, repo)
    snaps_bad = snaps_bad or bad_directory(snap)
    fetch: List[Entry] = []
    link: List[Entry] = []
    remove: List[str] = []
    judged: Dict[str, str] = {}  # etag -> reason, so a blob two paths share is judged once
    for f in manifest["files"]:
        blob = blob_path(cache_root, repo, f["etag"])
        partial = blob + INCOMPLETE
        seen = f["etag"] in judged
        reason = judged[f["etag"]] if seen else _judge_blob(blob, f, verify, blobs_bad)
        judged[f["etag"]] = reason
        if not seen and not blobs_bad:
            pst = lstat_or_none(partial)
            kept = pst is not None and stat.S_ISREG(pst.st_mode) and pst.st_size <= f["size"]
            if reason and reason != "missing":
                remove.append(blob)
            if pst is not None and (not kept or not reason):
                remove.append(partial)  # not a file, longer than the blob, or a stray beside a complete blob
            if reason:
                fetch.append(dict(f, reason=reason, resume=pst.st_size if kept else 0))
        elif reason and not seen:
            fetch.append(dict(f, reason=reason, resume=0))
        why = _judge_link(snap, f, snaps_bad)
        if why:
            link.append({"path": f["path"], "etag": f["etag"], "reason": why})
    missing = sum(f["size"] - f["resume"] for f in fetch)
    return {"fetch": fetch, "link": link, "remove": remove, "missing_bytes": missing}


def _link_problem(rel: str, text: str, blobs: str) -> str:
    """Why a snapshot link without a manifest is wrong (its text must be the fetcher's exact relative
    target to a checksum-named blob that is a regular file), or ""."""
    etag = text.rsplit("/", 1)[-1]
    if not (SHA1.fullmatch(etag) or SHA256.fullmatch(etag)) or text != link_target(rel, etag):
        return "%s points outside the repo's blobs/ (%s)" % (rel, text)
    st = lstat_or_none(os.path.join(blobs, etag))
    if st is None:
        return "%s is a dangling symlink (%s)" % (rel, text)
    if not stat.S_ISREG(st.st_mode):
        return "%s points to %s, which is %s, not a file" % (rel, os.path.join(blobs, etag), kind_of(st))
    return ""


def verify_snapshot(cache_root: str, repo: str, revision: str, full: bool = False) -> Dict[str, Any]:
    """A cache without a manifest (a shared filesystem filled elsewhere): the snapshot exists, every link
    is the exact relative link to a blob of this repo, no blob is a partial, and with full each blob's
    content hashes to its name. No link below the repo's directory is followed."""
    snap = snapshot_dir(cache_root, repo, revision)
    blobs = os.path.join(repo_dir(cache_root, repo), "blobs")
    problems: List[str] = []
    files, size = 0, 0
    blobs_bad, snaps_bad = repo_directory_problem(cache_root, repo)
    snaps_bad = snaps_bad or bad_directory(snap)
    if snaps_bad:
        if lstat_or_none(snap) is None:
            snaps_bad = "%s does not exist: revision %s is not staged" % (snap, revision)
        return {"files": 0, "bytes": 0, "problems": [snaps_bad]}
    if blobs_bad:
        problems.append(blobs_bad)
    partials = sorted(n for n in os.listdir(blobs) if n.endswith(INCOMPLETE)) if not blobs_bad else []
    problems += ["%s is a partial download" % os.path.join(blobs, n) for n in partials]
    for dirpath, dirs, names in os.walk(snap):  # os.walk lists a linked directory as a name, never enters it
        for name in sorted(names):
            where = os.path.join(dirpath, name)
            rel = os.path.relpath(where, snap)
            if not os.path.islink(where):
                problems.append("%s is not a symlink into blobs/" % rel)
                continue
            problem = "%s: %s" % (rel, blobs_bad) if blobs_bad else _link_problem(rel, os.readlink(where), blobs)
            if problem:
                problems.append(problem)
                continue
            etag = os.readlink(where).rsplit("/", 1)[-1]
            real = os.path.join(blobs, etag)
            files += 1
            size += os.lstat(real).st_size
            if full:
                sha256, sha1 = file_hashes(real, git=bool(SHA1.fullmatch(etag)))[1:]
                if etag not in (sha256, sha1):
                    problems.append("%s: blob %s hashes to %s" % (rel, etag, sha1 if SHA1.fullmatch(etag) else sha256))
        for name in sorted(dirs):
            if os.path.islink(os.path.join(dirpath, name)):
                problems.append("%s is a symlink to a directory, not a link into blobs/"
                                % os.path.relpath(os.path.join(dirpath, name), snap))
    if not files and not problems:
        problems.append("%s holds no files" % snap)
    return {"files": files, "bytes": size, "problems": problems}


# --- the node's filesystem ----------------------------------------------------------------------

def _gb(n: float) -> str:
    """Decimal units a person reads at a glance: 1.8 MB (a test model), 130.0 GB, 1.5 TB (Kimi K3)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return "%.1f %s" % (n / scale, unit)
    return "%d bytes" % n


def space_problem(path: str, missing: int, total: int, free: int, margin_percent: float) -> str:
    """Refusal text when the missing bytes plus margin_percent of the model do not fit in free, or ""."""
    need = missing + int(total * margin_percent / 100.0)
    if not missing or need <= free:  # a complete cache writes nothing
        return ""
    return ("%s needs %s free (%s still to fetch + %g%% margin of the %s model) but has %s: free %s there, "
            "or point the cache at a larger disk"
            % (path, _gb(need), _gb(missing), margin_percent, _gb(total), _gb(free), _gb(need - free)))


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> List[Tuple[str, str, bool]]:
    """(mount point, fstype, read-only) per line of /proc/self/mountinfo."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 6:
            continue
        opts = fields[5].split(",")
        tail = right.split()
        super_opts = tail[2].split(",") if len(tail) > 2 else []
        mounts.append((_unescape(fields[4]), tail[0] if tail else "", "ro" in opts or "ro" in super_opts))
    return mounts


def existing_parent(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.exists(path) and path != os.path.dirname(path):
        path = os.path.dirname(path)
    return path


def mount_of(real: str, mounts: List[Tuple[str, str, bool]]) -> Tuple[str, str, bool]:
    """The mount holding a resolved path (realpath of existing_parent): the longest mount point that
    contains it. A later mount on the same point hides an earlier one, so the last such line wins."""
    best = ("/", "", False)
    for point, fstype, ro in mounts:
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, fstype, ro)
    return best


def fs_problem(path: str, mount: Tuple[str, str, bool]) -> str:
    """Refusal text for a cache on a filesystem unfit for weights, or ""."""
    point, fstype, ro = mount
    if fstype in REFUSED_FS:
        return ("%s is on %s (%s at %s): %s; set the model cache dir to a directory on the node's local disk "
                "or a shared filesystem" % (path, fstype, fstype, point, REFUSED_FS[fstype]))
    if ro:
        return ("%s is on a read-only mount (%s at %s): remount it read-write, or set the model cache dir "
                "to a writable disk" % (path, fstype or "unknown", point))
    return ""


# --- the node's record --------------------------------------------------------------------------

def record_after(record: Optional[Dict[str, Any]], current: Dict[str, Any]) -> Dict[str, Any]:
    """The record once current {repo, revision, manifest, bytes, files, verified_at} is staged: moving to
    another revision pushes the old current to previous; the same revision keeps previous.
    history lists revisions most recent first, for pruning; failed, the revisions a rollout rolled
    back here (one staged again on purpose is no longer known to fail)."""
    record = record or {}
    old = record.get("current")
    same = bool(old) and (old.get("repo"), old.get("revision")) == (current["repo"], current["revision"])
    previous = record.get("previous") if same or not old else old
    history = [current["revision"]] + [r for r in record.get("history") or [] if r != current["revision"]]
    if old and old.get("revision") not in history:
        history.insert(1, old["revision"])
    failed = [r for r in record.get("failed") or [] if r != current["revision"]]
    return {"current": current, "previous": previous, "history": history, "failed": failed}


def record_after_rollback(record: Optional[Dict[str, Any]], failed_revision: str, back_to: str
                          ) -> Dict[str, Any]:
    """The record once a rollout took the node from failed_revision back to back_to (its previous,
    still on disk): back_to is current again, failed_revision is failed, nothing older is known to
    roll back to. Unchanged unless the record is at failed_revision with back_to before it, or
    already rolled back (a re-run)."""
    record = dict(record or {})
    cur, prev = record.get("current") or {}, record.get("previous") or {}
    if cur.get("revision") == failed_revision and prev.get("revision") == back_to:
        record.update(current=prev, previous=None,
                      history=[back_to] + [r for r in record.get("history") or [] if r != back_to])
    elif cur.get("revision") != back_to:
        return record
    failed = list(record.get("failed") or [])
    record["failed"] = failed if failed_revision in failed else failed + [failed_revision]
    return record


def failed_refusal(record: Optional[Dict[str, Any]], repo: str, revision: str, allow_failed: bool) -> str:
    """Why this node must not move to revision (one a rollout rolled back here), or ""."""
    record = record or {}
    cur = record.get("current") or {}
    if allow_failed or revision not in (record.get("failed") or []) or cur.get("revision") == revision:
        return ""
    return ("vllm_model_revision %s of %s was rolled back on this node by an upgrade that failed with it "
            "(its model record lists it as failed; the rollout report in reports/rollout says why). Set "
            "vllm_model_revision back to the revision the node serves (%s), or set vllm_model_retry_failed=true "
            "to try this revision again" % (revision, repo, cur.get("revision") or "none recorded"))


def is_current(record: Optional[Dict[str, Any]], repo: str, revision: str, digest: str) -> bool:
    cur = (record or {}).get("current") or {}
    return (cur.get("repo"), cur.get("revision"), cur.get("manifest")) == (repo, revision, digest)


def prune_selection(snapshots: Dict[str, float], record: Dict[str, Any], keep: int) -> List[str]:
    """Revisions to delete: beyond the keep most recent, by the record's history (unrecorded ones count
    as older, newest mtime first); never the record's current or previous."""
    history = [r for r in record.get("history") or [] if r in snapshots]
    rest = sorted((r for r in snapshots if r not in history), key=lambda r: -snapshots[r])
    ordered = history + rest
    protected = {(record.get(k) or {}).get("revision") for k in ("current", "previous")}
    return [r for r in ordered[max(keep, 0):] if r not in protected]


def unreferenced_blobs(blobs: List[str], kept: List[str]) -> List[str]:
    """Blob names in blobs/ (partials included) that no kept snapshot links to."""
    keep = set(kept)
    return sorted(b for b in blobs if (b[:-len(INCOMPLETE)] if b.endswith(INCOMPLETE) else b) not in keep)
