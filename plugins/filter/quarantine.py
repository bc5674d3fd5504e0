# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/quarantine.yml's filters (each documented in plugins/filter/<filter>.yml): its input rules,
the nodes to retest, its own checks and the verdict; the logic lives in
plugins/plugin_utils/validation/_quarantine.py."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import as_filters
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._quarantine import (
    gpu_serials,
    node_checks,
    quarantine_candidates,
    quarantine_errors,
    verdict,
)


def _verdict(doc: Mapping[str, Any], extra: Mapping[str, Sequence[Mapping[str, Any]]], candidates: Mapping[str, Any],
             facts: Mapping[str, Mapping[str, Any]], prefix: str, settings: Mapping[str, Any]) -> Dict[str, Any]:
    """verdict with each node's GPUs read from its registered nvidia_smi_facts result."""
    return verdict(doc, extra, candidates, {host: gpu_serials(read) for host, read in facts.items()}, prefix, settings)


class FilterModule:
    """The quarantine filters."""

    def filters(self):
        return as_filters({
            "quarantine_errors": quarantine_errors,
            "quarantine_candidates": quarantine_candidates,
            "quarantine_node_checks": node_checks,
            "quarantine_verdict": _verdict,
        })
