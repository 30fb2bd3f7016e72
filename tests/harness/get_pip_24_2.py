"""Offline stand-in for ansible-test's get-pip-24.2.py download: run pip from
the wheel bundled with ensurepip, which then installs the pinned pip from PyPI."""
import ensurepip
import glob
import os
import sys

WHEEL = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl")))[-1]
sys.path.insert(0, WHEEL)
from pip._internal.cli.main import main  # noqa: E402  pylint: disable=wrong-import-position

sys.exit(main(["install"] + [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]))
