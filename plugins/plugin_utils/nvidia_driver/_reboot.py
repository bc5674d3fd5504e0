# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a GPU node must reboot (controller side, pure), from the one read the nvidia_driver role
makes of it: ``key=value`` lines for the loaded driver version (``none`` when no driver is loaded),
whether nouveau is loaded (``yes``/``no``), the newest kernel in /lib/modules and the installed
driver package version (empty where the node has no dpkg or the package is missing)."""

from __future__ import annotations

from ansible.module_utils.compat.version import LooseVersion
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

_KEYS = ("loaded", "nouveau", "newest_kernel", "package")


def parse_reboot_state(text: str) -> dict[str, str]:
    """The read's values by key; every key exactly once, nothing else."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or key not in _KEYS or key in values:
            raise RuleError("nvidia_driver_reboot_reasons: unexpected line in the node's driver state: %r" % line)
        values[key] = value.strip()
    missing = [key for key in _KEYS if key not in values]
    if missing:
        raise RuleError("nvidia_driver_reboot_reasons: the node's driver state lacks %s" % ", ".join(missing))
    if values["nouveau"] not in ("yes", "no"):
        raise RuleError("nvidia_driver_reboot_reasons: nouveau must read yes or no, not %r" % values["nouveau"])
    return values


def _upstream_version(package_version: str) -> str:
    """The driver's own version in a Debian package version: without the epoch (``1:``) and the
    Debian revision (``-2~deb12u1``, ``-0ubuntu1``)."""
    return package_version.rpartition(":")[2].split("-")[0]


def reboot_reasons(text: str, running_kernel: str) -> list[str]:
    """Every reason to reboot: a loaded driver other than the installed package's version (it cannot
    be replaced while loaded), nouveau loaded, or a newer kernel installed than the one running
    (DKMS builds the driver for it at boot). Empty when none."""
    values = parse_reboot_state(text)
    reasons = []
    installed = _upstream_version(values["package"])
    if values["loaded"] not in ("", "none") and installed and values["loaded"] != installed:
        reasons.append("driver %s is loaded, %s is installed" % (values["loaded"], installed))
    if values["nouveau"] == "yes":
        reasons.append("nouveau is loaded")
    newest = values["newest_kernel"]
    if newest and LooseVersion(newest) > LooseVersion(running_kernel):
        reasons.append("kernel %s is installed, %s runs" % (newest, running_kernel))
    return reasons
