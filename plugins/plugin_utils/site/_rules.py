# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site playbook's own settings (gpucluster.core.site), checked before any host is touched.

- ``gpucluster_max_fail_percentage``: an integer 0-100 (digits as text too, as ``-e`` gives them), the share of a step's hosts that may
  fail before the run stops (0 stops at the first failed host, 100 never stops);
- ``gpucluster_gpu_node``: when set, a boolean that says whether the host is a GPU node
  (instead of the hardware).
"""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, for_hosts, int_range


def _check(errors: Errors, values: Mapping[str, Any]) -> None:
    if "gpucluster_max_fail_percentage" in values:
        value = values["gpucluster_max_fail_percentage"]
        # `-e gpucluster_max_fail_percentage=30` gives text.
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        errors.check("gpucluster_max_fail_percentage", int_range(value, 0, 100))
    if "gpucluster_gpu_node" in values and not isinstance(values["gpucluster_gpu_node"], bool):
        errors.add("gpucluster_gpu_node", "must be true or false when set (got %r)" % (values["gpucluster_gpu_node"],))


def site_errors(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str]) -> List[str]:
    """Every error in the site settings of ``hosts``, each naming the host and the variable."""
    return for_hosts(hostvars, hosts, _check)
