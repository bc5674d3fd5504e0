# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.files' src: and known: in real ansible-playbook runs.

src: writes the bytes content: "{{ lookup('ansible.builtin.template', ...) }}" writes (the role's
templates/ searched, its includes found, ansible_managed, task vars and loop items as the lookup
sees them), changes nothing on a second run, and in check mode reports the change with its diff
without writing. known: settles the paths it shows as asked for without contacting the node: a host
whose connection is refused stays reachable for such a task, and is contacted (unreachable) as soon
as one path differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roleplay import ansible_playbook, collections_path

REPO = Path(__file__).resolve().parents[2]

TEMPLATE = "{{ ansible_managed | comment }}\nname={{ name }}\nitem={{ item | default('none') }}\n{% include 'part.j2' %}\n"
PART = "part={{ part }}\n"


def _files(dest, **extra) -> dict:
    return {"gpucluster.core.files": {"files": [dict({"dest": str(dest), "src": "settings.conf.j2", "mode": "0644"}, **extra)]}}


def _tasks(out: Path) -> list:
    lookup = "{{ lookup('ansible.builtin.template', 'settings.conf.j2') }}"
    return [
        {"name": "lookup", "ansible.builtin.copy": {"dest": str(out / "lookup.conf"), "content": lookup, "mode": "0644"}},
        dict({"name": "src"}, **_files(out / "src.conf")),
        dict({"name": "src again"}, **_files(out / "src.conf")),
        {"name": "lookup in a loop", "ansible.builtin.copy": {"dest": str(out) + "/lookup-{{ item }}.conf", "content": lookup,
                                                              "mode": "0644"},
         "loop": ["a", "b"], "vars": {"part": "task"}},
        {"name": "src in a loop", "gpucluster.core.files": {"files": [
            {"dest": str(out) + "/src-{{ item }}.conf", "src": "settings.conf.j2", "mode": "0644"}]},
         "loop": ["a", "b"], "vars": {"part": "task"}},
        dict({"name": "src in check mode", "check_mode": True}, **_files(out / "checked.conf")),
    ]


def _known_tasks(out: Path) -> list:
    sha1 = "{{ lookup('ansible.builtin.template', 'settings.conf.j2') | hash('sha1') }}"
    return [
        {"name": "known as asked", "gpucluster.core.files": {
            "files": [{"dest": str(out), "state": "directory", "owner": "root", "mode": "0755"},
                      {"dest": str(out / "src.conf"), "src": "settings.conf.j2", "owner": "root", "group": "root", "mode": "0644"},
                      {"dest": str(out / "old.conf"), "state": "absent"}],
            "known": {str(out): "root:root:755", str(out / "src.conf"): "root:root:644 " + sha1, str(out / "old.conf"): ""}}},
        {"name": "known with a mode that differs", "gpucluster.core.files": {
            "files": [{"dest": str(out / "src.conf"), "src": "settings.conf.j2", "mode": "0600"}],
            "known": {str(out / "src.conf"): "root:root:644 " + sha1}}},
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if ansible_playbook() is None or collections_path() is None:
        pytest.fail("ansible-playbook or the gpucluster.core collection (under .venv/collections) is not available")
    base = tmp_path_factory.mktemp("files-template")
    templates = base / "roles" / "settings" / "templates"
    templates.mkdir(parents=True)
    (templates / "settings.conf.j2").write_text(TEMPLATE)
    (templates / "part.j2").write_text(PART)
    tasks = base / "roles" / "settings" / "tasks"
    tasks.mkdir()
    out = base / "out"
    out.mkdir()
    (tasks / "main.yml").write_text(json.dumps(_tasks(out)))
    (tasks / "known.yml").write_text(json.dumps(_known_tasks(out)))
    playbook = [
        {"name": "Templates", "hosts": "local", "gather_facts": False, "vars": {"name": "play", "part": "play"},
         "roles": ["settings"]},
        # A host whose connection is refused: unreachable as soon as a task contacts it.
        {"name": "Known states", "hosts": "refused", "gather_facts": False, "vars": {"name": "play", "part": "play"},
         "tasks": [{"name": "Known", "ansible.builtin.include_role": {"name": "settings", "tasks_from": "known"}}]},
    ]
    (base / "playbook.yml").write_text(json.dumps(playbook))
    (base / "inventory.yml").write_text(json.dumps({"all": {"children": {
        "local": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}},
        "refused": {"hosts": {"refused": {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 9,
                                          "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
                                          "ansible_ssh_retries": 0, "ansible_timeout": 5}}}}}}))
    (base / "ansible.cfg").write_text("[defaults]\ncollections_path = %s\nstdout_callback = json\nretry_files_enabled = false\n"
                                      % collections_path())
    env = dict(os.environ, ANSIBLE_CONFIG=str(base / "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCAL_TEMP=str(base / "local-tmp"))
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    done = subprocess.run([ansible_playbook(), "-i", str(base / "inventory.yml"), "--diff", str(base / "playbook.yml")],
                          cwd=str(base), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 4), done.stdout[-4000:] + done.stderr[-4000:]
    results = {}
    for play in json.loads(done.stdout)["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                # Without the role's "settings : " prefix.
                results[(task["task"]["name"].split(" : ", 1)[-1], host)] = result
    return out, results


def test_src_writes_what_the_template_lookup_renders(run):
    out, results = run
    assert results[("src", "localhost")]["changed"] is True
    assert (out / "src.conf").read_bytes() == (out / "lookup.conf").read_bytes()
    assert (out / "src.conf").read_text() == "#\n# Ansible managed\n#\nname=play\nitem=none\npart=play\n"
    assert results[("src", "localhost")]["diff"] == [{"before": "", "after_header": str(out / "src.conf"),
                                                      "after": (out / "src.conf").read_text()}]


def test_src_sees_the_task_s_vars_and_loop_items(run):
    out, results = run
    for item in ("a", "b"):
        assert (out / ("src-%s.conf" % item)).read_bytes() == (out / ("lookup-%s.conf" % item)).read_bytes()
        assert "item=%s\npart=task\n" % item in (out / ("src-%s.conf" % item)).read_text()


def test_an_unchanged_template_changes_nothing(run):
    _out, results = run
    assert results[("src again", "localhost")]["changed"] is False


def test_check_mode_reports_the_template_s_change_without_writing(run):
    out, results = run
    result = results[("src in check mode", "localhost")]
    assert result["changed"] is True and result["changed_paths"] == [str(out / "checked.conf")]
    assert result["diff"][0]["after"] == (out / "src.conf").read_text()
    assert not (out / "checked.conf").exists()


def test_what_the_known_state_shows_as_asked_contacts_no_node(run):
    _out, results = run
    result = results[("known as asked", "refused")]
    assert not result.get("unreachable") and not result.get("failed") and result["changed"] is False
    assert result["changed_paths"] == []


def test_a_path_the_known_state_shows_different_is_read_from_the_node(run):
    _out, results = run
    result = results[("known with a mode that differs", "refused")]
    # Unreachable (a controller without an ssh client would fail the task instead).
    assert result.get("unreachable") is True or result.get("failed") is True, result
