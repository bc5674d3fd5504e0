# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The type check reads each host's values as the role will (play vars and role parameters over the
inventory), and a host that dropped out of the play stops nobody when a value of its needs facts it
never gave. A probe role with an argument spec calls the common role's input_types task file on
hosts of a local connection (the check touches nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = {"argument_specs": {"main": {"short_description": "probe", "options": {
    "probe_list": {"type": "list", "elements": "str", "default": [], "description": "a list"},
    "probe_name": {"type": "str", "default": "a", "description": "a name"}}}}}


def _run(tmp_path: Path, inventory: dict, play: dict):
    role = tmp_path / "roles" / "probe"
    for sub in ("meta", "tasks", "defaults"):
        (role / sub).mkdir(parents=True)
    (role / "meta" / "argument_specs.yml").write_text(yaml.safe_dump(SPEC))
    (role / "defaults" / "main.yml").write_text("probe_list: []\nprobe_name: a\n")
    (role / "tasks" / "main.yml").write_text(
        "- name: Check the input\n  ansible.builtin.include_role:\n    name: gpucluster.core.common\n"
        "    tasks_from: input_types\n")
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(yaml.safe_dump([dict({"name": "Probe", "hosts": "all"}, **play)]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_ROLES_PATH=str(tmp_path / "roles"),
               ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_KEY_CHECKING="0")
    result = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    report, _end = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("{"):])
    failed = [r.get("msg", "") for p in report["plays"] for t in p["tasks"] for r in t["hosts"].values() if r.get("failed")]
    return result, failed, report["stats"]


UNREACHABLE = {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1,
               "ansible_ssh_common_args": "-o ConnectTimeout=2"}
PING_FIRST = {"gather_facts": False, "pre_tasks": [{"name": "Reach the hosts", "ansible.builtin.ping": {}}],
              "roles": ["probe"]}


def _local(**hosts):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    return {"all": {"hosts": {name: dict(local, **values) for name, values in hosts.items()}}}


def test_play_vars_over_a_bad_inventory_value_pass(tmp_path):
    result, failed, _stats = _run(tmp_path, _local(n1={"probe_list": "ntp1"}, n2={"probe_list": "ntp2"}),
                                  {"gather_facts": False, "vars": {"probe_list": ["ntp1"]}, "roles": ["probe"]})
    assert (result.returncode, failed) == (0, []), result.stdout[-2000:]


def test_a_role_parameter_of_the_wrong_type_over_a_good_inventory_value_is_refused(tmp_path):
    result, failed, _stats = _run(tmp_path, _local(n1={"probe_list": ["ntp1"]}, n2={}),
                                  {"gather_facts": False, "roles": [{"role": "probe", "probe_list": "ntp1"}]})
    assert result.returncode == 2
    assert failed == ["probe: bad input, no host was changed: host 'n1': probe_list: must be a list (got the string "
                      "'ntp1'); host 'n2': probe_list: must be a list (got the string 'ntp1')"]


def test_an_unreachable_host_whose_value_needs_facts_stops_nobody(tmp_path):
    # n2 never gives facts (unreachable at the first task); n1 sets its own name.
    inventory = _local(n1={"probe_name": "n1"})
    inventory["all"]["hosts"]["n2"] = dict(UNREACHABLE)
    inventory["all"]["vars"] = {"probe_name": "{{ ansible_facts['nodename'] }}"}
    result, failed, stats = _run(tmp_path, inventory, PING_FIRST)
    assert failed == [], result.stdout[-2000:]
    assert stats["n2"]["unreachable"] == 1 and stats["n1"]["failures"] == 0 and stats["n1"]["ok"] >= 3, stats


def test_a_bad_value_of_a_host_that_dropped_out_stops_every_host(tmp_path):
    inventory = _local(n1={})
    inventory["all"]["hosts"]["n2"] = dict(UNREACHABLE, probe_list="ntp2")
    result, failed, _stats = _run(tmp_path, inventory, PING_FIRST)
    assert failed == ["probe: bad input, no host was changed: host 'n2': probe_list: must be a list "
                      "(got the string 'ntp2')"], result.stdout[-2000:]


def test_a_play_in_batches_checks_its_batch_and_reads_the_later_ones_from_the_inventory(tmp_path):
    # serial: the first batch (n1) must not wait for the facts of n2, which runs later, and n2's bad
    # inventory value is refused in the first batch, before n1 is changed.
    play = {"gather_facts": False, "serial": 1, "roles": ["probe"]}
    result, failed, _stats = _run(tmp_path, _local(n1={}, n2={}), play)
    assert (result.returncode, failed) == (0, []), result.stdout[-2000:]
    again = tmp_path / "again"
    again.mkdir()
    result, failed, stats = _run(again, _local(n1={}, n2={"probe_list": "ntp2"}), play)
    assert failed == ["probe: bad input, no host was changed: host 'n2': probe_list: must be a list "
                      "(got the string 'ntp2')"], result.stdout[-2000:]
    assert "n2" not in stats or stats["n2"]["ok"] == 0, stats
