# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the validation's unit tests share (test_validation_plan, _checks, _fabric, _jobs, _report):
the real captures they read (Slurm's ``scontrol show node``, nvidia-smi XML), the Kubernetes nodes
they build and the inter-node NCCL expectation they judge against.
"""

from __future__ import annotations

import json

from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import parse_health_xml
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import parse_kubectl_nodes
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


SLURM = "slurm"
# scontrol show node adev1, from Slurm's Quick Start User Guide (see slurm/SOURCES-scontrol.md)
QUICKSTART = "slurm-docs-quickstart-scontrol-show-node-down-not-responding.txt"
PREFIX = "gpucluster-validation:"  # the role's default validation_reason_prefix


def quickstart():
    return read_fixture(SLURM, QUICKSTART)


def node_text(state=None, reason=None, name=None, gres=None):
    """The real adev1 record, with its State=, Reason= or name changed, or a Gres= line added."""
    text = quickstart()
    if state is not None:
        text = text.replace("State=DOWN*", "State=" + state, 1)
    if reason is not None:
        text = text.replace("Reason=Not responding [slurm@06/02-14:01:24]", "Reason=" + reason, 1)
    if name is not None:
        text = text.replace("NodeName=adev1", "NodeName=" + name, 1)
    if gres is not None:
        first, rest = text.split("\n", 1)
        text = first + "\n   Gres=" + gres + "\n" + rest
    return text


def smi(directory, name):
    return parse_health_xml(read_fixture(directory, name))


H100 = ("h100-80gb-hbm3-driver580", "nvidia-smi-q.xml")
T4 = ("nvidia-smi-xml", "tesla-t4-driver515-v11.xml")
V100 = ("nvidia-smi-xml", "8x-tesla-v100s-pcie-32gb-driver460-v11.xml")


MARK = "gpucluster.core/validation-cordon"


def kube_node(name, unschedulable=None, annotations=None):
    """A Node as kubectl prints it, reduced to the fields read (spec.unschedulable is absent
    on a schedulable node)."""
    spec = {"podCIDR": "10.244.1.0/24"}
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec}


def kube_list(*nodes):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(nodes), "metadata": {"resourceVersion": ""}})


def kube_view():
    """kdev1 schedulable; kdev2 cordoned by this validation; kdev3 cordoned by an admin; kdev4
    uncordoned by hand after this validation cordoned it (the mark is stale)."""
    text = kube_list(
        kube_node("kdev1", annotations={"node.alpha.kubernetes.io/ttl": "0"}),
        kube_node("kdev2", True, {MARK: "gpucluster-validation: xid"}),
        kube_node("kdev3", True, {"kubeadm.alpha.kubernetes.io/cri-socket": "/run/containerd/containerd.sock"}),
        kube_node("kdev4", False, {MARK: "gpucluster-validation: gpu_count"}),
    )
    return parse_kubectl_nodes(text, {h: h for h in ("kdev1", "kdev2", "kdev3", "kdev4")}, MARK)


# An inter-node NCCL expectation (nccl_expectation's) of a 400G NDR rail per GPU.
NCCL_45 = {"value": 45.0, "unit": "GB/s", "source": "0.90 x 400 Gb/s NIC line rate per GPU (ibstat)"}
