# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""No step that every host runs walks every host's variables (benchmarks/bench_controller_scale.sh).

``hostvars[host]`` costs the controller a full variable merge for that host, so a task that hands
``hostvars`` to a filter over the cluster's hosts, or extracts from it for each of them, costs
hosts x hosts merges when every host runs it: at 1,000 hosts a million. Such a task runs once
(``run_once``: its facts go to every host of the play), or reads a fixed number of hosts, or runs
on a fixed number of hosts; the exceptions below say which and why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WALKS_HOSTVARS = re.compile(r"hostvars\s*\|\s*gpucluster\.core\.\w+|map\(\s*'extract'\s*,\s*hostvars")
# (file, task name): why the task is linear in the number of hosts although every host may run it.
LINEAR = {
    ("roles/base_os/tasks/ssh.yml", "Trust the admin key on every node"):
        "reads one host's key (the head's)",
    ("roles/slurm/tasks/config.yml", "Work out this host's node and GPU lines when the first controller is not in the run"):
        "only without the first controller in the run (--limit); with it, the lines are worked out once",
}


def _task_files():
    patterns = ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "playbooks/*.yml", "playbooks/tasks/*.yml")
    return sorted({path for pattern in patterns for path in ROOT.glob(pattern)})


def _tasks(items):
    for item in items or []:
        if not isinstance(item, dict):
            continue
        if "hosts" in item:
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                yield from _tasks(item.get(key))
            continue
        for key in ("block", "rescue", "always"):
            yield from _tasks(item.get(key))
        yield item


def _per_host_walks():
    hits = []
    for path in _task_files():
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            body = {key: value for key, value in task.items() if key not in ("name", "block", "rescue", "always")}
            if WALKS_HOSTVARS.search(json.dumps(body)) and not task.get("run_once"):
                hits.append((str(path.relative_to(ROOT)), task.get("name")))
    return hits


def test_the_scan_finds_what_it_looks_for():
    assert WALKS_HOSTVARS.search("{{ hostvars | gpucluster.core.cluster_reported(groups['cluster']) }}")
    assert WALKS_HOSTVARS.search("{{ groups['cluster'] | map('extract', hostvars) | list }}")
    assert not WALKS_HOSTVARS.search("{{ hostvars[__slurm_primary]['__slurm_state'] }}")


@pytest.mark.parametrize("hit", _per_host_walks(), ids=lambda hit: "%s: %s" % hit)
def test_per_host_tasks_do_not_walk_every_host(hit):
    assert hit in LINEAR, "%s, task %r: every host walks every host's hostvars (quadratic); run it once (run_once)" % hit


def test_the_exceptions_are_still_there():
    assert sorted(set(LINEAR) - set(_per_host_walks())) == []
