# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.packages' action plugin: apt is asked only for what the node lacks."""

from __future__ import annotations

import base64
import hashlib
from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible_collections.gpucluster.core.plugins.action.packages import ActionModule

LISTING = "bash\t5.2.15-2+b13\tii \ncuda-drivers-550\t550.54.15-1\thi \n"


def action(args, listing=LISTING, rc=0, check_mode=False, diff=False):
    task = Task()
    task.args = args
    task.check_mode = check_mode
    task.diff = diff
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


OLD_PIN = "Package: cuda\nPin: version 12.4.0-1\n"
GONE = {"dest": "/etc/apt/preferences.d/gpucluster-old", "state": "absent"}
REMOVAL = {"before": {"path": GONE["dest"], "state": "file"}, "after": {"path": GONE["dest"], "state": "absent"}}
WRITTEN = {"before_header": PIN["dest"], "before": OLD_PIN, "after_header": PIN["dest"], "after": PIN["content"]}


def _texts(*files):
    return "".join("@@text %d\n%s\n" % (index, base64.b64encode(data).decode()) for index, data in files)


@pytest.mark.parametrize("check_mode", [False, True])
@pytest.mark.parametrize("files, listing, module_diff, shown", [
    # A pin file written: the files module's diff (copy's) as it is.
    ([PIN], "0 file root:root:644:0:0 %s\n" % hashlib.sha1(OLD_PIN.encode()).hexdigest(), [WRITTEN], [WRITTEN]),
    # A pin file removed: its text before, read in the same call, nothing after.
    ([GONE], "0 file root:root:644:0:0 %s\n@@texts\n%s" % (PIN_SHA, _texts((0, OLD_PIN.encode()))), [REMOVAL],
     [{"before_header": GONE["dest"], "before": OLD_PIN, "after_header": GONE["dest"], "after": ""}]),
    # Written and removed in one task, in the entries' order (the text read numbers the files removed alone).
    ([PIN, GONE], "0 absent\n1 file root:root:644:0:0 %s\n@@texts\n%s" % (PIN_SHA, _texts((0, OLD_PIN.encode()))),
     [{"before": "", "after_header": PIN["dest"], "after": PIN["content"]}, REMOVAL],
     [{"before": "", "after_header": PIN["dest"], "after": PIN["content"]},
      {"before_header": GONE["dest"], "before": OLD_PIN, "after_header": GONE["dest"], "after": ""}]),
    # A binary file removed shows as copy shows one.
    ([GONE], "0 file root:root:644:0:0 %s\n@@texts\n%s" % (PIN_SHA, _texts((0, b"\x00bin"))), [REMOVAL],
     [{"dst_binary": 1, "after_header": GONE["dest"], "after": ""}]),
    # Only the mode differs: the attributes as the file module shows them.
    ([PIN], "0 file root:root:600:0:0 %s\n" % PIN_SHA,
     [{"before": {"path": PIN["dest"], "mode": "0600"}, "after": {"path": PIN["dest"], "mode": "0644"}}],
     [{"before": {"path": PIN["dest"], "mode": "0600"}, "after": {"path": PIN["dest"], "mode": "0644"}}]),
])
def test_diff_mode_shows_the_pin_files_written_and_removed(check_mode, files, listing, module_diff, shown):
    plugin = action({"name": ["bash"], "files": files}, listing="%s@@packages\n%s" % (listing, LISTING),
                    check_mode=check_mode, diff=True)
    plugin._execute_module.return_value = {"changed": True, "changed_paths": [entry["dest"] for entry in files],
                                           "diff": module_diff}
    result = plugin.run(task_vars=facts())
    assert result["changed"] is True and result["diff"] == shown
    command = plugin._low_level_execute_command.call_args.args[0]
    removed = [entry["dest"] for entry in files if entry.get("state") == "absent"]
    assert ("; echo @@texts; " in command) is bool(removed)
    for index, dest in enumerate(removed):
        assert "p=%s; if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then echo '@@text %d'; head -c 104449 < \"$p\" | base64" % (
            dest, index) in command
    assert plugin._low_level_execute_command.call_count == 1


@pytest.mark.parametrize("diff", [False, True])
def test_the_text_of_removed_files_is_read_only_in_diff_mode(diff):
    listing = "0 absent\n" + ("@@texts\n" if diff else "") + "@@packages\n" + LISTING
    plugin = action({"name": ["bash"], "files": [GONE]}, listing=listing, diff=diff)
    result = plugin.run(task_vars=facts())
    assert result["changed"] is False and "diff" not in result
    command = plugin._low_level_execute_command.call_args.args[0]
    assert ("@@text" in command) is diff
    plugin._execute_module.assert_not_called()


def test_apt_s_diff_follows_the_files_diffs():
    plugin = action({"name": ["nfs-common"], "files": [PIN]}, listing="0 absent\n@@packages\n%s" % LISTING, rc=1,
                    diff=True)
    written = {"before": "", "after_header": PIN["dest"], "after": PIN["content"]}
    plugin._execute_module.side_effect = [{"changed": True, "changed_paths": [PIN["dest"]], "diff": [written]},
                                          {"changed": True, "msg": "apt ran", "diff": {"prepared": "Inst nfs-common"}}]
    result = plugin.run(task_vars=facts())
    assert result["diff"] == [written, {"prepared": "Inst nfs-common"}]
    assert result["changed_paths"] == [PIN["dest"]]


def test_apt_s_diff_alone_when_no_file_changed():
    plugin = action({"name": ["nfs-common"], "files": [PIN]},
                    listing="0 file root:root:644:0:0 %s\n@@packages\n%s" % (PIN_SHA, LISTING), rc=1, diff=True)
    plugin._execute_module.return_value = {"changed": True, "msg": "apt ran", "diff": {"prepared": "Inst nfs-common"}}
    result = plugin.run(task_vars=facts())
    assert result["diff"] == [{"prepared": "Inst nfs-common"}]


@pytest.mark.parametrize("listing, message", [
    ("0 file root:root:644:0:0 %s\n@@packages\n" % PIN_SHA, "the read of the files and dpkg-query printed no @@texts line"),
    ("0 file root:root:644:0:0 %s\n@@texts\n@@text 0\n***\n@@packages\n" % PIN_SHA,
     "the read of the files to remove printed no base64 for /etc/apt/preferences.d/gpucluster-old"),
])
def test_a_bad_text_read_fails_the_task(listing, message):
    plugin = action({"name": ["bash"], "files": [GONE]}, listing=listing + LISTING, diff=True)
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars=facts())
    assert str(err.value) == message
