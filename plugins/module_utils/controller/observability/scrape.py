# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scrape-config snippet: one job per target file, each reading its file_sd file on the Prometheus server.
A YAML list, pasted under scrape_configs: (Debian 12's Prometheus 2.42 has no scrape_config_files).
Controller-only, no Ansible imports."""

from __future__ import annotations

from typing import Any, Dict, List

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.settings import Settings

# job -> the target file under the file_sd dir
JOBS = (("inferops_vllm", "inferops-vllm.yml"), ("inferops_gpu", "inferops-gpu.yml"),
        ("inferops_node", "inferops-node.yml"), ("inferops_router", "inferops-router.yml"))
# prometheus_client sends a *_created series per counter and histogram to an OpenMetrics scrape: about a
# quarter of vLLM's series, never queried.
DROP_CREATED = {"source_labels": ["__name__"], "regex": ".*_created", "action": "drop"}


def jobs(settings: Settings) -> List[Dict[str, Any]]:
    out = []
    for job, filename in JOBS:
        if job == "inferops_node" and not settings.node_exporter:
            continue
        entry: Dict[str, Any] = {"job_name": job, "scrape_interval": settings.scrape_interval}
        if job == "inferops_node":
            # the watchdog's textfile series carry cluster, rank and role already: keep them, no exported_*
            entry["honor_labels"] = True
        entry["file_sd_configs"] = [{"files": ["%s/%s" % (settings.file_sd_dir, filename)]}]
        entry["metric_relabel_configs"] = [dict(DROP_CREATED)]
        out.append(entry)
    return out
