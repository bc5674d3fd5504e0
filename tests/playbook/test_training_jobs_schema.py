# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fast tier of the training_operator role: the PyTorchJob and TrainJob manifests the role makes from
jobs as data validate against the real CRDs' schemas (Kubeflow training operator v1 and Trainer v2,
../shared/k8s, unchanged); a manifest the schema refuses makes the check fail. The live tier
(molecule/kubernetes) has the API server take them."""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT.parent / "shared" / "k8s"
TRAINING = K8S / "kubeflow-training-operator-v1-manifests-374e88a.tar.gz"
TRAINER = K8S / "kubeflow-trainer-v2-crds-a55f03a.tar.gz"
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.training_operator._training import job_manifest  # noqa: E402

pytestmark = pytest.mark.skipif(not (TRAINING.is_file() and TRAINER.is_file()),
                                reason="the Kubeflow manifests (../shared/k8s) are not beside this checkout")
JOB = {"name": "ddp-smoke", "image": "nvcr.io/nvidia/pytorch:24.08-py3", "command": ["torchrun", "/data/train.py"],
       "nodes": 2, "gpus_per_node": 8, "env": {"NCCL_DEBUG": "INFO"},
       "nfs": {"server": "master", "path": "/data/shared", "mount_path": "/data", "read_only": True}}


def _schema(archive: Path, member_suffix: str) -> dict:
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(member_suffix))
        crd = yaml.safe_load(tar.extractfile(member))
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return version["schema"]["openAPIV3Schema"]


@pytest.mark.parametrize("kind, archive, crd", [
    ("PyTorchJob", TRAINING, "kubeflow.org_pytorchjobs.yaml"),
    ("TrainJob", TRAINER, "trainer.kubeflow.org_trainjobs.yaml"),
])
@pytest.mark.parametrize("job", [JOB, dict(JOB, nodes=1, gpus_per_node=0, nfs=None, env={}), dict(JOB, nodes=16)],
                         ids=["2x8-gpus-nfs", "one-cpu-node", "16-nodes"])
def test_manifest_validates_against_the_real_crd(kind, archive, crd, job):
    manifest = job_manifest({k: v for k, v in dict(job, kind=kind).items() if v is not None})
    assert manifest["kind"] == kind
    jsonschema.validate(manifest, _schema(archive, crd))


def test_the_schema_check_can_fail():
    manifest = job_manifest(JOB)
    manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, _schema(TRAINING, "kubeflow.org_pytorchjobs.yaml"))
