# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm role's node and GPU lines: this run's definitions, the files' last known ones for
failed or absent nodes, the fact cache's, and nodes left out rather than written empty."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.slurm._nodes import (
    definition_text, node_definition, node_lines, parse_gres_lines, parse_node_lines, restart_changes,
)

COMPUTES = ["master", "worker1", "worker2"]
# What the role records from `slurmd -C` of a lab node (RealMemory already scaled).
BIG = {"CPUs": 64, "Boards": 1, "SocketsPerBoard": 2, "CoresPerSocket": 16, "ThreadsPerCore": 2,
       "RealMemory": 483183, "Gres": "gpu:tesla_v100s-pcie-32gb:8"}
SMALL = {"CPUs": 8, "Boards": 1, "SocketsPerBoard": 1, "CoresPerSocket": 4, "ThreadsPerCore": 2,
         "RealMemory": 30000, "Gres": "gpu:tesla_v100s-pcie-32gb:2"}
BIG_TEXT = ("Boards=1 CPUs=64 CoresPerSocket=16 Gres=gpu:tesla_v100s-pcie-32gb:8 RealMemory=483183 "
            "SocketsPerBoard=2 ThreadsPerCore=2")
SMALL_TEXT = ("Boards=1 CPUs=8 CoresPerSocket=4 Gres=gpu:tesla_v100s-pcie-32gb:2 RealMemory=30000 "
              "SocketsPerBoard=1 ThreadsPerCore=2")
GRES_BIG = ["Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia[0-7]"]
GRES_SMALL = ["Name=gpu Type=tesla_v100s-pcie-32gb File=/dev/nvidia[0-1]"]
# The files as the role wrote them when every node was up (worker2 the small one).
# Groups are sorted by their text ("CPUs=64" before "CPUs=8"), as Jinja's groupby sorted them.
FILE_NODES = ["NodeName=master,worker1 %s State=UNKNOWN" % BIG_TEXT,
              "NodeName=worker2 %s State=UNKNOWN" % SMALL_TEXT,
              "PartitionName=gpu Nodes=master,worker[1-2] Default=YES MaxTime=INFINITE State=UP"]
FILE_GRES = ["NodeName=worker2 " + GRES_SMALL[0], "NodeName=master,worker1 " + GRES_BIG[0]]
ALL_DEFS = {"master": BIG, "worker1": BIG, "worker2": SMALL}
ALL_GRES = {"master": GRES_BIG, "worker1": GRES_BIG, "worker2": GRES_SMALL}


SLURMD_C = ("NodeName=gpu01 CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=515000 "
            "UpTime=3-04:05:06")
DETECTED = {"CPUs": "64", "Boards": "1", "SocketsPerBoard": "2", "CoresPerSocket": "16", "ThreadsPerCore": "2"}


@pytest.mark.parametrize("slurmd_c, args, definition", [
    (SLURMD_C, (0.95,), dict(DETECTED, RealMemory=489250)),
    (SLURMD_C, (0.95, "gpu:a100:8", ["ib", "a100"], 10),
     dict(DETECTED, RealMemory=489250, Gres="gpu:a100:8", Features="ib,a100", Weight=10)),
    # Nothing given: no Gres, Features or Weight; a weight of 0 is one.
    (SLURMD_C, (1, "", [], None), dict(DETECTED, RealMemory=515000)),
    (SLURMD_C, (0.9, "", [], 0), dict(DETECTED, RealMemory=463500, Weight=0)),
    # Rounded down, as `| int` did; a word given twice counts once (the last); no memory reads 0.
    ("NodeName=a RealMemory=12.7 CPUs=2 CPUs=3 UpTime=0", (1,), {"CPUs": "3", "RealMemory": 12}),
    ("NodeName=a CPUs=2", (0.95,), {"CPUs": "2", "RealMemory": 0}),
    ("NodeName=a CPUs=2 RealMemory=lots", (0.95,), {"CPUs": "2", "RealMemory": 0}),
])
def test_node_definition_from_slurmd_c(slurmd_c, args, definition):
    assert node_definition(slurmd_c, *args) == definition


def test_definition_text_sorts_keys():
    assert definition_text({"b": 2, "a": "x"}) == "a=x b=2"


@pytest.mark.parametrize("lines, expected", [
    (FILE_NODES, {"worker2": SMALL_TEXT, "master": BIG_TEXT, "worker1": BIG_TEXT}),
    (["NodeName=gpu[01-02] CPUs=4 State=UNKNOWN", "NodeName=DEFAULT CPUs=2", "# NodeName=x", "SlurmUser=slurm"],
     {"gpu01": "CPUs=4", "gpu02": "CPUs=4"}),
    (["NodeName=n1 CPUs=4 State=DRAIN Weight=2"], {"n1": "CPUs=4 Weight=2"}),
    ([], {}),
])
def test_parse_node_lines(lines, expected):
    assert parse_node_lines(lines) == expected


@pytest.mark.parametrize("lines, message", [
    (["NodeName=gpu[01-x] CPUs=4"], "slurm.conf: cannot read the line 'NodeName=gpu[01-x] CPUs=4' ("),
    (["NodeName= CPUs=4"], "slurm.conf: the line 'NodeName= CPUs=4' names no host"),
])
def test_parse_node_lines_refuses_unreadable_lines(lines, message):
    with pytest.raises(RuleError) as exc:
        parse_node_lines(lines)
    assert str(exc.value).startswith(message)


def test_parse_gres_lines_keeps_each_hosts_lines_in_order():
    lines = ["# header", "NodeName=a,b AutoDetect=off", "NodeName=a Name=gpu File=/dev/nvidia0",
             "NodeName=b Name=gpu File=/dev/nvidia[0-1]"]
    assert parse_gres_lines(lines) == {"a": ["AutoDetect=off", "Name=gpu File=/dev/nvidia0"],
                                       "b": ["AutoDetect=off", "Name=gpu File=/dev/nvidia[0-1]"]}


def test_every_node_in_the_run_renders_what_the_role_wrote():
    result = node_lines(COMPUTES, COMPUTES, ALL_DEFS, ALL_GRES, [], [])
    assert result["node_lines"] == FILE_NODES[:2]
    assert result["gres_lines"] == FILE_GRES
    assert result["hosts"] == COMPUTES
    assert result["source"] == {"master": "run", "worker1": "run", "worker2": "run"}
    assert result["left_out"] == []
    assert result["messages"] == []


@pytest.mark.parametrize("case, definitions, gres", [
    # worker2 unreachable before the slurm play: no facts at all.
    ("unreachable", {"master": BIG, "worker1": BIG, "worker2": None}, {"master": GRES_BIG, "worker1": GRES_BIG}),
    # worker2 failed in gres_conf: its definition of an earlier run is in the fact cache, but the
    # scheduler's (the file's) wins.
    ("failed, stale cache", {"master": BIG, "worker1": BIG, "worker2": BIG}, ALL_GRES),
])
def test_a_failed_node_keeps_its_last_known_definition(case, definitions, gres):
    result = node_lines(COMPUTES, ["master", "worker1"], definitions, gres, FILE_NODES, FILE_GRES)
    assert result["node_lines"] == FILE_NODES[:2], case
    assert result["gres_lines"] == FILE_GRES, case
    assert result["source"]["worker2"] == "file"
    assert result["hosts"] == COMPUTES
    assert result["messages"] == [
        "kept the last known definition in slurm.conf and gres.conf of worker2 (not in this run or failed in it)"]


def test_a_node_outside_the_run_and_the_files_comes_from_the_cache():
    result = node_lines(COMPUTES, ["master"], ALL_DEFS, ALL_GRES, FILE_NODES[:1], FILE_GRES[1:])
    assert result["source"] == {"master": "run", "worker1": "file", "worker2": "cache"}
    assert result["node_lines"] == FILE_NODES[:2]
    assert result["gres_lines"] == FILE_GRES
    assert result["messages"][1] == ("took the definition of worker2 from the fact cache (not in this run or failed "
                                     "in it, and not in slurm.conf yet)")


def test_a_node_known_nowhere_is_left_out_not_written_empty():
    result = node_lines(COMPUTES, ["master", "worker1"], {"master": BIG, "worker1": BIG}, {}, [], [])
    assert result["node_lines"] == ["NodeName=master,worker1 %s State=UNKNOWN" % BIG_TEXT]
    assert result["gres_lines"] == []
    assert result["hosts"] == ["master", "worker1"]
    assert result["left_out"] == ["worker2"]
    assert result["messages"] == [
        "left worker2 out of slurm.conf, gres.conf and the partitions: no definition known (not in this run or "
        "failed before reporting its hardware, not in slurm.conf, not in the fact cache); run the role with it "
        "reachable to add it"]


def test_this_runs_definition_wins_over_the_file():
    bigger = dict(SMALL, RealMemory=60000)
    result = node_lines(COMPUTES, COMPUTES, dict(ALL_DEFS, worker2=bigger), ALL_GRES, FILE_NODES, FILE_GRES)
    assert result["node_lines"][1] == "NodeName=worker2 %s State=UNKNOWN" % SMALL_TEXT.replace("30000", "60000")


def test_a_live_node_without_a_definition_falls_back_to_the_file():
    # Check mode on a node whose slurmd is not installed yet prints no `slurmd -C`.
    result = node_lines(COMPUTES, COMPUTES, {"master": BIG, "worker1": BIG}, {}, FILE_NODES, FILE_GRES)
    assert result["source"]["worker2"] == "file"
    assert result["node_lines"] == FILE_NODES[:2]


def test_nodes_without_gpus_get_no_gres_lines():
    result = node_lines(["c1", "g1"], ["c1", "g1"], {"c1": {"CPUs": 4}, "g1": {"CPUs": 8}},
                        {"c1": [], "g1": ["Name=gpu File=/dev/nvidia0"]}, [], [])
    assert result["gres_lines"] == ["NodeName=g1 Name=gpu File=/dev/nvidia0"]
    assert result["node_lines"] == ["NodeName=c1 CPUs=4 State=UNKNOWN", "NodeName=g1 CPUs=8 State=UNKNOWN"]


def test_hostlists_are_compressed():
    hosts = ["gpu%02d" % n for n in range(1, 11)]
    result = node_lines(hosts, hosts, {h: {"CPUs": 4} for h in hosts}, {}, [], [])
    assert result["node_lines"] == ["NodeName=gpu[01-10] CPUs=4 State=UNKNOWN"]


# ---------------------------------------------------------------------------
# restart_changes: the settings only a restart applies before Slurm 23.11
# ---------------------------------------------------------------------------

KEYS = ["AuthType", "PluginDir", "SlurmctldHost", "SlurmctldParameters", "SlurmctldPort", "SlurmdPort",
        "StateSaveLocation"]
# The lines of those settings in a slurm.conf the role wrote for two controllers (configless).
ON_NODE = ["SlurmctldHost=ctl1(10.0.0.1)", "SlurmctldHost=ctl2(10.0.0.2)", "AuthType=auth/munge",
           "SlurmctldParameters=enable_configless", "SlurmctldPort=6817", "SlurmdPort=6818",
           "StateSaveLocation=/var/spool/slurmctld/state"]
NEW = ["# managed by Ansible", "ClusterName=lab"] + ON_NODE + ["SchedulerType=sched/backfill",
                                                               "NodeName=gpu01 CPUs=64 State=UNKNOWN"]


@pytest.mark.parametrize("new, old, changed", [
    (NEW, ON_NODE, []),
    # the same lines in another order of the settings: no restart
    (NEW, list(reversed(ON_NODE[2:])) + ON_NODE[:2], []),
    # the backup promoted to primary: the order of SlurmctldHost is the failover order
    (NEW[:2] + [ON_NODE[1], ON_NODE[0]] + NEW[4:], ON_NODE, ["SlurmctldHost"]),
    # configless turned on again, a backup controller added
    ([line.replace("enable_configless", "enable_configless,idle_on_node_suspend") for line in NEW]
     + ["SlurmctldHost=ctl3(10.0.0.3)"], ON_NODE, ["SlurmctldHost", "SlurmctldParameters"]),
    # a setting removed, one added
    ([line for line in NEW if not line.startswith("SlurmdPort=")] + ["PluginDir=/usr/lib/slurm"], ON_NODE,
     ["PluginDir", "SlurmdPort"]),
    # other settings do not count; a key that is the prefix of another is not confused with it
    (NEW + ["SlurmctldPidFile=/run/slurmctld.pid"], ON_NODE + ["SlurmctldPidFile=/var/run/slurmctld.pid"], []),
    # a file written by hand with none of these lines (ControlMachine=, the old name): all set now change
    (NEW, [], ["AuthType", "SlurmctldHost", "SlurmctldParameters", "SlurmctldPort", "SlurmdPort", "StateSaveLocation"]),
], ids=["same", "reordered-settings", "failover-order", "changed-and-added", "removed-and-added", "other-keys",
        "none-of-them-before"])
def test_restart_changes(new, old, changed):
    assert restart_changes(new, old, KEYS) == changed


def test_restart_changes_without_slurm_conf_before():
    """No slurm.conf on the node before: no daemon runs with its settings, nothing to restart."""
    assert restart_changes(NEW, [], KEYS, existed=False) == []
    assert restart_changes(NEW, ON_NODE, KEYS, existed=False) == []
