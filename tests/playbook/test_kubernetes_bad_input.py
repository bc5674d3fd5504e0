# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubernetes: bad inventory data fails before any host is touched, with a message naming it.

The rules themselves are unit-tested in tests/unit/plugins/plugin_utils/kubernetes/test_kubernetes.py; this
playbook-level test proves the ordering: refused for every host with no host contacted.
"""

from __future__ import annotations

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["cp1", "gpu01", "gpu02"]
GROUPS = {"k8s_control_plane": ["cp1"], "k8s_workers": ["gpu01", "gpu02"]}


def test_bad_value_on_one_host_stops_every_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.kubernetes",
                      hosts={"cp1": {}, "gpu01": {}, "gpu02": {"kubernetes_token_ttl_minutes": 2880}},
                      groups=GROUPS, group_vars={})
    assert_refused_untouched(result, "host 'gpu02': kubernetes_token_ttl_minutes: must be within 1-1440 (got 2880)")


def test_a_kubeadm_version_the_role_does_not_know_stops_every_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.kubernetes", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={"kubernetes_version": "1.36.0"})
    assert_refused_untouched(result, "host 'cp1': kubernetes_version: the kubeadm configuration is known for"
                                     " Kubernetes 1.20 to 1.35 (got '1.36.0')")


def test_good_data_passes_to_the_first_task_that_needs_a_host(tmp_path):
    result = run_role(tmp_path, "gpucluster.core.kubernetes", hosts={h: {} for h in HOSTS}, groups=GROUPS,
                      group_vars={})
    assert_passes_validation(result, HOSTS, "kubernetes_")
