"""Every row of every profile, on every vLLM release the plan knows, is one that release has, or is bounded away
from it (the profile's vllm_versions): adding a release (scripts/vllm_release.sh) names here each row to bound."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import vllm_surface
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import (
    PROFILES, applies, every_layer, layers)


@pytest.mark.parametrize("version", vllm_surface.supported_versions())
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_row_is_one_the_release_has(name, version):
    surface = vllm_surface.load(version)
    profile = PROFILES[name]
    missing = []
    for layer in every_layer(profile):
        for flag, value in layer.get("args", {}).items():
            if not applies(profile, flag, version) or value is None:
                continue
            option = surface.option("--" + flag)
            if option is None or (value is False and surface.negation("--" + flag) is None
                                  and option.get("value") is not False):
                missing.append("--" + flag)
        missing += [env for env in layer.get("env", {}) if applies(profile, env, version)
                    and (surface.unknown_env(env) or env in vllm_surface.REMOVED_ENV)]
    assert not missing, "profile %s proposes to vLLM %s what it does not have: %s (bound the rows in its " \
                        "vllm_versions)" % (name, version, ", ".join(sorted(set(missing))))


def test_a_bounded_row_reaches_only_its_releases():
    profile = {"args": {"monokernel": True, "max-num-seqs": 4}, "env": {"VLLM_OLD": "1"},
               "vllm_versions": {"monokernel": {"since": "0.33.0"}, "VLLM_OLD": {"until": "0.32.0"}}}
    older = layers(profile, "p", "cpu", "single", "CPU", version="0.32.0")[0]
    newer = layers(profile, "p", "cpu", "single", "CPU", version="0.33.0")[0]
    assert older[0] == {"max-num-seqs": 4} and older[1] == {"VLLM_OLD": "1"}
    assert newer[0] == {"monokernel": True, "max-num-seqs": 4} and newer[1] == {}
    assert applies(profile, "monokernel", "0.40.1") and not applies(profile, "VLLM_OLD", "0.32.1")
    assert layers(profile, "p", "cpu", "single", "CPU")[0][0] == profile["args"]   # no version: every row
