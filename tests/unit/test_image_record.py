"""A node's image record across pulls, a rollback and a retry (module_utils/node/image_record.py, the image_record
module)."""
import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_record

OLD = "r.site:5000/vllm/vllm-openai@sha256:" + "a" * 64
NEW = "r.site:5000/vllm/vllm-openai@sha256:" + "b" * 64
NEW_UPSTREAM = "vllm/vllm-openai@sha256:" + "b" * 64
ROOT = Path(__file__).resolve().parents[2]


def upgraded() -> dict:
    first = image_record.after_pull({}, OLD, "0.31.0", "2026-12-01T10:00:00Z")
    return image_record.after_pull(first, NEW, "0.32.0", "2026-12-05T10:00:00Z")


def test_a_pull_keeps_the_digest_before_for_rollback():
    record = upgraded()
    assert record == {"current": NEW, "previous": OLD, "vllm_version": "0.32.0", "previous_vllm_version": "0.31.0",
                      "failed": [], "pulled_at": "2026-12-05T10:00:00Z"}
    assert image_record.after_pull(record, NEW, "0.32.0") is record   # a converged node: no write


def test_a_rollback_runs_the_previous_digest_again_and_marks_the_one_it_left():
    record = image_record.after_rollback(upgraded())
    assert record == {"current": OLD, "previous": None, "vllm_version": "0.31.0", "previous_vllm_version": None,
                      "failed": [NEW], "pulled_at": None}
    # a second rollback has nothing older to go to and changes nothing
    assert image_record.after_rollback(record) == record


def test_a_converge_refuses_the_rolled_back_digest_with_the_fix():
    record = image_record.after_rollback(upgraded())
    why = image_record.refusal(record, NEW_UPSTREAM, "gpu-a1", allow_failed=False)   # same digest, no mirror
    assert "was rolled back on gpu-a1" in why
    assert "Set vllm_image back to the digest the node runs (%s)" % OLD in why
    assert "vllm_image_retry_failed=true" in why
    assert image_record.refusal(record, OLD, "gpu-a1", allow_failed=False) == ""
    assert image_record.refusal(record, NEW, "gpu-a1", allow_failed=True) == ""


def test_a_deliberate_retry_forgets_the_failure():
    record = image_record.after_pull(image_record.after_rollback(upgraded()), NEW, "0.32.0")
    assert record["current"] == NEW and record["previous"] == OLD and record["failed"] == []


def test_an_old_record_without_failures_or_versions_still_works():
    legacy = {"current": NEW, "previous": OLD, "vllm_version": "0.32.0"}
    assert image_record.after_rollback(legacy)["failed"] == [NEW]
    assert image_record.refusal(legacy, NEW, "n", allow_failed=False) == ""
    assert image_record.after_rollback({"current": NEW, "previous": None}) == {"current": NEW, "previous": None}


def test_the_image_to_run_is_current_or_previous_on_rollback():
    record = upgraded()
    assert image_record.to_run(record, previous=False, unrecorded="x") == NEW
    assert image_record.to_run(record, previous=True) == OLD
    # after the rollback there is nothing older to go back to
    assert image_record.to_run(image_record.after_rollback(record), previous=True) == ""
    # no record yet (check mode before the first pull): the reference being pulled
    assert image_record.to_run({}, previous=False, unrecorded=NEW_UPSTREAM) == NEW_UPSTREAM
    assert image_record.to_run({}, previous=True) == ""


# --- the image_record module on this machine, as a node runs it ----------------------------------------------------

def module(tmp_path, has_image: bool, check: bool = False, **args) -> dict:
    """One image_record run as Ansible runs it on a node (its arguments file, this Python); `docker image inspect`
    answers as a node that has the image by that digest (or not) would."""
    docker = tmp_path / "bin" / "docker"
    docker.parent.mkdir(exist_ok=True)
    docker.write_text("#!/bin/sh\n" + ("echo '[{\"Id\": \"sha256:1\", \"RepoDigests\": [\"%s\"]}]'\n" % args.get("ref", "")
                                       if has_image else "echo 'Error: No such image' >&2; exit 1\n"))
    docker.chmod(0o755)
    args.setdefault("path", str(tmp_path / "state" / "image.json"))
    params = tmp_path / "args.json"
    params.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(args, _ansible_check_mode=check, _ansible_diff=check)}))
    env = dict(os.environ, PATH="%s:%s" % (docker.parent, os.environ["PATH"]), PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-m", "ansible_collections.inferops.vllm.plugins.modules.image_record",
                          str(params)], env=env, capture_output=True, text=True, check=False)
    return json.loads(out.stdout)


def test_the_module_records_a_pull_whole_and_refuses_a_rolled_back_digest(tmp_path):
    record = tmp_path / "state" / "image.json"
    # the node lacks the image: nothing recorded, the pull is due; check mode writes nothing either
    first = module(tmp_path, False, ref=OLD)
    assert (first["pull_needed"], first["changed"], first["to_run"]) == (True, False, OLD) and not record.exists()
    assert module(tmp_path, True, check=True, ref=OLD)["changed"] is True and not record.exists()
    # pulled: recorded, 0644, in the state directory it creates, as to_nice_json writes it
    pulled = module(tmp_path, True, ref=OLD, version_probe='{"vllm_version": "0.31.0"}')
    assert pulled["changed"] and pulled["to_run"] == OLD and pulled["rollback_to"] == ""
    assert oct(record.stat().st_mode & 0o777) == "0o644" and record.read_text().startswith('{\n    "current": ')
    assert module(tmp_path, True, ref=OLD, version_probe='{"vllm_version": "0.31.0"}')["changed"] is False   # converged
    upgraded_ = module(tmp_path, True, ref=NEW, version_probe='{"vllm_version": "0.32.0"}')
    assert (upgraded_["to_run"], upgraded_["rollback_to"]) == (NEW, OLD)
    # the rollout rolled it back: the previous digest runs again, and a converge that names the failed one stops
    back = module(tmp_path, True, state="rolled_back")
    assert back["changed"] and back["record"]["failed"] == [NEW] and back["to_run"] == OLD
    refused = module(tmp_path, True, ref=NEW_UPSTREAM, node="gpu-a1")
    assert refused["failed"] and "was rolled back on gpu-a1" in refused["msg"]
    assert json.loads(record.read_text())["current"] == OLD   # nothing written
    retried = module(tmp_path, True, ref=NEW, retry_failed=True, version_probe='{"vllm_version": "0.32.0"}')
    assert retried["record"]["failed"] == [] and retried["to_run"] == NEW
    query = module(tmp_path, False, state="query")
    assert (query["changed"], query["to_run"], query["rollback_to"]) == (False, NEW, OLD)
    record.chmod(0o600)   # query reads only, even a record whose mode present would put right
    assert module(tmp_path, False, state="query")["changed"] is False and oct(record.stat().st_mode & 0o777) == "0o600"
    assert module(tmp_path, True, ref=NEW, version_probe='{"vllm_version": "0.32.0"}')["changed"] is True
    assert oct(record.stat().st_mode & 0o777) == "0o644"


# --- vllm_image's to_run entry point: one step, on this machine ------------------------------------------------------

def to_run(tmp_path, previous: bool, known=None) -> tuple:
    """vllm_image's to_run entry point in a play on this machine, as fabric_check and vllm_serve include it."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.import_role: {name: inferops.vllm.vllm_image, tasks_from: to_run}\n"
        "    - ansible.builtin.debug: {msg: 'RUNS {{ vllm_image_to_run }} KNOWN {{ vllm_image_to_run_read.known | default(false) }}'}\n")
    extra = {"vllm_image_state_dir": str(tmp_path / "state"), "vllm_image_to_run_previous": previous,
             "ansible_python_interpreter": sys.executable}
    if known is not None:
        extra["vllm_image_record"] = known
    (tmp_path / "vars.json").write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    out = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", str(playbook),
                          "-e", "@" + str(tmp_path / "vars.json")], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=False, timeout=180)
    return out.returncode, out.stdout + out.stderr


def test_the_image_to_run_is_chosen_in_one_step_from_the_record_or_this_runs_result(tmp_path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "image.json").write_text(json.dumps(upgraded()))
    rc, out = to_run(tmp_path, previous=False)
    assert rc == 0 and "RUNS %s" % NEW in out, out[-3000:]
    rc, out = to_run(tmp_path, previous=True)
    assert rc == 0 and "RUNS %s" % OLD in out, out[-3000:]
    # this run's vllm_image step answers without reading the record (here: one that names another digest)
    known = {"changed": False, "record": {"current": OLD}, "to_run": OLD, "rollback_to": "", "pull_needed": False}
    rc, out = to_run(tmp_path, previous=False, known=known)
    assert rc == 0 and "RUNS %s KNOWN True" % OLD in out, out[-3000:]
    # nothing to roll back to: the fix, and no fact
    rc, out = to_run(tmp_path, previous=True, known=known)
    assert rc != 0 and "localhost has no previous digest to roll back to (%s)" % (tmp_path / "state" / "image.json") in out
    assert "Run the vllm_image role first." in out and "RUNS" not in out
    # a skipped step's result is no answer: the record is read
    rc, out = to_run(tmp_path, previous=False, known={"changed": False, "skipped": True})
    assert rc == 0 and "RUNS %s KNOWN False" % NEW in out, out[-3000:]


def test_no_record_and_nothing_pulled_fails_with_the_fix(tmp_path):
    rc, out = to_run(tmp_path, previous=False)
    assert rc != 0 and "localhost has no pulled image" in out and "Run the vllm_image role first." in out, out[-3000:]


def test_a_record_is_read_and_written_never_through_a_link(tmp_path):
    """node_record: a link in the record's place reads as no record; a link planted where the temporary file goes
    is replaced, not written through; relative to a directory fd the same holds (the site compile cache's record)."""
    from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
    outside = tmp_path / "outside.json"
    outside.write_text('{"keep": true}\n')
    record = tmp_path / "image.json"
    record.symlink_to(outside)
    assert node_record.read(str(record)) is None
    record.unlink()
    tmp = tmp_path / ("image.json.tmp.%d" % os.getpid())
    tmp.symlink_to(outside)
    node_record.write(str(record), {"current": "a"})
    assert json.loads(record.read_text()) == {"current": "a"} and oct(record.stat().st_mode & 0o777) == "0o644"
    assert outside.read_text() == '{"keep": true}\n' and not tmp.exists()
    fd = os.open(str(tmp_path), os.O_RDONLY)
    try:
        (tmp_path / ".own.tmp").symlink_to(outside)
        node_record.write("cache.json", {"keys": {}}, dir_fd=fd, tmp=".own.tmp")
        assert node_record.read("cache.json", dir_fd=fd) == {"keys": {}}
        assert outside.read_text() == '{"keep": true}\n'
    finally:
        os.close(fd)


def test_the_version_is_read_from_the_probes_line_among_whatever_else_the_image_prints():
    probe = image_record.version_in_probe
    assert probe('INFO entrypoint says hello\n{"vllm_version": "0.32.0"}\n') == "0.32.0"
    assert probe('{"vllm_version": null}\n') is None
    assert probe("python3: not found\n") is None
    assert probe("") is None
    assert probe('{"vllm_version": "0.32.0"') is None          # cut short
    assert probe('{"vllm_version": "x\\"}\n{"vllm_version": "0.31.0"}') == "0.31.0"   # the first that parses


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(), st.one_of(st.none(), st.text(min_size=1)))
def test_any_output_around_the_probe_line_gives_its_version_or_none(before, after, version):
    line = json.dumps({"vllm_version": version})
    found = image_record.version_in_probe(before + "\n" + line + "\n" + after)
    assert found is None or isinstance(found, str)
    if "{" not in before and "}" not in (version or ""):   # nothing that looks like the line before it
        assert found == version


def test_a_record_read_with_a_limit_reads_no_more_and_takes_a_longer_file_as_none(tmp_path):
    from ansible_collections.inferops.vllm.plugins.module_utils.node import node_record
    record = tmp_path / "cache.json"
    node_record.write(str(record), {"keys": {"k": {"state": "restored"}}})
    size = record.stat().st_size
    assert node_record.read(str(record), limit=size) == {"keys": {"k": {"state": "restored"}}}
    assert node_record.read(str(record), limit=size - 2) is None   # the closing brace cut off
    record.write_bytes(b"\xff\xfe not text")
    assert node_record.read(str(record)) is None
