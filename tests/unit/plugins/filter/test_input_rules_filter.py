# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""input_rule_failure: the filter the common input check calls (roles/common/tasks/input_check.yml).
What reaches a role's rules from hostvars, the hosts' own readings and the play's values; input of
the wrong shape and an unknown role as filter errors (the dispatch and the gathering are tested in
tests/unit/plugins/plugin_utils/common/test_common_input_rules.py)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleError, AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.gpucluster.core.plugins.filter import common as input_rules
from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _input_rules as c
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._filter import defined_values

FILTER = input_rules.FilterModule().filters()["input_rule_failure"]
PLAY = {"batch": ["n1"], "hosts": ["n1", "n2"], "all": ["n1", "n2", "n3"]}
OPTIONS = ["probe_port", "probe_secret"]


class NeedsFacts(dict):
    """hostvars of a host whose value needs facts it never gave: reading it raises."""

    def __getitem__(self, name):
        raise AnsibleError("'ansible_facts' is undefined")


@pytest.fixture(name="seen")
def fixture_seen(monkeypatch):
    """A probe role whose rules read every host of the play and say what they got."""
    seen = []

    def rules(given):
        seen.append(given)
        return ["host '%s': probe_port: %r" % (host, values.get("probe_port")) for host, values in given.hosts.items()]

    monkeypatch.setitem(c.RULES, "probe", c.RoleRules(rules, c.all_hosts))
    return seen


def test_the_filter_is_found_by_its_name():
    assert "input_rule_failure" in input_rules.FilterModule().filters()


def test_what_the_rules_get(seen):
    hostvars = {"n1": {"probe_port": 1, "probe_secret": "n1-secret"}, "n2": {"probe_port": 2}, "n3": NeedsFacts()}
    own = {"n1": {"probe_port": 11}, "n2": {"probe_port": 12}}  # n2 is not of this batch: its reading is stale
    failure = FILTER(hostvars, "gpucluster.core.probe", OPTIONS, own=own, shared={"probe_port": 80, "probe_secret": "s"},
                     play=PLAY, groups={"all": ["n1", "n2", "n3"]})
    assert failure == "probe: bad input, no host was changed: host 'n1': probe_port: 11; host 'n2': probe_port: 12; " \
                      "host 'n3': probe_port: 80"
    assert seen[0].hosts == {"n1": {"probe_port": 11, "probe_secret": "n1-secret"},
                             "n2": {"probe_port": 12, "probe_secret": "s"},
                             "n3": {"probe_port": 80, "probe_secret": "s"}}


def test_a_host_outside_the_inventory_gets_the_plays_values(seen):
    FILTER({}, "probe", OPTIONS, own={}, shared={"probe_port": 80}, play={"all": ["n9"]}, groups={})
    assert seen[0].hosts == {"n9": {"probe_port": 80}}


@pytest.mark.parametrize("args, message", [
    (({}, "gpucluster.core.probe2", OPTIONS), "input_rule_failure: the role 'probe2' has no input rules (the roles "
                                              "that have: base_os, "),
    (({}, "probe", "probe_port"), "input_rule_failure: the names must be a list of the role's option names (got "
                                  "'probe_port')"),
    (({}, "probe", [1]), "input_rule_failure: the names must be a list of the role's option names (got [1])"),
])
def test_bad_input_is_a_filter_error(seen, args, message):
    with pytest.raises(AnsibleFilterError) as exc:
        FILTER(*args, own={}, shared={}, play=PLAY, groups={})
    assert str(exc.value).startswith(message)


def test_the_wrong_shape_is_a_filter_error(seen):
    with pytest.raises(AnsibleFilterError) as exc:
        FILTER({}, "probe", OPTIONS, own={}, shared={}, play=PLAY, groups=["all"])
    assert str(exc.value) == "input_rule_failure: the input is not of the expected shape (AttributeError: " \
                             "'list' object has no attribute 'items')"


def test_defined_values_leave_out_what_cannot_be_read():
    assert defined_values({"a": 1, "b": Undefined(name="b")}, ["a", "b", "c"]) == {"a": 1}
    assert defined_values(NeedsFacts(a=1), ["a"]) == {}
