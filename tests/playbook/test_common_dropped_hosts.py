# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The common role's dropped_hosts entry point: Ansible's own argument check fails only the host
with the bad value; every role's preflight re-checks the hosts that dropped out, so one bad host
stops every host before any is touched."""

from __future__ import annotations

import pytest

from roleplay import failure_messages, run_role

HOSTS = ["master", "worker1", "worker2"]
GROUPS = {"cluster": HOSTS, "head": ["master"], "compute": HOSTS,
          "slurm_controller": ["master"], "slurm_compute": ["worker1", "worker2"]}


@pytest.mark.parametrize("role, bad", [
    ("nfs", {"nfs_server_mountd_port": "twenty"}),
    ("slurm", {"slurm_node_weight": "heavy"}),
])
def test_a_bad_type_on_one_host_stops_every_host(tmp_path, role, bad):
    result = run_role(tmp_path, "gpucluster.core." + role, hosts={"master": {}, "worker1": bad, "worker2": {}},
                      groups=GROUPS, group_vars={})
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    messages, stats = failure_messages(result)
    name = next(iter(bad))
    # worker1 by Ansible's own check; the others by the re-check (run once), which names worker1's variable.
    assert any(m.startswith("Validation of arguments failed") and name in m for m in messages), messages
    others = [m for m in messages if m.startswith(role + ": bad variables, no host was changed: host 'worker1': ")]
    assert len(others) == 1 and name in others[0], messages
    # No host was contacted: a host that went on would be unreachable (it does not exist).
    assert {host: (counts["unreachable"], counts["changed"]) for host, counts in stats.items()} == {
        host: (0, 0) for host in HOSTS}
    assert stats["worker1"]["failures"] == 1
