# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.packages' action plugin: apt is asked only for what the node lacks."""

from __future__ import annotations

import hashlib
from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible_collections.gpucluster.core.plugins.action.packages import ActionModule

LISTING = "bash\t5.2.15-2+b13\tii \ncuda-drivers-550\t550.54.15-1\thi \n"


def action(args, listing=LISTING, rc=0, check_mode=False):
    task = Task()
    task.args = args
    task.check_mode = check_mode
    plugin = ActionModule(task, MagicMock(), PlayContext(), loader=None, templar=None, shared_loader_obj=None)
    plugin._low_level_execute_command = MagicMock(return_value={"rc": rc, "stdout": listing, "stderr": "boom"})
    plugin._execute_module = MagicMock(return_value={"changed": True, "msg": "apt ran"})
    return plugin


def facts(pkg_mgr="apt"):
    return {"inventory_hostname": "gpu01", "ansible_facts": {"pkg_mgr": pkg_mgr, "os_family": "Debian"}}


def test_nothing_to_do_asks_only_dpkg():
    plugin = action({"name": ["bash", "cuda-drivers-550=550.54.15-1"], "update_cache": True})
    result = plugin.run(task_vars=facts())
    assert result["changed"] is False and result["pending"] == []
    plugin._execute_module.assert_not_called()
    command = plugin._low_level_execute_command.call_args.args[0]
    assert command == ("dpkg-query -W '--showformat=${Package}\\t${Version}\\t${db:Status-Abbrev}\\n' "
                       "bash cuda-drivers-550")


def test_apt_gets_only_the_pending_specs_and_the_set_options():
    plugin = action({"name": ["bash", "cuda-drivers-550=550.90.07-1", "nfs-common"],
                     "allow_downgrade": True, "allow_change_held_packages": True}, rc=1)
    result = plugin.run(task_vars=facts())
    assert result["changed"] is True and result["pending"] == ["cuda-drivers-550=550.90.07-1", "nfs-common"]
    kwargs = plugin._execute_module.call_args.kwargs
    assert kwargs["module_name"] == "ansible.legacy.apt"
    assert kwargs["module_args"] == {"name": ["cuda-drivers-550=550.90.07-1", "nfs-common"], "state": "present",
                                     "allow_downgrade": True, "allow_change_held_packages": True}


@pytest.mark.parametrize("recommends", [False, True])
def test_install_recommends_is_passed_when_set(recommends):
    plugin = action({"name": ["nfs-common"], "install_recommends": recommends}, rc=1)
    plugin.run(task_vars=facts())
    assert plugin._execute_module.call_args.kwargs["module_args"] == {
        "name": ["nfs-common"], "state": "present", "install_recommends": recommends}


def test_holds_come_from_the_same_read_and_one_set_selections():
    plugin = action({"name": ["bash", "cuda-drivers-550=550.54.15-1"], "hold": ["bash", "cuda-drivers-550"],
                     "release": ["libcudnn9"]})
    plugin._low_level_execute_command.side_effect = [{"rc": 1, "stdout": LISTING, "stderr": ""},
                                                     {"rc": 0, "stdout": "", "stderr": ""}]
    result = plugin.run(task_vars=facts())
    plugin._execute_module.assert_not_called()
    assert result["changed"] is True and result["held"] == ["bash"] and result["released"] == []
    read, write = [call.args[0] for call in plugin._low_level_execute_command.call_args_list]
    assert read.endswith(" bash cuda-drivers-550 libcudnn9")
    assert write == "printf '%s\\n' 'bash hold' | dpkg --set-selections"


def test_nothing_to_hold_means_one_read():
    plugin = action({"name": ["cuda-drivers-550"], "hold": ["cuda-drivers-550"]})
    result = plugin.run(task_vars=facts())
    assert result["changed"] is False and result["held"] == []
    assert plugin._low_level_execute_command.call_count == 1


def test_what_apt_installs_is_held_but_not_in_check_mode():
    args = {"name": ["nfs-common"], "hold": ["nfs-common"]}
    plugin = action(args)
    plugin._low_level_execute_command.side_effect = [{"rc": 0, "stdout": LISTING, "stderr": ""},
                                                     {"rc": 0, "stdout": "", "stderr": ""}]
    result = plugin.run(task_vars=facts())
    assert result["held"] == ["nfs-common"] and plugin._low_level_execute_command.call_count == 2
    checking = action(args, check_mode=True)
    result = checking.run(task_vars=facts())
    assert result["held"] == [] and checking._low_level_execute_command.call_count == 1


def test_holds_in_check_mode_are_reported_not_made():
    plugin = action({"name": ["bash"], "hold": ["bash"]}, check_mode=True)
    result = plugin.run(task_vars=facts())
    assert result["changed"] is True and result["held"] == ["bash"]
    assert plugin._low_level_execute_command.call_count == 1


def test_other_package_managers_go_to_package():
    plugin = action({"name": ["rdma-core"], "update_cache": True})
    plugin.run(task_vars=facts("dnf"))
    plugin._low_level_execute_command.assert_not_called()
    kwargs = plugin._execute_module.call_args.kwargs
    assert kwargs["module_name"] == "ansible.legacy.package"
    assert kwargs["module_args"] == {"name": ["rdma-core"], "state": "present"}


@pytest.mark.parametrize("task_vars, rc, message", [
    ({"inventory_hostname": "gpu01", "ansible_facts": {}}, 0,
     "gpucluster.core.packages needs the fact pkg_mgr (or os_family) of gpu01"),
    (facts(), 2, "dpkg-query failed (rc 2): boom"),
])
def test_failures_are_named(task_vars, rc, message):
    plugin = action({"name": ["bash"]}, rc=rc)
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars=task_vars)
    assert str(err.value) == message


def test_a_failed_set_selections_is_named():
    plugin = action({"name": ["bash"], "hold": ["bash"]})
    plugin._low_level_execute_command.side_effect = [{"rc": 0, "stdout": LISTING, "stderr": ""},
                                                     {"rc": 2, "stdout": "", "stderr": "dpkg: error"}]
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars=facts())
    assert str(err.value) == "gpucluster.core.packages: dpkg --set-selections failed (rc 2): dpkg: error"


def test_bad_hold_names_are_refused_before_the_read():
    plugin = action({"name": ["bash"], "hold": ["libnvidia-nscq*"]})
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars=facts())
    assert str(err.value) == "hold takes package names, not 'libnvidia-nscq*'"
    plugin._low_level_execute_command.assert_not_called()


PIN = {"dest": "/etc/apt/preferences.d/gpucluster-cuda", "content": "Package: cuda\n", "owner": "root",
       "group": "root", "mode": "0644"}
PIN_SHA = hashlib.sha1(b"Package: cuda\n").hexdigest()


def test_files_are_read_with_dpkg_and_written_only_when_they_differ():
    plugin = action({"name": ["bash"], "files": [PIN]},
                    listing="0 file root:root:644:0:0 %s\n@@packages\n%s" % (PIN_SHA, LISTING))
    result = plugin.run(task_vars=facts())
    assert result["changed"] is False and result["changed_paths"] == []
    plugin._execute_module.assert_not_called()
    command = plugin._low_level_execute_command.call_args.args[0]
    assert command.startswith("p=/etc/apt/preferences.d/gpucluster-cuda; if [ -L")
    assert "; echo @@packages; dpkg-query -W " in command and command.endswith(" bash")


def test_a_differing_file_is_written_before_apt():
    plugin = action({"name": ["nfs-common"], "files": [PIN]}, listing="0 absent\n@@packages\n%s" % LISTING, rc=1)
    plugin._execute_module.side_effect = [{"changed": True, "changed_paths": [PIN["dest"]]},
                                          {"changed": True, "msg": "apt ran"}]
    result = plugin.run(task_vars=facts())
    first, second = plugin._execute_module.call_args_list
    assert first.kwargs["module_name"] == "gpucluster.core.files"
    assert first.kwargs["module_args"] == {"files": [dict(PIN, state="file")]}
    assert second.kwargs["module_name"] == "ansible.legacy.apt"
    assert result["changed"] is True and result["changed_paths"] == [PIN["dest"]] and result["pending"] == ["nfs-common"]


def test_a_written_file_alone_changes_the_task():
    plugin = action({"name": ["bash"], "files": [PIN]}, listing="0 absent\n@@packages\n%s" % LISTING)
    plugin._execute_module.return_value = {"changed": True, "changed_paths": [PIN["dest"]]}
    result = plugin.run(task_vars=facts())
    assert result["changed"] is True and result["pending"] == []
    plugin._execute_module.assert_called_once()


def test_a_failed_file_write_stops_before_apt():
    plugin = action({"name": ["nfs-common"], "files": [PIN]}, listing="0 absent\n@@packages\n%s" % LISTING)
    plugin._execute_module.return_value = {"failed": True, "msg": "chown failed", "changed_paths": []}
    result = plugin.run(task_vars=facts())
    assert result["failed"] is True and result["msg"] == "gpucluster.core.packages: files: chown failed"
    plugin._execute_module.assert_called_once()


def test_other_hosts_get_the_files_then_the_package_module():
    plugin = action({"name": ["nfs-utils"], "files": [PIN]}, listing="0 absent\n@@packages\n")
    plugin._execute_module.side_effect = [{"changed": True, "changed_paths": [PIN["dest"]]},
                                          {"changed": False, "msg": "nothing to do"}]
    result = plugin.run(task_vars=facts("dnf"))
    command = plugin._low_level_execute_command.call_args.args[0]
    assert "dpkg-query" not in command and command.endswith("; echo @@packages")
    assert plugin._execute_module.call_args.kwargs["module_name"] == "ansible.legacy.package"
    assert result["changed"] is True and result["changed_paths"] == [PIN["dest"]]


def test_a_link_in_the_way_of_a_file_goes_to_copy_as_with_files():
    plugin = action({"name": ["bash"], "files": [PIN]}, listing="0 link\n@@packages\n%s" % LISTING)
    plugin._shared_loader_obj = MagicMock()
    copy = plugin._shared_loader_obj.action_loader.get.return_value
    copy.run.return_value = {"changed": True}
    result = plugin.run(task_vars=facts())
    plugin._execute_module.assert_not_called()
    task = plugin._shared_loader_obj.action_loader.get.call_args.kwargs["task"]
    assert task.args == {"content": "Package: cuda\n", "dest": PIN["dest"], "owner": "root", "group": "root",
                         "mode": "0644"}
    assert result["changed"] is True and result["changed_paths"] == [PIN["dest"]]
