# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda: bad inventory data fails before any host is touched, with a message naming it.

The rules themselves (plugins/plugin_utils/cuda/_rules.py) are unit tested in
tests/unit/plugins/plugin_utils/cuda/test_rules_cuda.py; these playbook runs prove the ordering
(every host's errors at once, with no host contacted) and that good data gets past the checks.
"""

from __future__ import annotations

import pytest

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["gpu01", "gpu02"]
MIRROR = "http://mirror:8080/compute/cuda/repos/debian12/x86_64/"
CHECKSUM = "sha256:" + "0" * 64
ARCHIVE = ("https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/"
           "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz")
# What the gpu_stack scenario asks for.
PINNED = {
    "cuda_repo_url": MIRROR,
    "cuda_toolkits": ["12.4", "12.6"],
    "cuda_default_toolkit": "12.4",
    "cuda_toolkit_versions": {"12.4": "12.4.1-1", "12.6": "12.6.3-1"},
    "cuda_cudnn_version": "9.1.0.70-1",
    "cuda_nccl_version": "2.21.5-1+cuda12.4",
}
# The cuda source the nvidia_driver role records for a host it ran on earlier in the run.
DRIVER_SOURCE = {"name": "cuda", "description": "NVIDIA CUDA", "url": MIRROR, "key_url": MIRROR + "3bf863cc.pub"}


def run_cuda(tmp_path, host_vars=None, **group_vars):
    host_vars = host_vars or {}
    return run_role(tmp_path, "gpucluster.core.cuda", hosts={h: host_vars.get(h, {}) for h in HOSTS},
                    groups={"gpu_nodes": HOSTS}, group_vars=group_vars)


@pytest.mark.parametrize(
    "good, host_vars",
    [
        pytest.param({}, {}, id="defaults"),
        pytest.param(PINNED, {h: {"nvidia_driver_cuda_repository": DRIVER_SOURCE} for h in HOSTS},
                     id="gpu_stack-after-nvidia_driver"),
        # cuda_repo_url and its key follow nvidia_driver_repo_url where that is defined.
        pytest.param({"nvidia_driver_repo_url": MIRROR}, {"gpu01": {"nvidia_driver_cuda_repository": DRIVER_SOURCE}},
                     id="url-from-nvidia_driver"),
        pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE,
                      "cuda_cudnn_archive_checksum": CHECKSUM, "cuda_cudnn_version": "9.1.0.70"}, {}, id="cudnn-archive"),
        pytest.param({"cuda_cudnn": False, "cuda_nccl": False, "cuda_repo_manage": False,
                      "cuda_repo_url": "not used"}, {}, id="toolkit-only-repo-unmanaged"),
    ],
)
def test_good_data_passes_preflight_validation(tmp_path, good, host_vars):
    # Good data gets past the validation and only then fails, at the first task that needs
    # a host, because the hosts do not exist.
    assert_passes_validation(run_cuda(tmp_path, host_vars, **good), HOSTS, "cuda")


def test_bad_data_on_each_host_is_refused_at_once_before_any_host_is_touched(tmp_path):
    # gpu01: an NCCL build for another CUDA; gpu02: a cuda source other than the one the
    # nvidia_driver role wrote there earlier in the run.
    result = run_cuda(tmp_path, {"gpu01": {"cuda_nccl_version": "2.23.4-1+cuda11.8"},
                                 "gpu02": {"nvidia_driver_cuda_repository": {**DRIVER_SOURCE, "url": MIRROR + "v2/"}}},
                      **PINNED)
    assert_refused_untouched(
        result,
        "cuda: bad input, no host was changed: "
        "host 'gpu01': cuda_nccl_version: 2.23.4-1+cuda11.8 is built for CUDA 11, but the default toolkit "
        "cuda_default_toolkit is 12.4 (CUDA 12): pick a +cuda12.x build (apt-cache madison libnccl2); "
        "host 'gpu02': cuda_repo_url: is '%s', but nvidia_driver_repo_url is '%sv2/', and the nvidia_driver role "
        "writes the same cuda package source on this host: set both alike (cuda_repo_url defaults to "
        "nvidia_driver_repo_url where that is defined)" % (MIRROR, MIRROR),
    )
