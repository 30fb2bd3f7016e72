"""The plan's half of the weights: the pin, the source, and what the launch gets from them."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, model_source
from clusters import REVISION, compile_


def refused(**cluster_vars):
    with pytest.raises(cluster.ClusterError) as err:
        compile_(**cluster_vars)
    return str(err.value)


def test_staged_weights_serve_one_commit_offline_from_a_read_only_cache():
    head = compile_()["n0"]
    assert head["args"]["revision"] == REVISION
    assert head["argv"][head["argv"].index("--revision") + 1] == REVISION
    assert 'revision: "%s"' % REVISION in head["config_yaml"]
    assert head["env"]["HF_HUB_OFFLINE"] == "1"
    assert head["container"]["volumes"] == ["/var/lib/inferops-vllm/huggingface:/root/.cache/huggingface:ro",
                                            "/var/lib/inferops-vllm/compile-cache:/root/.cache/vllm"]
    assert head["cluster"]["model"] == {"repo": "moonshotai/Kimi-K3", "source": "site", "revision": REVISION,
                                        "manifest_digest": None, "cache_dir": "/var/lib/inferops-vllm/huggingface"}


@pytest.mark.parametrize("revision", [None, "", "main", "v1.0", REVISION.upper(), REVISION[:12], REVISION + "0", 42])
def test_a_staged_cluster_refuses_anything_but_a_commit_with_the_command_that_resolves_it(revision):
    msg = refused(vllm_model_revision=revision)
    assert msg.startswith("vllm_model_revision=%r (cluster c1)" % (revision,))
    assert "hf models info moonshotai/Kimi-K3 --revision" in msg and "--expand sha" in msg


def test_local_weights_are_pinned_too_and_load_with_prefetch():
    head = compile_(vllm_model_source="local")["n0"]
    assert head["args"]["safetensors-load-strategy"] == "prefetch"
    assert head["env"]["HF_HUB_OFFLINE"] == "1" and head["container"]["volumes"][0].endswith(":ro")
    assert "vllm_model_revision=None" in refused(vllm_model_source="local", vllm_model_revision=None)
    # the site may still choose another load strategy
    assert compile_(vllm_model_source="local", vllm_args={"safetensors-load-strategy": "eager"})["n0"]["args"][
        "safetensors-load-strategy"] == "eager"


def test_hub_keeps_vllms_own_download_a_branch_allowed():
    head = compile_(vllm_model_source="hub", vllm_model_revision="main")["n0"]
    assert head["args"]["revision"] == "main"
    assert "HF_HUB_OFFLINE" not in head["env"]
    assert head["container"]["volumes"][0] == "/var/lib/inferops-vllm/huggingface:/root/.cache/huggingface"
    assert "revision" not in compile_(vllm_model_source="hub", vllm_model_revision=None)["n0"]["args"]


def test_the_compiler_owns_the_revision_flag():
    msg = refused(vllm_args={"revision": "main"})
    assert "vllm_args['revision']" in msg and "set vllm_model_revision instead" in msg
    assert "vllm_site_args['revision']" in refused(vllm_site_args={"--revision": REVISION})


@pytest.mark.parametrize("name, fix", [("HF_HUB_OFFLINE", "vllm_model_source"), ("TRANSFORMERS_OFFLINE", "vllm_model_source"),
                                       ("HF_ENDPOINT", "vllm_model_hf_endpoint")])
@pytest.mark.parametrize("variable", ["vllm_env", "vllm_site_env"])
def test_env_that_would_undo_the_pin_is_refused_with_the_variable_to_use(variable, name, fix):
    msg = refused(**{variable: {name: "0"}})
    assert msg.startswith("%s[%r]" % (variable, name)) and fix in msg


def test_a_path_cannot_be_staged_through_the_store():
    msg = refused(vllm_model="/models/k3")
    assert msg.startswith("vllm_model='/models/k3'") and "vllm_model_source: hub" in msg
    assert compile_(vllm_model="/models/k3", vllm_model_source="hub")["n0"]["args"]["model"] == "/models/k3"


@pytest.mark.parametrize("digest, source, problem", [
    ("sha256:" + "a" * 63, "site", "not sha256:<64 lowercase hex>"),
    ("a" * 64, "site", "not sha256:<64 lowercase hex>"),
    ("sha256:" + "a" * 64, "hub", "only staged weights have a manifest"),
    ("sha256:" + "a" * 64, "local", "no store manifest"),
])
def test_the_manifest_pin_is_checked(digest, source, problem):
    assert problem in refused(vllm_model_manifest_digest=digest, vllm_model_source=source)
    pinned = compile_(vllm_model_manifest_digest="sha256:" + "b" * 64)["n0"]["cluster"]["model"]
    assert pinned["manifest_digest"] == "sha256:" + "b" * 64


def test_an_unknown_source_is_one_line_naming_the_choices():
    assert "not one of site, local, hub" in refused(vllm_model_source="s3")


def test_a_rollback_launch_serves_the_revision_kept_on_disk_and_changes_nothing_else():
    launch = compile_()["n1"]
    before = "f" * 40
    back = model_source.at_revision(launch, before)
    assert back["args"]["revision"] == before and back["cluster"]["model"]["revision"] == before
    assert back["argv"][back["argv"].index("--revision") + 1] == before
    assert back["config_yaml"] == launch["config_yaml"].replace(REVISION, before)
    assert {k: v for k, v in back.items() if k not in ("args", "argv", "config_yaml", "cluster")} == \
        {k: v for k, v in launch.items() if k not in ("args", "argv", "config_yaml", "cluster")}
    assert model_source.at_revision(launch, "") == launch and model_source.at_revision(launch, REVISION) == launch
