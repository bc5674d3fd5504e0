# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_validation_plan: Slurm's and Kubernetes' view of the nodes, the natural host order, each host's
part in the active checks, the checks that run.

Inputs are real captures (scontrol show node from Slurm's own documentation, the DeepOps
``Gres=`` lines, kubectl get nodes of the kubernetes scenario) or, where a test needs a state the
captures do not show, a real capture with one field changed.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._checks import cordon_actions
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._plan import (
    checks_run,
    drained,
    host_plan,
    kubernetes_view,
    module_message,
    natural_key,
    not_responding,
    parse_kubectl_nodes,
    parse_scontrol_nodes,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.validation_helpers import (
    MARK,
    PREFIX,
    SLURM,
    kube_list,
    kube_node,
    kube_view,
    node_text,
    quickstart,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.shared_fixtures import read_fixture


# "   Gres=gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)" of a DGX A100 with MIG (DeepOps)
DEEPOPS_GRES = "dgx-a100-mig-scontrol-show-node-gres.txt"


# ---------------------------------------------------------------------------
# parse_scontrol_nodes, drained
# ---------------------------------------------------------------------------

def test_parse_real_scontrol_show_node():
    assert parse_scontrol_nodes(quickstart()) == {
        "adev1": {"state": "DOWN", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": None},
    }


@pytest.mark.parametrize("state, base, flags, is_drained", [
    ("DOWN*", "DOWN", [], False),
    ("IDLE", "IDLE", [], False),
    ("IDLE+DRAIN", "IDLE", ["DRAIN"], True),
    ("MIXED+DRAIN", "MIXED", ["DRAIN"], True),
    ("ALLOCATED+DRAIN", "ALLOCATED", ["DRAIN"], True),
    ("DOWN+DRAIN+NOT_RESPONDING", "DOWN", ["DRAIN", "NOT_RESPONDING"], True),
    ("IDLE+DRAIN+MAINTENANCE+RESERVED", "IDLE", ["DRAIN", "MAINTENANCE", "RESERVED"], True),
    ("IDLE+DRAIN+INVALID_REG", "IDLE", ["DRAIN", "INVALID_REG"], True),
    ("IDLE+CLOUD+POWERED_DOWN", "IDLE", ["CLOUD", "POWERED_DOWN"], False),
    ("DOWN+NOT_RESPONDING", "DOWN", ["NOT_RESPONDING"], False),
    ("DRAINED", "DRAINED", [], True),
    ("DRAINING", "DRAINING", [], True),
])
def test_states(state, base, flags, is_drained):
    node = parse_scontrol_nodes(node_text(state=state))["adev1"]
    assert (node["state"], node["flags"]) == (base, flags)
    assert drained(node) is is_drained


@pytest.mark.parametrize("gres, gpus", [
    # the DGX A100 MIG node's Gres (DeepOps' scontrol show node | grep Gres)
    ("gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)", 32),
    # its slurm.conf NodeName lines (DeepOps: generated, then edited for MIG)
    ("gpu:8", 8),
    ("gpu:3g.40gb:8,gpu:2g.20gb:8,gpu:1g.10gb:16", 32),
    ("(null)", None),
])
def test_gres_gpu_count(gres, gpus):
    assert parse_scontrol_nodes(node_text(gres=gres))["adev1"]["gpus"] == gpus


def test_real_gres_line_inside_a_node():
    gres_line = read_fixture(SLURM, DEEPOPS_GRES)
    first, rest = quickstart().split("\n", 1)
    nodes = parse_scontrol_nodes(first + "\n" + gres_line + rest)
    assert nodes["adev1"]["gpus"] == 32


@pytest.mark.parametrize("reason, want", [
    # a reason keeps its blanks, colons and equals signs whole; the State= in it is not the node's
    ("gpucluster-validation: xid,hca_ports [root@06/02-14:01:24]", "gpucluster-validation: xid,hca_ports [root@06/02-14:01:24]"),
    ("NHC: check_fs_mount: /scratch State=ro [root@06/02-14:01:24]", "NHC: check_fs_mount: /scratch State=ro [root@06/02-14:01:24]"),
    ("", None),
])
def test_reason_line(reason, want):
    node = parse_scontrol_nodes(node_text(reason=reason))["adev1"]
    assert node["reason"] == want
    assert node["state"] == "DOWN"


def test_several_nodes():
    text = (node_text(state="IDLE+DRAIN", reason="Kill task failed [root@2024-08-08T19:12:57]") + "\n"
            + node_text(name="adev2", state="MIXED", gres="gpu:8") + "\n\n"
            + node_text(name="adev10"))
    assert parse_scontrol_nodes(text) == {
        "adev1": {"state": "IDLE", "flags": ["DRAIN"], "reason": "Kill task failed [root@2024-08-08T19:12:57]",
                  "gpus": None},
        "adev2": {"state": "MIXED", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": 8},
        "adev10": {"state": "DOWN", "flags": [], "reason": "Not responding [slurm@06/02-14:01:24]", "gpus": None},
    }


@pytest.mark.parametrize("text, message", [
    (read_fixture(SLURM, DEEPOPS_GRES),
     "scontrol show node: line 1 comes before any NodeName= line: "
     "Gres=gpu:3g.40gb:8(S:0-1),gpu:2g.20gb:8(S:0-1),gpu:1g.10gb:16(S:0-1)"),
    ("\n\n" + quickstart().split("\n", 1)[1],
     "scontrol show node: line 3 comes before any NodeName= line: RealMemory=4000 TmpDisk=0"),
    (quickstart().replace("State=DOWN* ", ""), "scontrol show node: node adev1 has no State= field"),
])
def test_parse_errors(text, message):
    with pytest.raises(RuleError) as exc:
        parse_scontrol_nodes(text)
    assert str(exc.value) == message


def test_parse_empty():
    assert parse_scontrol_nodes("") == {}
    assert parse_scontrol_nodes("\n\n") == {}


@pytest.mark.parametrize("names, ordered", [
    (["gpu10", "gpu9", "gpu1"], ["gpu1", "gpu9", "gpu10"]),
    (["dgx-a100-12", "dgx-a100-2", "cpu-1"], ["cpu-1", "dgx-a100-2", "dgx-a100-12"]),
])
def test_natural_key(names, ordered):
    assert sorted(names, key=natural_key) == ordered


def test_not_responding():
    """A node just resumed shows IDLE+NOT_RESPONDING until slurmctld's next ping."""
    nodes = parse_scontrol_nodes("\n".join([
        node_text(name="adev1", state="IDLE+NOT_RESPONDING", reason=""),
        node_text(name="adev2", state="IDLE", reason=""),
        node_text(name="adev3"),  # the capture's DOWN*+NOT_RESPONDING node, not asked about
    ]))
    assert not_responding(nodes, ["adev1", "adev2"]) == ["adev1"]
    assert not_responding(nodes, ["adev2"]) == []
    # a node Slurm does not know is not waited for
    assert not_responding(nodes, ["gpu9"]) == []
    assert not_responding({}, []) == []


# ---------------------------------------------------------------------------
# Kubernetes: parse_kubectl_nodes
# ---------------------------------------------------------------------------

def test_parse_kubectl_nodes():
    assert kube_view() == {
        "kdev1": {"node": "kdev1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
        "kdev2": {"node": "kdev2", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
        "kdev3": {"node": "kdev3", "unschedulable": True, "mark": None, "stale": False, "devices": {}},
        "kdev4": {"node": "kdev4", "unschedulable": False, "mark": "gpucluster-validation: gpu_count", "stale": True, "devices": {}},
    }


def test_parse_a_real_kubectl_capture():
    """kubectl get nodes --output=json from molecule/kubernetes (v1.20.2): gpu01 cordoned by the
    validation, gpu02 by an admin; then what the next run does with each."""
    text = read_fixture("kubernetes", "kubectl-get-nodes-v1.20.2-cordons.json")
    view = parse_kubectl_nodes(text, {"cp1": "cp1", "gpu01": "gpu01", "gpu02": "gpu02", "mirror": "mirror"}, MARK)
    assert view == {
        "cp1": {"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
        "gpu01": {"node": "gpu01", "unschedulable": True, "mark": "gpucluster-validation: gpu_count", "stale": False,
                  "devices": {"nvidia.com/gpu": 8}},
        "gpu02": {"node": "gpu02", "unschedulable": True, "mark": None, "stale": False, "devices": {}},
    }
    verdicts = {"cp1": "fail", "gpu01": "pass", "gpu02": "pass"}
    assert cordon_actions(verdicts, {"cp1": ["services"]}, view, "drain", PREFIX) == {
        "cp1": {"node": "cp1", "kind": "cordoned", "reason": "gpucluster-validation: services", "unmark": False},
        "gpu01": {"node": "gpu01", "kind": "uncordoned", "reason": "gpucluster-validation: gpu_count", "unmark": True},
        "gpu02": {"node": "gpu02", "kind": "kept cordoned (admin)", "reason": None, "unmark": False},
    }


def test_parse_kubectl_nodes_maps_inventory_names_and_leaves_out_unknown_hosts():
    text = kube_list(kube_node("gpu01.cluster.lan", True, {MARK: "gpucluster-validation: xid"}), kube_node("cp1"))
    assert parse_kubectl_nodes(text, {"gpu01": "gpu01.cluster.lan", "cp1": "cp1", "gpu02": "gpu02"}, MARK) == {
        "gpu01": {"node": "gpu01.cluster.lan", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
        "cp1": {"node": "cp1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
    }
    assert parse_kubectl_nodes(kube_list(), {"cp1": "cp1"}, MARK) == {}


@pytest.mark.parametrize("text, message", [
    ("error: the server doesn't have a resource type \"nodes\"", "kubectl get nodes: the output is not JSON "
     "(Expecting value: line 1 column 1 (char 0))"),
    ('{"kind": "Node", "metadata": {"name": "cp1"}}', "kubectl get nodes: the output has no items list (a NodeList)"),
    ("[]", "kubectl get nodes: the output has no items list (a NodeList)"),
    ('{"items": [{"metadata": {"name": "cp1"}}, {"metadata": {}}]}', "kubectl get nodes: item 1 has no metadata.name"),
    ('{"items": ["cp1"]}', "kubectl get nodes: item 0 has no metadata.name"),
    ('{"items": [{"metadata": {"name": "cp1"}, "spec": {"unschedulable": "true"}}]}',
     "kubectl get nodes: node cp1: spec.unschedulable is not true or false (got 'true')"),
    ('{"items": [{"metadata": {"name": "gpu1"}, "status": {"allocatable": {"cpu": "2", "nvidia.com/gpu": "8k"}}}]}',
     "kubectl get nodes: node gpu1: allocatable nvidia.com/gpu is '8k', not a whole number"),
], ids=["text", "one-node", "list", "no-name", "string-item", "string-unschedulable", "quantity"])
def test_parse_kubectl_nodes_errors(text, message):
    with pytest.raises(RuleError) as exc:
        parse_kubectl_nodes(text, {"cp1": "cp1"}, MARK)
    assert str(exc.value) == message


# ---------------------------------------------------------------------------
# What the tasks run: host_plan, checks_run, kubernetes_view
# ---------------------------------------------------------------------------

BOTH = ["passive", "active"]
COMPUTE = ["gpu01", "gpu02", "cpu01"]
IB_WRITE_BW = "/usr/bin/ib_write_bw"


def host_part(active, programs, ddp, fabric_tools):
    return {"active": active, "programs": programs, "ddp": ddp, "fabric_tools": fabric_tools}


@pytest.mark.parametrize("host, checks, controller, compute, ddp, perftest, want", [
    # the controller drives the GPU jobs; it is no compute node: no DDP, no fabric tools
    ("head", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(True, ["gpucluster-gpu-jobs"], False, False)),
    # a compute node runs ib_write_bw pairs and the DDP smoke test
    ("gpu01", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(True, ["gpucluster-ib-pair"], True, True)),
    # no perftest named: no ib pair program; DDP off
    ("cpu01", BOTH, "head", COMPUTE, False, "", host_part(True, [], False, True)),
    # a controller that computes too runs both programs
    ("head", BOTH, "head", ["head"], True, IB_WRITE_BW,
     host_part(True, ["gpucluster-gpu-jobs", "gpucluster-ib-pair"], True, True)),
    # a host that is neither (a login node)
    ("login", BOTH, "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    # no Slurm controller ('') and a host of no group
    ("login", BOTH, "", [], True, IB_WRITE_BW, host_part(False, [], False, False)),
    # the active checks are not asked for: nothing anywhere
    ("head", ["passive"], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    ("gpu01", ["passive"], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
    ("gpu01", [], "head", COMPUTE, True, IB_WRITE_BW, host_part(False, [], False, False)),
])
def test_host_plan(host, checks, controller, compute, ddp, perftest, want):
    got = host_plan(host, checks, controller, compute, ddp, perftest)
    assert got == want
    # the tasks' when: conditions take them as they are: real booleans
    assert all(isinstance(got[key], bool) for key in ("active", "ddp", "fabric_tools"))


NO_ACTIVE = ("no Slurm controller (group slurm_controller) and no Kubernetes control plane (group k8s_control_plane) in the "
             "inventory: the active checks run as Slurm jobs and Kubernetes pods")


@pytest.mark.parametrize("checks, controller, api, want", [
    (BOTH, "head", "", {"run": BOTH, "not_run": {}}),
    (BOTH, "", "cp1", {"run": BOTH, "not_run": {}}),
    (BOTH, "head", "cp1", {"run": BOTH, "not_run": {}}),
    # neither: the active checks are named as not run, with why
    (BOTH, "", "", {"run": ["passive"], "not_run": {"active": NO_ACTIVE}}),
    (["active"], "", "", {"run": [], "not_run": {"active": NO_ACTIVE}}),
    # not asked for: nothing to name
    (["passive"], "", "", {"run": ["passive"], "not_run": {}}),
    ([], "", "", {"run": [], "not_run": {}}),
])
def test_checks_run(checks, controller, api, want):
    assert checks_run(checks, controller, api, "slurm_controller", "k8s_control_plane") == want


def node_read(items=None, **result):
    """A registered kubernetes.core.k8s_info read of kind Node (the keys the view reads and some)."""
    return dict({"changed": False, "api_found": True, "resources": items or [], "failed": False}, **result)


def failed_read(msg):
    """A failed read as ignore_errors keeps it (ansible-core 2.19 frames the module's message)."""
    return {"changed": False, "failed": True, "exception": "(traceback unavailable)", "msg": msg}


REFUSED = ("Failed to get client due to HTTPSConnectionPool(host='10.0.0.1', port=6443): Max retries exceeded with url: "
           "/version (Caused by NewConnectionError(\"Failed to establish a new connection: [Errno 111] Connection refused\"))")
KDEV = json.loads(kube_list(kube_node("kdev1"), kube_node("kdev2", True, {MARK: "gpucluster-validation: xid"})))["items"]
KDEV_VIEW = {
    "kdev1": {"node": "kdev1", "unschedulable": False, "mark": None, "stale": False, "devices": {}},
    "kdev2": {"node": "kdev2", "unschedulable": True, "mark": "gpucluster-validation: xid", "stale": False, "devices": {}},
}


@pytest.mark.parametrize("read, api, want", [
    # read on the control plane node: its view, and the node it was read on
    (node_read(KDEV), "cp1", {"nodes": KDEV_VIEW, "read": "cp1"}),
    # no Kubernetes: the read was skipped
    ({"changed": False, "skipped": True, "skip_reason": "Conditional result (False) was False", "false_condition": "x"}, "",
     {"nodes": {}, "read": "none"}),
    # the read failed: no view, the report says why (the module's message, without ansible-core's frame)
    (failed_read("Task failed: Module failed: " + REFUSED), "cp1",
     {"nodes": {}, "read": "cp1 (reading the nodes failed, nothing cordoned: %s)" % REFUSED[:200]}),
    # no client on the node: the interpreter is missing
    (failed_read("Task failed: Module failed: /opt/gpucluster/kubernetes-client/bin/python: not found"), "cp1",
     {"nodes": {}, "read": "cp1 (reading the nodes failed, nothing cordoned: /opt/gpucluster/kubernetes-client/bin/python: "
                           "not found)"}),
    # a failure without a message: nothing to say
    ({"failed": True}, "cp1", {"nodes": {}, "read": "cp1 (reading the nodes failed, nothing cordoned: )"}),
    # at most 200 characters of it
    (failed_read("x" * 250), "cp1", {"nodes": {}, "read": "cp1 (reading the nodes failed, nothing cordoned: %s)" % ("x" * 200)}),
    # no resources at all (the task did not run): no view
    ({"msg": "no resources"}, "cp1", {"nodes": {}, "read": "cp1 (reading the nodes failed, nothing cordoned: no resources)"}),
])
def test_kubernetes_view(read, api, want):
    assert kubernetes_view(read, api, {"kdev1": "kdev1", "kdev2": "kdev2", "kdev3": "kdev3"}, MARK) == want


def test_kubernetes_view_of_a_read_that_is_not_a_node_list():
    with pytest.raises(RuleError, match="^kubectl get nodes: item 0 has no metadata.name"):
        kubernetes_view(node_read([{"kind": "Status"}]), "cp1", {}, MARK)


def test_parse_kubectl_nodes_reads_k8s_info_as_kubectl():
    """The nodes as kubernetes.core.k8s_info registers them (the role's read) read as kubectl's JSON of them."""
    names = {"kdev1": "kdev1", "kdev2": "kdev2"}
    assert parse_kubectl_nodes(node_read(KDEV), names, MARK) == parse_kubectl_nodes(kube_list(*KDEV), names, MARK) == KDEV_VIEW


@pytest.mark.parametrize("text, want", [
    (None, ""),
    ("Task failed: Module failed: Pod gpucluster-validation/x not found.", "Pod gpucluster-validation/x not found."),
    ("Task failed: Action failed: Unknown error.", "Unknown error."),
    # kubernetes.core quotes the API server's Status body: its message, as kubectl prints it
    ('Failed to apply object: b\'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods '
     '\\\\"gpucluster-validation-gpu-cp1\\\\" is forbidden: error looking up service account gpc-val/default: '
     'serviceaccount \\\\"default\\\\" not found","reason":"Forbidden","details":{"name":"gpucluster-validation-gpu-cp1",'
     '"kind":"pods"},"code":403}\\n\'',
     'Failed to apply object: pods "gpucluster-validation-gpu-cp1" is forbidden: error looking up service account '
     'gpc-val/default: serviceaccount "default" not found'),
    # a body that is not a Status is left as it is
    ("Failed to patch object: b'{not json}'", "Failed to patch object: b'{not json}'"),
])
def test_module_message(text, want):
    assert module_message(text) == want
