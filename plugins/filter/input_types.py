# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""input_type_errors: every role variable of the wrong type, strictly, from the role's argument spec.

Documentation lives beside this file in input_type_errors.yml; the code in
plugins/plugin_utils/_input_types.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils._filter import as_filter, defined_values
from ansible_collections.gpucluster.core.plugins.plugin_utils._input_types import (
    input_type_errors, play_input_type_errors)


def _input_type_errors(options, values, hosts=None, defaults=None, defaults_host=None):
    """``values``: each host's values as it sees them (host -> {name: value}); or, with ``hosts``,
    the play's hostvars, read for those hosts with ``defaults`` where a host sets none."""
    if hosts is None:
        return input_type_errors(options, values)
    names = list(options) if isinstance(options, Mapping) else []
    hostvars = {host: defined_values(values.get(host, {}), names) for host in hosts}
    return play_input_type_errors(options, hostvars, hosts, defaults or {}, defaults_host)


class FilterModule:
    """The roles' input types."""

    def filters(self):
        return {"input_type_errors": as_filter("input_type_errors", _input_type_errors)}
