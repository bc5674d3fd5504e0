# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator role's logic: input rules (exact messages), the chart's values derived from the
GPU nodes, what each node must advertise and who falls short."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.gpu_operator import _gpu_operator as g
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils import role_specs

GOOD = {
    "gpu_operator_chart_version": "v25.3.4",
    "gpu_operator_chart_repo_url": "https://helm.ngc.nvidia.com/nvidia",
    "gpu_operator_chart_url": "",
    "gpu_operator_release_name": "gpu-operator",
    "gpu_operator_namespace": "gpu-operator",
    "gpu_operator_helm_url": "https://get.helm.sh/helm-v3.17.2-linux-amd64.tar.gz",
    "gpu_operator_cdi": True,
    "gpu_operator_mig_strategy": "auto",
    "gpu_operator_dcgm_exporter": True,
    "gpu_operator_service_monitor": False,
    "gpu_operator_extra_values": {},
    "gpu_operator_wait": True,
    "gpu_operator_timeout": 900,
    "gpu_operator_verify_timeout": 600,
    "gpu_operator_control_plane_group": "k8s_control_plane",
    "gpu_operator_kubernetes_client_pip_env": {},
}


def test_good_values_have_no_error():
    assert g.gpu_operator_errors(GOOD) == []
    # The good values name every option of the role's argument spec, which the rules get.
    assert set(GOOD) == set(role_specs.options("gpu_operator"))


@pytest.mark.parametrize("chart_url", [
    "http://mirror:8080/charts/gpu-operator-chart-a22dbf6.tgz",
    "https://helm.ngc.nvidia.com/nvidia/charts/gpu-operator-v25.3.4.tgz",
    "file:///srv/charts/gpu-operator-v25.3.4.tar.gz",
])
def test_good_chart_url(chart_url):
    assert g.gpu_operator_errors(dict(GOOD, gpu_operator_chart_url=chart_url)) == []


@pytest.mark.parametrize("name, value, message", [
    ("gpu_operator_chart_version", "", "gpu_operator_chart_version: must pin the chart's version, such as v25.3.4 (got '')"),
    ("gpu_operator_chart_version", "latest", "gpu_operator_chart_version: must pin the chart's version, such as v25.3.4 (got 'latest')"),
    ("gpu_operator_chart_repo_url", "helm.ngc.nvidia.com/nvidia",
     "gpu_operator_chart_repo_url: must be a http:// or https:// URL (got 'helm.ngc.nvidia.com/nvidia')"),
    ("gpu_operator_chart_url", "gpu-operator.tgz",
     "gpu_operator_chart_url: must be a http:// or https:// or file:// URL (got 'gpu-operator.tgz')"),
    ("gpu_operator_chart_url", "http://mirror:8080/charts/",
     "gpu_operator_chart_url: must be the URL of a chart archive file ending in .tgz or .tar.gz, without ? or #"
     " (got 'http://mirror:8080/charts/')"),
    ("gpu_operator_chart_url", "https://mirror.example.com/download?chart=gpu-operator-v25.3.4.tgz",
     "gpu_operator_chart_url: must be the URL of a chart archive file ending in .tgz or .tar.gz, without ? or #"
     " (got 'https://mirror.example.com/download?chart=gpu-operator-v25.3.4.tgz')"),
    ("gpu_operator_release_name", "GPU_Operator",
     "gpu_operator_release_name: must be a Helm release name (lowercase letters, digits and -, up to 53) (got 'GPU_Operator')"),
    ("gpu_operator_namespace", "gpu operator", "gpu_operator_namespace: must be a namespace name (a DNS label) (got 'gpu operator')"),
    ("gpu_operator_cdi", "yes", "gpu_operator_cdi: must be true or false (got 'yes')"),
    ("gpu_operator_mig_strategy", "all", "gpu_operator_mig_strategy: must be one of auto, none, single, mixed (got 'all')"),
    ("gpu_operator_extra_values", ["driver.enabled=false"], "gpu_operator_extra_values: must be a dict of the chart's values (got a list)"),
    ("gpu_operator_timeout", 10, "gpu_operator_timeout: must be within 60-3600 (got 10)"),
    ("gpu_operator_verify_timeout", 7200, "gpu_operator_verify_timeout: must be within 30-3600 (got 7200)"),
    ("gpu_operator_kubernetes_client_pip_env", {"FIND_LINKS": "/srv/wheels"},
     "gpu_operator_kubernetes_client_pip_env: 'FIND_LINKS' is not a PIP_* variable name"),
])
def test_bad_values(name, value, message):
    assert g.gpu_operator_errors(dict(GOOD, **{name: value})) == [message]


def _gpus(count, mig=None, profiles=()):
    return [{"mig_mode": {"current": mig, "pending": mig}, "mig_devices": [{"profile": p} for p in profiles]}
            for _index in range(count)]


HOST_DRIVER = {"gpu_count": 8, "gpus": _gpus(8, "Disabled"), "host_driver": True, "host_toolkit": True}
BARE = {"gpu_count": 8, "gpus": [], "host_driver": False, "host_toolkit": False}


@pytest.mark.parametrize("nodes, expected", [
    ({"gpu01": HOST_DRIVER, "gpu02": HOST_DRIVER},
     {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "mig": {"strategy": "none"}}),
    ({"gpu01": BARE, "gpu02": BARE}, {"driver": {"enabled": True}, "toolkit": {"enabled": True}, "mig": {"strategy": "none"}}),
    ({"gpu01": dict(HOST_DRIVER, gpus=_gpus(8, "Enabled", ["1g.10gb"] * 7))},
     {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "mig": {"strategy": "single"}}),
    ({"gpu01": dict(HOST_DRIVER, gpus=_gpus(4, "Enabled", ["3g.40gb", "4g.40gb"]) + _gpus(4, "Disabled"))},
     {"driver": {"enabled": False}, "toolkit": {"enabled": False}, "mig": {"strategy": "mixed"}}),
], ids=["host-driver-and-toolkit", "bare-nodes", "mig-single", "mig-mixed"])
def test_values_derived_from_the_nodes(nodes, expected):
    values = g.chart_values(nodes, GOOD)
    assert {k: values[k] for k in expected} == expected
    assert values["cdi"] == {"enabled": True}
    assert values["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": False}}


def test_extra_values_win_key_by_key():
    values = g.chart_values({"gpu01": HOST_DRIVER}, dict(GOOD, gpu_operator_mig_strategy="mixed", gpu_operator_extra_values={
        "driver": {"enabled": True, "version": "570.172.08"}, "dcgmExporter": {"serviceMonitor": {"interval": "30s"}}}))
    assert values["driver"] == {"enabled": True, "version": "570.172.08"}
    assert values["mig"] == {"strategy": "mixed"}
    assert values["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": False, "interval": "30s"}}


def test_a_driver_on_some_gpu_nodes_only_is_refused():
    with pytest.raises(RuleError) as err:
        g.chart_values({"gpu01": HOST_DRIVER, "gpu02": BARE, "gpu03": dict(BARE, host_toolkit=True)}, GOOD)
    assert str(err.value) == (
        "gpu_operator_values: the driver is on the hosts of gpu01 but not of gpu02, gpu03: run the nvidia_driver role"
        " on those too, or on none (then the operator installs it); the toolkit is on the hosts of gpu01, gpu03 but"
        " not of gpu02: run the container_toolkit role on those too, or on none (then the operator installs it)")


def test_gpu_nodes_by_kubernetes_node_name():
    hostvars = {"cp1": {"__gpu_operator_node": dict(BARE, gpu_count=0)},
                "gpu01": {"__gpu_operator_node": HOST_DRIVER},
                "gpu02": {"__gpu_operator_node": HOST_DRIVER, "kubernetes_node_name": "gpu02.lab"},
                "gpu03": {}}
    assert g.gpu_nodes(hostvars, ["cp1", "gpu01", "gpu02", "gpu03"]) == {"gpu01": HOST_DRIVER, "gpu02.lab": HOST_DRIVER}


def test_expected_per_mig_strategy():
    mixed = dict(HOST_DRIVER, gpus=_gpus(2, "Enabled", ["3g.40gb", "4g.40gb"]) + _gpus(6, "Disabled"))
    assert g.expected_gpus({"gpu01": mixed}, "none") == {"gpu01": 8}
    assert g.expected_gpus({"gpu01": mixed}, "mixed") == {"gpu01": 6}
    single = dict(HOST_DRIVER, gpus=_gpus(8, "Enabled", ["1g.10gb"] * 7))
    assert g.expected_gpus({"gpu01": single}, "single") == {"gpu01": 56}


def _node(name, gpus=None):
    allocatable = {"cpu": "2"}
    if gpus is not None:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": allocatable}}


def test_short_nodes_name_the_node_and_both_counts():
    nodes = {"kind": "List", "items": [_node("gpu01", 8), _node("gpu02", 6), _node("gpu03")]}
    assert g.short_nodes(nodes, {"gpu01": 8, "gpu02": 8, "gpu03": 8, "gpu04": 4}) == [
        "node gpu02 advertises 6 nvidia.com/gpu, its nvidia-smi shows 8 GPUs",
        "node gpu03 advertises no nvidia.com/gpu, its nvidia-smi shows 8 GPUs",
        "node gpu04 is not registered with the API server (its nvidia-smi shows 4 GPUs)"]
    # kubernetes.core.k8s_info's registered result (the role's read) reads the same
    assert g.short_nodes({"resources": nodes["items"], "api_found": True}, {"gpu01": 8, "gpu02": 8}) == [
        "node gpu02 advertises 6 nvidia.com/gpu, its nvidia-smi shows 8 GPUs"]
