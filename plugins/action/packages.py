# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpucluster.core.packages: on apt hosts one ``dpkg-query`` (a plain shell
command, no module) says which specs are already satisfied and which packages are held;
ansible.builtin.apt runs only for the others, with the task's options, and one ``dpkg
--set-selections`` only for the holds that differ. On other hosts the task goes to
ansible.builtin.package. The task's ``files`` (apt preferences, say) are read in the same
call and written as gpucluster.core.files writes them (ReadFirstAction._write_files), only where
they differ, before apt runs. In diff mode the same call reads the text of the files to remove,
so that the diff shows each file written or removed as before and after text, as copy does."""

from __future__ import annotations

import shlex

from ansible.errors import AnsibleActionFail
from ansible_collections.gpucluster.core.plugins.modules.packages import ARGUMENT_SPEC
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._action import ReadFirstAction
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._files import (
    FilesError,
    check_entries,
    normalize_entry,
    parse_state,
    parse_texts,
    removal_text_diffs,
    state_command,
    text_command,
)
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._packages import (
    DPKG_QUERY_FORMAT,
    PackagesError,
    check_selection_names,
    dpkg_query_names,
    parse_dpkg_query,
    pending_specs,
    selection_changes,
    selections,
)

_APT_ONLY = ("update_cache", "cache_valid_time", "allow_downgrade", "allow_change_held_packages")
# Ends the files' part of the read.
_MARK = "@@packages"
# Starts, in diff mode, the text of the files to remove within the files' part.
_TEXTS = "@@texts"


class ActionModule(ReadFirstAction):
    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result, args = self._start(tmp, task_vars, ARGUMENT_SPEC)
        facts = task_vars.get("ansible_facts") or {}
        pkg_mgr = facts.get("pkg_mgr") or ("apt" if facts.get("os_family") == "Debian" else None)
        if pkg_mgr is None:
            raise AnsibleActionFail("gpucluster.core.packages needs the fact pkg_mgr (or os_family) of %s"
                                    % task_vars.get("inventory_hostname"))
        specs = args["name"]
        entries = [normalize_entry(item) for item in args["files"]]
        self._refuse("gpucluster.core.packages", check_entries(entries))
        apt = pkg_mgr == "apt"
        try:
            if apt:
                check_selection_names(args["hold"], args["release"])
            # In diff mode, the text of the files to remove, which their diff shows.
            removed = [entry["dest"] for entry in entries if entry.get("state") == "absent"] if self._task.diff else []
            observed, listing, texts = self._read(
                dpkg_query_names(specs) + args["hold"] + args["release"] if apt else [],
                [entry["dest"] for entry in entries], removed)
            pending = pending_specs(specs, parse_dpkg_query(listing)) if apt else specs
        except (PackagesError, FilesError) as exc:
            raise AnsibleActionFail(str(exc)) from None
        result.update(changed=False, changed_paths=[])
        outcome = self._write_files(entries, observed, task_vars)
        result.update(changed=bool(outcome["changed_paths"]), changed_paths=outcome["changed_paths"])
        if outcome.get("diff"):
            result["diff"] = removal_text_diffs(outcome["diff"], texts)
        if outcome.get("failed"):
            result.update(failed=True, msg="gpucluster.core.packages: files: %s" % outcome.get("msg", ""))
            return result
        if not apt:
            self._install(result, "ansible.legacy.package", {"name": specs, "state": "present"}, task_vars)
            return result
        result.update(pending=pending, msg="every package is installed as asked")
        if pending:
            module_args = {"name": pending, "state": "present"}
            module_args.update((key, args[key]) for key in _APT_ONLY if args[key])
            if args["install_recommends"] is not None:
                module_args["install_recommends"] = args["install_recommends"]
            self._install(result, "ansible.legacy.apt", module_args, task_vars)
            if result.get("failed"):
                return result
        installed_now = [] if self._task.check_mode else dpkg_query_names(pending)
        changes = selection_changes(args["hold"], args["release"], selections(listing), installed_now)
        result["held"] = [name for name, selection in changes if selection == "hold"]
        result["released"] = [name for name, selection in changes if selection == "install"]
        if changes:
            result["changed"] = True
            if not self._task.check_mode:
                self._set_selections(changes)
        return result

    def _install(self, result: dict, module: str, module_args: dict, task_vars: dict) -> None:
        """The package module's result over ``result``, changed also when the files changed; the
        package module's diff (apt's, in diff mode) after the files' diffs."""
        changed_paths, diffs = result["changed_paths"], result.pop("diff", [])
        result.update(self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars))
        result["changed"] = bool(result.get("changed")) or bool(changed_paths)
        result["changed_paths"] = changed_paths
        installed = result.pop("diff", None)
        diffs = diffs + (installed if isinstance(installed, list) else [installed] if installed else [])
        if diffs:
            result["diff"] = diffs

    def _read(self, names: list[str], paths: list[str], removed: list[str]) -> tuple[list, str, dict]:
        """The state of the paths, the dpkg-query listing of the names and the text of the files of
        ``removed`` (a part of the paths: text_command), in one shell call (read-only, so it runs in
        check mode too). dpkg-query comes last, so its exit status is the call's: 1 when it knows a
        name not at all (that package is not installed)."""
        names = list(dict.fromkeys(names))
        if not names and not paths:
            return [], "", {}
        texts = "; echo %s; %s" % (_TEXTS, text_command(removed)) if removed else ""
        parts = [state_command(paths) + texts + "; echo " + _MARK] if paths else []
        # dpkg-query reads the \t and \n escapes of the format itself.
        if names:
            parts.append(shlex.join(["dpkg-query", "-W", "--showformat=" + DPKG_QUERY_FORMAT] + names))
        what = "dpkg-query" if not paths else "the read of the files" + (" and dpkg-query" if names else "")
        out = self._run_shell("; ".join(parts), what, PackagesError, ok_rcs=(0, 1) if names else (0,))
        if not paths:
            return [], out, {}
        state, mark, listing = out.partition(_MARK + "\n")
        if not mark:
            raise PackagesError("%s printed no %s line" % (what, _MARK))
        state, mark, text = state.partition(_TEXTS + "\n")
        if removed and not mark:
            raise PackagesError("%s printed no %s line" % (what, _TEXTS))
        return parse_state(state, len(paths)), listing, parse_texts(text, removed) if removed else {}

    def _set_selections(self, changes: list[tuple[str, str]]) -> None:
        lines = ["%s %s" % change for change in changes]
        command = "printf '%%s\\n' %s | dpkg --set-selections" % " ".join(shlex.quote(line) for line in lines)
        self._run_shell(command, "gpucluster.core.packages: dpkg --set-selections", AnsibleActionFail)
