"""The weights engine's pure parts (module_utils/node/weights.py): the manifest and its OCI form, what a
node's HF cache lacks, free space, filesystem refusals, the node record and pruning."""
import hashlib
import os
import subprocess

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights

REPO, REV = "inferops/tiny-k3", "a" * 40
FILES = {
    "config.json": (b'{"model_type": "tiny"}\n', False),
    "nested/dir/vocab.txt": (b"hello\nworld\n", False),
    "model.safetensors": (os.urandom(3000), True),
}


def entry(path, data, lfs):
    sha256 = hashlib.sha256(data).hexdigest()
    return {"path": path, "size": len(data), "sha256": sha256, "lfs": lfs,
            "etag": sha256 if lfs else weights.git_sha1_bytes(data)}


def manifest(files=None, revision=REV):
    files = FILES if files is None else files
    return weights.build_manifest(REPO, revision, [entry(p, d, lfs) for p, (d, lfs) in files.items()])


def stage(root, files=None, revision=REV):
    """A genuine HF cache of the files, as the fetch leaves it."""
    files = FILES if files is None else files
    m = manifest(files, revision)
    for f in m["files"]:
        blob = weights.blob_path(str(root), REPO, f["etag"])
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        with open(blob, "wb") as fh:
            fh.write(files[f["path"]][0])
        link = os.path.join(weights.snapshot_dir(str(root), REPO, revision), f["path"])
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(weights.link_target(f["path"], f["etag"]), link)
    return m


def by_path(m, path):
    return next(f for f in m["files"] if f["path"] == path)


# --- hashes and the manifest --------------------------------------------------------------------

def test_git_sha1_is_gits_blob_id(tmp_path):
    data = FILES["nested/dir/vocab.txt"][0]
    (tmp_path / "f").write_bytes(data)
    out = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True)
    assert weights.git_sha1_bytes(data) == out.stdout.strip()
    assert weights.file_hashes(str(tmp_path / "f"))[2] == out.stdout.strip()


def test_the_manifest_is_sorted_and_its_digest_is_stable():
    m = manifest()
    assert [f["path"] for f in m["files"]] == ["config.json", "model.safetensors", "nested/dir/vocab.txt"]
    reordered = weights.build_manifest(REPO, REV, list(reversed([entry(p, d, lfs) for p, (d, lfs) in FILES.items()])))
    assert weights.canonical(reordered) == weights.canonical(m)
    assert weights.oci_manifest(reordered) == weights.oci_manifest(m)
    assert weights.parse_manifest(weights.canonical(m)) == m
    # a fixed document has a fixed digest: the bytes are the contract between sites
    fixed = weights.build_manifest(REPO, REV, [{"path": "a", "size": 0, "lfs": False, "sha256": hashlib.sha256().hexdigest(),
                                                "etag": weights.git_sha1_bytes(b"")}])
    assert weights.canonical(fixed) == (
        b'{"files":[{"etag":"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391","lfs":false,"path":"a",'
        b'"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":0}],'
        b'"repo":"inferops/tiny-k3","revision":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",'
        b'"schema":"inferops.vllm/model-manifest/v1"}')
    oci = weights.oci_manifest(fixed)
    assert weights.digest_of(oci) == weights.digest_of(weights.oci_manifest(weights.parse_manifest(weights.canonical(fixed))))
    assert b'"artifactType":"application/vnd.cncf.model.manifest.v1+json"' in oci
    assert b'"org.cncf.model.filepath":"a"' in oci


def test_manifest_problems_name_every_bad_field():
    bad = {"schema": "x", "repo": "noslash", "revision": "main", "files": [
        {"path": "../etc/passwd", "size": 1, "sha256": "0" * 64, "etag": "0" * 64, "lfs": True},
        {"path": "a", "size": -1, "sha256": "zz", "etag": "0" * 40, "lfs": True},
        {"path": "b", "size": 1, "sha256": "0" * 64, "etag": "0" * 64, "lfs": False}]}
    problems = weights.manifest_problems(bad)
    assert "revision 'main' is not a 40-hex commit" in problems
    assert "repo 'noslash' is not org/name" in problems
    assert "file path '../etc/passwd' is not a plain relative path" in problems
    assert "a: size -1 is not a byte count" in problems
    assert "a: an LFS file's etag must be its sha256" in problems
    assert "b: a git file's etag '%s' is not a 40-hex git sha1" % ("0" * 64) in problems
    with pytest.raises(weights.WeightsError, match="not JSON"):
        weights.parse_manifest(b"{")


def test_check_artifact_refuses_another_model_and_foreign_layers():
    m = manifest()
    oci, config = weights.oci_manifest(m), weights.canonical(m)
    assert weights.check_artifact(oci, config, REPO, REV) == m
    with pytest.raises(weights.WeightsError, match="holds inferops/tiny-k3@a+, not inferops/tiny-k3@b+"):
        weights.check_artifact(oci, config, REPO, "b" * 40)
    with pytest.raises(weights.WeightsError, match="config blob does not match"):
        weights.check_artifact(oci, config + b" ", REPO, REV)
    tampered = oci.replace(b'"size":3000', b'"size":3001')
    with pytest.raises(weights.WeightsError, match="layers are not the files"):
        weights.check_artifact(tampered, config, REPO, REV)


def test_names_and_layout():
    assert weights.registry_repository("MoonshotAI/Kimi-K3") == "inferops-models/moonshotai/kimi-k3"
    assert weights.repo_dir("/c", "MoonshotAI/Kimi-K3") == "/c/hub/models--MoonshotAI--Kimi-K3"
    assert weights.link_target("config.json", "e") == "../../blobs/e"
    assert weights.link_target("a/b/c.json", "e") == "../../../../blobs/e"


# --- the verifier -------------------------------------------------------------------------------

def test_a_complete_cache_needs_nothing_at_either_verify_level(tmp_path):
    m = stage(tmp_path)
    for verify in ("size", "full"):
        plan = weights.plan_fetch(str(tmp_path), m, verify)
        assert plan == {"fetch": [], "link": [], "remove": [], "missing_bytes": 0}


def test_an_empty_cache_needs_everything(tmp_path):
    m = manifest()
    plan = weights.plan_fetch(str(tmp_path), m)
    assert [f["path"] for f in plan["fetch"]] == [f["path"] for f in m["files"]]
    assert plan["missing_bytes"] == weights.total_bytes(m)
    assert {link["reason"] for link in plan["link"]} == {"missing"}


def test_a_truncated_blob_is_fetched_again_even_with_size_only(tmp_path):
    m = stage(tmp_path)
    f = by_path(m, "model.safetensors")
    blob = weights.blob_path(str(tmp_path), REPO, f["etag"])
    with open(blob, "r+b") as fh:
        fh.truncate(100)
    plan = weights.plan_fetch(str(tmp_path), m, "size")
    assert [(x["path"], x["reason"]) for x in plan["fetch"]] == [("model.safetensors", "size 100, not 3000")]
    assert plan["remove"] == [blob] and plan["missing_bytes"] == 3000 and plan["link"] == []


def test_a_flipped_byte_is_caught_by_full_only(tmp_path):
    m = stage(tmp_path)
    f = by_path(m, "model.safetensors")
    blob = weights.blob_path(str(tmp_path), REPO, f["etag"])
    data = bytearray(open(blob, "rb").read())
    data[1234] ^= 0x01
    open(blob, "wb").write(bytes(data))
    assert weights.plan_fetch(str(tmp_path), m, "size")["fetch"] == []
    plan = weights.plan_fetch(str(tmp_path), m, "full")
    assert [(x["path"], x["reason"]) for x in plan["fetch"]] == [("model.safetensors", "content does not match its checksum")]


def test_a_bad_git_sha1_is_caught_by_full(tmp_path):
    # same size, other content: a git file is checked against its git sha1 (its name) and its sha256
    m = stage(tmp_path)
    f = by_path(m, "config.json")
    blob = weights.blob_path(str(tmp_path), REPO, f["etag"])
    open(blob, "wb").write(b'{"model_type": "tinY"}\n')
    plan = weights.plan_fetch(str(tmp_path), m, "full")
    assert [x["path"] for x in plan["fetch"]] == ["config.json"]
    # and a manifest whose git etag lies about the content is caught too
    lying = dict(m, files=[dict(x, etag="0" * 40) if x["path"] == "nested/dir/vocab.txt" else x for x in m["files"]])
    os.makedirs(os.path.dirname(weights.blob_path(str(tmp_path), REPO, "0" * 40)), exist_ok=True)
    open(weights.blob_path(str(tmp_path), REPO, "0" * 40), "wb").write(FILES["nested/dir/vocab.txt"][0])
    assert "nested/dir/vocab.txt" in [x["path"] for x in weights.plan_fetch(str(tmp_path), lying, "full")["fetch"]]


def test_a_missing_file_and_a_dangling_symlink(tmp_path):
    m = stage(tmp_path)
    vocab, config = by_path(m, "nested/dir/vocab.txt"), by_path(m, "config.json")
    os.unlink(os.path.join(weights.snapshot_dir(str(tmp_path), REPO, REV), "nested/dir/vocab.txt"))
    os.unlink(weights.blob_path(str(tmp_path), REPO, config["etag"]))  # config.json's link now dangles
    plan = weights.plan_fetch(str(tmp_path), m)
    assert [(x["path"], x["reason"]) for x in plan["fetch"]] == [("config.json", "missing")]
    assert plan["link"] == [{"path": "nested/dir/vocab.txt", "etag": vocab["etag"], "reason": "missing"}]
    # a link that points elsewhere (an absolute path, another blob) is made again
    link = os.path.join(weights.snapshot_dir(str(tmp_path), REPO, REV), "model.safetensors")
    os.unlink(link)
    os.symlink("/nonexistent/blob", link)
    assert {"path": "model.safetensors", "etag": by_path(m, "model.safetensors")["etag"],
            "reason": "points to /nonexistent/blob"} in weights.plan_fetch(str(tmp_path), m)["link"]


def test_a_partial_is_kept_for_resume_and_a_stray_one_removed(tmp_path):
    m = stage(tmp_path)
    f = by_path(m, "model.safetensors")
    blob = weights.blob_path(str(tmp_path), REPO, f["etag"])
    data = open(blob, "rb").read()
    os.unlink(blob)
    open(blob + ".incomplete", "wb").write(data[:1000])
    plan = weights.plan_fetch(str(tmp_path), m)
    assert [(x["path"], x["resume"]) for x in plan["fetch"]] == [("model.safetensors", 1000)]
    assert plan["missing_bytes"] == 2000 and plan["remove"] == []
    # a partial longer than the file cannot be resumed
    open(blob + ".incomplete", "wb").write(data + b"x")
    plan = weights.plan_fetch(str(tmp_path), m)
    assert plan["fetch"][0]["resume"] == 0 and plan["remove"] == [blob + ".incomplete"]
    # beside a complete blob a partial is stray
    open(blob, "wb").write(data)
    plan = weights.plan_fetch(str(tmp_path), m)
    assert plan["fetch"] == [] and plan["remove"] == [blob + ".incomplete"]


def test_verify_snapshot_without_a_manifest(tmp_path):
    m = stage(tmp_path)
    assert weights.verify_snapshot(str(tmp_path), REPO, REV, full=True) == {
        "files": 3, "bytes": weights.total_bytes(m), "problems": []}
    f = by_path(m, "model.safetensors")
    blob = weights.blob_path(str(tmp_path), REPO, f["etag"])
    data = bytearray(open(blob, "rb").read())
    data[0] ^= 0xFF
    open(blob, "wb").write(bytes(data))
    open(blob + ".incomplete", "wb").write(b"x")
    os.unlink(weights.blob_path(str(tmp_path), REPO, by_path(m, "config.json")["etag"]))
    assert weights.verify_snapshot(str(tmp_path), REPO, REV, full=False)["problems"] == [
        "%s.incomplete is a partial download" % blob, "config.json is a dangling symlink (../../blobs/%s)"
        % by_path(m, "config.json")["etag"]]
    full = weights.verify_snapshot(str(tmp_path), REPO, REV, full=True)["problems"]
    assert any(p.startswith("model.safetensors: blob %s hashes to " % f["etag"]) for p in full)
    assert weights.verify_snapshot(str(tmp_path), REPO, "b" * 40)["problems"][0].endswith(
        "does not exist: revision %s is not staged" % ("b" * 40))


# --- space and filesystems ----------------------------------------------------------------------

def test_free_space_counts_missing_bytes_plus_a_margin_of_the_model():
    gb = 10 ** 9
    assert weights.space_problem("/srv/m", 100 * gb, 600 * gb, 131 * gb, 5) == ""  # 100 + 30 <= 131
    text = weights.space_problem("/srv/m", 100 * gb, 600 * gb, 129 * gb, 5)
    assert text == ("/srv/m needs 130.0 GB free (100.0 GB still to fetch + 5% margin of the 600.0 GB model) "
                    "but has 129.0 GB: free 1.0 GB there, or point the cache at a larger disk")
    # a complete cache needs no room beyond its margin
    assert weights.space_problem("/srv/m", 0, 600 * gb, 0, 5) == ""
    # each figure in the unit that shows it: a tiny model is not "0.0 GB", Kimi K3 reads in TB
    small = weights.space_problem("/srv/m", 1_839_953, 1_839_953, 1_000_000, 5)
    assert "needs 1.9 MB free (1.8 MB still to fetch" in small and "but has 1.0 MB: free 932.0 kB there" in small
    assert "the 1.5 TB model" in weights.space_problem("/srv/m", 1_500 * gb, 1_500 * gb, 10 * gb, 5)


MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 253:1 / / rw,relatime - ext4 /dev/vda rw
30 27 0:40 / /srv rw,relatime - xfs /dev/md0 rw
31 30 0:41 / /srv/ram rw,relatime - tmpfs tmpfs rw,size=1g
32 30 0:42 / /srv/ro ro,relatime - ext4 /dev/sdb rw
33 27 0:43 / /mnt/my\\040disk rw - ext4 /dev/sdc ro
34 27 0:44 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw
"""


def test_the_mount_of_a_path_is_the_longest_containing_mount_point(tmp_path):
    mounts = weights.parse_mountinfo(MOUNTINFO)
    assert ("/mnt/my disk", "ext4", True) in mounts
    assert weights.mount_of("/srv/models/hub", mounts) == ("/srv", "xfs", False)
    assert weights.mount_of("/srv/ram/x/y", mounts) == ("/srv/ram", "tmpfs", False)
    assert weights.mount_of("/srvx", mounts) == ("/", "ext4", False)
    assert weights.mount_of("/srv/ro/a", mounts) == ("/srv/ro", "ext4", True)


def test_unfit_filesystems_are_refused_with_the_fix():
    assert weights.fs_problem("/srv/m", ("/srv", "xfs", False)) == ""
    assert weights.fs_problem("/srv/m", ("/srv", "nfs4", False)) == ""
    assert weights.fs_problem("/srv/ram/m", ("/srv/ram", "tmpfs", False)) == (
        "/srv/ram/m is on tmpfs (tmpfs at /srv/ram): it lives in RAM and is lost at reboot; set the model cache "
        "dir to a directory on the node's local disk or a shared filesystem")
    assert "container's overlay layer" in weights.fs_problem("/m", ("/", "overlay", False))
    assert "ramfs" in weights.fs_problem("/m", ("/m", "ramfs", False))
    assert "squashfs" in weights.fs_problem("/m", ("/m", "squashfs", True))
    assert weights.fs_problem("/srv/ro/m", ("/srv/ro", "ext4", True)) == (
        "/srv/ro/m is on a read-only mount (ext4 at /srv/ro): remount it read-write, or set the model cache dir "
        "to a writable disk")


# --- the record and pruning ---------------------------------------------------------------------

def staged(rev, digest="sha256:1"):
    return {"repo": REPO, "revision": rev, "manifest": digest, "bytes": 10, "files": 3, "verified_at": "t"}


def test_the_record_moves_current_to_previous_only_on_a_new_revision():
    one = weights.record_after(None, staged("1" * 40))
    assert one == {"current": staged("1" * 40), "previous": None, "history": ["1" * 40], "failed": []}
    two = weights.record_after(one, staged("2" * 40))
    assert two["current"]["revision"] == "2" * 40 and two["previous"] == staged("1" * 40)
    again = weights.record_after(two, dict(staged("2" * 40), verified_at="later"))
    assert again["previous"] == staged("1" * 40) and again["current"]["verified_at"] == "later"
    back = weights.record_after(again, staged("1" * 40))  # a rollback is a move too
    assert back["previous"]["revision"] == "2" * 40 and back["history"] == ["1" * 40, "2" * 40]
    assert weights.is_current(back, REPO, "1" * 40, "sha256:1")
    assert not weights.is_current(back, REPO, "1" * 40, "sha256:2")
    assert not weights.is_current(None, REPO, "1" * 40, "sha256:1")


def test_a_rollback_makes_the_previous_revision_current_and_the_one_left_failed():
    one, two = "1" * 40, "2" * 40
    moved = weights.record_after(weights.record_after(None, staged(one)), staged(two, "sha256:2"))
    back = weights.record_after_rollback(moved, failed_revision=two, back_to=one)
    assert back["current"] == staged(one) and back["previous"] is None
    assert back["failed"] == [two] and back["history"] == [one, two]  # two stays on disk until pruned
    # a re-run of the same rollback changes nothing; one that does not match the record changes nothing
    assert weights.record_after_rollback(back, two, one) == back
    assert weights.record_after_rollback(moved, failed_revision=two, back_to="3" * 40) == moved
    # a node that never moved (the upgrade failed on another node first) only learns the revision failed
    assert weights.record_after_rollback(weights.record_after(None, staged(one)), two, one)["failed"] == [two]


def test_a_failed_revision_is_refused_with_the_fix_until_retried_on_purpose():
    one, two = "1" * 40, "2" * 40
    back = weights.record_after_rollback(
        weights.record_after(weights.record_after(None, staged(one)), staged(two)), two, one)
    why = weights.failed_refusal(back, REPO, two, allow_failed=False)
    assert two in why and "rolled back" in why and one in why and "vllm_model_retry_failed=true" in why
    assert "vllm_model_revision" in why
    assert weights.failed_refusal(back, REPO, two, allow_failed=True) == ""
    assert weights.failed_refusal(back, REPO, one, allow_failed=False) == ""
    assert weights.failed_refusal(None, REPO, two, allow_failed=False) == ""
    # staged again on purpose, it is no longer known to fail
    retried = weights.record_after(back, staged(two))
    assert retried["failed"] == [] and weights.failed_refusal(retried, REPO, two, allow_failed=False) == ""


def test_prune_keeps_the_most_recent_and_never_current_or_previous():
    record = {"current": staged("c" * 40), "previous": staged("p" * 40), "history": ["c" * 40, "p" * 40, "o" * 40]}
    snaps = {"c" * 40: 1.0, "p" * 40: 2.0, "o" * 40: 3.0, "u" * 40: 9.0, "v" * 40: 5.0}
    assert weights.prune_selection(snaps, record, 2) == ["o" * 40, "u" * 40, "v" * 40]
    assert weights.prune_selection(snaps, record, 3) == ["u" * 40, "v" * 40]
    assert weights.prune_selection(snaps, record, 4) == ["v" * 40]  # unrecorded: newest first
    # keep below 2 still never drops current or previous
    assert weights.prune_selection(snaps, record, 0) == ["o" * 40, "u" * 40, "v" * 40]


def test_prune_drops_blobs_no_kept_snapshot_references():
    blobs = ["a" * 64, "b" * 64, "c" * 40, "d" * 64 + ".incomplete", "a" * 64 + ".incomplete"]
    assert weights.unreferenced_blobs(blobs, ["a" * 64, "c" * 40]) == ["b" * 64, "d" * 64 + ".incomplete"]


def test_prune_removes_old_snapshots_and_only_their_own_blobs(tmp_path):
    from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch

    shared = {"config.json": FILES["config.json"]}
    for rev, extra in (("a" * 40, b"old"), ("b" * 40, b"prev"), ("c" * 40, b"cur")):
        stage(tmp_path, dict(shared, **{"w.safetensors": (extra, True)}), rev)
    blobs = os.path.join(weights.repo_dir(str(tmp_path), REPO), "blobs")
    open(os.path.join(blobs, "f" * 64 + ".incomplete"), "wb").write(b"x")  # a partial left by an old fetch
    record = {"current": staged("c" * 40), "previous": staged("b" * 40), "history": ["c" * 40, "b" * 40, "a" * 40]}
    planned = weights_fetch.prune(str(tmp_path), REPO, record, 2, dry_run=True)
    assert planned == {"revisions": ["a" * 40], "blobs": 2, "bytes": 4}
    assert os.path.isdir(weights.snapshot_dir(str(tmp_path), REPO, "a" * 40))
    assert weights_fetch.prune(str(tmp_path), REPO, record, 2) == planned
    assert sorted(os.listdir(os.path.join(weights.repo_dir(str(tmp_path), REPO), "snapshots"))) == ["b" * 40, "c" * 40]
    assert hashlib.sha256(b"old").hexdigest() not in os.listdir(blobs)
    for rev in ("b" * 40, "c" * 40):
        files = dict(shared, **{"w.safetensors": (b"prev" if rev[0] == "b" else b"cur", True)})
        assert weights.plan_fetch(str(tmp_path), manifest(files, rev), "full")["fetch"] == []


def test_writeback_is_started_through_the_kernel_without_waiting(tmp_path):
    from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch
    assert weights_fetch._SYNC_FILE_RANGE is not None  # Linux glibc, as on every node
    with open(tmp_path / "blob", "wb") as out:
        out.write(b"x" * (1 << 20))
        out.flush()
        weights_fetch.start_writeback(out.fileno(), 0, 1 << 20)
    assert (tmp_path / "blob").stat().st_size == 1 << 20
