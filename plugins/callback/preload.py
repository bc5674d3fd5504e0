# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback gpucluster.core.preload: imports the collection's filter and action plugins once,
in ansible-playbook's own process, at the start of the run.

Ansible forks a worker for every task on every host, and a worker that meets a filter of a
collection loads every filter file of that collection to find it; whatever a worker imports is
gone when it exits. Imported once in the parent, the plugins are inherited by every worker."""

from __future__ import annotations

DOCUMENTATION = r"""
---
name: preload
type: aggregate
short_description: Load the collection's filter and action plugins once per run
version_added: 0.1.0
description:
  - Imports the filter and action plugins of gpucluster.core in the ansible-playbook process when the
    playbook starts. Every task's worker is forked from that process and inherits them; without it each worker
    that uses one of the collection's filters loads all of the collection's filter files again.
  - Changes no output and no result. A plugin that fails to import is left for the task that uses it to report.
requirements:
  - enable in C(callbacks_enabled) (the collection's C(ansible.cfg) does)
author:
  - gpucluster.core developers (@gpucluster)
"""

import importlib
import pkgutil
from typing import List

from ansible.plugins.callback import CallbackBase

PACKAGES = ("filter", "action")
_ROOT = "ansible_collections.gpucluster.core.plugins."


def preload(packages=PACKAGES) -> List[str]:
    """Import every plugin module of the packages; the names imported."""
    done: List[str] = []
    for package in packages:
        try:
            parent = importlib.import_module(_ROOT + package)
        except ImportError:
            continue
        for info in pkgutil.iter_modules(parent.__path__, parent.__name__ + "."):
            if info.ispkg:
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # pylint: disable=broad-exception-caught  # reported by the task that uses it
                continue
            done.append(info.name)
    return done


class CallbackModule(CallbackBase):
    """Preloads the plugins at the start of the playbook."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpucluster.core.preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook):
        preload()
