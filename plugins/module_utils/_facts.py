# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the facts modules (ibstat_facts, nvidia_smi_facts) share: finding the program they run
and the main() around their gather(). Private module_utils of gpucluster.core.

Runs on the managed hosts, so the code keeps to Python 3.6 syntax.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import os

from ansible.module_utils.basic import AnsibleModule


def find_program(module, path, name, opt_dirs):
    """The program to run: ``path`` when given (None unless it is an executable file), else ``name``
    looked up on PATH and in ``opt_dirs`` (None when not found)."""
    if path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return module.get_bin_path(name, opt_dirs=opt_dirs)


def facts_main(argument_spec, gather, fact, sysfs_root):
    """Run a read-only facts module: ``gather(module, sysfs_root)`` returns (facts, error message or None);
    fails with the message, else returns the facts as ``ansible_facts[fact]``, never changed."""
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    facts, error = gather(module, sysfs_root)
    if error:
        module.fail_json(msg=error)
    module.exit_json(changed=False, ansible_facts={fact: facts})
