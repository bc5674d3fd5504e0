# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpucluster.core.packages: on apt hosts one ``dpkg-query`` (a plain shell
command, no module) says which specs are already satisfied; ansible.builtin.apt runs only for the
others, with the task's options. On other hosts the task goes to ansible.builtin.package."""

from __future__ import annotations

import shlex

from ansible.errors import AnsibleActionFail
from ansible_collections.gpucluster.core.plugins.modules.packages import ARGUMENT_SPEC
from ansible_collections.gpucluster.core.plugins.plugin_utils._action import ReadFirstAction
from ansible_collections.gpucluster.core.plugins.plugin_utils._packages import (
    DPKG_QUERY_FORMAT,
    PackagesError,
    dpkg_query_names,
    parse_dpkg_query,
    pending_specs,
)

_APT_ONLY = ("update_cache", "cache_valid_time", "allow_downgrade", "allow_change_held_packages")


class ActionModule(ReadFirstAction):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result, args = self._start(tmp, task_vars, ARGUMENT_SPEC)
        facts = task_vars.get("ansible_facts") or {}
        pkg_mgr = facts.get("pkg_mgr") or ("apt" if facts.get("os_family") == "Debian" else None)
        if pkg_mgr is None:
            raise AnsibleActionFail("gpucluster.core.packages needs the fact pkg_mgr (or os_family) of %s"
                                    % task_vars.get("inventory_hostname"))
        specs = args["name"]
        if pkg_mgr != "apt":
            result.update(self._execute_module(module_name="ansible.legacy.package",
                                               module_args={"name": specs, "state": "present"},
                                               task_vars=task_vars))
            return result
        try:
            pending = self._pending(specs)
        except PackagesError as exc:
            raise AnsibleActionFail(str(exc)) from None
        if not pending:
            result.update(changed=False, pending=[], msg="every package is installed as asked")
            return result
        module_args = {"name": pending, "state": "present"}
        module_args.update((key, args[key]) for key in _APT_ONLY if args[key])
        result.update(self._execute_module(module_name="ansible.legacy.apt", module_args=module_args,
                                           task_vars=task_vars))
        result["pending"] = pending
        return result

    def _pending(self, specs: list[str]) -> list[str]:
        """The specs the node does not satisfy, from one dpkg-query (read-only, so it runs in
        check mode too). dpkg-query exits 1 when it knows a name not at all: those are pending."""
        names = dpkg_query_names(specs)
        if not names:
            return pending_specs(specs, {})
        # dpkg-query reads the \t and \n escapes of the format itself.
        command = shlex.join(["dpkg-query", "-W", "--showformat=" + DPKG_QUERY_FORMAT] + names)
        out = self._low_level_execute_command(command, sudoable=True)
        if out.get("rc") not in (0, 1):
            raise PackagesError("dpkg-query failed (rc %s): %s" % (out.get("rc"), (out.get("stderr") or "").strip()))
        return pending_specs(specs, parse_dpkg_query(out.get("stdout") or ""))
