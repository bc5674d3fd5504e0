# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shell-style environment files (/etc/default/slurmd, /etc/sysconfig/slurmd): one variable's line
set, every other line kept. Pure, no Ansible imports."""

from __future__ import annotations

import re
from typing import Optional

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def set_line(text: Optional[str], name: str, line: str) -> str:
    """``text`` (None: no file yet) with ``line`` in place of the variable ``name``'s line, as
    ansible.builtin.lineinfile with ``regexp: '^#?\\s*NAME='`` does: the last matching line (a
    commented-out one too) replaced, else ``line`` appended on a line of its own."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise RuleError("env_file_line: %r is not a variable name" % (name,))
    if not isinstance(line, str) or "\n" in line or not line.startswith(name + "="):
        raise RuleError("env_file_line: the line must be one line starting with %s= (got %r)" % (name, line))
    pattern = re.compile(r"^#?\s*%s=" % re.escape(name))
    lines = (text or "").splitlines(True)
    for index in range(len(lines) - 1, -1, -1):
        if pattern.match(lines[index]):
            lines[index] = line + ("\n" if lines[index].endswith("\n") else "")
            return "".join(lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines) + line + "\n"
