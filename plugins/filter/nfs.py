# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nfs filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/nfs/."""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._state import (
    client_mounts, dir_entries, fstab_pending, group_clashes, node_state, server_plan, unknown_owners, unmounted,
    unpublished)
from ansible_collections.gpucluster.core.plugins.plugin_utils.nfs._rules import conf_options


class FilterModule:
    """The nfs filters."""

    def filters(self):
        return as_filters({
            "nfs_conf_options": conf_options,
            "nfs_client_mounts": client_mounts,
            "nfs_unpublished": unpublished,
            "nfs_unmounted": unmounted,
            "nfs_group_clashes": group_clashes,
            "nfs_unknown_owners": unknown_owners,
            "nfs_server_plan": server_plan,
            "nfs_node_state": node_state,
            "nfs_dir_entries": dir_entries,
            "nfs_fstab_pending": fstab_pending,
        })
