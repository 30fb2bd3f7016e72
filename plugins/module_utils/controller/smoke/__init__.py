# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Smoke tests of an OpenAI-compatible vLLM endpoint: suites, measurements, report."""
