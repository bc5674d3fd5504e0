# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fast tier of the gpu_operator role: the real GPU Operator chart (../shared/k8s, unchanged) rendered
by Helm 3.17 with the values the role derives for several situations of the GPU nodes; every manifest
validated against the schemas of supported Kubernetes releases (kubernetes-validate, strict), and the
ClusterPolicy the chart makes says what the role derived."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT.parent / "shared" / "k8s" / "gpu-operator-chart-a22dbf6.tar.gz"
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.gpu_operator import _gpu_operator as g  # noqa: E402

pytestmark = pytest.mark.skipif(not CHART.is_file(), reason="the real GPU Operator chart (../shared/k8s) is not beside this checkout")
KUBERNETES = ["1.29.0", "1.33.0"]
SETTINGS = {"gpu_operator_mig_strategy": "auto", "gpu_operator_cdi": True, "gpu_operator_dcgm_exporter": True,
            "gpu_operator_service_monitor": False, "gpu_operator_extra_values": {}}


def _gpus(count, mig="Disabled", profiles=()):
    return [{"mig_mode": {"current": mig}, "mig_devices": [{"profile": p} for p in profiles]} for _index in range(count)]


SITUATIONS = {
    # The collection's own path: nvidia_driver and container_toolkit on every GPU node.
    "host-driver-and-toolkit": ({"gpu01": {"gpu_count": 8, "gpus": _gpus(8), "host_driver": True, "host_toolkit": True}},
                                {}, {"driver": False, "toolkit": False, "mig": "none"}),
    # Bare GPU nodes: the operator installs both.
    "bare-nodes": ({"gpu01": {"gpu_count": 8, "gpus": [], "host_driver": False, "host_toolkit": False}},
                   {}, {"driver": True, "toolkit": True, "mig": "none"}),
    # Some GPUs partitioned with MIG.
    "mig-mixed": ({"gpu01": {"gpu_count": 8, "gpus": _gpus(2, "Enabled", ["3g.40gb", "4g.40gb"]) + _gpus(6),
                             "host_driver": True, "host_toolkit": True}},
                  {}, {"driver": False, "toolkit": False, "mig": "mixed"}),
    # A site's own values win over the derived ones.
    "extra-values": ({"gpu01": {"gpu_count": 8, "gpus": _gpus(8), "host_driver": True, "host_toolkit": True}},
                     {"toolkit": {"enabled": True}, "dcgmExporter": {"enabled": False}},
                     {"driver": False, "toolkit": True, "mig": "none", "dcgm": False}),
}


@pytest.fixture(scope="module")
def helm():
    out = subprocess.run(["bash", str(ROOT / "tests" / "harness" / "k8s" / "helm.sh")], check=True,
                         capture_output=True, text=True).stdout.splitlines()[-1]
    return str(Path(out) / "bin" / "helm")


@pytest.fixture(scope="module")
def chart(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chart")
    with tarfile.open(CHART) as archive:
        archive.extractall(folder, filter="data")
    return str(next(folder.glob("*/Chart.yaml")).parent)


@pytest.mark.parametrize("situation", sorted(SITUATIONS))
def test_rendered_chart_is_valid_and_has_the_derived_values(helm, chart, tmp_path, situation):
    nodes, extra, want = SITUATIONS[situation]
    values = g.chart_values(nodes, dict(SETTINGS, gpu_operator_extra_values=extra))
    values_file = tmp_path / "values.yml"
    values_file.write_text(yaml.safe_dump(values))
    rendered = subprocess.run([helm, "template", "gpu-operator", chart, "--namespace", "gpu-operator", "--include-crds",
                               "--kube-version", "1.33.0", "--values", str(values_file)],
                              check=True, capture_output=True, text=True).stdout
    documents = [d for d in yaml.safe_load_all(rendered) if d]
    kinds = sorted({d["kind"] for d in documents})
    assert {"ClusterPolicy", "CustomResourceDefinition", "Deployment", "DaemonSet"} <= set(kinds), kinds
    for document in documents:
        if document["apiVersion"].split("/")[0].endswith(("nvidia.com", "x-k8s.io")) and document["kind"] != "CustomResourceDefinition":
            continue  # custom resources: the live tier has the API server check them against the CRDs
        for version in KUBERNETES:
            kubernetes_validate.validate(document, version, strict=True)
    policy = next(d for d in documents if d["kind"] == "ClusterPolicy")["spec"]
    assert policy["driver"]["enabled"] is want["driver"]
    assert policy["toolkit"]["enabled"] is want["toolkit"]
    assert policy["mig"]["strategy"] == want["mig"]
    assert policy["cdi"]["enabled"] is True
    assert policy["dcgmExporter"]["enabled"] is want.get("dcgm", True)
