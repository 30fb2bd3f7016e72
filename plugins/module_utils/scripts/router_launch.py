# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start vLLM's router (vllm-router) with the API key kept off the command line. The vllm_router role
installs this file in the router's venv as launch_router.py; it needs only the standard library.

usage: launch_router.py CONFIG.json [--api-key-file FILE] [--check]

CONFIG.json holds every router argument as {flag: value} (true: the flag alone; false or null: left
out; a list: the flag followed by each item; a list of lists: the flag once per inner list). The key
file (0600, root only; under systemd the unit hands it over with LoadCredential=) holds the key the
router sends to the workers. Both become the router's arguments inside this process, parsed by the
router's own parser and started through its Python API, so /proc/<pid>/cmdline never shows the key.
--check only parses the configuration (the role validates a new configuration with it before putting
it in place)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, List, Mapping, Optional


def argv(config: Mapping[str, Any]) -> List[str]:
    """{flag: value} as command-line words: true is the flag alone, false and null leave it out, a list
    gives the flag once followed by every item, a list of lists the flag once per inner list."""
    words: List[str] = []
    for flag, value in config.items():
        if value is None or value is False:
            continue
        if value is True:
            words.append("--" + flag)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple)) for v in value):
            for group in value:   # a list of lists repeats the flag: --prefill URL none --prefill URL2 none
                words += ["--" + flag] + [str(v) for v in group]
        elif isinstance(value, (list, tuple)):
            words += ["--" + flag] + [str(v) for v in value]
        else:
            words += ["--" + flag, str(value)]
    return words


def read_key(path: Optional[str]) -> Optional[str]:
    """The key from the file (surrounding whitespace dropped); None when there is no file or it is empty."""
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read().strip() or None


def main(args: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("config", help="JSON object of router flags")
    parser.add_argument("--api-key-file", help="file holding the key the router sends to the workers")
    parser.add_argument("--check", action="store_true", help="only parse the configuration")
    opts = parser.parse_args(args)
    with open(opts.config, encoding="utf-8") as f:
        config = json.load(f)
    if not isinstance(config, dict) or "api-key" in config:
        raise SystemExit("%s: expected a JSON object of router flags, without api-key (that goes in the key file)" % opts.config)
    words = argv(config)
    key = read_key(opts.api_key_file)
    if key:
        words.append("--api-key=" + key)   # one word: a key starting with a dash stays a value

    from vllm_router.launch_router import launch_router, parse_router_args

    router_args = parse_router_args(words)   # the router's own parser: unknown flags and bad values fail here
    if opts.check:
        sys.stdout.write("router configuration %s is valid\n" % opts.config)
        return 0
    launch_router(router_args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
