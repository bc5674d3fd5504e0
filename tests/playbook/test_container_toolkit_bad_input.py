# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_toolkit: bad inventory data fails before any host is touched, with a message naming it.

The rules themselves are unit-tested in tests/unit/plugins/plugin_utils/container_toolkit/test_rules_container_toolkit.py;
this playbook-level test proves the ordering: refused for every host with no host contacted.
"""

from __future__ import annotations

from roleplay import assert_refused_untouched, run_role

HOSTS = ["gpu01", "gpu02"]
GROUPS = {"gpu_nodes": HOSTS}


def test_bad_value_on_one_host_stops_every_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.container_toolkit",
                      hosts={"gpu01": {}, "gpu02": {"container_toolkit_version": "1.17"}}, groups=GROUPS,
                      group_vars={})
    assert_refused_untouched(
        result, "host 'gpu02': container_toolkit_version: must pin one toolkit release as the repository names it,"
                " such as 1.17.8-1 (got '1.17')")
