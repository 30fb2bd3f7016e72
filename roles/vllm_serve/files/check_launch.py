# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs inside the pinned vLLM image (its own python3), before the node's
container starts: vLLM's own `vllm serve` parser and post-parse validators
read the node's exact argv and config file. Prints one JSON line and exits 0:
{"checked": bool, "ok": bool, "version": str, "build": "cuda"|"rocm"|"cpu",
"error": str, "flags": [...]}: `build` is what the image's torch was built for, so the
role can refuse a ROCm image on NVIDIA GPUs by its contents, not only by its name.

Input: the launch as JSON in the INFEROPS_LAUNCH environment variable
({"argv": [...], "config_yaml": "...", "env": [names], "preload_argv": [...] with the weight cache}).
With `preload_argv`, `vllm preload`'s own parser reads the weight-cache daemon's argv too. Stdlib and vllm only."""

import json
import os
import sys


def parser_api():
    """The parser factory and validators, wherever this vLLM keeps them."""
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    for module in ("vllm.entrypoints.launchers.cli_args", "vllm.entrypoints.openai.cli_args"):
        try:
            mod = __import__(module, fromlist=["make_arg_parser", "validate_parsed_serve_args"])
            return FlexibleArgumentParser, mod.make_arg_parser, mod.validate_parsed_serve_args
        except (ImportError, AttributeError):
            continue
    raise ImportError("no make_arg_parser in vllm.entrypoints.launchers.cli_args or vllm.entrypoints.openai.cli_args")


class Rejected(Exception):
    pass


def build():
    """What the image's torch was built for: rocm, cuda or cpu (None without torch)."""
    try:
        import torch
    except ImportError:
        return None
    if getattr(torch.version, "hip", None):
        return "rocm"
    if getattr(torch.version, "cuda", None):
        return "cuda"
    return "cpu"


def check(launch):
    try:
        import vllm
        base, make_arg_parser, validate = parser_api()
    except ImportError as exc:
        return {"checked": False, "ok": True, "version": None, "error": "vLLM's parser is not importable: %s" % exc}

    class Parser(base):
        def error(self, message):
            raise Rejected(message)

    # an image with vLLM has the whole stdlib; a lean one without it may not (hence imported here)
    import re
    import tempfile

    out = {"checked": True, "ok": False, "version": getattr(vllm, "__version__", None), "error": "", "flags": [],
           "build": build()}
    parser = make_arg_parser(Parser(prog="vllm serve"))
    try:
        explicit = parser.parse_args(list(launch["argv"]))
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
            fh.write(launch["config_yaml"])
        from_file = parser.parse_args(["--config", fh.name])
        for ns in (explicit, from_file):
            if getattr(ns, "model_tag", None):
                ns.model = ns.model_tag
            validate(ns)
    except (Rejected, ValueError, TypeError, SystemExit) as exc:
        out["error"] = str(exc) or type(exc).__name__
        out["flags"] = sorted(set(re.findall(r"--[a-z0-9][a-z0-9-]*", out["error"])))
        return out
    skip = {"model_tag", "config"}

    def comparable(value):
        # a P/D side's KVTransferConfig draws a fresh random engine_id at each parse
        if type(value).__name__ == "KVTransferConfig":
            return {k: v for k, v in vars(value).items() if k != "engine_id"}
        return value

    differ = sorted(k for k in set(vars(explicit)) | set(vars(from_file))
                    if k not in skip and comparable(getattr(explicit, k, None)) != comparable(getattr(from_file, k, None)))
    if differ:
        out["error"] = "the config file parses differently from the argv: %s" % ", ".join(differ)
        out["flags"] = ["--" + k.replace("_", "-") for k in differ]
        return out
    if launch.get("preload_argv") is not None:
        try:
            from vllm.entrypoints.cli.preload import PreloadSubcommand
            preload = Parser(prog="vllm preload")
            PreloadSubcommand.add_cli_args(preload)
            preload.parse_args(list(launch["preload_argv"]))
        except (Rejected, ValueError, TypeError, SystemExit, ImportError) as exc:
            out["error"] = "vllm preload (the weight-cache daemon): %s" % (str(exc) or type(exc).__name__)
            out["flags"] = sorted(set(re.findall(r"--[a-z0-9][a-z0-9-]*", str(exc))))
            return out
    try:
        import vllm.envs
        known = set(vllm.envs.environment_variables)
        unknown = sorted(k for k in launch.get("env", []) if k.startswith("VLLM_") and k not in known)
    except (ImportError, AttributeError):
        unknown = []
    if unknown:
        out["error"] = "environment variables this vLLM does not know: %s" % ", ".join(unknown)
        out["flags"] = unknown
        return out
    out["ok"] = True
    return out


def main():
    launch = json.loads(os.environ["INFEROPS_LAUNCH"])
    try:
        verdict = check(launch)
    except ImportError as exc:   # a lean image without parts of the stdlib vLLM needs: nothing to ask
        verdict = {"checked": False, "ok": True, "version": None, "error": "cannot run the check: %s" % exc}
    print(json.dumps(verdict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
