# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the modules that edit containerd's config.toml share (gpucluster.core.containerd):
the O(path) option, the TOML parser they need on the host, and the restart left to the caller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name


class ModuleDocFragment(object):  # pylint: disable=too-few-public-methods
    DOCUMENTATION = r"""
options:
  path:
    description: containerd's configuration file.
    type: path
    default: /etc/containerd/config.toml
requirements:
  - Python 3.11 or later, or the tomli package
notes:
  - Needs Python 3.11 or later (C(tomllib)) or the C(tomli) package on the host (C(python3-tomli) on Ubuntu 22.04).
  - The caller restarts containerd when the result is changed.
"""
