# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the collection's action plugins that read a node with one shell command and hand
only what differs to a builtin module (packages, files, services): check mode supported, no
async, the task's arguments validated against the module's spec."""

from __future__ import annotations

from typing import Any, Iterable

from ansible.plugins.action import ActionBase


class ReadFirstAction(ActionBase):
    _requires_connection = True
    _supports_check_mode = True
    _supports_async = False

    def _start(self, tmp: Any, task_vars: dict, argument_spec: dict) -> tuple[dict, dict]:
        """The base result and the validated arguments (failing the task on bad ones)."""
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=argument_spec)
        return result, args

    def _run_shell(self, command: str, what: str, error: type[Exception], ok_rcs: Iterable[int] = (0,)) -> str:
        """The standard output of a shell command on the node (no module: the reads run in check
        mode too, the callers skip their writes there); ``error("<what> failed (rc N): <stderr>")``
        on another exit status."""
        out = self._low_level_execute_command(command, sudoable=True)
        if out.get("rc") not in tuple(ok_rcs):
            raise error("%s failed (rc %s): %s" % (what, out.get("rc"), (out.get("stderr") or "").strip()))
        return out.get("stdout") or ""
