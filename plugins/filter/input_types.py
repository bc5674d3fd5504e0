# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""input_type_errors: every role variable of the wrong type, strictly, from the role's argument spec.

Documentation lives beside this file in input_type_errors.yml; the code in
plugins/plugin_utils/_input_types.py.
"""

from __future__ import annotations

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter
from ansible_collections.gpucluster.core.plugins.plugin_utils._input_types import play_input_type_errors


def _input_type_errors(options, hostvars, hosts, defaults=None, defaults_host=None):
    return play_input_type_errors(options, hostvars, hosts, defaults or {}, defaults_host)


class FilterModule:
    """The roles' input types."""

    def filters(self):
        return {"input_type_errors": as_filter("input_type_errors", _input_type_errors)}
