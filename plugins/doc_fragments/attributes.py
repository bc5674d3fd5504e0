# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The attributes the collection's modules share, in three sets.

WRITES (gpucluster.core.attributes.writes): modules that write configuration files themselves.
READS (gpucluster.core.attributes.reads): modules that only read the host; used after
ansible.builtin.action_common_attributes, which describes check_mode, diff_mode and platform.
FACTS (gpucluster.core.attributes.facts): modules that return ansible_facts; used after
ansible.builtin.action_common_attributes.facts, which describes the attribute.
A module's own attributes entry wins key by key (for example a check_mode with other details).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name


class ModuleDocFragment(object):  # pylint: disable=too-few-public-methods
    WRITES = r"""
attributes:
  check_mode:
    support: full
    description: Reports what would change, writing nothing.
  diff_mode:
    support: full
    description: Shows each file before and after.
"""

    READS = r"""
attributes:
  check_mode:
    support: full
    details: Only reads.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

    FACTS = r"""
attributes:
  facts:
    support: full
"""
