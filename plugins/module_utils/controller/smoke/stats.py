# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rates with their uncertainty: the tool-call verdict reads a first-attempt
success rate over a few dozen requests, so it reports the 95 % Wilson interval
beside it (docs/smoke-verdict.md explains the trial count)."""

from __future__ import annotations

import math
from typing import Tuple

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> Tuple[float, float]:
    """The Wilson score interval of a binomial proportion; (0, 1) with no trials."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_probability(n: int, p: float, threshold: float) -> float:
    """P(successes / n >= threshold) for n trials with success probability p:
    how often a server whose true rate is p passes the point-estimate verdict."""
    need = math.ceil(threshold * n - 1e-9)
    return sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(need, n + 1))
