# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a role with ansible-playbook against hosts that do not exist.

Every host points at a docker container that is not there, so any attempt to reach
one fails as unreachable: a clean refusal with zero unreachable hosts proves the role
refused the input before touching a host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

# The lab's networks (base_os_networks) and each host's addresses on them (base_os_addresses):
# the good data of the roles that read base_os's addressing.
LAB_NETWORKS = [
    {"name": "management", "cidr": "192.168.1.0/24", "suffix": ""},
    {"name": "compute", "cidr": "10.0.0.0/24", "suffix": "-ib"},
]
LAB_ADDRESSES = {
    "master": {"management": "192.168.1.10", "compute": "10.0.0.10"},
    "worker1": {"management": "192.168.1.11", "compute": "10.0.0.11"},
    "worker2": {"management": "192.168.1.12", "compute": "10.0.0.12"},
}


def collections_path() -> str | None:
    """Where the collection is installed: the tree above this checkout when it is one, else the venv's
    collections (tests/harness/setup-venv.sh), else ANSIBLE_COLLECTIONS_PATH (None when unset)."""
    if ROOT.parent.name == "gpucluster" and ROOT.parent.parent.name == "ansible_collections":
        return str(ROOT.parent.parent.parent)
    candidate = ROOT / ".venv" / "collections"
    if (candidate / "ansible_collections" / "gpucluster" / "core" / "plugins").is_dir():
        return str(candidate)
    return os.environ.get("ANSIBLE_COLLECTIONS_PATH")


def ansible_playbook() -> str | None:
    """The ansible-playbook beside this Python, else the one on PATH (None when there is none)."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    return str(beside) if beside.exists() else shutil.which("ansible-playbook")


def seed_fact_cache(path: Path, facts_by_host: dict) -> None:
    """Write facts the way Ansible's jsonfile fact cache keeps them (``ansible_distribution``, ...)."""
    from ansible.plugins.loader import cache_loader  # pylint: disable=import-outside-toplevel

    cache = cache_loader.get("jsonfile", _uri=str(path), _timeout=86400)
    for host, facts in facts_by_host.items():
        cache.set(host, facts)


def run_role(tmp_path: Path, role: str, hosts: dict, groups: dict, group_vars: dict, extra_args=(), facts=None):
    """hosts: name -> host vars; groups: group -> [host names]; group_vars apply to all;
    extra_args go to ansible-playbook (e.g. --limit); facts: host -> facts the hosts have from a
    fact cache (none otherwise)."""
    missing = f"gpc-absent-{uuid.uuid4().hex[:8]}"
    children = {name: {"hosts": {h: None for h in members}} for name, members in groups.items()}
    inventory = {
        "all": {
            "hosts": {
                name: {"ansible_connection": "community.docker.docker",
                       "ansible_host": f"{missing}-{name}", **hostvars}
                for name, hostvars in hosts.items()
            },
            "vars": group_vars,
            "children": children,
        }
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(
        "- name: Apply the role with facts left ungathered, so nothing needs a host\n"
        "  hosts: all\n  gather_facts: false\n"
        f"  roles:\n    - {role}\n"
    )
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_RETRY_FILES_ENABLED="0",
               # No facts cached by earlier runs.
               ANSIBLE_CACHE_PLUGIN="memory",
               # Unpipelined, a missing container reads as unreachable (pipelined: a failed module).
               ANSIBLE_PIPELINING="0")
    if facts:
        seed_fact_cache(tmp_path / "facts", facts)
        env.update(ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(tmp_path / "facts"),
                   ANSIBLE_CACHE_PLUGIN_TIMEOUT="86400")
    return subprocess.run(
        ["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml"), *extra_args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def failure_messages(result: subprocess.CompletedProcess):
    """The messages of failed or unreachable host results, and the play stats."""
    # The JSON report, then what other callbacks print (the failed-hosts list).
    report, _end = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("{"):])
    messages = []
    for play in report["plays"]:
        for task in play["tasks"]:
            for host_result in task["hosts"].values():
                if host_result.get("failed") or host_result.get("unreachable"):
                    messages.append(host_result.get("msg", ""))
    return messages, report["stats"]


def assert_refused_untouched(result: subprocess.CompletedProcess, expected: str) -> None:
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    messages, stats = failure_messages(result)
    assert messages, result.stdout[-3000:]
    assert all(expected in m for m in messages), messages
    for host, counts in stats.items():
        assert counts["unreachable"] == 0, (host, counts)
        assert counts["changed"] == 0, (host, counts)


def assert_passes_validation(result: subprocess.CompletedProcess, hosts, variable_prefix: str) -> None:
    """Control case: validation passed and the first task that needs a host found none."""
    assert result.returncode != 0
    messages, stats = failure_messages(result)
    assert not any(variable_prefix in m for m in messages), messages
    assert {host: counts["unreachable"] for host, counts in stats.items()} == {h: 1 for h in hosts}
