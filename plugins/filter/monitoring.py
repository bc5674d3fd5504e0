# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The monitoring filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/monitoring/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.monitoring._monitoring import (
    alertmanager_peers, artifacts, counters_csv, dashboard_queries, dcgm_repo_errors, host_plan, per_host, pinned_packages,
    scrape_configs, service_flags, stale_services)


def _monitoring_scrape_configs(hostvars, server, groups, defaults, paths=None):
    """The scrape jobs of the monitoring host ``server`` (``paths``: the web client's CA and password files)."""
    hosts = sorted(set(groups.get("all", [])) | {server})
    return scrape_configs(per_host(hostvars, hosts, defaults), hostvars, groups, server, paths)


def _monitoring_alertmanager_peers(hostvars, server, groups, defaults):
    """The ``--cluster.peer`` addresses of the monitoring host ``server``."""
    hosts = sorted(set(groups.get("all", [])) | {server})
    return alertmanager_peers(per_host(hostvars, hosts, defaults), groups, server, hostvars)


class FilterModule:
    """The monitoring filters."""

    def filters(self):
        return as_filters({
            "monitoring_dcgm_repo_errors": dcgm_repo_errors,
            "monitoring_scrape_configs": _monitoring_scrape_configs,
            "monitoring_counters_csv": counters_csv,
            "monitoring_alertmanager_peers": _monitoring_alertmanager_peers,
            "monitoring_dashboard_queries": dashboard_queries,
            "monitoring_pinned_packages": pinned_packages,
            "monitoring_plan": host_plan,
            "monitoring_service_flags": service_flags,
            "monitoring_stale_services": stale_services,
            "monitoring_artifacts": artifacts,
        })
