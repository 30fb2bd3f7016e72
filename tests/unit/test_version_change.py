"""An upgrade to an image of another vLLM, planned before any host (plan_run over a dict Reader, version_change):
both launches compiled, what changes said flag by flag, and refused whole when either version cannot serve the
inventory. The examples' upgrade plans are goldens (tests/unit/test_plan_playbook.py)."""
from test_plan_run import IMAGE, inventory

from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan_run, version_change

NEW_IMAGE = "vllm/vllm-openai@sha256:" + "b" * 64


def upgrade(**extra):
    values = dict(vllm_version="0.33.0", vllm_version_before="0.32.0", vllm_image=NEW_IMAGE, vllm_image_before=IMAGE)
    reader, groups = inventory(**dict(values, **extra))
    return plan_run.run(reader, ["n1", "n2"], groups)


def test_both_launches_are_compiled_and_the_rollback_is_the_plan_before():
    out = upgrade(vllm_args={"enable-prefix-caching": False})
    assert out.refusals == []
    reader, groups = inventory(vllm_args={"enable-prefix-caching": False})
    plain = plan_run.run(reader, ["n1", "n2"], groups)
    for host in ("n1", "n2"):
        assert out.launches[host]["before"] == plain.launches[host]
        assert out.launches[host]["cluster"]["vllm_version"] == "0.33.0"
    change = out.launches["n1"]["cluster"]["version_change"]
    assert (change["from"], change["to"]) == ("0.32.0", "0.33.0")
    assert (change["image_from"], change["image_to"]) == (IMAGE, NEW_IMAGE)
    row = next(r for r in change["flags"] if r["flag"] == "enable-prefix-caching")
    assert (row["change"], row["before"], row["after"], row["nodes"]) == (
        "spelt anew", "--no-enable-prefix-caching", "--disable-prefix-caching", "all")
    assert {r["flag"] for r in change["defaults"]} == {"mamba-cache-mode", "tool-strict-level"}
    text = version_change.to_markdown(change)
    assert "| enable-prefix-caching | spelt anew |" in text and "A rollback returns to the launch before" in text


def test_a_value_the_new_vllm_dropped_is_refused_before_any_host():
    out = upgrade(vllm_args={"speculative-config": None, "spec-method": "medusa"})
    assert any("vLLM 0.33.0" in line and "spec-method" in line for line in out.refusals), out.refusals
    assert out.launches == {}


def test_a_flag_only_the_new_vllm_has_is_refused_for_the_launch_to_roll_back_to():
    out = upgrade(vllm_args={"monokernel": True})
    assert any(line.startswith("the launch to roll back to: ") and "monokernel" in line for line in out.refusals), \
        out.refusals


def test_an_upgrade_across_versions_names_its_rollback_image():
    reader, groups = inventory(vllm_version="0.33.0", vllm_version_before="0.32.0")
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert any("vllm_image_before" in line and "set vllm_image_before to the image digest" in line
               for line in out.refusals), out.refusals


def test_an_unknown_version_names_the_known_ones_and_how_to_add_one():
    for name in ("vllm_version", "vllm_version_before"):
        reader, groups = inventory(**{name: "0.99.0"})
        line = next(line for line in plan_run.run(reader, ["n1", "n2"], groups).refusals if name in line)
        assert "0.32.0, 0.33.0" in line and (name == "vllm_version_before" or "scripts/vllm_release.sh" in line)


def test_the_same_version_compiles_once():
    out = upgrade(vllm_version_before="0.33.0")
    assert out.refusals == [] and "before" not in out.launches["n1"]
    assert "version_change" not in out.launches["n1"]["cluster"]


def test_the_version_is_read_from_the_images_tag_and_required_where_it_names_none():
    from ansible_collections.inferops.vllm.plugins.module_utils.node.image_ref import tag_release
    assert [tag_release(ref) for ref in ("vllm/vllm-openai:v0.33.0@sha256:" + "a" * 64, "r:5000/v:0.32.0-cu130@x",
                                         "vllm/vllm-openai:v0.33.0-aarch64-cu130", "vllm/vllm-openai:kimi-k3@x",
                                         "vllm/vllm-openai@sha256:" + "a" * 64, "vllm/vllm-openai:v0.33")] == [
        "0.33.0", "0.32.0", "0.33.0", "", "", ""]
    tagged = "vllm/vllm-openai:v0.33.0@sha256:" + "a" * 64
    reader, groups = inventory(vllm_version=None, vllm_image=tagged)
    out = plan_run.run(reader, ["n1", "n2"], groups)
    assert out.refusals == [] and out.launches["n1"]["cluster"]["vllm_version"] == "0.33.0"
    reader, groups = inventory(vllm_version="0.32.0", vllm_image=tagged)
    assert any("vllm_image's tag names vLLM 0.33.0" in line for line in plan_run.run(reader, ["n1", "n2"], groups).refusals)
    reader, groups = inventory(vllm_version=None)
    line = next(line for line in plan_run.run(reader, ["n1", "n2"], groups).refusals if "vllm_version" in line)
    assert "names no vLLM release in its tag" in line and "set vllm_version to the vLLM inside the image" in line
