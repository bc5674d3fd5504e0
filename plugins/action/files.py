# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpucluster.core.files: the templates (``src``) are rendered here, as the
ansible.builtin.template lookup renders them; the paths the task's ``known`` state shows as asked
for are settled here without contacting the node; one shell command (no module) reads the owner,
group, mode and sha1 of every other path; the module gpucluster.core.files then writes, makes or
removes the paths that differ, all in one call, in check and diff modes too. A path that is a
symbolic link goes to ansible.builtin.copy or ansible.builtin.file, which decide about links."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible_collections.gpucluster.core.plugins.modules.files import ARGUMENT_SPEC
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._action import ReadFirstAction
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._files import (
    FilesError,
    check_entries,
    normalize_entry,
    parse_state,
    state_command,
    unsettled,
)


class ActionModule(ReadFirstAction):
    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result, args = self._start(tmp, task_vars, ARGUMENT_SPEC)
        entries = [normalize_entry(item) for item in args["files"]]
        self._refuse("gpucluster.core.files", check_entries(entries))
        entries = [self._rendered(entry, task_vars) for entry in entries]
        try:
            entries = unsettled(entries, args.get("known"))
            observed = self._observe([entry["dest"] for entry in entries]) if entries else []
        except FilesError as exc:
            raise AnsibleActionFail("gpucluster.core.files: %s" % exc) from None
        outcome = self._write_files(entries, observed, task_vars)
        if outcome.get("failed"):
            result.update(failed=True, msg="gpucluster.core.files: %s" % outcome.get("msg", ""),
                          changed_paths=outcome["changed_paths"])
            return result
        result.update(changed=bool(outcome["changed_paths"]), changed_paths=outcome["changed_paths"])
        if outcome.get("diff"):
            result["diff"] = outcome["diff"]
        return result

    def _rendered(self, entry: dict, task_vars: dict) -> dict:
        """The entry with its template (``src``) rendered into ``content`` by the
        ansible.builtin.template lookup itself: the same search path (the role's templates/ first),
        variables and ansible_managed as ``content: "{{ lookup('ansible.builtin.template', src) }}"``."""
        if entry.get("src") is None:
            return entry
        lookup = self._shared_loader_obj.lookup_loader.get("ansible.builtin.template", loader=self._loader,
                                                           templar=self._templar)
        rendered = dict(entry)
        rendered["content"] = lookup.run([rendered.pop("src")], variables=task_vars)[0]
        return rendered

    def _observe(self, paths: list[str]) -> list:
        return parse_state(self._run_shell(state_command(paths), "the state read", FilesError), len(paths))
