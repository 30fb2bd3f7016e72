"""Secrets in plain text in the inventory (module_utils/controller/secret_source.py): judged on the raw values,
never decrypted."""

from ansible_collections.inferops.vllm.plugins.module_utils.controller import secret_source


class Vaulted(str):
    """A stand-in for ansible-vault's EncryptedString: reading its text would decrypt it."""

    def __contains__(self, item):
        raise AssertionError("the plan read a vaulted value")


def is_vaulted(value):
    return isinstance(value, Vaulted)


RAW = {"literal": "abc123", "vaulted": Vaulted("!vault"), "via_vault": "{{ vaulted }}", "via_literal": "{{ literal }}",
       "lookup": "{{ lookup('env', 'KEY') }}", "mixed": "{{ vaulted }}{{ literal }}", "loop": "{{ loop }}",
       "empty": "", "number": 12345}


def plain(name):
    return secret_source.plain_text(RAW.get(name), RAW.get, is_vaulted)


def test_literals_and_templates_of_literals_are_plain_text():
    assert plain("literal") and plain("via_literal")


def test_vaulted_values_lookups_and_unset_ones_are_not():
    assert not any(plain(name) for name in ("vaulted", "via_vault", "lookup", "mixed", "loop", "empty", "missing",
                                            "number"))


def test_the_warning_names_the_clusters_and_the_fix_never_the_value():
    raw = {"a": {"vllm_api_key": "abc123"}, "b": {"vllm_api_key": "{{ vaulted }}", "vaulted": Vaulted("x")}}
    lines = secret_source.warnings(raw, ["vllm_api_key", "vllm_hf_token"], is_vaulted)
    assert lines == [line for line in lines if "abc123" not in line] and len(lines) == 1
    assert lines[0].startswith("vllm_api_key (cluster a) is written in plain text") and "encrypt_string" in lines[0]
