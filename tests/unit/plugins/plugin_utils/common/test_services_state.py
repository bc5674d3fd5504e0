# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The services action's rules: entries, the systemctl read and its parse, and what differs."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._services import (
    Observed,
    ServicesError,
    check_entries,
    differs,
    parse_state,
    state_command,
)
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.failures import message_of

# A systemctl show of four units on a Debian 12 node container (systemd 252), as the command asks.
LISTING = """LoadState=loaded
ActiveState=active
UnitFileState=enabled

LoadState=not-found
ActiveState=inactive
UnitFileState=

LoadState=loaded
ActiveState=active
UnitFileState=static

LoadState=loaded
ActiveState=inactive
UnitFileState=disabled
"""


def test_state_command_reads_every_unit_in_one_call():
    assert state_command(["ssh", "nfs-server", "gpucluster-slurm-metrics.timer"]) == (
        "systemctl show --property=LoadState,ActiveState,UnitFileState -- ssh nfs-server gpucluster-slurm-metrics.timer")


def test_parse_keeps_the_order():
    assert parse_state(LISTING, 4) == [
        Observed("loaded", "active", "enabled"),
        Observed("not-found", "inactive", ""),
        Observed("loaded", "active", "static"),
        Observed("loaded", "inactive", "disabled"),
    ]


@pytest.mark.parametrize("text, count, message", [
    (LISTING, 3, "the state read gave 4 units for the 3 asked"),
    ("LoadState=loaded\nActiveState=active\n", 1, "the state read of unit 0 lacks UnitFileState"),
    ("LoadState=loaded\nSubState=running\n", 1, "unexpected line in the state read: 'SubState=running'"),
    ("LoadState=loaded\nLoadState=loaded\n", 1, "unexpected line in the state read: 'LoadState=loaded'"),
    ("Failed to connect to bus\n", 1, "unexpected line in the state read: 'Failed to connect to bus'"),
    ("", 1, "the state read gave 0 units for the 1 asked"),
])
def test_parse_is_strict(text, count, message):
    assert message_of(ServicesError, parse_state, text, count) == message


@pytest.mark.parametrize("entry, observed, expected", [
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "active", "enabled"), False),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "activating", "enabled-runtime"), False),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "active", "static"), False),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "inactive", "enabled"), True),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "failed", "enabled"), True),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "active", "disabled"), True),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "active", "generated"), True),
    ({"name": "ssh", "state": "started", "enabled": True}, Observed("loaded", "active", "alias"), True),
    ({"name": "ssh", "state": "started"}, Observed("loaded", "active", "disabled"), False),
    ({"name": "ssh", "state": "started"}, Observed("not-found", "inactive", ""), True),
    ({"name": "nfs-server", "enabled": True}, Observed("loaded", "inactive", "enabled"), False),
    ({"name": "nfs-server", "enabled": True}, Observed("loaded", "inactive", "masked"), True),
    ({"name": "x", "state": "stopped", "enabled": False}, Observed("loaded", "inactive", "disabled"), False),
    ({"name": "x", "state": "stopped", "enabled": False}, Observed("loaded", "failed", "disabled"), False),
    ({"name": "x", "state": "stopped"}, Observed("loaded", "deactivating", "enabled"), True),
    ({"name": "x", "enabled": False}, Observed("loaded", "inactive", "static"), True),
])
def test_differs(entry, observed, expected):
    assert differs(entry, observed) is expected


def test_good_entries_have_no_problems():
    assert check_entries([{"name": "ssh", "state": "started", "enabled": True},
                          {"name": "getty@tty1", "enabled": True},
                          {"name": "gpucluster-slurm-metrics.timer", "state": "started"}]) == []


def test_every_problem_is_named_at_once():
    assert check_entries([
        {"name": "ssh", "state": "started"},
        {"name": "ssh.service", "enabled": True},
        {"name": "nfs-*", "state": "started"},
        {"name": "--now", "state": "started"},
        {"name": "chrony"},
        {"name": "", "state": "started"},
    ]) == [
        "services[1] (ssh.service): the unit appears more than once",
        "services[2] (nfs-*): name must be one systemd unit name (letters, digits, and :_.@\\-), not a pattern",
        "services[3] (--now): name must be one systemd unit name (letters, digits, and :_.@\\-), not a pattern",
        "services[4] (chrony): give state, enabled or both",
        "services[5] (no name): name must be one systemd unit name (letters, digits, and :_.@\\-), not a pattern",
    ]
