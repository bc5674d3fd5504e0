# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site playbook's own settings (gpucluster.core.site), checked before any host is touched.

- ``gpucluster_max_fail_percentage``: an integer 0-100 (digits as text too, as ``-e`` gives them), the share of a step's hosts that may
  fail before the run stops (0 stops at the first failed host, 100 never stops);
- ``gpucluster_gpu_node``: when set, a boolean that says whether the host is a GPU node
  (instead of the hardware);
- ``gpucluster_health_check``: when set, a boolean; false leaves Slurm without the validation role's
  HealthCheckProgram and the nodes without the health check program (default true).
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
    for name in ("gpucluster_gpu_node", "gpucluster_health_check"):
        if name in values and not isinstance(values[name], bool):
            errors.add(name, "must be true or false when set (got %r)" % (values[name],))


def site_errors(hostvars: Mapping[str, Mapping[str, Any]], hosts: Iterable[str]) -> List[str]:
    """Every error in the site settings of ``hosts``, each naming the host and the variable."""
    return for_hosts(hostvars, hosts, _check)
