# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site playbook's settings: the failure threshold and the GPU node override."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.site._rules import site_errors


@pytest.mark.parametrize("values", [
    {},
    {"gpucluster_max_fail_percentage": 0},
    {"gpucluster_max_fail_percentage": 100, "gpucluster_gpu_node": True},
    {"gpucluster_gpu_node": False},
    {"gpucluster_max_fail_percentage": "30"},
    {"gpucluster_health_check": False},
])
def test_good_settings(values):
    assert site_errors({"n1": values}, ["n1"]) == []


@pytest.mark.parametrize("values, messages", [
    ({"gpucluster_max_fail_percentage": 101},
     ["host 'n1': gpucluster_max_fail_percentage: must be within 0-100 (got 101)"]),
    ({"gpucluster_max_fail_percentage": "20%"},
     ["host 'n1': gpucluster_max_fail_percentage: must be an integer (got '20%')"]),
    ({"gpucluster_max_fail_percentage": True},
     ["host 'n1': gpucluster_max_fail_percentage: must be an integer (got True)"]),
    ({"gpucluster_gpu_node": "yes", "gpucluster_max_fail_percentage": -1},
     ["host 'n1': gpucluster_max_fail_percentage: must be within 0-100 (got -1)",
      "host 'n1': gpucluster_gpu_node: must be true or false when set (got 'yes')"]),
    ({"gpucluster_health_check": "false"},
     ["host 'n1': gpucluster_health_check: must be true or false when set (got 'false')"]),
])
def test_bad_settings(values, messages):
    assert site_errors({"n1": values, "n2": {}}, ["n1", "n2"]) == messages
