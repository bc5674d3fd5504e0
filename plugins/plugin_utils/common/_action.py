# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's action plugins that read a node with one shell command and hand
only what differs to a module (packages, files, services): check mode supported, no async, the
task's arguments validated against the module's spec. File entries (plugin_utils/common/_files.py) that
differ from the read are written here, for files and for packages' ``files``."""

from __future__ import annotations

from typing import Any, Iterable

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._files import Observed, differs

_ATTRIBUTES = ("owner", "group", "mode")


class ReadFirstAction(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True
    _supports_check_mode = True
    _supports_async = False

    def _start(self, tmp: Any, task_vars: dict, argument_spec: dict) -> tuple[dict, dict]:
        """The base result and the validated arguments (failing the task on bad ones)."""
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=argument_spec)
        return result, args

    @staticmethod
    def _refuse(module: str, problems: list[str]) -> None:
        """Fails the task with every problem of its entries, ``<module>: <problem>; <problem>...``."""
        if problems:
            raise AnsibleActionFail("%s: %s" % (module, "; ".join(problems)))

    def _run_shell(self, command: str, what: str, error: type[Exception], ok_rcs: Iterable[int] = (0,)) -> str:
        """The standard output of a shell command on the node (no module: the reads run in check
        mode too, the callers skip their writes there); ``error("<what> failed (rc N): <stderr>")``
        on another exit status."""
        out = self._low_level_execute_command(command, sudoable=True)
        if out.get("rc") not in tuple(ok_rcs):
            raise error("%s failed (rc %s): %s" % (what, out.get("rc"), (out.get("stderr") or "").strip()))
        return out.get("stdout") or ""

    def _write_files(self, entries: list[dict], observed: list[Observed], task_vars: dict) -> dict:
        """Writes, makes or removes the entries that differ from what the read observed: all in one
        call of the gpucluster.core.files module, or, with a symbolic link in the way, each path by
        ansible.builtin.copy or ansible.builtin.file, which decide about links. ``{changed_paths,
        diff}``, or ``failed`` and ``msg`` (naming the path) with the paths changed before it."""
        pending = [(entry, seen) for entry, seen in zip(entries, observed) if differs(entry, seen)]
        if not pending:
            return {"changed_paths": []}
        # No remote tmp of its own (TRANSFERS_FILES false): _execute_module and copy make and
        # remove theirs where they need one.
        if any(seen.kind == "link" for _entry, seen in pending):
            return self._write_each([entry for entry, _seen in pending], task_vars)
        outcome = self._execute_module(module_name="gpucluster.core.files", task_vars=task_vars,
                                       module_args={"files": [entry for entry, _seen in pending]})
        outcome.setdefault("changed_paths", [])
        return outcome

    def _write_each(self, entries: list[dict], task_vars: dict) -> dict:
        changed_paths, diffs = [], []
        for entry in entries:
            outcome = self._write_one(entry, task_vars)
            if outcome.get("failed"):
                return {"failed": True, "msg": "%s: %s" % (entry["dest"], outcome.get("msg", "")),
                        "changed_paths": changed_paths}
            if outcome.get("changed"):
                changed_paths.append(entry["dest"])
            if outcome.get("diff"):
                diffs.extend(outcome["diff"] if isinstance(outcome["diff"], list) else [outcome["diff"]])
        return {"changed_paths": changed_paths, "diff": diffs}

    def _write_one(self, entry: dict, task_vars: dict) -> dict:
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
