# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/nfs/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._state import (
    client_mounts, dir_entries, fstab_pending, group_clashes, node_state, server_plan, unknown_owners, unmounted,
    unpublished)
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._rules import conf_options


class FilterModule:
    """The nfs filters."""

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
