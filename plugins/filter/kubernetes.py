# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubernetes filters (each documented in plugins/filter/<filter>.yml); the logic lives in
plugins/plugin_utils/kubernetes/."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes import _kubernetes as k
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters


def _documents(values: Mapping[str, Any], mode: str, join: Optional[Mapping[str, Any]] = None) -> List[Dict[str, Any]]:
    return k.kubeadm_documents(values, mode, join)


class FilterModule:
    """The kubernetes filters."""

    def filters(self):
        return as_filters({
            "kubernetes_kubeadm_api": k.kubeadm_api,
            "kubernetes_kubeadm_documents": _documents,
            "kubernetes_join_parts": k.join_parts,
            "kubernetes_not_ready": k.not_ready,
            "kubernetes_node_taints": k.node_taints,
            "kubernetes_kubeadm_argv": k.kubeadm_argv,
            "kubernetes_images": k.images,
        })
