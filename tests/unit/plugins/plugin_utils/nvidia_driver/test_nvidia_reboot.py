# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a GPU node must reboot, from the nvidia_driver role's one read of its driver state."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.plugins.plugin_utils.nvidia_driver._reboot import reboot_reasons
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

KERNEL = "6.1.0-18-amd64"


def state(loaded="550.90.07", nouveau="no", newest=KERNEL, package="550.90.07-1"):
    return "loaded=%s\nnouveau=%s\nnewest_kernel=%s\npackage=%s\n" % (loaded, nouveau, newest, package)


@pytest.mark.parametrize("text, reasons", [
    (state(), []),
    (state(loaded="none"), []),
    (state(package=""), []),
    (state(loaded="550.54.15"), ["driver 550.54.15 is loaded, 550.90.07 is installed"]),
    (state(loaded="535.216.03", package="535.216.03-2~deb12u1"), []),
    (state(loaded="535.216.03", package="1:535.216.03-0ubuntu0.22.04.1"), []),
    (state(loaded="535.183.01", package="1:535.216.03-2~deb12u1"),
     ["driver 535.183.01 is loaded, 535.216.03 is installed"]),
    (state(nouveau="yes"), ["nouveau is loaded"]),
    (state(newest="6.1.0-21-amd64"), ["kernel 6.1.0-21-amd64 is installed, 6.1.0-18-amd64 runs"]),
    (state(newest="6.1.0-9-amd64"), []),
    (state(newest=""), []),
    (state(loaded="535.183.01", nouveau="yes", newest="6.12.9-amd64"),
     ["driver 535.183.01 is loaded, 550.90.07 is installed", "nouveau is loaded",
      "kernel 6.12.9-amd64 is installed, 6.1.0-18-amd64 runs"]),
])
def test_reboot_reasons(text, reasons):
    assert reboot_reasons(text, KERNEL) == reasons


@pytest.mark.parametrize("text, message", [
    ("loaded=none\nnouveau=no\nnewest_kernel=\n",
     "nvidia_driver_reboot_reasons: the node's driver state lacks package"),
    (state() + "loaded=none\n", "nvidia_driver_reboot_reasons: unexpected line in the node's driver state: 'loaded=none'"),
    (state() + "cat: /sys/module/nvidia/version: No such file\n",
     "nvidia_driver_reboot_reasons: unexpected line in the node's driver state: "
     "'cat: /sys/module/nvidia/version: No such file'"),
    (state(nouveau="maybe"), "nvidia_driver_reboot_reasons: nouveau must read yes or no, not 'maybe'"),
])
def test_bad_reads_are_refused(text, message):
    with pytest.raises(RuleError) as err:
        reboot_reasons(text, KERNEL)
    assert str(err.value) == message
