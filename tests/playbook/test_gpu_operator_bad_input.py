# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_operator: bad data (a chart without a version pin) fails before any host is touched.

The rules themselves are unit-tested in tests/unit/plugins/plugin_utils/gpu_operator/test_gpu_operator.py; this
playbook-level test proves the ordering: refused with no host contacted.
"""

from __future__ import annotations

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["cp1", "gpu01"]
GROUPS = {"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01"]}


def test_a_chart_without_a_version_pin_is_refused(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.gpu_operator", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={"gpu_operator_chart_version": ""})
    assert_refused_untouched(result, "gpu_operator_chart_version: must pin the chart's version, such as v25.3.4 (got '')")


def test_good_data_passes_to_the_first_task_that_needs_a_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.gpu_operator", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={})
    assert_passes_validation(result, HOSTS, "gpu_operator_")
