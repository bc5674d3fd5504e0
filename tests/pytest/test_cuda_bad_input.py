# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cuda: bad inventory data fails before any host is touched, with a message naming it."""

from __future__ import annotations

import pytest

from roleplay import assert_passes_validation, assert_refused_untouched, run_role

HOSTS = ["gpu01", "gpu02"]
CHECKSUM = "sha256:" + "0" * 64
ARCHIVE = ("https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/"
           "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz")
# What the gpu_stack scenario asks for.
PINNED = {
    "cuda_toolkits": ["12.4", "12.6"],
    "cuda_default_toolkit": "12.4",
    "cuda_toolkit_versions": {"12.4": "12.4.1-1", "12.6": "12.6.3-1"},
    "cuda_cudnn_version": "9.1.0.70-1",
    "cuda_nccl_version": "2.21.5-1+cuda12.4",
}


def run_cuda(tmp_path, host_vars=None, **group_vars):
    host_vars = host_vars or {}
    return run_role(tmp_path, "gpucluster.core.cuda", hosts={h: host_vars.get(h, {}) for h in HOSTS},
                    groups={"gpu_nodes": HOSTS}, group_vars=group_vars)


@pytest.mark.parametrize(
    "good",
    [
        pytest.param({}, id="defaults"),
        pytest.param(PINNED, id="two-toolkits-pinned"),
        pytest.param({**PINNED, "cuda_repo_url": "http://mirror:8080/compute/cuda/repos/debian12/x86_64/"}, id="mirror"),
        pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE,
                      "cuda_cudnn_archive_checksum": CHECKSUM, "cuda_cudnn_version": "9.1.0.70"}, id="cudnn-archive"),
        pytest.param({"cuda_cudnn": False, "cuda_nccl": False, "cuda_repo_manage": False,
                      "cuda_repo_url": "not used"}, id="toolkit-only-repo-unmanaged"),
    ],
)
def test_good_data_passes_preflight_validation(tmp_path, good):
    # The control for the cases below: good data gets past the validation and only then
    # fails, at the first task that needs a host, because the hosts do not exist.
    assert_passes_validation(run_cuda(tmp_path, **good), HOSTS, "cuda")


@pytest.mark.parametrize(
    "bad, expected",
    [
        pytest.param(
            {"cuda_toolkits": ["12.4", "12"]},
            "host 'gpu01': cuda_toolkits entries must be toolkit versions X.Y such as \"12.4\" (quoted); bad: 12",
            id="toolkit-not-x-y",
        ),
        pytest.param(
            {"cuda_toolkits": ["12.4.1"]},
            "host 'gpu01': cuda_toolkits entries must be toolkit versions X.Y such as \"12.4\" (quoted); bad: 12.4.1",
            id="toolkit-with-patch-level",
        ),
        pytest.param(
            {"cuda_toolkits": []},
            "host 'gpu01': cuda_toolkits is empty: name at least one toolkit, such as \"12.4\"",
            id="no-toolkit",
        ),
        pytest.param(
            {"cuda_toolkits": ["12.4", "12.4"]},
            "host 'gpu01': cuda_toolkits lists 12.4 more than once",
            id="toolkit-twice",
        ),
        pytest.param(
            {"cuda_toolkits": ["12.4", "12.6"], "cuda_default_toolkit": "12.8"},
            "host 'gpu01': cuda_default_toolkit '12.8' is not one of cuda_toolkits (12.4, 12.6)",
            id="default-not-in-list",
        ),
        pytest.param(
            {"cuda_toolkit_versions": {"12.6": "12.6.3-1"}},
            "host 'gpu01': cuda_toolkit_versions pins 12.6, which is not one of cuda_toolkits (12.4)",
            id="pin-for-toolkit-not-in-list",
        ),
        pytest.param(
            {"cuda_toolkit_versions": {"12.4": "12.6.3-1"}},
            "host 'gpu01': cuda_toolkit_versions['12.4'] must be a cuda-toolkit-12-4 package version such as "
            "12.4.1-1 (got '12.6.3-1')",
            id="pin-of-another-toolkit",
        ),
        pytest.param(
            {"cuda_cudnn_version": "9.1"},
            "host 'gpu01': cuda_cudnn_version must be a cuDNN package version such as 9.1.0.70-1 (got '9.1')",
            id="cudnn-version-not-a-package-version",
        ),
        pytest.param(
            {**PINNED, "cuda_nccl_version": "2.21.5-1+cuda11.8"},
            "host 'gpu01': cuda_nccl_version 2.21.5-1+cuda11.8 is built for CUDA 11, but the default toolkit "
            "cuda_default_toolkit is 12.4 (CUDA 12): pick a +cuda12.x build (apt-cache madison libnccl2)",
            id="nccl-built-for-another-cuda",
        ),
        pytest.param(
            {"cuda_nccl_version": "2.21.5-1"},
            "host 'gpu01': cuda_nccl_version must be an NCCL package version with the CUDA it is built for, "
            "such as 2.21.5-1+cuda12.4 (got '2.21.5-1')",
            id="nccl-without-cuda-suffix",
        ),
        pytest.param(
            {"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE},
            "host 'gpu01': cuda_cudnn_source is archive, so cuda_cudnn_archive_checksum must be the archive's "
            "checksum as sha256:<64 hex digits> (got '')",
            id="archive-without-checksum",
        ),
        pytest.param(
            {"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": CHECKSUM},
            "host 'gpu01': cuda_cudnn_source is archive, so cuda_cudnn_archive_url must be an http(s):// or "
            "file:// URL of a .tar.xz archive (got '')",
            id="archive-without-url",
        ),
        pytest.param(
            {"cuda_cudnn_source": "tarball"},
            "value of cuda_cudnn_source must be one of: repo, archive, got: tarball",
            id="bad-cudnn-source",
        ),
        pytest.param(
            {"cuda_repo_url": "developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"},
            "host 'gpu01': cuda_repo_url must be an http(s):// or file:// URL ending in / "
            "(got 'developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/')",
            id="repo-url-without-scheme",
        ),
        pytest.param(
            {"cuda_repo_url": "http://mirror:8080/compute/cuda/repos/debian12/x86_64"},
            "host 'gpu01': cuda_repo_url must be an http(s):// or file:// URL ending in / "
            "(got 'http://mirror:8080/compute/cuda/repos/debian12/x86_64')",
            id="repo-url-without-trailing-slash",
        ),
        pytest.param(
            {"cuda_repo_key_url": "3bf863cc.pub"},
            "host 'gpu01': cuda_repo_key_url must be an http(s):// or file:// URL (got '3bf863cc.pub')",
            id="key-not-a-url",
        ),
        pytest.param(
            {"cuda_nccl": "maybe"},
            "cuda_nccl",
            id="wrong-type",
        ),
    ],
)
def test_bad_group_data_is_refused_before_any_host_is_touched(tmp_path, bad, expected):
    assert_refused_untouched(run_cuda(tmp_path, **bad), expected)


def test_unquoted_toolkit_key_is_refused(tmp_path):
    # YAML reads {12.4: ...} as a float key, which would silently pin nothing.
    result = run_cuda(tmp_path, host_vars={"gpu02": {"cuda_toolkit_versions": {12.4: "12.4.1-1"}}})
    assert_refused_untouched(
        result, "host 'gpu02': cuda_toolkit_versions keys must be quoted toolkit versions such as \"12.4\" (got 12.4 unquoted)")


def test_bad_pin_on_one_host_stops_every_host(tmp_path):
    result = run_cuda(tmp_path, host_vars={"gpu02": {"cuda_nccl_version": "2.23.4-1+cuda11.8"}})
    assert_refused_untouched(result, "host 'gpu02': cuda_nccl_version 2.23.4-1+cuda11.8 is built for CUDA 11")


def test_wrong_type_on_one_host_stops_every_host(tmp_path):
    # Ansible's own argument check drops only gpu01; the role checks it again and stops all.
    result = run_cuda(tmp_path, host_vars={"gpu01": {"cuda_toolkit_versions": "12.4.1-1"}})
    assert_refused_untouched(result, "cuda_toolkit_versions")
