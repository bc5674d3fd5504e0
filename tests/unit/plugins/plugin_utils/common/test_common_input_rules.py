# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one input check: the registry of the roles' rules, the dispatch by role name, the hosts whose
values each role's rules read and how those values are gathered (exact values and messages)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _input_rules as c
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import PlayHosts, RoleInput, RuleError
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils import role_specs

PLAY = PlayHosts(batch=("n1",), hosts=("n1", "n2"), all=("n1", "n2", "n3"))
GROUPS = {"all": ["n1", "n2", "n3", "outside"], "compute": ["n2", "outside"]}


# ----------------------------------------------------------------------------- the registry

def test_every_role_with_an_argument_spec_has_rules():
    roles = sorted(p.name for p in (role_specs.ROOT / "roles").iterdir()
                   if (p / "meta" / "argument_specs.yml").is_file() and p.name != "common")
    assert sorted(c.RULES) == roles


@pytest.mark.parametrize("role, heading", [
    ("slurm", "bad variables, no host was changed"),
    ("validation", "bad input, no host was touched"),
    ("base_os", "bad input, no host was changed"),
    ("gpu_operator", "bad input, no host was changed"),
])
def test_each_role_keeps_its_heading(role, heading):
    assert c.RULES[role].heading == heading


@pytest.mark.parametrize("role, expected", [
    ("nvidia_driver", ["n1"]),
    ("cuda", ["n1"]),
    ("ofed", ["n1"]),
    ("container_toolkit", ["n1"]),
    ("kubernetes", ["n1"]),
    ("base_os", ["n1", "n2"]),
    ("monitoring", ["n1", "n2", "n3"]),
    ("validation", ["n1", "n2", "n3"]),
    ("nfs", ["n1", "n2", "n3", "outside"]),
    ("slurm", ["n2", "outside"]),
    ("gpu_operator", []),
    ("training_operator", []),
])
def test_the_hosts_each_role_reads(role, expected):
    assert c.rule_hosts(role, {"slurm_compute_group": "compute"}, PLAY, GROUPS) == expected


def test_the_inventory_adds_a_play_host_it_lacks_and_names_each_host_once():
    assert c.inventory({}, PlayHosts(all=("n1", "extra")), {"all": ["n1", "n2"]}) == ["n1", "n2", "extra"]
    assert c.rule_hosts("slurm", {"slurm_compute_group": "compute"}, PLAY, {"compute": ["n2", "n2"]}) == ["n2"]


def test_slurm_reads_no_host_when_its_compute_group_is_not_in_the_inventory():
    assert c.rule_hosts("slurm", {"slurm_compute_group": "gpu"}, PLAY, GROUPS) == []


@pytest.mark.parametrize("role", ["gpucluster.core.slurm", "slurm"])
def test_a_role_is_found_by_its_short_or_full_name(role):
    assert c.rules_of(role) is c.RULES["slurm"]
    assert c.role_name(role) == "slurm"


@pytest.mark.parametrize("role, message", [
    ("gpucluster.core.probe", "input_rule_failure: the role 'probe' has no input rules (the roles that have: base_os, "
                              "container_toolkit, cuda, gpu_operator, kubernetes, monitoring, nfs, nvidia_driver, ofed, "
                              "slurm, training_operator, validation)"),
    ("", "input_rule_failure: the role must be a role name (got '')"),
    (None, "input_rule_failure: the role must be a role name (got None)"),
])
def test_an_unknown_role_is_a_clear_error(role, message):
    with pytest.raises(RuleError) as exc:
        c.rules_of(role)
    assert str(exc.value) == message


@pytest.mark.parametrize("play, expected", [
    ({"batch": ["a"], "hosts": ["a", "b"], "all": ["a", "b", "c"]}, PlayHosts(("a",), ("a", "b"), ("a", "b", "c"))),
    ({}, PlayHosts()),
])
def test_the_plays_hosts(play, expected):
    assert c.play_of(play) == expected


@pytest.mark.parametrize("play", [["a"], {"batch": ["a"], "other": []}])
def test_the_plays_hosts_of_the_wrong_shape(play):
    with pytest.raises(RuleError, match="^input_rule_failure: the play's hosts must be a dict with batch, hosts and all"):
        c.play_of(play)


# ----------------------------------------------------------------------------- the values

SHARED = {"x_port": 80, "x_name": "play", "x_secret": "s3cret"}


def test_a_hosts_own_reading_wins_then_its_inventory_then_the_play():
    own = {"n1": {"x_port": 81, "x_context": "driver"}}          # n1 read its own values (no secret)
    hostvars = {"n1": {"x_port": 1, "x_secret": "own"},             # ignored where n1 read its own
                "n2": {"x_name": "n2-inventory"}}                   # n2 did not read: its inventory's
    assert c.gather(["x_port", "x_name", "x_secret"], ["n1", "n2", "n3"], own, hostvars, SHARED) == {
        "n1": {"x_port": 81, "x_name": "play", "x_secret": "own", "x_context": "driver"},
        "n2": {"x_port": 80, "x_name": "n2-inventory", "x_secret": "s3cret"},
        "n3": {"x_port": 80, "x_name": "play", "x_secret": "s3cret"},
    }


def test_a_name_nobody_sets_is_left_out_and_the_hosts_keep_their_order():
    values = c.gather(["x_port", "x_unset"], ["n2", "n1"], {}, {}, SHARED)
    assert list(values) == ["n2", "n1"]
    assert values["n1"] == {"x_port": 80}


def test_the_input_is_left_unchanged():
    own = {"n1": {"x_port": 81}}
    c.gather(["x_port", "x_name"], ["n1"], own, {}, SHARED)
    assert own == {"n1": {"x_port": 81}}


# ----------------------------------------------------------------------------- the dispatch

def test_the_dispatch_gives_the_roles_rules_what_they_read(monkeypatch):
    seen = []

    def rules(given):
        seen.append(given)
        return ["host 'n1': probe_port: must be within 1-65535 (got 0)", "probe_name: must be set"]

    monkeypatch.setitem(c.RULES, "probe", c.RoleRules(rules, c.batch))
    failure = c.input_rule_failure("gpucluster.core.probe", {"n1": {"probe_port": 0}}, {"probe_name": ""}, PLAY, GROUPS)
    assert failure == ("probe: bad input, no host was changed: host 'n1': probe_port: must be within 1-65535 (got 0); "
                       "probe_name: must be set")
    assert seen == [RoleInput(hosts={"n1": {"probe_port": 0}}, shared={"probe_name": ""}, groups=GROUPS, play=PLAY)]


def test_no_message_is_no_failure(monkeypatch):
    monkeypatch.setitem(c.RULES, "probe", c.RoleRules(lambda given: [], c.batch))
    assert c.input_rule_failure("probe", {}, {}, PLAY, GROUPS) == ""
    assert c.input_rule_errors("probe", {}, {}, PLAY, GROUPS) == []


def test_a_roles_rules_through_the_registry():
    # slurm: the play's values and each compute node's own (here one bad node weight), with its heading.
    values = {"gpu01": {"slurm_node_weight": -1}}
    shared = {"slurm_compute_group": "compute", "slurm_controller_group": "ctl", "slurm_dbd_group": "dbd",
              "slurm_login_group": "login", "slurm_cluster_name": "gpucluster", "slurm_user": "slurm",
              "slurm_partitions": [{"name": "gpu"}], "slurm_munge_key": "", "slurm_dbd_password": ""}
    assert c.input_rule_failure("gpucluster.core.slurm", values, shared, PLAY, {"ctl": ["head"], "compute": ["gpu01"]}) == (
        "slurm: bad variables, no host was changed: host 'gpu01': slurm_node_weight: must be within 0-4294967294 (got -1)")
