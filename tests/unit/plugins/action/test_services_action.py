# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpucluster.core.services' action plugin: one read, systemd_service only for what differs."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible_collections.gpucluster.core.plugins.action.services import ActionModule

RUNNING = "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n"
STOPPED = "LoadState=loaded\nActiveState=inactive\nUnitFileState=disabled\n"
ARGS = {"services": [{"name": "ssh", "state": "started", "enabled": True},
                     {"name": "chrony", "state": "started", "enabled": True}]}


def action(args, listing, rc=0, module_result=None):
    task = Task()
    task.args = args
    plugin = ActionModule(task, MagicMock(), PlayContext(), loader=None, templar=None, shared_loader_obj=None)
    plugin._low_level_execute_command = MagicMock(return_value={"rc": rc, "stdout": listing, "stderr": "boom"})
    plugin._execute_module = MagicMock(return_value=module_result or {"changed": True})
    return plugin


def test_nothing_differs_means_one_read_and_no_module():
    plugin = action(ARGS, RUNNING + "\n" + RUNNING)
    result = plugin.run(task_vars={})
    assert result["changed"] is False and result["changed_services"] == []
    plugin._execute_module.assert_not_called()
    assert plugin._low_level_execute_command.call_args.args[0] == (
        "systemctl show --property=LoadState,ActiveState,UnitFileState -- ssh chrony")


def test_only_what_differs_goes_to_systemd_service():
    plugin = action(ARGS, RUNNING + "\n" + STOPPED)
    result = plugin.run(task_vars={})
    assert result["changed"] is True and result["changed_services"] == ["chrony"]
    plugin._execute_module.assert_called_once()
    assert plugin._execute_module.call_args.kwargs["module_name"] == "ansible.legacy.systemd_service"
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"name": "chrony", "state": "started", "enabled": True}


def test_options_not_given_are_not_passed():
    plugin = action({"services": [{"name": "nfs-server", "enabled": True}]}, STOPPED)
    plugin.run(task_vars={})
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"name": "nfs-server", "enabled": True}


def test_daemon_reload_comes_before_the_read():
    plugin = action({"services": [{"name": "ssh", "state": "started"}], "daemon_reload": True}, RUNNING,
                    module_result={"changed": False})
    result = plugin.run(task_vars={})
    assert result["changed"] is False
    assert plugin._execute_module.call_args.kwargs["module_args"] == {"daemon_reload": True}


def test_a_failed_unit_is_named():
    plugin = action(ARGS, STOPPED + "\n" + STOPPED, module_result={"failed": True, "msg": "Unable to start service ssh"})
    result = plugin.run(task_vars={})
    assert result["failed"] is True and result["changed_services"] == []
    assert result["msg"] == "gpucluster.core.services: ssh: Unable to start service ssh"
    assert plugin._execute_module.call_count == 1


@pytest.mark.parametrize("args, listing, rc, message", [
    ({"services": [{"name": "ssh"}]}, "", 0, "gpucluster.core.services: services[0] (ssh): give state, enabled or both"),
    ({"services": [{"name": "ssh", "state": "started"}]}, "", 1,
     "gpucluster.core.services: the state read failed (rc 1): boom"),
    ({"services": [{"name": "ssh", "state": "started"}]}, RUNNING + "\n" + RUNNING, 0,
     "gpucluster.core.services: the state read gave 2 units for the 1 asked"),
])
def test_failures_are_named(args, listing, rc, message):
    plugin = action(args, listing, rc)
    with pytest.raises(AnsibleActionFail) as err:
        plugin.run(task_vars={})
    assert str(err.value) == message
