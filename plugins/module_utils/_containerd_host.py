# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd on the host, as the containerd modules (containerd_cri, containerd_nvidia_runtime) ask it:
its version, from `containerd --version`. Private module_utils of gpucluster.core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

from ansible_collections.gpucluster.core.plugins.module_utils._containerd_toml import containerd_version


def installed_version(module, report_found=False):
    """(version or None, major version or None) of the installed containerd. Fails when containerd is not
    installed or its --version fails; with report_found the failure carries ``containerd_found``."""
    containerd = module.get_bin_path("containerd")
    if containerd is None:
        found = dict(containerd_found=False) if report_found else {}
        module.fail_json(msg="containerd is not installed: no containerd command on this host", **found)
    rc, out, err = module.run_command([containerd, "--version"])
    if rc != 0:
        found = dict(containerd_found=True) if report_found else {}
        module.fail_json(msg="%s --version failed (rc %d): %s" % (containerd, rc, (err or out).strip()), **found)
    return containerd_version(out)
