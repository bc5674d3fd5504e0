# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.files' action plugin: one read, copy and file only for what differs."""

from __future__ import annotations

import hashlib
from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible_collections.gpucluster.core.plugins.action.files import ActionModule

SHA = hashlib.sha1(b"a=1\n").hexdigest()
SHA_JSON = hashlib.sha1(b'{"a": 1}').hexdigest()


def action(args, listing, rc=0, copy_result=None):
    task = Task()
    task.args = args
    plugin = ActionModule(task, MagicMock(), PlayContext(), loader=None, templar=None, shared_loader_obj=None)
    plugin._shared_loader_obj = MagicMock()
    plugin._low_level_execute_command = MagicMock(return_value={"rc": rc, "stdout": listing, "stderr": "boom"})
    plugin._execute_module = MagicMock(return_value={"changed": True})
    plugin._remove_tmp_path = MagicMock()
    copy = plugin._shared_loader_obj.action_loader.get.return_value
    copy.run.return_value = copy_result or {"changed": True, "diff": {"before": "", "after": "a=2\n"}}
    return plugin, copy


FILES = {"files": [
    {"dest": "/etc/x", "state": "directory", "owner": "root", "group": "root", "mode": "0755"},
    {"dest": "/etc/x/a.conf", "content": "a=1\n", "owner": "root", "group": "root", "mode": "0644"},
    {"dest": "/etc/x/b.json", "content": {"a": 1}, "mode": "0600"},
]}


def test_nothing_differs_means_one_read_and_no_module():
    listing = ("0 directory root:root:755:0:0\n1 file root:root:644:0:0 %s\n2 file root:root:600:0:0 %s\n"
               % (SHA, SHA_JSON))
    plugin, copy = action(FILES, listing)
    result = plugin.run(task_vars={})
    assert result["changed"] is False and result["changed_paths"] == []
    plugin._execute_module.assert_not_called()
    copy.run.assert_not_called()
    assert plugin._low_level_execute_command.call_count == 1


def test_only_what_differs_goes_to_one_module_call():
    listing = "0 absent\n1 file root:root:644:0:0 %s\n2 file root:root:644:0:0 %s\n" % (SHA, SHA_JSON)
    plugin, copy = action(FILES, listing)
    plugin._execute_module.return_value = {"changed": True, "changed_paths": ["/etc/x", "/etc/x/b.json"],
                                           "diff": [{"before": "", "after": "a=2\n"}]}
    result = plugin.run(task_vars={})
    assert result["changed"] is True and result["changed_paths"] == ["/etc/x", "/etc/x/b.json"]
    plugin._execute_module.assert_called_once()
    assert plugin._execute_module.call_args.kwargs["module_name"] == "gpucluster.core.files"
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"files": [
        {"dest": "/etc/x", "state": "directory", "owner": "root", "group": "root", "mode": "0755"},
        {"dest": "/etc/x/b.json", "content": '{"a": 1}', "mode": "0600", "state": "file"},
    ]}
    copy.run.assert_not_called()
    assert result["diff"] == [{"before": "", "after": "a=2\n"}]


def test_a_link_in_the_way_goes_to_copy_and_file():
    listing = "0 absent\n1 link\n2 file root:root:600:0:0 %s\n" % SHA_JSON
    plugin, copy = action(FILES, listing)
    result = plugin.run(task_vars={})
    assert result["changed"] is True and result["changed_paths"] == ["/etc/x", "/etc/x/a.conf"]
    assert plugin._execute_module.call_args.kwargs["module_name"] == "ansible.legacy.file"
    assert plugin._execute_module.call_args.kwargs["module_args"] == {
        "path": "/etc/x", "state": "directory", "owner": "root", "group": "root", "mode": "0755"}
    task = plugin._shared_loader_obj.action_loader.get.call_args.kwargs["task"]
    assert task.args == {"content": "a=1\n", "dest": "/etc/x/a.conf", "owner": "root", "group": "root",
                         "mode": "0644"}
    assert result["diff"] == [{"before": "", "after": "a=2\n"}]


def test_an_absent_path_is_removed_only_where_it_exists():
    args = {"files": [{"dest": "/etc/apt/sources.list.d/docker.list", "state": "absent"},
                      {"dest": "/etc/apt/preferences.d/old.pref", "state": "absent"}]}
    plugin, copy = action(args, "0 absent\n1 file root:root:644:0:0 %s\n" % SHA)
    plugin._execute_module.return_value = {"changed": True, "changed_paths": ["/etc/apt/preferences.d/old.pref"]}
    result = plugin.run(task_vars={})
    assert result["changed"] is True and result["changed_paths"] == ["/etc/apt/preferences.d/old.pref"]
    plugin._execute_module.assert_called_once()
    assert plugin._execute_module.call_args.kwargs["module_args"] == {
        "files": [{"dest": "/etc/apt/preferences.d/old.pref", "state": "absent"}]}
    copy.run.assert_not_called()


def test_a_failed_write_is_named():
    plugin, copy = action(FILES, "0 absent\n1 absent\n2 absent\n")
    plugin._execute_module.return_value = {"failed": True, "msg": "/etc/x: chown failed", "changed_paths": []}
    result = plugin.run(task_vars={})
    assert result["failed"] is True and result["msg"] == "gpucluster.core.files: /etc/x: chown failed"
    copy.run.assert_not_called()


def test_a_failed_write_beside_a_link_names_the_path():
    plugin, copy = action(FILES, "0 link\n1 absent\n2 absent\n")
    plugin._execute_module.return_value = {"failed": True, "msg": "chown failed"}
    result = plugin.run(task_vars={})
    assert result["failed"] is True and result["msg"] == "gpucluster.core.files: /etc/x: chown failed"
    copy.run.assert_not_called()


@pytest.mark.parametrize("args, listing, rc, message", [
    ({"files": [{"dest": "relative", "content": "x"}]}, "", 0,
     "gpucluster.core.files: files[0] (relative): dest must be an absolute path on one line"),
    ({"files": [{"dest": "/a", "content": "x"}]}, "", 1,
     "gpucluster.core.files: the state read failed (rc 1): boom"),
    ({"files": [{"dest": "/a", "content": "x"}]}, "0 fifo\n", 0,
     "gpucluster.core.files: unexpected line in the state read: '0 fifo'"),
])
def test_failures_are_named(args, listing, rc, message):
    plugin, _copy = action(args, listing, rc)
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars={})
    assert str(err.value) == message


NEW = {"before": "", "after_header": "/etc/x/a.conf", "after": "a=1\n"}
MODE = {"before": {"path": "/etc/x/a.conf", "mode": "0600"}, "after": {"path": "/etc/x/a.conf", "mode": "0644"}}
MADE = {"before": {"path": "/etc/x", "state": "absent"}, "after": {"path": "/etc/x", "state": "directory"}}


@pytest.mark.parametrize("check_mode", [False, True])
@pytest.mark.parametrize("listing, module_result, diff", [
    # The module's diffs, one per path changed, as they are (the module shapes them as copy and file).
    ("0 absent\n1 absent\n2 file root:root:600:0:0 %s\n" % SHA_JSON,
     {"changed": True, "changed_paths": ["/etc/x", "/etc/x/a.conf"], "diff": [MADE, NEW]}, [MADE, NEW]),
    ("0 directory root:root:755:0:0\n1 file root:root:600:0:0 %s\n2 file root:root:600:0:0 %s\n" % (SHA, SHA_JSON),
     {"changed": True, "changed_paths": ["/etc/x/a.conf"], "diff": [MODE]}, [MODE]),
    # Outside diff mode the module returns none, and the task none.
    ("0 absent\n1 absent\n2 file root:root:600:0:0 %s\n" % SHA_JSON,
     {"changed": True, "changed_paths": ["/etc/x", "/etc/x/a.conf"]}, None),
])
def test_the_module_s_diffs_are_the_task_s(check_mode, listing, module_result, diff):
    plugin, _copy = action(FILES, listing)
    plugin._task.check_mode = check_mode
    plugin._execute_module.return_value = module_result
    result = plugin.run(task_vars={})
    assert result.get("diff") == diff


def test_beside_a_link_copy_s_and_file_s_diffs_are_the_task_s_in_order():
    listing = "0 absent\n1 link\n2 file root:root:600:0:0 %s\n" % SHA_JSON
    plugin, copy = action(FILES, listing, copy_result={"changed": True, "diff": [NEW]})
    plugin._execute_module.return_value = {"changed": True, "diff": MADE}
    result = plugin.run(task_vars={})
    assert result["diff"] == [MADE, NEW]


def rendering(plugin, texts):
    """The template lookup the action asks for, rendering each src to ``texts[src]``."""
    lookup = plugin._shared_loader_obj.lookup_loader.get.return_value
    lookup.run.side_effect = lambda terms, variables: [texts[terms[0]] % variables]
    return lookup


TEMPLATED = {"files": [
    {"dest": "/etc/x", "state": "directory", "owner": "root", "group": "root", "mode": "0755"},
    {"dest": "/etc/x/a.conf", "src": "a.conf.j2", "owner": "root", "group": "root", "mode": "0644"},
]}


def test_a_template_is_rendered_by_the_template_lookup_with_the_task_s_variables():
    plugin, _copy = action(TEMPLATED, "0 directory root:root:755:0:0\n1 absent\n")
    lookup = rendering(plugin, {"a.conf.j2": "a=%(a)s\n"})
    plugin._execute_module.return_value = {"changed": True, "changed_paths": ["/etc/x/a.conf"]}
    result = plugin.run(task_vars={"a": 1})
    assert plugin._shared_loader_obj.lookup_loader.get.call_args.args == ("ansible.builtin.template",)
    lookup.run.assert_called_once_with(["a.conf.j2"], variables={"a": 1})
    assert result["changed"] is True and result["changed_paths"] == ["/etc/x/a.conf"]
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"files": [
        {"dest": "/etc/x/a.conf", "content": "a=1\n", "owner": "root", "group": "root", "mode": "0644", "state": "file"},
    ]}


def test_a_rendered_template_the_node_has_writes_nothing():
    plugin, _copy = action(TEMPLATED, "0 directory root:root:755:0:0\n1 file root:root:644:0:0 %s\n" % SHA)
    rendering(plugin, {"a.conf.j2": "a=%(a)s\n"})
    result = plugin.run(task_vars={"a": 1})
    assert result["changed"] is False and result["changed_paths"] == []
    plugin._execute_module.assert_not_called()


KNOWN = {"/etc/x": "root:root:755", "/etc/x/a.conf": "root:root:644 " + SHA}


@pytest.mark.parametrize("check_mode", [False, True])
def test_what_the_known_state_shows_as_asked_contacts_no_node(check_mode):
    plugin, copy = action(dict(TEMPLATED, known=KNOWN), "")
    plugin._task.check_mode = check_mode
    rendering(plugin, {"a.conf.j2": "a=%(a)s\n"})
    result = plugin.run(task_vars={"a": 1})
    assert result["changed"] is False and result["changed_paths"] == []
    plugin._low_level_execute_command.assert_not_called()
    plugin._execute_module.assert_not_called()
    copy.run.assert_not_called()


@pytest.mark.parametrize("check_mode", [False, True])
def test_only_the_paths_the_known_state_does_not_settle_are_read_and_written(check_mode):
    # The rendered text differs from the known sha1: that path alone is read, then written.
    plugin, copy = action(dict(TEMPLATED, known=KNOWN), "0 file root:root:644:0:0 %s\n" % SHA)
    plugin._task.check_mode = check_mode
    rendering(plugin, {"a.conf.j2": "a=%(a)s\n"})
    plugin._execute_module.return_value = {"changed": True, "changed_paths": ["/etc/x/a.conf"], "diff": [NEW]}
    result = plugin.run(task_vars={"a": 2})
    assert plugin._low_level_execute_command.call_count == 1
    assert "/etc/x/a.conf" in plugin._low_level_execute_command.call_args.args[0]
    assert "p=/etc/x;" not in plugin._low_level_execute_command.call_args.args[0]
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"files": [
        {"dest": "/etc/x/a.conf", "content": "a=2\n", "owner": "root", "group": "root", "mode": "0644", "state": "file"},
    ]}
    assert result == {"changed": True, "changed_paths": ["/etc/x/a.conf"], "diff": [NEW]}
    copy.run.assert_not_called()


def test_a_path_the_known_state_does_not_hold_is_read():
    plugin, _copy = action(dict(FILES, known={"/etc/x": "root:root:755"}), "0 absent\n1 absent\n")
    plugin._execute_module.return_value = {"changed": True, "changed_paths": ["/etc/x/a.conf", "/etc/x/b.json"]}
    result = plugin.run(task_vars={})
    assert result["changed_paths"] == ["/etc/x/a.conf", "/etc/x/b.json"]
    assert [entry["dest"] for entry in plugin._execute_module.call_args.kwargs["module_args"]["files"]] == [
        "/etc/x/a.conf", "/etc/x/b.json"]


def test_no_entries_contact_no_node():
    plugin, _copy = action({"files": []}, "")
    result = plugin.run(task_vars={})
    assert result["changed"] is False and result["changed_paths"] == []
    plugin._low_level_execute_command.assert_not_called()


@pytest.mark.parametrize("args, message", [
    ({"files": [{"dest": "/a", "src": "a.j2", "content": "x"}]},
     "gpucluster.core.files: files[0] (/a): content and src are mutually exclusive"),
    ({"files": [{"dest": "/a", "src": "a.j2"}], "known": {"/a": "-rw-r--r--"}},
     "gpucluster.core.files: known[/a]: '-rw-r--r--' is not \"owner:group:mode\" (a directory), "
     "\"owner:group:mode sha1\" (a file) or \"\" (no path)"),
])
def test_bad_templates_and_known_states_are_named(args, message):
    plugin, _copy = action(args, "")
    rendering(plugin, {"a.j2": "x"})
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars={})
    assert str(err.value) == message
    plugin._low_level_execute_command.assert_not_called()
