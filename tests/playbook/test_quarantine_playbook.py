# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/quarantine.yml without docker: bad input is refused before any node is touched, and
the nodes it retests are chosen from Slurm's listing on the controller (a local host whose
``scontrol`` is a stand-in that prints a listing and logs its calls), never an admin's drain, an
``rma:`` node or a node still running jobs. The compute nodes point at containers that do not
exist, so the only node the playbook reaches for is the one it chose; the retest itself is proven
by molecule/validation (its quarantine round)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from roleplay import ROOT, failure_messages

SCONTROL = """#!/bin/sh
echo "$*" >> %(log)s
[ "$1 $2" = "show node" ] && exec cat %(listing)s
exit 0
"""


def node(name, state, reason=""):
    """One node as `scontrol show node` prints it (Slurm's Quick Start Guide's record, renamed)."""
    return ("NodeName=%s Arch=x86_64 CoresPerSocket=4\n   State=%s ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
            "   Gres=gpu:8\n   Reason=%s\n" % (name, state, reason))


LISTING = "".join([
    node("gpu1", "IDLE+DRAIN", "gpucluster-validation: gpu_count [root@2026-01-01T00:00:00]"),
    node("gpu2", "MIXED+DRAIN", "gpucluster-validation: xid [root@2026-01-01T00:00:00]"),
    node("gpu3", "IDLE+DRAIN", "admin-maintenance [root@2026-01-01T00:00:00]"),
    node("gpu4", "IDLE+DRAIN", "rma: dcgm_diag [root@2026-01-01T00:00:00]"),
    node("gpu5", "IDLE"),
])


def run_quarantine(tmp_path: Path, listing: str, *extra: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run the playbook with the stand-in scontrol; (the run, scontrol's calls)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "scontrol.log"
    (tmp_path / "listing.txt").write_text(listing)
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(SCONTROL % {"log": log, "listing": tmp_path / "listing.txt"})
    scontrol.chmod(0o755)
    missing = f"gpc-absent-{uuid.uuid4().hex[:8]}"
    computes = {name: {"ansible_connection": "community.docker.docker", "ansible_host": f"{missing}-{name}"}
                for name in ("gpu1", "gpu2", "gpu3", "gpu4", "gpu5")}
    inventory = {"all": {
        "hosts": {"head": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                           "ansible_become": False}, **computes},
        "vars": {"validation_results_dir": str(tmp_path / "results")},
        "children": {"slurm_controller": {"hosts": {"head": None}},
                     "slurm_compute": {"hosts": {name: None for name in computes}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_PIPELINING="0",
               PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "")))
    result = subprocess.run(
        ["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(ROOT / "playbooks" / "quarantine.yml"), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    calls = log.read_text().splitlines() if log.exists() else []
    return result, calls


def report(result: subprocess.CompletedProcess) -> dict:
    return json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("{"):])[0]


def task_result(result: subprocess.CompletedProcess, name: str, host: str) -> dict:
    for play in report(result)["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == name and host in task["hosts"]:
                return task["hosts"][host]
    raise AssertionError("no result of %r on %s" % (name, host))


@pytest.mark.parametrize("extra, message", [
    (["-e", "quarantine_dcgm_diag_level=5"],
     "quarantine: bad input, no node was touched: quarantine_dcgm_diag_level: must be one of 0, 1, 2, 3, 4 "
     "(dcgmi diag -r; 0 runs none) (got '5')"),
    (["-e", '{"quarantine_stress_command": "gpu_burn 60", "quarantine_job_timeout": 10}'],
     "quarantine: bad input, no node was touched: quarantine_stress_command: must be a list of words, the program "
     "first ([] runs none) (got 'gpu_burn 60'); quarantine_job_timeout: must be seconds within 60-86400 (got 10)"),
])
def test_bad_input_is_refused_before_slurm_is_read(tmp_path, extra, message):
    result, calls = run_quarantine(tmp_path, LISTING, *extra)
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    messages, stats = failure_messages(result)
    assert messages == [message]
    assert calls == []
    assert all(counts["unreachable"] == 0 and counts["changed"] == 0 for counts in stats.values()), stats


def test_only_its_own_idle_drain_is_retested(tmp_path):
    result, calls = run_quarantine(tmp_path, LISTING)
    # The plan, as the controller printed it.
    said = task_result(result, "Say what the quarantine does with each drained node", "head")["msg"]
    assert said == ["retest: gpu1", "waiting: gpu2", "left alone: gpu3", "left alone: gpu4"]
    # Slurm was only read: no reservation, resume or drain of any node; gpu1 is the one node reached
    # for (its container does not exist, so the run ends there, before anything is changed).
    assert calls == ["show node"]
    stats = report(result)["stats"]
    assert {host: counts["unreachable"] for host, counts in stats.items() if counts["unreachable"]} == {"gpu1": 1}
    assert set(stats) == {"localhost", "head", "gpu1"}
    assert result.returncode != 0


def test_nothing_to_retest_touches_nothing(tmp_path):
    result, calls = run_quarantine(tmp_path, node("gpu1", "IDLE") + node("gpu3", "IDLE+DRAIN", "admin-maintenance"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    said = task_result(result, "Say what the quarantine does with each drained node", "head")["msg"]
    assert said == ["retest: none", "left alone: gpu3"]
    assert calls == ["show node"]
