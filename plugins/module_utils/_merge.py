# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Key-by-key merge of nested settings (pure): containerd's CRI settings, kubeadm's documents and
the GPU Operator chart's values all merge a site's settings over the role's this way."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import copy


def deep_merge(base, extra):
    """base with extra merged in key by key (extra wins; tables merge, everything else is replaced)."""
    out = copy.deepcopy(base)
    for name, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            out[name] = deep_merge(out[name], value)
        else:
            out[name] = copy.deepcopy(value)
    return out
