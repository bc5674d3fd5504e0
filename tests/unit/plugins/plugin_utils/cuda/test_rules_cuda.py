# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda role's input rules (cuda_errors) and derived values (packages, unavailable,
verify_problems), as tables of good and bad data with exact messages."""

from __future__ import annotations

import base64

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.cuda._rules import (
    available,
    cuda_errors,
    cudnn_entries,
    driver_repository,
    packages,
    unavailable,
    verify_problems,
)

REPO = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
MIRROR = "http://mirror:8080/compute/cuda/repos/debian12/x86_64/"
CHECKSUM = "sha256:" + "0" * 64
ARCHIVE = ("https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/"
           "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz")
# The role's defaults as preflight passes them, with nothing known of nvidia_driver.
GOOD = {
    "cuda_repo_manage": True,
    "cuda_repo_url": REPO,
    "cuda_repo_key_url": REPO + "3bf863cc.pub",
    "cuda_toolkits": ["12.4"],
    "cuda_toolkit_versions": {},
    "cuda_default_toolkit": "12.4",
    "cuda_cudnn": True,
    "cuda_cudnn_source": "repo",
    "cuda_cudnn_version": "",
    "cuda_cudnn_archive_url": "",
    "cuda_cudnn_archive_checksum": "",
    "cuda_nccl": True,
    "cuda_nccl_version": "",
    "cuda_verify": True,
    "nvidia_driver_cuda_repository": None,
    "nvidia_driver_in_play": False,
    "nvidia_driver_source": None,
    "nvidia_driver_repo_url": None,
    "nvidia_driver_repo_key_url": None,
}
# What the gpu_stack scenario asks for.
PINNED = {
    "cuda_repo_url": MIRROR,
    "cuda_repo_key_url": MIRROR + "3bf863cc.pub",
    "cuda_toolkits": ["12.4", "12.6"],
    "cuda_default_toolkit": "12.4",
    "cuda_toolkit_versions": {"12.4": "12.4.1-1", "12.6": "12.6.3-1"},
    "cuda_cudnn_version": "9.1.0.70-1",
    "cuda_nccl_version": "2.21.5-1+cuda12.4",
}
RECORDED = {"name": "cuda", "description": "NVIDIA CUDA", "url": MIRROR, "key_url": MIRROR + "3bf863cc.pub"}
H = "host 'gpu01': "
TOOLKIT_REASON = 'must be a toolkit version X.Y such as "12.4", quoted (unquoted 12.10 is 12.1)'
CONFLICT = ("is %r, but %s is %r, and the nvidia_driver role writes the same cuda package source on this host:"
            " set both alike (%s defaults to %s where that is defined)")


@pytest.mark.parametrize("change", [
    pytest.param({}, id="defaults"),
    pytest.param(PINNED, id="gpu_stack"),
    pytest.param({"cuda_toolkits": [12.4, "12.6"], "cuda_default_toolkit": 12.4}, id="unquoted-floats-read-as-text"),
    pytest.param({"cuda_toolkit_versions": {"12.4": "12.4-1"}}, id="pin-without-patch-level"),
    pytest.param({"cuda_toolkit_versions": {"12.4": "12.4.1.2-1~deb12"}}, id="pin-with-more-parts"),
    pytest.param({"cuda_cudnn_version": "9.1.0-1"}, id="cudnn-three-parts"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE,
                  "cuda_cudnn_archive_checksum": CHECKSUM, "cuda_cudnn_version": "9.1.0.70"}, id="cudnn-archive"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": "file:///srv/cudnn-9.tgz",
                  "cuda_cudnn_archive_checksum": "sha512:" + "aB" * 64, "cuda_cudnn_version": ""},
                 id="cudnn-archive-file-sha512"),
    pytest.param({"cuda_cudnn": False, "cuda_cudnn_version": "anything", "cuda_cudnn_source": "archive"},
                 id="cudnn-off-not-checked"),
    pytest.param({"cuda_cudnn_version": "8.9.7.29-1+cuda12.2"}, id="cudnn8-built-for-the-default-major"),
    pytest.param({"cuda_toolkits": ["11.8", "12.4"], "cuda_default_toolkit": "11.8",
                  "cuda_cudnn_version": "8.9.7.29-1+cuda11.8"}, id="cudnn8-cuda11"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE.replace("_cuda12", "_cuda12.4"),
                  "cuda_cudnn_archive_checksum": CHECKSUM}, id="cudnn-archive-cuda12.4"),
    pytest.param({"cuda_nccl": False, "cuda_nccl_version": "2.21.5-1"}, id="nccl-off-not-checked"),
    pytest.param({"cuda_nccl_version": "2.23.4-1+cuda12.6"}, id="nccl-other-minor-same-major"),
    pytest.param({"cuda_repo_manage": False, "cuda_repo_url": "not used", "cuda_repo_key_url": "",
                  "nvidia_driver_cuda_repository": {"url": "http://other/", "key_url": "http://other/k"}},
                 id="repo-unmanaged"),
    pytest.param({**PINNED, "nvidia_driver_cuda_repository": RECORDED}, id="same-source-as-nvidia_driver"),
    pytest.param({"nvidia_driver_cuda_repository": {}, "nvidia_driver_in_play": True,
                  "nvidia_driver_repo_url": MIRROR}, id="nvidia_driver-writes-none-here"),
    pytest.param({"nvidia_driver_in_play": True, "nvidia_driver_source": "distribution",
                  "nvidia_driver_repo_url": MIRROR}, id="nvidia_driver-from-the-distribution"),
    pytest.param({"nvidia_driver_in_play": False, "nvidia_driver_repo_url": MIRROR}, id="nvidia_driver-not-in-play"),
    pytest.param({"nvidia_driver_in_play": True, "nvidia_driver_source": "cuda_repo", "nvidia_driver_repo_url": REPO,
                  "nvidia_driver_repo_key_url": REPO + "3bf863cc.pub"}, id="nvidia_driver-in-play-alike"),
])
def test_good(change):
    assert cuda_errors({**GOOD, **change}, "gpu01") == []


@pytest.mark.parametrize("change, messages", [
    pytest.param({"cuda_toolkits": ["12.4", "12"]}, ["cuda_toolkits[1]: %s (got '12')" % TOOLKIT_REASON],
                 id="toolkit-not-x-y"),
    pytest.param({"cuda_toolkits": ["12.4.1"], "cuda_default_toolkit": "12.4.1"},
                 ["cuda_toolkits[0]: %s (got '12.4.1')" % TOOLKIT_REASON], id="toolkit-with-patch-level"),
    pytest.param({"cuda_toolkits": [12, "12.4\n"], "cuda_default_toolkit": "12"},
                 ["cuda_toolkits[0]: %s (got 12)" % TOOLKIT_REASON, "cuda_toolkits[1]: %s (got '12.4\\n')" % TOOLKIT_REASON],
                 id="toolkit-unquoted-int-and-newline"),
    pytest.param({"cuda_toolkits": [], "cuda_default_toolkit": ""},
                 ['cuda_toolkits: must name at least one toolkit, such as "12.4" (got [])'], id="no-toolkit"),
    pytest.param({"cuda_toolkits": "12.4"},
                 ['cuda_toolkits: must be a list of toolkit versions X.Y such as ["12.4"] (got the string \'12.4\')'], id="toolkits-not-a-list"),
    pytest.param({"cuda_toolkits": ["12.4", "12.6", "12.4", "12.6", "12.4"]},
                 ["cuda_toolkits: lists 12.4 more than once", "cuda_toolkits: lists 12.6 more than once"],
                 id="toolkit-twice"),
    pytest.param({"cuda_toolkits": ["12.4", "12.6"], "cuda_default_toolkit": "12.8"},
                 ["cuda_default_toolkit: must be one of cuda_toolkits (12.4, 12.6) (got '12.8')"], id="default-not-in-list"),
    pytest.param({"cuda_toolkit_versions": {"12.6": "12.6.3-1"}},
                 ["cuda_toolkit_versions['12.6']: pins a toolkit that is not one of cuda_toolkits (12.4)"],
                 id="pin-for-toolkit-not-in-list"),
    pytest.param({"cuda_toolkit_versions": {"12.4": "12.6.3-1"}},
                 ["cuda_toolkit_versions['12.4']: must be a cuda-toolkit-12-4 package version such as 12.4.1-1"
                  " (got '12.6.3-1')"], id="pin-of-another-toolkit"),
    pytest.param({"cuda_toolkit_versions": {"12.4": "12.40.1-1"}},
                 ["cuda_toolkit_versions['12.4']: must be a cuda-toolkit-12-4 package version such as 12.4.1-1"
                  " (got '12.40.1-1')"], id="pin-of-a-longer-minor"),
    pytest.param({"cuda_toolkit_versions": {"12.4": "12.4.1-1 foo"}},
                 ["cuda_toolkit_versions['12.4']: must be a cuda-toolkit-12-4 package version such as 12.4.1-1"
                  " (got '12.4.1-1 foo')"], id="pin-with-a-blank"),
    pytest.param({"cuda_toolkit_versions": {"12.4": None}},
                 ["cuda_toolkit_versions['12.4']: must be a cuda-toolkit-12-4 package version such as 12.4.1-1"
                  " (got 'None')"], id="pin-empty"),
    pytest.param({"cuda_toolkit_versions": {12.4: "12.4.1-1"}},
                 ['cuda_toolkit_versions: keys must be quoted toolkit versions such as "12.4" (got 12.4 unquoted)'],
                 id="pin-key-unquoted"),
    pytest.param({"cuda_toolkit_versions": ["12.4.1-1"]},
                 ['cuda_toolkit_versions: must be a dict of toolkit to package version such as {"12.4": "12.4.1-1"}'
                  " (got a list)"], id="pins-not-a-dict"),
    pytest.param({"cuda_cudnn_source": "tarball"},
                 ["cuda_cudnn_source: must be repo (packages) or archive (NVIDIA's tar.xz) (got 'tarball')"],
                 id="bad-cudnn-source"),
    pytest.param({"cuda_cudnn_version": "9.1"},
                 ["cuda_cudnn_version: must be a cuDNN package version such as 9.1.0.70-1, or empty (got '9.1')"],
                 id="cudnn-version-not-a-package-version"),
    pytest.param({"cuda_cudnn_version": "9.1.0.70"},
                 ["cuda_cudnn_version: must be a cuDNN package version such as 9.1.0.70-1, or empty (got '9.1.0.70')"],
                 id="cudnn-repo-version-without-revision"),
    pytest.param({"cuda_cudnn_version": None},
                 ["cuda_cudnn_version: must be a cuDNN package version such as 9.1.0.70-1, or empty (got None)"],
                 id="cudnn-version-null"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE, "cuda_cudnn_archive_checksum": CHECKSUM,
                  "cuda_cudnn_version": "9.1"},
                 ["cuda_cudnn_version: must be a cuDNN version such as 9.1.0.70, or empty (got '9.1')"],
                 id="cudnn-archive-version"),
    pytest.param({"cuda_cudnn_version": "8.9.7.29-1+cuda11.8"},
                 ["cuda_cudnn_version: 8.9.7.29-1+cuda11.8 is built for CUDA 11, but the default toolkit"
                  " cuda_default_toolkit is 12.4 (CUDA 12): pick a cuDNN built for CUDA 12"], id="cudnn-other-cuda-major"),
    pytest.param({"cuda_toolkits": ["11.8", "12.4"], "cuda_default_toolkit": "11.8",
                  "cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE, "cuda_cudnn_archive_checksum": CHECKSUM},
                 ["cuda_cudnn_archive_url: cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz is built for CUDA 12, but the"
                  " default toolkit cuda_default_toolkit is 11.8 (CUDA 11): pick a cuDNN built for CUDA 11"],
                 id="cudnn-archive-other-cuda-major"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_url": ARCHIVE},
                 ["cuda_cudnn_archive_checksum: must be the archive's checksum as sha256:<64 hex digits> or"
                  " sha512:<128 hex digits> when cuda_cudnn_source is archive (got '')"], id="archive-without-checksum"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": "md5:" + "0" * 32,
                  "cuda_cudnn_archive_url": ARCHIVE},
                 ["cuda_cudnn_archive_checksum: must be the archive's checksum as sha256:<64 hex digits> or"
                  " sha512:<128 hex digits> when cuda_cudnn_source is archive (got 'md5:%s')" % ("0" * 32)],
                 id="archive-md5"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": CHECKSUM},
                 ["cuda_cudnn_archive_url: must be the http(s):// or file:// URL of a .tar.xz, .tar.gz or .tgz archive,"
                  " without ? or #, when cuda_cudnn_source is archive (got '')"], id="archive-without-url"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": CHECKSUM,
                  "cuda_cudnn_archive_url": "https://mirror.example/get?file=cudnn.tar.xz"},
                 ["cuda_cudnn_archive_url: must be the http(s):// or file:// URL of a .tar.xz, .tar.gz or .tgz archive,"
                  " without ? or #, when cuda_cudnn_source is archive (got 'https://mirror.example/get?file=cudnn.tar.xz')"],
                 id="archive-url-with-query"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": CHECKSUM,
                  "cuda_cudnn_archive_url": "https://mirror.example/cudnn.zip"},
                 ["cuda_cudnn_archive_url: must be the http(s):// or file:// URL of a .tar.xz, .tar.gz or .tgz archive,"
                  " without ? or #, when cuda_cudnn_source is archive (got 'https://mirror.example/cudnn.zip')"],
                 id="archive-url-not-a-tarball"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_archive_checksum": CHECKSUM,
                  "cuda_cudnn_archive_url": "https://mirror.example/.tar.xz"},
                 ["cuda_cudnn_archive_url: must be the http(s):// or file:// URL of a .tar.xz, .tar.gz or .tgz archive,"
                  " without ? or #, when cuda_cudnn_source is archive (got 'https://mirror.example/.tar.xz')"],
                 id="archive-url-without-a-file-name"),
    pytest.param({**PINNED, "cuda_nccl_version": "2.21.5-1+cuda11.8"},
                 ["cuda_nccl_version: 2.21.5-1+cuda11.8 is built for CUDA 11, but the default toolkit cuda_default_toolkit"
                  " is 12.4 (CUDA 12): pick a +cuda12.x build (apt-cache madison libnccl2)"], id="nccl-built-for-another-cuda"),
    pytest.param({"cuda_nccl_version": "2.21.5-1"},
                 ["cuda_nccl_version: must be an NCCL package version with the CUDA it is built for, such as"
                  " 2.21.5-1+cuda12.4, or empty (got '2.21.5-1')"], id="nccl-without-cuda-suffix"),
    pytest.param({"cuda_repo_url": MIRROR[:-1]},
                 ["cuda_repo_url: must be an http(s):// or file:// URL ending in / (got '%s')" % MIRROR[:-1]],
                 id="repo-url-without-trailing-slash"),
    pytest.param({"cuda_repo_key_url": "3bf863cc.pub"},
                 ["cuda_repo_key_url: must be a http:// or https:// or file:// URL (got '3bf863cc.pub')"],
                 id="key-not-a-url"),
    pytest.param({**PINNED, "nvidia_driver_cuda_repository": {**RECORDED, "url": REPO, "key_url": REPO + "3bf863cc.pub"}},
                 ["cuda_repo_url: " + CONFLICT % (MIRROR, "nvidia_driver_repo_url", REPO, "cuda_repo_url",
                                                  "nvidia_driver_repo_url"),
                  "cuda_repo_key_url: " + CONFLICT % (MIRROR + "3bf863cc.pub", "nvidia_driver_repo_key_url",
                                                      REPO + "3bf863cc.pub", "cuda_repo_key_url",
                                                      "nvidia_driver_repo_key_url")],
                 id="nvidia_driver-recorded-another-source"),
    pytest.param({**PINNED, "nvidia_driver_cuda_repository": {**RECORDED, "key_url": "file:///etc/site.asc"}},
                 ["cuda_repo_key_url: " + CONFLICT % (MIRROR + "3bf863cc.pub", "nvidia_driver_repo_key_url",
                                                      "file:///etc/site.asc", "cuda_repo_key_url",
                                                      "nvidia_driver_repo_key_url")],
                 id="nvidia_driver-recorded-another-key"),
    pytest.param({**PINNED, "nvidia_driver_in_play": True, "nvidia_driver_source": "cuda_repo",
                  "nvidia_driver_repo_url": REPO, "nvidia_driver_repo_key_url": MIRROR + "3bf863cc.pub"},
                 ["cuda_repo_url: " + CONFLICT % (MIRROR, "nvidia_driver_repo_url", REPO, "cuda_repo_url",
                                                  "nvidia_driver_repo_url")],
                 id="nvidia_driver-later-in-this-play"),
])
def test_bad(change, messages):
    assert cuda_errors({**GOOD, **change}, "gpu01") == [H + m for m in messages]


def test_every_error_at_once():
    bad = {**GOOD, "cuda_toolkits": ["12"], "cuda_cudnn_version": "9", "cuda_nccl_version": "2", "cuda_repo_url": "x"}
    assert [m.split(":")[1].strip() for m in cuda_errors(bad, "gpu01")] == [
        "cuda_toolkits[0]", "cuda_default_toolkit", "cuda_cudnn_version", "cuda_nccl_version", "cuda_repo_url"]


def test_recorded_source_wins_over_the_play():
    # nvidia_driver ran on this host and recorded no source: its variables in this play do not count.
    values = {"nvidia_driver_cuda_repository": {}, "nvidia_driver_in_play": True, "nvidia_driver_repo_url": REPO}
    assert driver_repository(values) is None
    values["nvidia_driver_cuda_repository"] = None
    assert driver_repository(values) == {"url": REPO, "key_url": None}


def test_not_a_dict():
    with pytest.raises(RuleError) as exc:
        cuda_errors(["x"], "gpu01")
    assert str(exc.value) == "cuda_errors: the input must be a dict of the role's variables"


# --- packages ------------------------------------------------------------------------------

CUDNN = ["libcudnn9-cuda-12", "libcudnn9-dev-cuda-12"]
NCCL = ["libnccl2", "libnccl-dev"]


def _pkg(name, version="", sep="="):
    return {"name": name, "version": version, "spec": name + sep + version if version else name}


def test_packages_of_the_gpu_stack_scenario():
    assert packages({**GOOD, **PINNED}, CUDNN, NCCL, "=") == [
        _pkg("cuda-toolkit-12-4", "12.4.1-1"), _pkg("cuda-toolkit-12-6", "12.6.3-1"),
        _pkg("libcudnn9-cuda-12", "9.1.0.70-1"), _pkg("libcudnn9-dev-cuda-12", "9.1.0.70-1"),
        _pkg("libnccl2", "2.21.5-1+cuda12.4"), _pkg("libnccl-dev", "2.21.5-1+cuda12.4"),
    ]


@pytest.mark.parametrize("change, sep, expected", [
    pytest.param({}, "=", [_pkg("cuda-toolkit-12-4"), _pkg(CUDNN[0]), _pkg(CUDNN[1]), _pkg(NCCL[0]), _pkg(NCCL[1])],
                 id="defaults-unpinned"),
    pytest.param({"cuda_toolkits": [12.4, "12.6"], "cuda_toolkit_versions": {"12.4": "12.4.1-1"}, "cuda_cudnn": False,
                  "cuda_nccl": False}, "-", [_pkg("cuda-toolkit-12-4", "12.4.1-1", "-"), _pkg("cuda-toolkit-12-6")],
                 id="dnf-one-pinned-float-toolkit"),
    pytest.param({"cuda_cudnn_source": "archive", "cuda_cudnn_version": "9.1.0.70", "cuda_nccl_version": "2.21.5-1+cuda12.4"},
                 "=", [_pkg("cuda-toolkit-12-4"), _pkg(NCCL[0], "2.21.5-1+cuda12.4"), _pkg(NCCL[1], "2.21.5-1+cuda12.4")],
                 id="cudnn-from-the-archive-has-no-package"),
    pytest.param({"cuda_toolkit_versions": None, "cuda_cudnn": False, "cuda_nccl": False}, "=",
                 [_pkg("cuda-toolkit-12-4")], id="pins-null"),
])
def test_packages(change, sep, expected):
    assert packages({**GOOD, **change}, CUDNN, NCCL, sep) == expected


def test_packages_not_a_dict():
    with pytest.raises(RuleError):
        packages("x", CUDNN, NCCL, "=")


# --- unavailable ---------------------------------------------------------------------------

MADISON = [
    "cuda-toolkit-12-4 |   12.4.1-1 | http://mirror:8080/compute/cuda/repos/debian12/x86_64  Packages",
    "  libnccl2 | 2.23.4-1+cuda12.6 | http://mirror:8080/compute/cuda/repos/debian12/x86_64  Packages",
    "  libnccl2 | 2.21.5-1+cuda12.4 | http://mirror:8080/compute/cuda/repos/debian12/x86_64  Packages",
    "  libnccl2 | 2.21.5-1+cuda12.4 | http://deb.example/other  Packages",
    "not a madison line",
]
REPOQUERY = ["cuda-toolkit-12-4 | 12.4.1-1 | cuda", "libnccl | 2.21.5-1+cuda12.4 | cuda"]


def test_available_parses_madison_and_repoquery_lines():
    assert available(MADISON) == {"cuda-toolkit-12-4": ["12.4.1-1"],
                                  "libnccl2": ["2.23.4-1+cuda12.6", "2.21.5-1+cuda12.4", "2.21.5-1+cuda12.4"]}
    assert available(REPOQUERY) == {"cuda-toolkit-12-4": ["12.4.1-1"], "libnccl": ["2.21.5-1+cuda12.4"]}


WANTED = [{"name": "cuda-toolkit-12-4", "version": "12.4.1-1"}, {"name": "libnccl2", "version": ""},
          {"name": "libnccl-dev", "version": "2.21.5-1+cuda12.4"}]


@pytest.mark.parametrize("wanted, reads, expected", [
    pytest.param(WANTED, ({"stdout_lines": MADISON}, {"skipped": True}), ["libnccl-dev is not in the repository at all"],
                 id="first-read-counts-when-the-second-was-skipped"),
    pytest.param(WANTED, ({"stdout_lines": []}, {"stdout_lines": MADISON + ["libnccl-dev | 2.21.5-1+cuda12.4 | x"]}), [],
                 id="second-read-counts"),
    pytest.param([{"name": "libnccl2", "version": "2.22.3-1+cuda12.6"}], ({"stdout_lines": MADISON},),
                 ["libnccl2 2.22.3-1+cuda12.6 is not in the repository (has: 2.23.4-1+cuda12.6, 2.21.5-1+cuda12.4)"],
                 id="pinned-version-missing-versions-listed-once"),
    pytest.param(WANTED[:1], ({"skipped": True},), ["cuda-toolkit-12-4 is not in the repository at all"],
                 id="no-read-ran"),
    pytest.param(WANTED[:1], (), ["cuda-toolkit-12-4 is not in the repository at all"], id="no-reads"),
    pytest.param([], ({"stdout_lines": MADISON},), [], id="nothing-wanted"),
])
def test_unavailable(wanted, reads, expected):
    assert unavailable(wanted, *reads) == expected


# --- verify_problems -----------------------------------------------------------------------

def _b64(text):
    return base64.b64encode(text.encode()).decode()


CUDNN_H = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"
NCCL_H = "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n#define NCCL_SUFFIX \"\"\n"
LDCONFIG = ("1234 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibnccl.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnccl.so.2\n"
            "\tlibcudnn.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so.9\n"
            "\tlibcudnn.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so\n")
PACKAGES = {
    "cuda-toolkit-12-4": [{"name": "cuda-toolkit-12-4", "version": "12.4.1-1"}],
    "cuda-toolkit-12-6": [{"name": "cuda-toolkit-12-6", "version": "12.6.3-1"}],
    "libnccl2": [{"name": "libnccl2", "version": "2.21.5-1+cuda12.4"}],
}


def _nvcc(release):
    return {"stdout": "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release %s, V%s.131" % (release, release),
            "stderr": "", "rc": 0}


FOUND = {
    "nvcc": [{"item": "12.4", **_nvcc("12.4")}, {"item": "12.6", **_nvcc("12.6")}],
    "nvcc_default": _nvcc("12.4"),
    "link": {"exists": True, "islnk": True, "lnk_source": "/usr/local/cuda-12.4"},
    "cudnn_header": {"content": _b64(CUDNN_H), "encoding": "base64"},
    "nccl_header": {"content": _b64(NCCL_H), "encoding": "base64"},
    "ldconfig": {"stdout": LDCONFIG, "stdout_lines": LDCONFIG.splitlines()},
    "packages": PACKAGES,
}
EXPECTED = {
    "default_toolkit": "12.4", "default_dir": "/usr/local/cuda-12.4", "cuda_major": "12",
    "cudnn": True, "cudnn_header": "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", "cudnn_major": "9",
    "cudnn_version": "9.1.0.70-1",
    "nccl": True, "nccl_header": "/usr/include/nccl.h", "nccl_version": "2.21.5-1+cuda12.4", "nccl_package": "libnccl2",
    "pins": [{"name": "cuda-toolkit-12-4", "version": "12.4.1-1"}, {"name": "cuda-toolkit-12-6", "version": "12.6.3-1"}],
}
CUDNN_PATH = EXPECTED["cudnn_header"]
MISSING_BINARY = {"rc": 2, "stdout": "", "stderr": "", "failed": True,
                  "msg": "[Errno 2] No such file or directory: b'/usr/local/cuda-12.6/bin/nvcc'"}


@pytest.mark.parametrize("found, expected", [
    pytest.param({}, {}, id="as-asked"),
    pytest.param({}, {"cudnn_version": "", "nccl_version": ""}, id="unpinned-cudnn-major-nccl-any"),
    pytest.param({"cudnn_header": {"skipped": True}, "nccl_header": {"skipped": True},
                  "ldconfig": {"stdout": "", "stdout_lines": []}},
                 {"cudnn": False, "nccl": False, "cudnn_major": None, "nccl_package": None}, id="no-cudnn-no-nccl"),
    pytest.param({"ldconfig": {"stdout": LDCONFIG}}, {}, id="ldconfig-without-stdout-lines"),
])
def test_verify_good(found, expected):
    assert verify_problems({**FOUND, **found}, {**EXPECTED, **expected}) == []


@pytest.mark.parametrize("found, expected, problems", [
    pytest.param({"nvcc": [FOUND["nvcc"][0], {"item": "12.6", **MISSING_BINARY}]}, {},
                 ["/usr/local/cuda-12.6/bin/nvcc --version: expected release 12.6, found no release"],
                 id="toolkit-nvcc-missing"),
    pytest.param({"nvcc": [FOUND["nvcc"][0], {"item": "12.6", "msg": "[Errno 2] No such file", "failed": True}]}, {},
                 ["/usr/local/cuda-12.6/bin/nvcc --version: expected release 12.6, found [Errno 2] No such file"],
                 id="toolkit-nvcc-error-message"),
    pytest.param({"nvcc_default": {"stdout": "", "stderr": "  nvcc: error while loading shared libraries\n"}}, {},
                 ["/usr/local/cuda/bin/nvcc --version: expected release 12.4, found nvcc: error while loading shared"
                  " libraries"], id="default-nvcc-stderr"),
    pytest.param({"nvcc_default": _nvcc("12.6"), "link": {"exists": True, "islnk": True, "lnk_source": "/usr/local/cuda-12.6"}},
                 {}, ["/usr/local/cuda/bin/nvcc --version: expected release 12.4, found release 12.6",
                      "/usr/local/cuda: expected to lead to /usr/local/cuda-12.4, found /usr/local/cuda-12.6"],
                 id="default-is-the-other-toolkit"),
    pytest.param({"link": {"exists": False}}, {},
                 ["/usr/local/cuda: expected to lead to /usr/local/cuda-12.4, found no such link"], id="no-link"),
    pytest.param({"cudnn_header": {"failed": True, "msg": "file not found"}}, {},
                 [CUDNN_PATH + ": expected cuDNN 9.1.0, found no such file"], id="cudnn-header-missing"),
    pytest.param({"cudnn_header": {"failed": True, "msg": "file not found"}}, {"cudnn_version": ""},
                 [CUDNN_PATH + ": expected cuDNN 9.x, found no such file"], id="cudnn-header-missing-unpinned"),
    pytest.param({"cudnn_header": {"content": _b64(CUDNN_H.replace("MINOR 1", "MINOR 5"))}}, {},
                 [CUDNN_PATH + ": expected cuDNN 9.1.0, found 9.5.0"], id="cudnn-other-version"),
    pytest.param({"cudnn_header": {"content": _b64("#define CUDNN_MAJOR 8\n")}}, {"cudnn_version": ""},
                 [CUDNN_PATH + ": expected cuDNN 9.x, found 8.?.?"], id="cudnn-other-major-unpinned"),
    pytest.param({"nccl_header": {"content": _b64(NCCL_H.replace("MINOR 21", "MINOR 23").replace("PATCH 5", "PATCH 4"))}},
                 {}, ["/usr/include/nccl.h: expected NCCL 2.21.5, found 2.23.4"], id="nccl-other-version"),
    pytest.param({"nccl_header": {"failed": True}}, {"nccl_version": ""},
                 ["/usr/include/nccl.h: expected NCCL ?.?.?, found no such file"], id="nccl-header-missing-unpinned"),
    pytest.param({"packages": {**PACKAGES, "libnccl2": [{"name": "libnccl2", "version": "2.21.5-1+cuda11.8"}]}},
                 {"nccl_version": ""},
                 ["libnccl2: expected a build for CUDA 12 (the default toolkit 12.4), found 2.21.5-1+cuda11.8"],
                 id="nccl-built-for-another-cuda"),
    pytest.param({"packages": {k: v for k, v in PACKAGES.items() if k != "libnccl2"}}, {"nccl_version": ""},
                 ["libnccl2: expected a build for CUDA 12 (the default toolkit 12.4), found not installed"],
                 id="nccl-not-installed"),
    pytest.param({"packages": {**PACKAGES, "libnccl2": []}}, {"nccl_version": ""},
                 ["libnccl2: expected a build for CUDA 12 (the default toolkit 12.4), found not installed"],
                 id="nccl-no-entries"),
    pytest.param({"ldconfig": {"stdout": LDCONFIG.replace("libcudnn.so.9 ", "libcudnn.so.8 ")}}, {},
                 ["ldconfig -p: expected libcudnn.so.9, found libcudnn.so.8, libcudnn.so"], id="ldconfig-other-cudnn"),
    pytest.param({"ldconfig": {"stdout": "", "stdout_lines": []}}, {},
                 ["ldconfig -p: expected libcudnn.so.9, found none of its name",
                  "ldconfig -p: expected libnccl.so.2, found none of its name"], id="ldconfig-empty"),
    pytest.param({"packages": {**PACKAGES, "cuda-toolkit-12-6": [{"version": "12.6.3-1"}, {"version": "12.6.2-1"}]}}, {},
                 ["cuda-toolkit-12-6: expected 12.6.3-1 installed, found 12.6.3-1, 12.6.2-1"], id="pin-two-installed"),
    pytest.param({"packages": {}}, {"nccl": False},
                 ["cuda-toolkit-12-4: expected 12.4.1-1 installed, found not installed",
                  "cuda-toolkit-12-6: expected 12.6.3-1 installed, found not installed"], id="pins-not-installed"),
])
def test_verify_bad(found, expected, problems):
    assert verify_problems({**FOUND, **found}, {**EXPECTED, **expected}) == problems


def test_verify_every_problem_in_order():
    found = {**FOUND, "nvcc": [{"item": "12.4", **MISSING_BINARY}], "nvcc_default": {}, "link": {},
             "cudnn_header": {}, "nccl_header": {}, "ldconfig": {"stdout": ""}, "packages": {}}
    assert [p.split(":")[0] for p in verify_problems(found, EXPECTED)] == [
        "/usr/local/cuda-12.4/bin/nvcc --version", "/usr/local/cuda/bin/nvcc --version", "/usr/local/cuda",
        CUDNN_PATH, "/usr/include/nccl.h", "libnccl2", "ldconfig -p", "ldconfig -p", "cuda-toolkit-12-4",
        "cuda-toolkit-12-6"]


def test_verify_not_dicts():
    with pytest.raises(RuleError):
        verify_problems([], EXPECTED)


STAGE = "/var/cache/gpucluster/cuda/cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
TOOLKIT = "/usr/local/cuda-12.4"


@pytest.mark.parametrize("relative, dest", [
    ("include", TOOLKIT + "/include"),
    ("include/cudnn.h", TOOLKIT + "/include/cudnn.h"),
    ("lib", TOOLKIT + "/lib64"),
    ("lib/libcudnn.so.9", TOOLKIT + "/lib64/libcudnn.so.9"),
    ("lib64", TOOLKIT + "/lib64"),
    ("lib64/stubs/libcudnn.so", TOOLKIT + "/lib64/stubs/libcudnn.so"),
    # The rest of the archive stays out.
    ("LICENSE", None),
    ("library/x.so", None),
    ("include.h", None),
])
def test_where_a_cudnn_archive_file_goes(relative, dest):
    found = {"path": STAGE + "/" + relative, "isreg": True}
    expected = [dict(found, dest=dest)] if dest else []
    assert cudnn_entries([found], STAGE, TOOLKIT) == expected


def test_cudnn_entries_are_sorted_by_path_without_regard_to_case():
    files = [{"path": STAGE + "/lib/libcudnn_adv.so"}, {"path": STAGE + "/lib/Libx.so"}, {"path": STAGE + "/include"},
             {"path": "/elsewhere/include/cudnn.h"}, {"path": STAGE + "/lib/libcudnn.so"}]
    assert [(e["path"][len(STAGE):], e["dest"]) for e in cudnn_entries(files, STAGE, TOOLKIT)] == [
        ("/include", TOOLKIT + "/include"), ("/lib/libcudnn.so", TOOLKIT + "/lib64/libcudnn.so"),
        ("/lib/libcudnn_adv.so", TOOLKIT + "/lib64/libcudnn_adv.so"), ("/lib/Libx.so", TOOLKIT + "/lib64/Libx.so")]
