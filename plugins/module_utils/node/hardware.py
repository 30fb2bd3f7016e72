# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Accelerators the collection knows, as data: vendor, family, board layout.

Adding hardware means adding a row here (and a recipe in profiles/ if the
model needs family-specific flags), not new branches in the compiler. Everything
else that names GPU models reads this table: the plan's choices and messages,
gpu_facts, the roles (the launch's host_stack, module_utils/controller/host_stack.py) and the stand-in nvidia-smi/amd-smi
(tests/unit/test_one_catalog_row.py adds a row and checks that they follow).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Accelerator:
    model: str
    vendor: str              # nvidia | amd | cpu
    family: str              # blackwell | hopper | cdna4 | cpu: the key of per-family recipe defaults
    sm100: bool              # DeepGEMM MegaMoE needs SM100-class (Blackwell datacenter) GPUs
    gpus_per_node: int       # the usual board: 8-GPU HGX/OAM, 4-GPU Grace Blackwell tray
    memory_gib: int          # one GPU's usable HBM as nvidia-smi/amd-smi report it: capacity_fit reads it
    nvswitch_board: bool     # HGX/DGX 8-GPU boards run Fabric Manager
    mnnvl: bool              # can join a multi-node NVLink domain (NVL72 rack, IMEX)


CATALOG = {
    a.model: a for a in (
        Accelerator("GB300", "nvidia", "blackwell", True, 4, 279, False, True),
        Accelerator("GB200", "nvidia", "blackwell", True, 4, 186, False, True),
        Accelerator("B300", "nvidia", "blackwell", True, 8, 268, True, False),
        Accelerator("B200", "nvidia", "blackwell", True, 8, 179, True, False),
        Accelerator("H200", "nvidia", "hopper", False, 8, 141, True, False),
        Accelerator("H100", "nvidia", "hopper", False, 8, 80, True, False),
        Accelerator("MI355X", "amd", "cdna4", False, 8, 288, False, False),
        Accelerator("MI350X", "amd", "cdna4", False, 8, 288, False, False),
        Accelerator("CPU", "cpu", "cpu", False, 1, 0, False, False),
    )
}


def lookup(model: str) -> Optional[Accelerator]:
    return CATALOG.get(str(model).upper())


class _Models(Sequence):
    """The catalog's model names, read when used: a row added to CATALOG is a choice at once."""

    def __getitem__(self, index):
        return tuple(CATALOG)[index]

    def __len__(self) -> int:
        return len(CATALOG)


MODELS = _Models()


def models_where(has: Callable[[Accelerator], bool]) -> str:
    """The models with a feature, for messages: models_where(lambda a: a.mnnvl) -> "GB200/GB300"."""
    return "/".join(sorted(model for model, accelerator in CATALOG.items() if has(accelerator)))
