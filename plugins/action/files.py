# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpucluster.core.files: one shell command (no module) reads the owner, group,
mode and sha1 of every path of the task; the module gpucluster.core.files then writes, makes or
removes the paths that differ, all in one call, in check and diff modes too. A path that is a
symbolic link goes to ansible.builtin.copy or ansible.builtin.file, which decide about links."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible_collections.gpucluster.core.plugins.modules.files import ARGUMENT_SPEC
from ansible_collections.gpucluster.core.plugins.plugin_utils._action import ReadFirstAction
from ansible_collections.gpucluster.core.plugins.plugin_utils._files import (
    FilesError,
    check_entries,
    differs,
    normalize_entry,
    parse_state,
    state_command,
)

_ATTRIBUTES = ("owner", "group", "mode")


class ActionModule(ReadFirstAction):
    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result, args = self._start(tmp, task_vars, ARGUMENT_SPEC)
        entries = [normalize_entry(item) for item in args["files"]]
        problems = check_entries(entries)
        if problems:
            raise AnsibleActionFail("gpucluster.core.files: " + "; ".join(problems))
        try:
            observed = self._observe([entry["dest"] for entry in entries])
        except FilesError as exc:
            raise AnsibleActionFail("gpucluster.core.files: %s" % exc) from None
        pending = [(entry, seen) for entry, seen in zip(entries, observed) if differs(entry, seen)]
        if not pending:
            result.update(changed=False, changed_paths=[])
            return result
        try:
            if any(seen.kind == "link" for _entry, seen in pending):
                outcome = self._write_each([entry for entry, _seen in pending], task_vars)
            else:
                outcome = self._execute_module(module_name="gpucluster.core.files", task_vars=task_vars,
                                               module_args={"files": [entry for entry, _seen in pending]})
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        if outcome.get("failed"):
            result.update(failed=True, msg="gpucluster.core.files: %s" % outcome.get("msg", ""),
                          changed_paths=outcome.get("changed_paths", []))
            return result
        result.update(changed=bool(outcome.get("changed_paths")), changed_paths=outcome.get("changed_paths", []))
        if outcome.get("diff"):
            result["diff"] = outcome["diff"]
        return result

    def _write_each(self, entries: list[dict], task_vars: dict) -> dict:
        """A symbolic link in the way: each path goes to copy or file, which decide about the link."""
        changed_paths, diffs = [], []
        for entry in entries:
            outcome = self._write(entry, task_vars)
            if outcome.get("failed"):
                return {"failed": True, "msg": "%s: %s" % (entry["dest"], outcome.get("msg", "")),
                        "changed_paths": changed_paths}
            if outcome.get("changed"):
                changed_paths.append(entry["dest"])
            if outcome.get("diff"):
                diffs.extend(outcome["diff"] if isinstance(outcome["diff"], list) else [outcome["diff"]])
        return {"changed_paths": changed_paths, "diff": diffs}

    def _observe(self, paths: list[str]) -> list:
        return parse_state(self._run_shell(state_command(paths), "the state read", FilesError), len(paths))

    def _write(self, entry: dict, task_vars: dict) -> dict:
        attributes = {key: entry[key] for key in _ATTRIBUTES if key in entry}
        if entry.get("state") == "absent":
            return self._execute_module(module_name="ansible.legacy.file", task_vars=task_vars,
                                        module_args=dict(path=entry["dest"], state="absent"))
        if entry.get("state", "file") == "directory":
            return self._execute_module(module_name="ansible.legacy.file", task_vars=task_vars,
                                        module_args=dict(path=entry["dest"], state="directory", **attributes))
        task = self._task.copy()
        task.args = dict(content=entry["content"], dest=entry["dest"], **attributes)
        copy = self._shared_loader_obj.action_loader.get(
            "ansible.legacy.copy", task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        return copy.run(task_vars=task_vars)
