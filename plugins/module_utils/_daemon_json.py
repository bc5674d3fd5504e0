# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge the nvidia runtime and a site's settings into Docker's daemon.json (pure, no Ansible)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import json

# The daemon.json keys dockerd applies on SIGHUP (moby daemon/reload.go); a change to any
# other key, or a key removed, needs a restart.
RELOADABLE = frozenset((
    "runtimes",
    "default-runtime",
    "debug",
    "labels",
    "live-restore",
    "max-concurrent-downloads",
    "max-concurrent-uploads",
    "max-download-attempts",
    "shutdown-timeout",
    "insecure-registries",
    "registry-mirrors",
    "default-shm-size",
))


class DaemonJsonError(Exception):
    """daemon.json cannot be merged into."""


def parse(text, path):
    """Return daemon.json's object: {} for an empty file; DaemonJsonError otherwise."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as err:
        raise DaemonJsonError("%s is not valid JSON: %s" % (path, err))
    if not isinstance(data, dict):
        raise DaemonJsonError("%s holds a JSON %s, not an object" % (path, type(data).__name__))
    return data


def _merge(base, update):
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def merge(current, settings, runtime_name, runtime, default_runtime):
    """The wanted daemon.json: current with the settings (null removes a top-level key), the
    runtime, and default-runtime set when asked for (dropped when it names the runtime and is
    not asked for)."""
    wanted = dict(current)
    if not default_runtime and wanted.get("default-runtime") == runtime_name:
        del wanted["default-runtime"]
    wanted = _merge(wanted, settings)
    wanted = dict((key, value) for key, value in wanted.items() if value is not None)
    wanted = _merge(wanted, {"runtimes": {runtime_name: runtime}})
    if default_runtime:
        wanted["default-runtime"] = runtime_name
    return wanted


def changed_keys(current, wanted):
    """The top-level keys whose value differs (added, changed or removed), sorted."""
    return sorted(key for key in set(current) | set(wanted) if current.get(key) != wanted.get(key))


def reload_suffices(current, wanted):
    """True when dockerd applies every change on SIGHUP: only reloadable keys, none removed."""
    return all(key in RELOADABLE and key in wanted for key in changed_keys(current, wanted))


def render(wanted):
    """The file's text: sorted keys, indent 2, a final newline (as to_nice_json writes it)."""
    return json.dumps(wanted, indent=2, sort_keys=True, separators=(",", ": "), ensure_ascii=False) + "\n"
