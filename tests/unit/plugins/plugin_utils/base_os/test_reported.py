# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data from every host: this run's values, the fact cache's for hosts out of the play, and
the hosts with neither."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.base_os._reported import reported

KEYS = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB root@%s"
HOSTVARS = {"master": {"keys": KEYS % "master"}, "worker1": {"keys": KEYS % "worker1"}, "worker2": {},
            "worker3": {"keys": ""}, "worker4": {"keys": None}}


@pytest.mark.parametrize("hosts, live, expected", [
    (["master", "worker1"], ["master", "worker1"],
     {"values": {"master": KEYS % "master", "worker1": KEYS % "worker1"}, "from_cache": [], "missing": [],
      "message": ""}),
    (["worker1", "master"], ["master"],
     {"values": {"worker1": KEYS % "worker1", "master": KEYS % "master"}, "from_cache": ["worker1"], "missing": [],
      "message": "keys of worker1 from the fact cache (not in this run or failed in it)"}),
    (["master", "worker1", "worker2", "worker3", "worker4", "worker5"], ["master"],
     {"values": {"master": KEYS % "master", "worker1": KEYS % "worker1"}, "from_cache": ["worker1"],
      "missing": ["worker2", "worker3", "worker4", "worker5"],
      "message": "keys of worker1 from the fact cache (not in this run or failed in it); no keys known for "
                 "worker2, worker3, worker4, worker5 (not in this run or failed in it, and not in the fact cache)"}),
    ([], [], {"values": {}, "from_cache": [], "missing": [], "message": ""}),
])
def test_reported(hosts, live, expected):
    assert reported(HOSTVARS, hosts, live, "keys") == expected


def test_the_message_names_the_data_by_its_label():
    result = reported(HOSTVARS, ["worker1", "worker2"], [], "keys", "SSH host keys")
    assert result["message"] == ("SSH host keys of worker1 from the fact cache (not in this run or failed in it); "
                                 "no SSH host keys known for worker2 (not in this run or failed in it, and not in "
                                 "the fact cache)")
