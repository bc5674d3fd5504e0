# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_health's Kubernetes part (issue 32): the health check program's --kubernetes mode reads
``kubectl get nodes --output=json``, counts the nodes this system cordoned against the drain budget,
and decides its own node's cordon as slurm_action decides its drain; an admin's cordon (no
annotation) is never touched, and a cordon is lifted only when every check its reason names passed."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    CORDON_MARK,
    HealthError,
    cordoned_by,
    kubectl_nodes,
    kubernetes_decision,
    kubernetes_patch,
)

PREFIX = "gpucluster-validation:"


def item(name, unschedulable=None, mark=None, version="7"):
    meta = {"name": name, "resourceVersion": version}
    if mark is not None:
        meta["annotations"] = {CORDON_MARK: mark, "node.alpha.kubernetes.io/ttl": "0"}
    spec = {} if unschedulable is None else {"unschedulable": unschedulable}
    return {"metadata": meta, "spec": spec, "status": {}}


def listing(*items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


def nodes(*specs):
    """{name: state} as kubectl_nodes gives it, from (name, unschedulable, mark) triples."""
    return {name: {"unschedulable": cordoned, "mark": mark, "resource_version": "7"} for name, cordoned, mark in specs}


def results(**statuses):
    out = []
    for name, status in statuses.items():
        entry = {"check": name, "status": status.split("+")[0]}
        if status.endswith("+tooling"):
            entry["tooling"] = True
        out.append(entry)
    return out


def test_kubectl_nodes():
    text = listing(item("gpu01"), item("gpu02", True), item("gpu03", True, PREFIX + " xid"),
                   item("gpu04", False, PREFIX + " gpu_count", "9"))
    assert kubectl_nodes(text, CORDON_MARK) == {
        "gpu01": {"unschedulable": False, "mark": None, "resource_version": "7"},
        "gpu02": {"unschedulable": True, "mark": None, "resource_version": "7"},
        "gpu03": {"unschedulable": True, "mark": PREFIX + " xid", "resource_version": "7"},
        "gpu04": {"unschedulable": False, "mark": PREFIX + " gpu_count", "resource_version": "9"},
    }


def test_kubectl_nodes_reads_another_mark():
    assert kubectl_nodes(listing(item("gpu03", True, "x")), "example.com/other")["gpu03"]["mark"] is None


@pytest.mark.parametrize("text, message", [
    ("error: You must be logged in to the server (Unauthorized)",
     "kubectl get nodes: not JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[]", "kubectl get nodes: no items list (got list)"),
    ('{"kind": "Status"}', "kubectl get nodes: no items list (got dict)"),
    ('{"items": [{"metadata": {}}]}', "kubectl get nodes: item 0 has no metadata.name"),
    ('{"items": [{"metadata": {"name": "gpu01"}, "spec": {"unschedulable": "yes"}}]}',
     "kubectl get nodes: node gpu01: spec.unschedulable is not true or false (got 'yes')"),
], ids=["words", "list", "status", "no-name", "unschedulable-text"])
def test_kubectl_nodes_refuses_what_is_not_a_listing(text, message):
    with pytest.raises(HealthError) as err:
        kubectl_nodes(text, CORDON_MARK)
    assert str(err.value) == message


def test_cordoned_by_counts_only_this_systems_cordons():
    state = nodes(("gpu10", True, PREFIX + " xid"), ("gpu2", True, PREFIX + " gpu_count"), ("adm", True, None),
                  ("gone", False, PREFIX + " xid"), ("other", True, "someone: else"), ("ok", False, None))
    assert cordoned_by(state, PREFIX) == ["gpu2", "gpu10"]


HEALTHY = nodes(("gpu01", False, None), ("gpu02", False, None), ("gpu03", False, None))
OURS = nodes(("gpu01", True, PREFIX + " gpu_count"), ("gpu02", False, None))
OURS_TWO = nodes(("gpu01", True, PREFIX + " gpu_count,kubernetes_gpu_pod"), ("gpu02", False, None))
ADMIN = nodes(("gpu01", True, None), ("gpu02", False, None))
STALE = nodes(("gpu01", False, PREFIX + " gpu_count"), ("gpu02", False, None))
# 25 nodes: budget 2 (10 % is 2.5, rounded down); gpu02 and gpu03 already cordoned by this system.
SPENT = nodes(("gpu01", False, None), ("gpu02", True, PREFIX + " xid"), ("gpu03", True, PREFIX + " xid"),
              ("adm", True, None), *[("n%02d" % i, False, None) for i in range(21)])


@pytest.mark.parametrize("state, checks, action, reason, held", [
    (HEALTHY, results(gpu_count="pass", xid="pass"), "none", None, False),
    (HEALTHY, results(gpu_count="warn+tooling"), "none", None, False),
    (HEALTHY, results(gpu_count="fail", xid="pass", mounts="fail"), "cordoned", PREFIX + " gpu_count,mounts", False),
    # An admin's cordon is counted nowhere and never touched, failing or passing.
    (ADMIN, results(gpu_count="fail"), "kept cordoned (admin)", None, False),
    (ADMIN, results(gpu_count="pass"), "kept cordoned (admin)", None, False),
    # This system's cordon: kept while failing (its reason is not rewritten), lifted once its checks pass.
    (OURS, results(gpu_count="fail"), "kept cordoned", None, False),
    (OURS, results(gpu_count="pass", xid="warn"), "uncordoned", None, False),
    (OURS, results(gpu_count="warn+tooling", xid="pass"), "kept cordoned (not judged: gpu_count)", None, False),
    (OURS, results(gpu_count="pass", xid="warn+tooling"), "uncordoned", None, False),
    # A check the program does not run (the validation's GPU pod) is not judged by it: the cordon stays.
    (OURS_TWO, results(gpu_count="pass"), "kept cordoned (not judged: kubernetes_gpu_pod)", None, False),
    # Someone uncordoned it by hand: the mark goes once the node passes, stays while it fails (cordoned again).
    (STALE, results(gpu_count="pass"), "unmarked", None, False),
    (STALE, results(gpu_count="fail"), "cordoned", PREFIX + " gpu_count", False),
    (SPENT, results(gpu_count="fail"), "held (drain budget spent: 2 of 25 nodes cordoned by gpucluster-validation, "
                                       "budget 2 (10% of 25, at least 2))", None, True),
    (SPENT, results(gpu_count="pass"), "none", None, False),
], ids=["healthy", "tooling", "cordon", "admin-failing", "admin-passing", "ours-failing", "ours-healed",
        "ours-unjudged", "ours-other-tooling", "ours-not-run", "stale-passing", "stale-failing", "budget-held",
        "budget-passing"])
def test_kubernetes_decision(state, checks, action, reason, held):
    assert kubernetes_decision("gpu01", state, checks, PREFIX, 0.1, 2) == {"action": action, "reason": reason, "held": held}


def test_kubernetes_decision_within_budget_counts_this_systems_cordons_only():
    state = dict(SPENT, gpu03={"unschedulable": False, "mark": None, "resource_version": "7"})
    assert kubernetes_decision("gpu01", state, results(xid="fail"), PREFIX, 0.1, 2)["action"] == "cordoned"


def test_kubernetes_decision_node_not_listed():
    assert kubernetes_decision("gpu09", HEALTHY, results(gpu_count="fail"), PREFIX, 0.1, 2) == {
        "action": "node gpu09 is not in Kubernetes' node list: no action", "reason": None, "held": False}


@pytest.mark.parametrize("action, reason, version, patch", [
    ("cordoned", PREFIX + " xid", "41",
     {"spec": {"unschedulable": True}, "metadata": {"annotations": {CORDON_MARK: PREFIX + " xid"}, "resourceVersion": "41"}}),
    ("uncordoned", None, "41",
     {"spec": {"unschedulable": False}, "metadata": {"annotations": {CORDON_MARK: None}, "resourceVersion": "41"}}),
    ("unmarked", None, None, {"metadata": {"annotations": {CORDON_MARK: None}}}),
    ("none", None, "41", None),
    ("kept cordoned (admin)", None, "41", None),
], ids=["cordon", "uncordon", "unmark", "none", "admin"])
def test_kubernetes_patch(action, reason, version, patch):
    assert kubernetes_patch(CORDON_MARK, action, reason, version) == patch
