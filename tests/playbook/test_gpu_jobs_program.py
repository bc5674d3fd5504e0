# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/validation/files/gpucluster-gpu-jobs.py run for real, with stand-ins for srun (runs the job
here) and docker (prints a real nvidia-smi capture, or the daemon's real error when the nvidia
runtime is missing), and its JSON judged as the role judges it: the GPU container must see
exactly the node's GPUs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.module_utils._health import hardware  # noqa: E402
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import parse_health_xml  # noqa: E402
from ansible_collections.gpucluster.core.plugins.plugin_utils.validation._jobs import container_result  # noqa: E402

PROGRAM = ROOT / "roles" / "validation" / "files" / "gpucluster-gpu-jobs.py"
CAPTURE = ROOT / "tests" / "unit" / "fixtures" / "h100-80gb-hbm3-driver580" / "nvidia-smi-q.xml"
# srun's options dropped, the job's command run here.
SRUN = '#!/bin/sh\nwhile [ "$1" != python3 ]; do shift; done\nexec "$@"\n'
# docker's answers: the image present or not, a pull that works or not, a run that prints the capture or
# fails as dockerd does without the nvidia runtime (NVIDIA/nvidia-docker#1352, exit 125).
DOCKER = """#!/bin/sh
echo "$*" >> "%(log)s"
case "$1" in
  image) [ -e "%(dir)s/have-image" ] ;;
  pull) if [ -e "%(dir)s/pull-fails" ]; then
          echo 'Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host'
          exit 1
        fi
        touch "%(dir)s/have-image"; echo "docker.io/library/$3" ;;
  run) if [ -e "%(dir)s/no-runtime" ]; then
         echo 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].' >&2
         exit 125
       fi
       cat "%(capture)s" ;;
esac
"""


def run_jobs(tmp_path: Path, *flags: str, image: str = "ubuntu:24.04") -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    docker = DOCKER % {"dir": tmp_path, "log": tmp_path / "docker.log", "capture": CAPTURE}
    for name, text in (("srun", SRUN), ("docker", docker)):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    for flag in flags:
        (tmp_path / flag).touch()
    argv = [sys.executable, str(PROGRAM), "--srun", str(bin_dir / "srun"), "--dcgm-diag", "0", "--timeout", "60",
            "--container-image", image, "--docker", str(bin_dir / "docker"), "gpu01=1"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120,
                         env={"PATH": "%s:/usr/bin:/bin" % bin_dir})
    return json.loads(out.stdout)["jobs"][0]


def node_uuids() -> list:
    return hardware({"nvidia_smi": parse_health_xml(CAPTURE.read_text(encoding="utf-8"))})["gpu_uuids"]


def test_the_container_sees_the_nodes_gpus(tmp_path):
    job = run_jobs(tmp_path, "have-image")
    assert job["container"] == {"image": "ubuntu:24.04", "path": str(tmp_path / "bin" / "docker"), "pull_rc": None,
                                "rc": 0, "uuids": ["GPU-232c00c4-60d0-5fdb-a8f5-d8949845a9bb"], "output": None}
    assert (tmp_path / "docker.log").read_text().splitlines() == [
        "image inspect --format {{.Id}} ubuntu:24.04",
        "run --rm --gpus all --network none ubuntu:24.04 nvidia-smi -q -x"]
    judged = container_result("gpu01", job["container"], node_uuids())
    assert (judged["status"], judged["measured"], judged["message"]) == ("pass", 1, "the container saw the node's 1 GPUs")


def test_a_missing_image_is_pulled_first(tmp_path):
    job = run_jobs(tmp_path)
    assert (job["container"]["pull_rc"], job["container"]["rc"]) == (0, 0)
    assert [line.split()[0] for line in (tmp_path / "docker.log").read_text().splitlines()] == ["image", "pull", "run"]


def test_an_image_that_cannot_be_pulled_warns(tmp_path):
    job = run_jobs(tmp_path, "pull-fails")
    assert (job["container"]["pull_rc"], job["container"]["rc"]) == (1, None)
    judged = container_result("gpu01", job["container"], node_uuids())
    assert judged["status"] == "warn"
    assert judged["message"].startswith("could not pull ubuntu:24.04 (exit 1): Error response from daemon: Get ")


def test_no_nvidia_runtime_fails_with_dockers_words(tmp_path):
    job = run_jobs(tmp_path, "have-image", "no-runtime")
    judged = container_result("gpu01", job["container"], node_uuids())
    assert (judged["status"], judged["message"]) == (
        "fail", 'the container exited 125: docker: Error response from daemon: could not select device driver "" '
                'with capabilities: [[gpu]].')


def test_a_container_seeing_other_gpus_fails(tmp_path):
    job = run_jobs(tmp_path, "have-image")
    judged = container_result("gpu01", job["container"], ["GPU-00000000-0000-0000-0000-000000000001"] + node_uuids())
    assert judged["status"] == "fail"
    assert judged["message"] == ("the container saw 1 GPUs, the node has 2: missing "
                                 "GPU-00000000-0000-0000-0000-000000000001")


@pytest.mark.parametrize("image", [""])
def test_no_image_no_container(tmp_path, image):
    job = run_jobs(tmp_path, image=image)
    assert "container" not in job
    assert not (tmp_path / "docker.log").exists()
