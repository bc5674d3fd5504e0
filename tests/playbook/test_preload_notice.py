# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A repository that imports the roles without enabling gpucluster.core.preload is told so once
per run (by the first role's input check), and not at all where the callback is enabled."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTICE_TASK = "Say that the preload callback is off"


def _run(tmp_path: Path, callbacks: str):
    role = tmp_path / "roles" / "probe"
    (role / "meta").mkdir(parents=True)
    (role / "tasks").mkdir()
    (role / "defaults").mkdir()
    (role / "defaults" / "main.yml").write_text("probe_name: a\n")
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    short_description: probe\n    options:\n"
        "      probe_name:\n        type: str\n        default: a\n        description: a name\n")
    (role / "tasks" / "main.yml").write_text(
        "- name: Check the input\n  ansible.builtin.include_role:\n    name: gpucluster.core.common\n"
        "    tasks_from: input_types\n")
    # Two plays on different hosts: once per run, not once per play.
    play = "- name: Probe {n}\n  hosts: {hosts}\n  gather_facts: false\n  roles:\n    - probe\n"
    (tmp_path / "play.yml").write_text(play.format(n=1, hosts="n1") + play.format(n=2, hosts="n2") + play.format(n=3, hosts="all"))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_ROLES_PATH=str(tmp_path / "roles"),
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_CALLBACKS_ENABLED=callbacks, ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_NOCOLOR="1")
    result = subprocess.run(["ansible-playbook", "-i", "n1,n2,", "-c", "local", str(tmp_path / "play.yml")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(result.stdout[result.stdout.index("{"):])
    said = []
    for play in report["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].endswith(NOTICE_TASK):
                said.extend(r["msg"] for r in task["hosts"].values() if not r.get("skipped"))
    return said


def test_said_once_per_run_without_the_callback(tmp_path):
    said = _run(tmp_path, "gpucluster.core.failed_hosts")
    assert len(said) == 1, said
    assert "callbacks_enabled = gpucluster.core.preload" in said[0]


@pytest.mark.parametrize("callbacks", ["gpucluster.core.preload", "gpucluster.core.failed_hosts,gpucluster.core.preload"])
def test_not_said_with_the_callback(tmp_path, callbacks):
    assert _run(tmp_path, callbacks) == []
