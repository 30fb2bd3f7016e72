"""A node's image record across pulls, a rollback and a retry (module_utils/image_record.py)."""
from ansible_collections.inferops.vllm.plugins.module_utils import image_record

OLD = "r.site:5000/vllm/vllm-openai@sha256:" + "a" * 64
NEW = "r.site:5000/vllm/vllm-openai@sha256:" + "b" * 64
NEW_UPSTREAM = "vllm/vllm-openai@sha256:" + "b" * 64


def upgraded() -> dict:
    first = image_record.after_pull({}, OLD, "0.31.0")
    return image_record.after_pull(first, NEW, "0.32.0")


def test_a_pull_keeps_the_digest_before_for_rollback():
    record = upgraded()
    assert record == {"current": NEW, "previous": OLD, "vllm_version": "0.32.0", "previous_vllm_version": "0.31.0",
                      "failed": []}
    assert image_record.after_pull(record, NEW, "0.32.0") is record   # a converged node: no write


def test_a_rollback_runs_the_previous_digest_again_and_marks_the_one_it_left():
    record = image_record.after_rollback(upgraded())
    assert record == {"current": OLD, "previous": None, "vllm_version": "0.31.0", "previous_vllm_version": None,
                      "failed": [NEW]}
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
