"""Property tests of the node's weights fetch (a fixed budget, INFEROPS_FUZZ_EXAMPLES, and the seed pytest's header
prints, INFEROPS_FUZZ_SEED to replay it): hostile manifest paths are
refused in one line or land only inside the cache; hostile pre-existing cache trees (links to outside
sentinels, fifos, directories where files belong, wrong sizes) end in the right bytes inside the cache or
one line, and the sentinels outside are never modified or deleted."""
import os
import shutil
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch as wf

from test_weights_cache_safety import FILES, REPO, Registry, assert_whole, client, manifest, one_line, tree

SEED = int(os.environ.get("INFEROPS_FUZZ_SEED", "0"))
BUDGET = settings(max_examples=int(os.environ.get("INFEROPS_FUZZ_EXAMPLES", "120")), deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_REGISTRY = []


def registry():
    """One registry for the whole file (Hypothesis calls the test body many times)."""
    if not _REGISTRY:
        _REGISTRY.append(Registry())
    return _REGISTRY[0]


def teardown_module():
    for reg in _REGISTRY:
        reg.close()


class Scratch:
    """A fresh directory per example: cache/, outside/ (the sentinels), model.json."""

    def __enter__(self):
        self.root = Path(tempfile.mkdtemp(prefix="weights-fuzz-"))
        out = self.root / "outside"
        (out / "dir" / "blobs").mkdir(parents=True)
        (out / "dir" / "keep").write_bytes(b"sentinel in a dir")
        (out / "file").write_bytes(b"sentinel file")
        for data, _lfs in FILES.values():  # one outside file of each blob's exact size
            (out / ("size-%d" % len(data))).write_bytes(b"S" * len(data))
        self.before = tree(out)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(str(self.root), ignore_errors=True)


def fetch(root, m, verify="size"):
    return wf.present(client(registry(), retries=0), REPO, m["revision"], str(root / "cache"),
                      str(root / "model.json"), verify=verify, retries=1, lock_timeout=5)


def inside(cache, root):
    """Every path under root outside cache/ and outside/ is one the run was asked to write (model.json)."""
    extra = set(os.listdir(str(root))) - {"cache", "outside", "model.json"}
    assert not extra, extra
    real_cache = os.path.realpath(cache)
    for dirpath, dirs, names in os.walk(cache):
        for name in dirs + names:
            p = os.path.join(dirpath, name)
            if os.path.islink(p) and os.path.exists(p):
                assert os.path.realpath(p).startswith(real_cache + os.sep), p


# --- (a) hostile manifest paths -----------------------------------------------------------------

PIECES = ["a", "b.json", "..", ".", "", " ", "\n", "\x00", "\x1f", "\x7f", "\x85", "\u2028", "\u202e", "é", "模型",
          "x" * 300, "/", "\\", "~", "$HOME", "a" + w.LINK_TMP, "b" + w.INCOMPLETE, "-", "\ud800"]
segment = st.one_of(st.sampled_from(PIECES), st.text(min_size=0, max_size=12))
hostile_path = st.one_of(
    st.lists(segment, min_size=1, max_size=4).map("/".join),
    st.lists(segment, min_size=1, max_size=3).map("".join),
    st.text(max_size=40))


@seed(SEED)
@BUDGET
@given(paths=st.lists(hostile_path, min_size=1, max_size=3, unique=True))
def test_hostile_manifest_paths_are_refused_in_one_line_or_land_inside_the_cache(paths):
    datas = [("%d:%r" % (i, p)).encode("utf-8", "replace") for i, p in enumerate(paths)]
    try:
        files = {p: (d, i % 2 == 0) for i, (p, d) in enumerate(zip(paths, datas))}
        m = manifest(files)
    except w.WeightsError as exc:
        assert one_line(str(exc)), str(exc)
        return
    for p in paths:  # what passed is a plain relative path without control characters or line breaks
        assert not p.startswith("/") and ".." not in p.split("/")
        assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in p), repr(p)
    reg = registry()
    revision = "%040x" % (abs(hash(tuple(paths))) % (1 << 160))
    m = manifest(files, revision)
    reg.publish(files, revision)
    with Scratch() as s:
        try:
            wf.present(client(reg, retries=0), REPO, revision, str(s.root / "cache"), str(s.root / "model.json"),
                       retries=0, lock_timeout=5)
        except (wf.FetchError, w.WeightsError) as exc:
            assert one_line(str(exc)), str(exc)
        else:
            assert w.plan_fetch(str(s.root / "cache"), m, "full")["fetch"] == []
            snap = w.snapshot_dir(str(s.root / "cache"), REPO, revision)
            for p, (data, _lfs) in files.items():
                with open(os.path.join(snap, p), "rb") as fh:
                    assert fh.read() == data
        inside(str(s.root / "cache"), s.root)
        assert tree(s.root / "outside") == s.before


# --- (b) hostile pre-existing cache trees -------------------------------------------------------

KINDS = ["absent", "right", "link-file", "link-size", "link-dir", "dangling", "fifo", "dir", "short", "long", "wrong"]


def make(path, kind, data, out):
    """Put an entry of kind at path (its parent exists and is a real directory)."""
    if kind == "absent":
        return
    if kind in ("right", "short", "long", "wrong"):
        body = {"right": data, "short": data[:len(data) // 2], "long": data + b"!",
                "wrong": bytes(b ^ 1 for b in data)}[kind]
        Path(path).write_bytes(body)
    elif kind == "link-file":
        os.symlink(str(out / "file"), path)
    elif kind == "link-size":
        os.symlink(str(out / ("size-%d" % len(data))), path)
    elif kind == "link-dir":
        os.symlink(str(out / "dir"), path)
    elif kind == "dangling":
        os.symlink(str(out / "nothing-here"), path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        os.makedirs(os.path.join(path, "sub"))
        os.symlink(str(out / "file"), os.path.join(path, "sub", "up"))


DIR_KINDS = ["real", "real", "real", "link-dir", "link-file", "fifo", "file", "absent"]


tree_plan = st.fixed_dictionaries({
    "repo": st.sampled_from(DIR_KINDS), "blobs": st.sampled_from(DIR_KINDS),
    "snapshots": st.sampled_from(DIR_KINDS), "snapshot": st.sampled_from(DIR_KINDS),
    "nested": st.sampled_from(DIR_KINDS),
    "blob": st.lists(st.sampled_from(KINDS), min_size=3, max_size=3),
    "partial": st.lists(st.sampled_from(KINDS), min_size=3, max_size=3),
    "link": st.lists(st.sampled_from(KINDS + ["exact", "exact"]), min_size=3, max_size=3),
    "verify": st.sampled_from(["size", "full"]),
})


def build(cache, out, plan, m):
    """The pre-existing cache the plan describes; links and odd entries point at the sentinels in out."""
    base = w.repo_dir(cache, REPO)
    os.makedirs(os.path.dirname(base))
    if not make_entry_dir(base, plan["repo"], out):
        return
    blobs = os.path.join(base, "blobs")
    if make_entry_dir(blobs, plan["blobs"], out):
        for f, kind, pkind in zip(m["files"], plan["blob"], plan["partial"]):
            data = FILES[f["path"]][0]
            make(os.path.join(blobs, f["etag"]), kind, data, out)
            make(os.path.join(blobs, f["etag"] + w.INCOMPLETE), pkind, data, out)
    snaps = os.path.join(base, "snapshots")
    if not make_entry_dir(snaps, plan["snapshots"], out):
        return
    snap = os.path.join(snaps, m["revision"])
    if not make_entry_dir(snap, plan["snapshot"], out):
        return
    nested_ok = make_entry_dir(os.path.join(snap, "nested"), plan["nested"], out)
    for f, kind in zip(m["files"], plan["link"]):
        where = os.path.join(snap, f["path"])
        if "/" in f["path"]:
            if not nested_ok:
                continue
            os.makedirs(os.path.dirname(where), exist_ok=True)
        if kind == "exact":
            os.symlink(w.link_target(f["path"], f["etag"]), where)
        else:
            make(where, kind, FILES[f["path"]][0], out)


def make_entry_dir(path, kind, out):
    """A directory of the cache as kind; True when it is a real directory to go on filling."""
    if kind == "real":
        os.makedirs(path, exist_ok=True)
        return True
    if kind == "link-dir":
        os.symlink(str(out / "dir"), path)
    elif kind == "link-file":
        os.symlink(str(out / "file"), path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "file":
        Path(path).write_bytes(b"not a directory")
    return False


@seed(SEED)
@BUDGET
@given(plan=tree_plan)
def test_hostile_cache_trees_end_whole_inside_the_cache_or_in_one_line(plan):
    reg = registry()
    m = reg.publish()
    with Scratch() as s:
        cache = str(s.root / "cache")
        build(cache, s.root / "outside", plan, m)
        try:
            fetch(s.root, m, plan["verify"])
        except (wf.FetchError, w.WeightsError) as exc:
            assert one_line(str(exc)), str(exc)
        else:
            if plan["verify"] == "full":
                assert_whole(s.root, m)
            else:  # size trusts a blob of the right size (its name is its checksum): "wrong" may stay
                assert w.plan_fetch(cache, m, "size") == {"fetch": [], "link": [], "remove": [], "missing_bytes": 0}
        inside(cache, s.root)
        assert tree(s.root / "outside") == s.before
