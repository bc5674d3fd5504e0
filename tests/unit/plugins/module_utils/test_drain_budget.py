# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_health's drain budget (issue 32): how many nodes this system may keep drained at once, which
of the nodes that want a drain get it, and which nodes Slurm lists as drained by this system
(``scontrol show node`` from Slurm's own documentation, one field changed where a state is needed)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.module_utils._health import (
    DRAIN_BUDGET_FRACTION,
    DRAIN_BUDGET_MIN_NODES,
    HealthError,
    budget_split,
    drain_budget,
    RMA_REASON_PREFIX,
    drained_by,
    natural_key,
    scontrol_nodes,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    PREFIX,
    node_text,
)


def test_defaults():
    assert (DRAIN_BUDGET_FRACTION, DRAIN_BUDGET_MIN_NODES) == (0.1, 2)


@pytest.mark.parametrize("total, fraction, min_nodes, want", [
    (1, 0.1, 2, 2),        # a one-node cluster: the floor, more than the cluster has
    (1, 0.1, 0, 0),        # no floor: 10 % of one node is none
    (19, 0.1, 2, 2),       # 1.9 rounds down, the floor wins
    (20, 0.1, 2, 2),
    (30, 0.1, 2, 3),       # 0.1 * 30 is 3.0000000000000004 in binary
    (100, 0.29, 1, 29),    # 0.29 * 100 is 28.999999999999996 in binary: still 29
    (1000, 0.1, 2, 100),
    (10, 1.0, 0, 10),
    (10, 0.0, 0, 0),       # both 0: this system drains nothing
    (0, 0.1, 2, 2),
])
def test_drain_budget(total, fraction, min_nodes, want):
    assert drain_budget(total, fraction, min_nodes) == want


WHY_20 = "drain budget spent: 2 of 20 nodes drained by gpucluster-validation, budget 2 (10% of 20, at least 2)"


@pytest.mark.parametrize("total, ours, wanted, fraction, min_nodes, drain, held, drained, why", [
    # room for both
    (20, [], ["gpu2", "gpu1"], 0.1, 2, ["gpu1", "gpu2"], [], 2, ""),
    # natural host order: gpu2 before gpu10, the third is held
    (20, [], ["gpu10", "gpu2", "gpu3"], 0.1, 2, ["gpu2", "gpu3"], ["gpu10"], 2, WHY_20),
    # one already drained by us: one more
    (20, ["gpu7"], ["gpu1", "gpu2"], 0.1, 2, ["gpu1"], ["gpu2"], 2, WHY_20),
    # drained by us, failing again (a new reason): drained again without spending budget
    (20, ["gpu1", "gpu2"], ["gpu2", "gpu3"], 0.1, 2, ["gpu2"], ["gpu3"], 2, WHY_20),
    (20, ["gpu1", "gpu2"], ["gpu1", "gpu2"], 0.1, 2, ["gpu1", "gpu2"], [], 2, ""),
    # over budget already (the budget was lowered, or two nodes drained at the same moment): nothing new
    (20, ["gpu1", "gpu2", "gpu3"], ["gpu4"], 0.1, 2, [], ["gpu4"], 3,
     "drain budget spent: 3 of 20 nodes drained by gpucluster-validation, budget 2 (10% of 20, at least 2)"),
    # a one-node cluster: the floor lets its node be drained
    (1, [], ["gpu1"], 0.1, 2, ["gpu1"], [], 1, ""),
    # budget 0: every drain held
    (1, [], ["gpu1"], 0.1, 0, [], ["gpu1"],
     0, "drain budget spent: 0 of 1 nodes drained by gpucluster-validation, budget 0 (10% of 1, at least 0)"),
    # 12.5 % of 40 is 5
    (40, ["a1", "a2", "a3", "a4"], ["b1", "b2"], 0.125, 1, ["b1"], ["b2"], 5,
     "drain budget spent: 5 of 40 nodes drained by gpucluster-validation, budget 5 (12.5% of 40, at least 1)"),
    # nothing wanted
    (20, ["gpu1"], [], 0.1, 2, [], [], 1, ""),
])
def test_budget_split(total, ours, wanted, fraction, min_nodes, drain, held, drained, why):
    assert budget_split(total, ours, wanted, fraction, min_nodes, PREFIX) == {
        "drain": drain, "held": held, "budget": drain_budget(total, fraction, min_nodes), "drained": drained, "why": why}


def test_budget_split_says_cordoned_for_kubernetes():
    assert budget_split(3, ["k1", "k2"], ["k3"], 0.1, 2, PREFIX, "cordoned")["why"] == (
        "drain budget spent: 2 of 3 nodes cordoned by gpucluster-validation, budget 2 (10% of 3, at least 2)")


def test_budget_split_prefix_without_colon():
    assert budget_split(1, ["n1"], ["n2"], 0.1, 1, "validation")["why"] == (
        "drain budget spent: 1 of 1 nodes drained by validation, budget 1 (10% of 1, at least 1)")


def cluster():
    """Five nodes as Slurm lists them: two drained by this system (one still draining), one by an
    admin, one idle, one down and not responding."""
    return "\n".join([
        node_text(name="gpu1", state="IDLE+DRAIN", reason="gpucluster-validation: xid [root@06/02-14:01:24]"),
        node_text(name="gpu2", state="IDLE", reason=""),
        node_text(name="gpu10", state="MIXED+DRAIN", reason="gpucluster-validation: gpu_count [slurm@06/02-14:01:24]"),
        node_text(name="gpu3", state="IDLE+DRAIN", reason="Kill task failed [root@2024-08-08T19:12:57]"),
        node_text(name="gpu4"),
    ])


def test_drained_by_counts_only_this_systems_drains():
    nodes = scontrol_nodes(cluster())
    assert sorted(nodes, key=natural_key) == ["gpu1", "gpu2", "gpu3", "gpu4", "gpu10"]
    assert drained_by(nodes, PREFIX) == ["gpu1", "gpu10"]
    # a reason that is ours on a node no longer drained (resumed by hand) is not a drain
    assert drained_by(scontrol_nodes(node_text(name="gpu1", state="IDLE", reason="gpucluster-validation: xid")), PREFIX) == []


@pytest.mark.parametrize("state, reason, want", [
    # playbooks/quarantine.yml's verdict: taken out by this system, so the budget counts it
    ("IDLE+DRAIN", "rma: dcgm_diag,gpu_count [root@06/02-14:01:24]", ["gpu1"]),
    ("DOWN+DRAIN", "rma: xid", ["gpu1"]),
    # the flapping hold keeps this system's prefix
    ("IDLE+DRAIN", "gpucluster-validation: flapping gpu_count", ["gpu1"]),
    # an rma: reason on a node someone resumed is no drain
    ("IDLE", "rma: xid", []),
    # an admin's reason that merely mentions an RMA is an admin's
    ("IDLE+DRAIN", "waiting for RMA rma: xid", []),
    ("IDLE+DRAIN", "RMA: xid", []),
])
def test_drained_by_counts_rma_drains(state, reason, want):
    assert RMA_REASON_PREFIX == "rma:"
    assert drained_by(scontrol_nodes(node_text(name="gpu1", state=state, reason=reason)), PREFIX) == want


@pytest.mark.parametrize("text, message", [
    ("Reason=xid\n", "scontrol show node: line 1 comes before any NodeName= line: Reason=xid"),
    ("NodeName=gpu1 CPUs=8\n", "scontrol show node: node gpu1 has no State= field"),
    ("slurm_load_node error: Unable to contact slurm controller (connect failure)\n",
     "scontrol show node: line 1 comes before any NodeName= line: "
     "slurm_load_node error: Unable to contact slurm controller (connect failure)"),
])
def test_scontrol_nodes_refuses_what_is_not_a_listing(text, message):
    with pytest.raises(HealthError) as exc:
        scontrol_nodes(text)
    assert str(exc.value) == message
