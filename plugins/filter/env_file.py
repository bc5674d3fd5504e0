# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""env_file_line: a shell-style environment file's text with one variable's line set.

Documentation lives beside this file in env_file_line.yml; the code in
plugins/plugin_utils/_env_file.py.
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._env_file import set_line
from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter


class FilterModule:
    """Environment file lines."""

    def filters(self):
        return {"env_file_line": as_filter("env_file_line", set_line)}
