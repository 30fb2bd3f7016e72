"""Build a local git repository that olah serves as a Hugging Face model repo: the files of a
directory, *.safetensors as LFS (a pointer in git, the object under .git/lfs/objects, as git-lfs
leaves it), a fixed author, committer and date so the commit sha is the same on every machine.

Two later commits change only a README (a new revision that shares every weight blob), so
upgrades move a cluster between revisions: the first commit is the one sites pin.

usage: build_repo.py SRC_DIR DEST_REPO   prints the three commit shas, oldest first, one per line
"""
import hashlib
import os
import shutil
import subprocess
import sys

LFS_PATTERNS = ("*.safetensors",)
GITATTRIBUTES = "".join("%s filter=lfs diff=lfs merge=lfs -text\n" % p for p in LFS_PATTERNS)
IDENTITY = {"GIT_AUTHOR_NAME": "inferops", "GIT_AUTHOR_EMAIL": "ci@inferops.invalid",
            "GIT_COMMITTER_NAME": "inferops", "GIT_COMMITTER_EMAIL": "ci@inferops.invalid",
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(dest, *args):
    env = dict(os.environ, **IDENTITY)
    return subprocess.run(["git", "-C", dest] + list(args), env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def build(src, dest):
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    git(dest, "init", "-q", "-b", "main")
    with open(os.path.join(dest, ".gitattributes"), "w") as fh:
        fh.write(GITATTRIBUTES)
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), "rb") as fh:
            data = fh.read()
        if name.endswith(".safetensors"):
            oid = hashlib.sha256(data).hexdigest()
            obj = os.path.join(dest, ".git", "lfs", "objects", oid[:2], oid[2:4], oid)
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            with open(obj, "wb") as fh:
                fh.write(data)
            data = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid, len(data))).encode()
        with open(os.path.join(dest, name), "wb") as fh:
            fh.write(data)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", "tiny model for the inferops.vllm tests")
    shas = [git(dest, "rev-parse", "HEAD")]
    for n in (2, 3):
        with open(os.path.join(dest, "README.md"), "w") as fh:
            fh.write("# inferops/tiny-k3\n\nRevision %d of the tiny K3-format test model: the weights are unchanged.\n" % n)
        git(dest, "add", "README.md")
        git(dest, "commit", "-q", "--no-gpg-sign", "-m", "revision %d: README only" % n)
        shas.append(git(dest, "rev-parse", "HEAD"))
    return shas


if __name__ == "__main__":
    print("\n".join(build(sys.argv[1], sys.argv[2])))
