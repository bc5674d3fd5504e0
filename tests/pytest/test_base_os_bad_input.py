# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inventory data fails before any host is touched, with a message naming it.

Each case runs the real role with ansible-playbook against hosts that point at docker
containers that do not exist: any attempt to reach a host would fail differently
(and show as unreachable), so a clean refusal proves nothing was contacted.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = """
- name: Apply base_os with facts left ungathered, so nothing needs a host
  hosts: cluster
  gather_facts: false
  roles:
    - gpucluster.core.base_os
"""
NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
]
GOOD = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
    "worker2": {"management": "192.168.1.12", "compute": "10.0.0.12"},
}


def run_site(tmp_path: Path, addresses: dict, networks=None) -> subprocess.CompletedProcess:
    missing = f"gpc-absent-{uuid.uuid4().hex[:8]}"
    inventory = {
        "all": {
            "children": {
                "cluster": {
                    "hosts": {
                        host: {
                            "ansible_connection": "community.docker.docker",
                            "ansible_host": f"{missing}-{host}",
                            "base_os_addresses": addrs,
                        }
                        for host, addrs in addresses.items()
                    },
                    "vars": {"base_os_networks": networks if networks is not None else NETWORKS},
                },
                "head": {"hosts": {"master": None}},
            }
        }
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_RETRY_FILES_ENABLED="0")
    return subprocess.run(
        ["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def failure_messages(result: subprocess.CompletedProcess) -> list[str]:
    report = json.loads(result.stdout[result.stdout.index("{"):])
    messages = []
    for play in report["plays"]:
        for task in play["tasks"]:
            for host_result in task["hosts"].values():
                if host_result.get("failed") or host_result.get("unreachable"):
                    messages.append(host_result.get("msg", ""))
    return messages, report["stats"]


def assert_refused_untouched(result, expected: str):
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    messages, stats = failure_messages(result)
    assert messages, result.stdout[-3000:]
    assert all(expected in m for m in messages), messages
    for host, counts in stats.items():
        assert counts["unreachable"] == 0, (host, counts)
        assert counts["changed"] == 0, (host, counts)


def test_good_data_passes_preflight_validation(tmp_path):
    # The same inventory with good data gets past the validation and only then
    # fails, because the hosts do not exist: this is the control for the cases below.
    result = run_site(tmp_path, GOOD)
    assert result.returncode != 0
    messages, stats = failure_messages(result)
    assert not any("base_os_addresses" in m for m in messages), messages
    # Validation passed on every host; the first task that needs a host found none.
    assert {host: counts["unreachable"] for host, counts in stats.items()} == {
        "master": 1, "worker1": 1, "worker2": 1}


@pytest.mark.parametrize(
    "change, expected",
    [
        pytest.param(
            {"worker1": {"management": "192.168.1.11", "compute": "10.0.1.11"}},
            "host 'worker1': base_os_addresses.compute 10.0.1.11 is outside network 'compute' (10.0.0.0/24)",
            id="address-outside-cidr",
        ),
        pytest.param(
            {"worker2": {"management": "192.168.1.11", "compute": "10.0.0.12"}},
            "host 'worker2': base_os_addresses.management 192.168.1.11 is also the address of host 'worker1'",
            id="duplicate-address",
        ),
        pytest.param(
            {"worker2": {"management": "192.168.1.12", "compute": "10.0.0.12", "storage": "10.1.0.12"}},
            "host 'worker2': base_os_addresses names network 'storage', which base_os_networks does not "
            "define (defined: management, compute)",
            id="missing-network",
        ),
        pytest.param(
            {"worker1": {"management": "192.168.1.11"}},
            "host 'worker1': base_os_addresses has no address on network 'compute', which is required",
            id="host-without-address",
        ),
    ],
)
def test_bad_addresses_are_refused_before_any_host_is_touched(tmp_path, change, expected):
    result = run_site(tmp_path, {**GOOD, **change})
    assert_refused_untouched(result, expected)


def test_bad_network_definition_is_refused_by_the_argument_spec(tmp_path):
    networks = [{"name": "management", "suffix": ""}]
    result = run_site(tmp_path, {"master": {"management": "192.168.1.10"}}, networks)
    assert_refused_untouched(result, "missing required arguments: cidr found in base_os_networks")
