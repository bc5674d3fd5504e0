# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpucluster.core.services: one ``systemctl show`` (a plain shell command, no
module) reads every unit of the task; ansible.builtin.systemd_service runs only for the units
that are not as asked, with its own check mode."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible_collections.gpucluster.core.plugins.modules.services import ARGUMENT_SPEC
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._action import ReadFirstAction
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._services import (
    ServicesError,
    check_entries,
    differs,
    parse_state,
    state_command,
)

_MODULE = "ansible.legacy.systemd_service"


class ActionModule(ReadFirstAction):
    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result, args = self._start(tmp, task_vars, ARGUMENT_SPEC)
        entries = [{key: value for key, value in item.items() if value is not None} for item in args["services"]]
        self._refuse("gpucluster.core.services", check_entries(entries))
        if args["daemon_reload"]:
            outcome = self._execute_module(module_name=_MODULE, module_args={"daemon_reload": True}, task_vars=task_vars)
            if outcome.get("failed"):
                result.update(failed=True, msg="gpucluster.core.services: daemon-reload: %s" % outcome.get("msg", ""))
                return result
        try:
            observed = self._observe([entry["name"] for entry in entries])
        except ServicesError as exc:
            raise AnsibleActionFail("gpucluster.core.services: %s" % exc) from None
        changed = []
        for entry, seen in zip(entries, observed):
            if not differs(entry, seen):
                continue
            outcome = self._execute_module(module_name=_MODULE, module_args=entry, task_vars=task_vars)
            if outcome.get("failed"):
                result.update(failed=True, changed_services=changed,
                              msg="gpucluster.core.services: %s: %s" % (entry["name"], outcome.get("msg", "")))
                return result
            if outcome.get("changed"):
                changed.append(entry["name"])
        result.update(changed=bool(changed), changed_services=changed)
        return result

    def _observe(self, names: list[str]) -> list:
        return parse_state(self._run_shell(state_command(names), "the state read", ServicesError), len(names))
