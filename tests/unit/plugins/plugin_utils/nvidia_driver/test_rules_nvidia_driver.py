# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_driver_errors: the nvidia_driver role's input rules, as tables with exact messages."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError
from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._rules import nvidia_driver_errors

REPO = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
# The role's defaults as preflight passes them.
GOOD = {
    "nvidia_driver_install": "auto",
    "nvidia_driver_source": "cuda_repo",
    "nvidia_driver_repo_url": REPO,
    "nvidia_driver_repo_key_url": REPO + "3bf863cc.pub",
    "nvidia_driver_branch": "550",
    "nvidia_driver_version": "",
    "nvidia_driver_kernel_modules": "auto",
    "nvidia_driver_fabricmanager": "auto",
    "nvidia_driver_reboot": "report",
    "nvidia_driver_reboot_timeout": 1800,
}
H = "host 'gpu01': "
SOURCE = "must be cuda_repo (NVIDIA's CUDA repository or a mirror of it) or distribution (Ubuntu's packages)"
MODULES = "must be auto (chosen from the GPUs) or open (Turing and newer) or proprietary (Volta and older)"
REBOOT = "must be report (say so) or reboot (reboot now)"
URL = "must be an http(s):// or file:// URL ending in /"


@pytest.mark.parametrize("change", [
    pytest.param({}, id="defaults"),
    # What the gpu_stack scenario sets.
    pytest.param({"nvidia_driver_repo_url": "http://mirror:8080/compute/cuda/repos/debian12/x86_64/",
                  "nvidia_driver_repo_key_url": "http://mirror:8080/compute/cuda/repos/debian12/x86_64/3bf863cc.pub",
                  "nvidia_driver_version": "550.54.15-1"}, id="gpu_stack"),
    pytest.param({"nvidia_driver_install": True, "nvidia_driver_fabricmanager": False, "nvidia_driver_branch": 570,
                  "nvidia_driver_version": "570.133-1ubuntu1", "nvidia_driver_kernel_modules": "open",
                  "nvidia_driver_reboot": "reboot", "nvidia_driver_reboot_timeout": "600"}, id="unquoted-branch-quoted-timeout"),
    pytest.param({"nvidia_driver_install": False, "nvidia_driver_fabricmanager": True, "nvidia_driver_source": "distribution",
                  "nvidia_driver_kernel_modules": "proprietary", "nvidia_driver_reboot_timeout": 86400,
                  "nvidia_driver_repo_url": "file:///srv/mirror/cuda/", "nvidia_driver_repo_key_url": "file:///etc/k.asc"},
                 id="distribution-file-mirror"),
    pytest.param({"nvidia_driver_reboot_timeout": 1, "nvidia_driver_version": "550.90.07-1~deb12+1"}, id="low-edge"),
])
def test_good(change):
    assert nvidia_driver_errors({**GOOD, **change}, "gpu01") == []


@pytest.mark.parametrize("change, messages", [
    pytest.param({"nvidia_driver_install": "yes"}, ["nvidia_driver_install: must be true, false or auto (got 'yes')"],
                 id="install-yes-string"),
    pytest.param({"nvidia_driver_fabricmanager": 1}, ["nvidia_driver_fabricmanager: must be true, false or auto (got 1)"],
                 id="fabricmanager-int"),
    pytest.param({"nvidia_driver_source": "runfile"}, ["nvidia_driver_source: %s (got 'runfile')" % SOURCE], id="source"),
    pytest.param({"nvidia_driver_branch": "55"},
                 ['nvidia_driver_branch: must be a driver branch of 3 digits such as "550" (got \'55\')'], id="branch-2-digits"),
    pytest.param({"nvidia_driver_branch": "550\n"},
                 ['nvidia_driver_branch: must be a driver branch of 3 digits such as "550" (got \'550\\n\')'],
                 id="branch-newline"),
    pytest.param({"nvidia_driver_branch": "latest", "nvidia_driver_version": "550.90.07-1"},
                 ['nvidia_driver_branch: must be a driver branch of 3 digits such as "550" (got \'latest\')',
                  "nvidia_driver_version: must be empty or a package version of branch latest such as latest.90.07-1"
                  " (got '550.90.07-1')"], id="branch-word"),
    pytest.param({"nvidia_driver_version": "535.183.01-1"},
                 ["nvidia_driver_version: must be empty or a package version of branch 550 such as 550.90.07-1"
                  " (got '535.183.01-1')"], id="version-of-another-branch"),
    pytest.param({"nvidia_driver_version": "550.90.07"},
                 ["nvidia_driver_version: must be empty or a package version of branch 550 such as 550.90.07-1"
                  " (got '550.90.07')"], id="version-without-revision"),
    pytest.param({"nvidia_driver_version": "550.90.07-1 nvidia-smi"},
                 ["nvidia_driver_version: must be empty or a package version of branch 550 such as 550.90.07-1"
                  " (got '550.90.07-1 nvidia-smi')"], id="version-with-a-blank"),
    pytest.param({"nvidia_driver_version": None},
                 ["nvidia_driver_version: must be empty or a package version of branch 550 such as 550.90.07-1"
                  " (got None)"], id="version-null"),
    pytest.param({"nvidia_driver_repo_url": REPO[:-1]}, ["nvidia_driver_repo_url: %s (got '%s')" % (URL, REPO[:-1])],
                 id="repo-url-without-trailing-slash"),
    pytest.param({"nvidia_driver_repo_key_url": "https://"},
                 ["nvidia_driver_repo_key_url: must be a http:// or https:// or file:// URL (got 'https://')"],
                 id="key-url-empty-rest"),
    pytest.param({"nvidia_driver_kernel_modules": "nouveau"},
                 ["nvidia_driver_kernel_modules: %s (got 'nouveau')" % MODULES], id="kernel-modules"),
    pytest.param({"nvidia_driver_reboot": True}, ["nvidia_driver_reboot: %s (got True)" % REBOOT], id="reboot-bool"),
    pytest.param({"nvidia_driver_reboot_timeout": 0},
                 ["nvidia_driver_reboot_timeout: must be within 1-86400 (got 0)"], id="timeout-zero"),
    pytest.param({"nvidia_driver_reboot_timeout": 86401},
                 ["nvidia_driver_reboot_timeout: must be within 1-86400 (got 86401)"], id="timeout-over-a-day"),
    pytest.param({"nvidia_driver_reboot_timeout": "30m"},
                 ["nvidia_driver_reboot_timeout: must be an integer (got '30m')"], id="timeout-with-unit"),
    pytest.param({"nvidia_driver_reboot_timeout": True},
                 ["nvidia_driver_reboot_timeout: must be an integer (got True)"], id="timeout-bool"),
])
def test_bad(change, messages):
    assert nvidia_driver_errors({**GOOD, **change}, "gpu01") == [H + m for m in messages]


def test_every_error_at_once():
    bad = {**GOOD, "nvidia_driver_install": "x", "nvidia_driver_branch": "5", "nvidia_driver_repo_url": "x",
           "nvidia_driver_reboot_timeout": -1}
    assert [m.split(":")[1].strip() for m in nvidia_driver_errors(bad, "gpu01")] == [
        "nvidia_driver_install", "nvidia_driver_branch", "nvidia_driver_repo_url", "nvidia_driver_reboot_timeout"]


def test_not_a_dict():
    with pytest.raises(RuleError) as exc:
        nvidia_driver_errors("x", "gpu01")
    assert str(exc.value) == "nvidia_driver_errors: the input must be a dict of the role's variables"
