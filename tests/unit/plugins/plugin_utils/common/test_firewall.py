# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The firewall entry point's logic (plugins/plugin_utils/common/_firewall.py): the probe read, a
caller's read, and the rules to add and to remove, with the exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._firewall import (
    caller_state, firewall_plan, firewall_state)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

UFW_PROBE = "\n".join([
    "ufw",
    "rule 22/tcp                     ALLOW       Anywhere                   # base_os",
    "rule 9100/tcp                   ALLOW       10.231.1.0/24              # monitoring",
    "rule 9100/tcp                   ALLOW       10.9.9.5                   # monitoring",
    "rule 6818/tcp                   ALLOW       Anywhere                   # slurm",
    "rule 60001:63000/tcp            ALLOW       Anywhere",
    "rule 123                        ALLOW       10.0.0.0/8",
    "rule Anywhere                   ALLOW       10.0.0.0/8",
    "rule Anywhere on eth1           ALLOW       Anywhere",
    "rule 22/tcp (v6)                ALLOW       Anywhere (v6)              # base_os",
])
FIREWALLD_PROBE = "\n".join([
    "firewalld",
    "port 9100/tcp 60001-63000/tcp",
    'rich rule family="ipv4" source address="10.231.1.0/24" port port="9090" protocol="tcp" accept',
    'rich rule family="ipv6" source address="fd00::/64" port port="9090" protocol="tcp" accept',
    'rich rule family="ipv4" source address="10.0.0.0/8" service name="ssh" accept',
])


@pytest.mark.parametrize("text, expected", [
    (UFW_PROBE, {"active": "ufw", "rules": [
        ["22/tcp any", "base_os"], ["9100/tcp 10.231.1.0/24", "monitoring"], ["9100/tcp 10.9.9.5/32", "monitoring"],
        ["6818/tcp any", "slurm"], ["60001-63000/tcp any", ""], ["123/tcp 10.0.0.0/8", ""], ["123/udp 10.0.0.0/8", ""]]}),
    (FIREWALLD_PROBE, {"active": "firewalld", "rules": [
        ["9100/tcp any", ""], ["60001-63000/tcp any", ""], ["9090/tcp 10.231.1.0/24", ""], ["9090/tcp fd00::/64", ""]]}),
    ("firewalld\nport \n", {"active": "firewalld", "rules": []}),
    ("none\n", {"active": "none", "rules": []}),
    ("", {"active": "none", "rules": []}),
])
def test_firewall_state(text, expected):
    assert firewall_state(text) == expected


@pytest.mark.parametrize("text, message", [
    ("iptables\n", "firewall_state: the probe names no firewall (ufw, firewalld, none) (got 'iptables')"),
    (None, "firewall_state: the probe's output must be text (got None)"),
])
def test_firewall_state_bad(text, message):
    with pytest.raises(RuleError) as err:
        firewall_state(text)
    assert str(err.value) == message


@pytest.mark.parametrize("state, expected", [
    ({"active": "ufw", "open": ["6818/tcp", "60001:63000/tcp", "Anywhere"]},
     {"active": "ufw", "rules": [["6818/tcp any", ""], ["60001-63000/tcp any", ""]]}),
    ({"active": "firewalld", "rules": [["9090/tcp 10.0.0.0/24", ""]]},
     {"active": "firewalld", "rules": [["9090/tcp 10.0.0.0/24", ""]]}),
    ({"active": "none", "open": []}, {"active": "none", "rules": []}),
    ({"active": "ufw", "lines": ["rule 6818/tcp   ALLOW   10.0.0.0/24   # slurm", "rule 6818/tcp  ALLOW  Anywhere  # slurm"]},
     {"active": "ufw", "rules": [["6818/tcp 10.0.0.0/24", "slurm"], ["6818/tcp any", "slurm"]]}),
    ({"active": "firewalld",
      "lines": ["port 6817/tcp", 'rich rule family="ipv4" source address="10.0.0.0/24" port port="6818" protocol="tcp" accept']},
     {"active": "firewalld", "rules": [["6817/tcp any", ""], ["6818/tcp 10.0.0.0/24", ""]]}),
])
def test_caller_state(state, expected):
    assert caller_state(state) == expected


def test_caller_state_bad():
    with pytest.raises(RuleError) as err:
        caller_state({"open": []})
    assert str(err.value) == ("common_firewall_state: must be a dict with active (ufw, firewalld or none) and open "
                              "(got {'open': []})")


def _keys(rules):
    return [rule["key"] for rule in rules]


def test_plan_ufw_adds_each_source_and_deletes_own_any_rule():
    plan = firewall_plan(firewall_state(UFW_PROBE), ["9100/tcp", "6818/tcp", "60001-63000/tcp"],
                         ["10.231.1.0/24", "10.231.2.0/24"], ["22/tcp"], "slurm")
    assert _keys(plan["add"]) == ["9100/tcp 10.231.2.0/24", "6818/tcp 10.231.1.0/24", "6818/tcp 10.231.2.0/24",
                                  "60001-63000/tcp 10.231.1.0/24", "60001-63000/tcp 10.231.2.0/24"]
    # Only slurm's own any-source rule goes; the site's (no comment) range rule stays.
    assert _keys(plan["remove"]) == ["6818/tcp any"]
    assert plan["unrestricted"] == []
    assert plan["add"][3] == {"key": "60001-63000/tcp 10.231.1.0/24", "port": "60001-63000/tcp",
                              "ufw_port": "60001:63000", "proto": "tcp", "source": "10.231.1.0/24", "rich_rule": ""}
    assert plan["remove"][0]["source"] == ""
    after = [rule[0] for rule in plan["state"]["rules"]]
    assert "6818/tcp any" not in after and "6818/tcp 10.231.2.0/24" in after


def test_plan_is_empty_once_applied():
    first = firewall_plan(firewall_state(UFW_PROBE), ["6818/tcp"], ["10.231.1.0/24"], [], "slurm")
    again = firewall_plan(first["state"], ["6818/tcp"], ["10.231.1.0/24"], [], "slurm")
    assert (again["add"], again["remove"]) == ([], [])


def test_plan_firewalld_rich_rules_and_public_ports():
    plan = firewall_plan(firewall_state(FIREWALLD_PROBE), ["9090/tcp", "9100/tcp", "123/udp"],
                         ["10.231.1.0/24", "fd00::/64"], ["22/tcp"], "monitoring")
    assert [(r["port"], r["source"], r["rich_rule"]) for r in plan["add"]] == [
        ("22/tcp", "", ""),
        ("9100/tcp", "10.231.1.0/24",
         'rule family="ipv4" source address="10.231.1.0/24" port port="9100" protocol="tcp" accept'),
        ("9100/tcp", "fd00::/64", 'rule family="ipv6" source address="fd00::/64" port port="9100" protocol="tcp" accept'),
        ("123/udp", "10.231.1.0/24",
         'rule family="ipv4" source address="10.231.1.0/24" port port="123" protocol="udp" accept'),
        ("123/udp", "fd00::/64", 'rule family="ipv6" source address="fd00::/64" port port="123" protocol="udp" accept'),
    ]
    # firewalld keeps no owner: the default zone's any-source 9100/tcp goes.
    assert _keys(plan["remove"]) == ["9100/tcp any"]


def test_plan_public_port_wins_and_is_never_removed():
    state = {"active": "ufw", "rules": [["22/tcp any", "base_os"]]}
    plan = firewall_plan(state, ["22/tcp", "123/udp"], ["10.0.0.0/24"], ["22/tcp"], "base_os")
    assert (_keys(plan["add"]), plan["remove"]) == (["123/udp 10.0.0.0/24"], [])


def test_plan_without_sources_opens_to_every_source():
    plan = firewall_plan({"active": "ufw", "rules": [["6818/tcp any", "slurm"]]}, ["6818/tcp", "6817/tcp"], [], [], "slurm")
    assert (_keys(plan["add"]), plan["remove"], plan["unrestricted"]) == (["6817/tcp any"], [], ["6818/tcp", "6817/tcp"])


def test_plan_no_firewall():
    plan = firewall_plan({"active": "none", "rules": []}, ["9100/tcp"], ["10.0.0.0/24"])
    assert plan == {"add": [], "remove": [], "unrestricted": [], "state": {"active": "none", "rules": []}}


@pytest.mark.parametrize("ports, sources, public, message", [
    (["9100"], [], [], "common_firewall_ports[0]: must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or udp "
                       "(got '9100')"),
    (["9100/tcp"], ["10.0.0.1/24"], [],
     "common_firewall_sources[0]: must be a network in CIDR notation such as 10.0.0.0/24 "
     "(got '10.0.0.1/24': 10.0.0.1/24 has host bits set)"),
    (["9100/tcp"], ["10.0.0.0/24", "10.0.0.1"], [],
     "common_firewall_sources[1]: must be a network in CIDR notation such as 10.0.0.0/24 (got '10.0.0.1': no prefix length)"),
    (["9100/tcp"], [], ["ssh"], "common_firewall_public_ports[0]: must be PORT/PROTO or FIRST-LAST/PROTO with proto tcp or "
                                "udp (got 'ssh')"),
])
def test_plan_bad_input(ports, sources, public, message):
    with pytest.raises(RuleError) as err:
        firewall_plan({"active": "ufw", "rules": []}, ports, sources, public)
    assert str(err.value) == message
