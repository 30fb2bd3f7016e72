# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus targets, scrape configs, alert rules and Grafana dashboards derived from the launch plan
(docs/observability.md). Controller-only: the action plugins observability_files and cluster_plan import it;
nothing here runs on a node. Plain Python, no Ansible imports; plan_files.files() is the entry point."""
