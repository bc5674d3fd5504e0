# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator role's logic (controller side, pure, no Ansible imports): its input rules, the
GPU Operator chart's values derived from what the GPU nodes have, and the nodes whose allocatable
nvidia.com/gpu falls short of their GPU count."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import describe
from ansible_collections.gpucluster.core.plugins.plugin_utils.kubernetes._kubernetes import _LABEL_RE, node_states
from ansible_collections.gpucluster.core.plugins.module_utils._merge import deep_merge
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import (
    Errors, RoleInput, RuleError, boolean, int_range, matches, pip_env, token, url)

RESOURCE = "nvidia.com/gpu"
MIG_STRATEGIES = ("auto", "none", "single", "mixed")
# Helm: a release name is a DNS label of at most 53 characters.
_RELEASE_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$")
_CHART_VERSION_RE = re.compile(r"^v?[0-9]+[.][0-9]+[.][0-9]+([-+][0-9A-Za-z.-]+)?$")
# The chart archive is saved under its URL's last part (the file name) and Helm is given that file.
_CHART_ARCHIVE_RE = re.compile(r"^[^?#]*/[^/?#]+[.](tgz|tar[.]gz)$")


def _check(errors: Errors, values: Mapping[str, Any]) -> None:
    version = values.get("gpu_operator_chart_version")
    if not isinstance(version, str) or not _CHART_VERSION_RE.match(version):
        errors.add("gpu_operator_chart_version", "must pin the chart's version, such as v25.3.4 (got %r)" % (version,))
    errors.check("gpu_operator_chart_repo_url", url(values.get("gpu_operator_chart_repo_url"), ("http", "https")))
    chart_url = values.get("gpu_operator_chart_url")
    if chart_url not in ("", None):
        if errors.check("gpu_operator_chart_url", url(chart_url)):
            errors.check("gpu_operator_chart_url", matches(
                chart_url, _CHART_ARCHIVE_RE, "the URL of a chart archive file ending in .tgz or .tar.gz, without ? or #"))
    errors.check("gpu_operator_helm_url", url(values.get("gpu_operator_helm_url")))
    errors.check("gpu_operator_release_name", matches(values.get("gpu_operator_release_name"), _RELEASE_RE,
                                                      "a Helm release name (lowercase letters, digits and -, up to 53)"))
    errors.check("gpu_operator_namespace", matches(values.get("gpu_operator_namespace"), _LABEL_RE,
                                                   "a namespace name (a DNS label)"))
    for name in ("gpu_operator_cdi", "gpu_operator_dcgm_exporter", "gpu_operator_service_monitor", "gpu_operator_wait"):
        errors.check(name, boolean(values.get(name)))
    if values.get("gpu_operator_mig_strategy") not in MIG_STRATEGIES:
        errors.add("gpu_operator_mig_strategy", "must be one of %s (got %r)"
                   % (", ".join(MIG_STRATEGIES), values.get("gpu_operator_mig_strategy")))
    if not isinstance(values.get("gpu_operator_extra_values"), Mapping):
        errors.add("gpu_operator_extra_values", "must be a dict of the chart's values (got %s)"
                   % describe(values.get("gpu_operator_extra_values")))
    errors.check("gpu_operator_timeout", int_range(values.get("gpu_operator_timeout"), 60, 3600))
    errors.check("gpu_operator_verify_timeout", int_range(values.get("gpu_operator_verify_timeout"), 30, 3600))
    errors.check("gpu_operator_control_plane_group", token(values.get("gpu_operator_control_plane_group")))
    pip_env(errors, "gpu_operator_kubernetes_client_pip_env", values.get("gpu_operator_kubernetes_client_pip_env"))


def gpu_operator_errors(values: Mapping[str, Any]) -> List[str]:
    """Every error in the role's values (it runs on one host, the first control plane node)."""
    errors = Errors()
    _check(errors, values)
    return errors.messages


def input_errors(given: RoleInput) -> List[str]:
    """The rules over the play's values (the role runs on one host, the first control plane node)."""
    return gpu_operator_errors(given.shared)


def _mig_strategy(nodes: Mapping[str, Mapping[str, Any]]) -> str:
    """none: no GPU has MIG on; single: every GPU has MIG on with the same set of profiles; mixed: otherwise."""
    layouts = []
    for node in nodes.values():
        for gpu in node.get("gpus") or []:
            mode = ((gpu.get("mig_mode") or {}).get("current") or "").lower()
            profiles = sorted(str(d.get("profile")) for d in gpu.get("mig_devices") or [])
            layouts.append(tuple(profiles) if mode == "enabled" else None)
    if not any(layout is not None for layout in layouts):
        return "none"
    return "single" if None not in layouts and len(set(layouts)) == 1 else "mixed"


def chart_values(nodes: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The chart's values from the GPU nodes (name -> host_driver, host_toolkit, gpus as nvidia_smi_facts reads
    them) and the role's settings; gpu_operator_extra_values merged over them. A driver or toolkit the host
    manages on some GPU nodes and not on others is an error: the operator's containers would fight the
    host's on those nodes."""
    problems = []
    derived: Dict[str, Any] = {}
    for key, what, role in (("host_driver", "driver", "nvidia_driver"), ("host_toolkit", "toolkit", "container_toolkit")):
        have = sorted(name for name, node in nodes.items() if node.get(key))
        lack = sorted(name for name, node in nodes.items() if not node.get(key))
        if have and lack:
            problems.append("the %s is on the hosts of %s but not of %s: run the %s role on those too, or on none"
                            " (then the operator installs it)" % (what, ", ".join(have), ", ".join(lack), role))
        derived[what] = {"enabled": not have}
    if problems:
        raise RuleError("gpu_operator_values: " + "; ".join(problems))
    strategy = settings["gpu_operator_mig_strategy"]
    derived["mig"] = {"strategy": _mig_strategy(nodes) if strategy == "auto" else strategy}
    derived["cdi"] = {"enabled": settings["gpu_operator_cdi"]}
    derived["dcgmExporter"] = {"enabled": settings["gpu_operator_dcgm_exporter"],
                               "serviceMonitor": {"enabled": settings["gpu_operator_service_monitor"]}}
    return deep_merge(derived, settings.get("gpu_operator_extra_values") or {})


def short_nodes(node_list: Mapping[str, Any], expected: Mapping[str, int]) -> List[str]:
    """A message for each GPU node whose allocatable nvidia.com/gpu is not its GPU count."""
    states = node_states(node_list)
    out = []
    for name, count in sorted(expected.items()):
        state = states.get(name)
        if state is None:
            out.append("node %s is not registered with the API server (its nvidia-smi shows %d GPUs)" % (name, count))
            continue
        have = state["allocatable"].get(RESOURCE)
        if have is None:
            out.append("node %s advertises no %s, its nvidia-smi shows %d GPUs" % (name, RESOURCE, count))
        elif str(have) != str(count):
            out.append("node %s advertises %s %s, its nvidia-smi shows %d GPUs" % (name, have, RESOURCE, count))
    return out


def expected_gpus(nodes: Mapping[str, Mapping[str, Any]], strategy: str) -> Dict[str, int]:
    """Node name -> the nvidia.com/gpu a node must advertise under the MIG strategy: every GPU (none); the
    MIG devices of its MIG-enabled GPUs (single); its GPUs without MIG (mixed: MIG devices are advertised
    as nvidia.com/mig-<profile>). Nodes with nothing to advertise are left out."""
    out: Dict[str, int] = {}
    for name, node in nodes.items():
        gpus = node.get("gpus") or []
        enabled = [g for g in gpus if ((g.get("mig_mode") or {}).get("current") or "").lower() == "enabled"]
        if strategy == "single":
            count = sum(len(g.get("mig_devices") or []) for g in enabled) + (len(gpus) - len(enabled))
        elif strategy == "mixed":
            count = len(gpus) - len(enabled)
        else:
            count = int(node.get("gpu_count") or 0)
        if count > 0:
            out[name] = count
    return out


def gpu_nodes(hostvars: Mapping[str, Mapping[str, Any]], hosts: List[str]) -> Dict[str, Dict[str, Any]]:
    """The GPU nodes among hosts, keyed by Kubernetes node name (the host's kubernetes_node_name, else its
    inventory name): gpu_count, gpus, host_driver and host_toolkit as the role read them on each
    (__gpu_operator_node). A host the role did not read is left out."""
    out: Dict[str, Dict[str, Any]] = {}
    for host in hosts:
        values = hostvars.get(host) or {}
        node = values.get("__gpu_operator_node") or {}
        if int(node.get("gpu_count") or 0) > 0:
            out[str(values.get("kubernetes_node_name") or host)] = dict(node)
    return out
