# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's Kubernetes variant (tests/sandbox/sandbox.sh up --kubernetes), without docker.

Its inventory (inventories/sandbox-kubernetes) is the sandbox's with Kubernetes instead of Slurm and
the Kubernetes test bed's settings (tests/harness/k8s/testbed-vars.yml, shared with
molecule/kubernetes). Its artifact list (the nodes as Debian 12 GPU nodes, from a fact cache) is
split by tests/sandbox/kubernetes/split-artifacts.yml: what the test bed's mirror serves must be
there (a missing one stops the run, named), and the rest builds the test-double vendor mirror.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from test_artifacts_playbook import CACHED, UNREACHABLE, run_artifacts

ROOT = Path(__file__).resolve().parents[2]
NODES = ("master", "worker1", "worker2")
TESTBED = "http://mirror:8081/"
# Where tests/harness/k8s/mirror.yml puts each artifact the variant's roles download from it.
TESTBED_FILES = ("core:/stable:/v1.20/deb/Release", "images/kubernetes-v1.20.2-images.tar", "images/gpc-gpu-check.tar",
                 "helm/helm-v3.17.2-linux-amd64.tar.gz", "charts/gpu-operator-chart-a22dbf6.tgz",
                 "manifests/cni-test.yaml")


@pytest.fixture(scope="module")
def variant_list(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sandbox-kubernetes")
    override = tmp / "unreachable.yml"
    override.write_text(yaml.safe_dump({"all": {"hosts": {h: UNREACHABLE for h in NODES}}}), encoding="utf-8")
    doc, _result = run_artifacts(tmp, [ROOT / "inventories/sandbox-kubernetes", override],
                                 {h: CACHED["deb12-gpu"] for h in NODES})
    return tmp, doc


def split(tmp: Path, listed: Path, mirror: Path):
    out = tmp / "vendor.json"
    override = tmp / "unreachable.yml"
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_CACHE_PLUGIN="memory")
    result = subprocess.run(
        ["ansible-playbook", "-i", str(ROOT / "inventories/sandbox-kubernetes"), "-i", str(override),
         str(ROOT / "tests/sandbox/kubernetes/split-artifacts.yml"), "-e", f"sandbox_artifacts={listed}",
         "-e", f"sandbox_k8s_mirror_dir={mirror}", "-e", f"sandbox_vendor_artifacts={out}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    return result, out


def test_the_variant_runs_kubernetes_from_the_test_beds_mirror(variant_list):
    _tmp, doc = variant_list
    hosts = {h["host"]: h["roles"] for h in doc["hosts"]}
    assert hosts == {
        "master": ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring", "kubernetes",
                   "gpu_operator", "training_operator"],
        "worker1": ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring", "kubernetes",
                    "gpu_operator", "training_operator"],
        "worker2": ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring", "kubernetes",
                    "gpu_operator", "training_operator"]}
    kubernetes = [r for r in doc["repositories"] if r["url"] == TESTBED + "core:/stable:/v1.20/deb/"]
    assert len(kubernetes) == 1
    assert {p["name"]: p["version"] for p in kubernetes[0]["packages"]} == {
        "kubeadm": "1.20.2-1.1", "kubelet": "1.20.2-1.1", "kubectl": "1.20.2-1.1"}
    assert sorted(f["url"] for f in doc["files"]) == sorted(TESTBED + f for f in TESTBED_FILES[1:5])
    assert sorted(m["url"] for m in doc["manifests"]) == [
        "/opt/gpc-test/training-operator/base/crds", TESTBED + "manifests/cni-test.yaml"]
    assert doc["charts"] == []


def test_the_split_checks_the_test_beds_mirror_and_builds_the_vendor_mirror(variant_list, tmp_path):
    tmp, doc = variant_list
    listed = tmp_path / "artifacts.json"
    listed.write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "unreachable.yml").write_text((tmp / "unreachable.yml").read_text(encoding="utf-8"), encoding="utf-8")
    mirror = tmp_path / "k8s"
    for name in TESTBED_FILES:
        (mirror / name).parent.mkdir(parents=True, exist_ok=True)
        (mirror / name).write_text("", encoding="utf-8")
    result, out = split(tmp_path, listed, mirror)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    vendor = json.loads(out.read_text(encoding="utf-8"))
    assert [r["url"] for r in vendor["repositories"]] == [
        "http://mirror:8080/compute/cuda/repos/debian12/x86_64/", "http://mirror:8080/libnvidia-container/stable/deb/amd64",
        "http://mirror:8080/grafana"]
    assert (vendor["files"], vendor["charts"], vendor["manifests"]) == ([], [], [])
    assert vendor["hosts"] == doc["hosts"]
    missing = [tool for tool in ("dpkg-deb", "apt-ftparchive", "gpg", "gpgconf") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"the vendor mirror's build needs {', '.join(missing)}")
    build = subprocess.run([str(ROOT / ".venv/bin/python"), str(ROOT / "tests/harness/mirror/build.py"),
                            "--artifacts", str(out), "--out", str(tmp_path / "repo")],
                           capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr[-3000:]

    # An artifact the test bed's mirror lacks stops the run, named.
    (mirror / "charts/gpu-operator-chart-a22dbf6.tgz").unlink()
    result, _out = split(tmp_path, listed, mirror)
    assert result.returncode != 0
    assert ("the artifact list names what the Kubernetes test bed's mirror does not hold: "
            + TESTBED + "charts/gpu-operator-chart-a22dbf6.tgz") in result.stdout
