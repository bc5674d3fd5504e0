# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver role's input rules (controller side, pure, no Ansible imports)."""

from __future__ import annotations

import re
from typing import Any, List, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._host_rules import batch_errors, host_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import repository_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import text as _text
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RoleInput, int_range

# Seconds the reboot may take (a large GPU server with many DIMMs and NVSwitches can take
# several minutes; a day is surely a mistake).
REBOOT_TIMEOUT = (1, 86400)

_BRANCH_RE = re.compile(r"[0-9]{3}")
_DIGITS_RE = re.compile(r"[0-9]+")


def _choice(errors: Errors, values: Mapping[str, Any], name: str, choices: Mapping[str, str]) -> None:
    value = values.get(name)
    if not isinstance(value, str) or value not in choices:
        errors.add(name, "must be %s (got %r)" % (" or ".join("%s (%s)" % item for item in choices.items()), value))


def _host(errors: Errors, values: Mapping[str, Any]) -> None:
    for name in ("nvidia_driver_install", "nvidia_driver_fabricmanager"):
        value = values.get(name)
        if not isinstance(value, bool) and value != "auto":
            errors.add(name, "must be true, false or auto (got %r)" % (value,))
    _choice(errors, values, "nvidia_driver_source",
            {"cuda_repo": "NVIDIA's CUDA repository or a mirror of it", "distribution": "Ubuntu's packages"})
    branch = _text(values.get("nvidia_driver_branch"))
    if not _BRANCH_RE.fullmatch(branch):
        errors.add("nvidia_driver_branch", 'must be a driver branch of 3 digits such as "550" (got %r)'
                   % (values.get("nvidia_driver_branch"),))
    version = values.get("nvidia_driver_version")
    if version != "" and not re.fullmatch(re.escape(branch) + r"[.][0-9]+([.][0-9]+)?-[0-9A-Za-z.+~]+", _text(version)):
        errors.add("nvidia_driver_version", "must be empty or a package version of branch %s such as %s.90.07-1 (got %r)"
                   % (branch, branch, version))
    repository_errors(errors, values, "nvidia_driver_repo_url", "nvidia_driver_repo_key_url")
    _choice(errors, values, "nvidia_driver_kernel_modules",
            {"auto": "chosen from the GPUs", "open": "Turing and newer", "proprietary": "Volta and older"})
    _choice(errors, values, "nvidia_driver_reboot", {"report": "say so", "reboot": "reboot now"})
    timeout = values.get("nvidia_driver_reboot_timeout")
    # A quoted number is what Ansible's own type check accepts for an int, too.
    if isinstance(timeout, str) and _DIGITS_RE.fullmatch(timeout):
        timeout = int(timeout)
    errors.check("nvidia_driver_reboot_timeout", int_range(timeout, *REBOOT_TIMEOUT))


def nvidia_driver_errors(values: Mapping[str, Any], host: str) -> List[str]:
    """Every error in one host's nvidia_driver variables, as messages naming host and variable."""
    return host_errors("nvidia_driver_errors", _host, values, host)


def input_errors(given: RoleInput) -> List[str]:
    """The rules over this batch's hosts, each with its values as it sees them (the defaults are
    templated per host)."""
    return batch_errors(given, nvidia_driver_errors)
