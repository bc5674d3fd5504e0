# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs role's filters: nfs_conf_options (the nfs.conf merge),
nfs_server_plan (a server's nfs.conf options and firewall ports), nfs_client_mounts, nfs_dir_entries,
nfs_fstab_pending, nfs_group_clashes, nfs_unknown_owners, nfs_node_state, nfs_unpublished and nfs_unmounted
(derived data and checks).

Documented in the .yml files of the same names beside this file."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._nfs_state import (
    client_mounts, dir_entries, fstab_pending, group_clashes, node_state, server_plan, unknown_owners, unmounted,
    unpublished)
from ansible_collections.gpucluster.core.plugins.plugin_utils._rules_nfs import conf_options


class FilterModule:
    """The nfs role's nfs.conf merge, derived data and checks."""

    def filters(self):
        return {
            "nfs_conf_options": as_filter("nfs_conf_options", conf_options),
            "nfs_client_mounts": as_filter("nfs_client_mounts", client_mounts),
            "nfs_unpublished": as_filter("nfs_unpublished", unpublished),
            "nfs_unmounted": as_filter("nfs_unmounted", unmounted),
            "nfs_group_clashes": as_filter("nfs_group_clashes", group_clashes),
            "nfs_unknown_owners": as_filter("nfs_unknown_owners", unknown_owners),
            "nfs_server_plan": as_filter("nfs_server_plan", server_plan),
            "nfs_node_state": as_filter("nfs_node_state", node_state),
            "nfs_dir_entries": as_filter("nfs_dir_entries", dir_entries),
            "nfs_fstab_pending": as_filter("nfs_fstab_pending", fstab_pending),
        }
