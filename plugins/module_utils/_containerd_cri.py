# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge settings into containerd's CRI plugin (pure, no Ansible): Kubernetes' cgroup driver,
sandbox image and registry folder beside the nvidia runtime the container_toolkit role keeps in
a marked block of config.toml.

config.toml is parsed as TOML (tomllib, or tomli before Python 3.11); the settings are merged
key by key into the parsed document; only when something differs is the file written again,
from the merged document (its comments are not kept then), with the nvidia runtime's marked
block put back unchanged except for its SystemdCgroup, which follows runc's (as the
container_toolkit role's module sets it). Every new text is parsed again and compared with
what was meant before it is returned.

containerd 1.x replaces a plugin's whole section with an imported file's (containerd issue
5837), so an imported drop-in that sets the CRI plugin gets the same settings merged in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import json
import math

from ansible_collections.gpucluster.core.plugins.module_utils._merge import deep_merge
from ansible_collections.gpucluster.core.plugins.module_utils._containerd_toml import (
    CRI, CRI_V1, RUNC, _key, _loads, _parses, _table, _with_block, runtime_toml, split_block)


class ContainerdCriError(Exception):
    """The CRI settings cannot be merged (every reason, in one message)."""


def _scalar(value, where):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[%s]" % ", ".join(_scalar(entry, where) for entry in value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s = %s" % (_key(k), _scalar(v, where)) for k, v in value.items())
    raise ContainerdCriError("%s: a %s cannot be written as containerd TOML" % (where, type(value).__name__))


def _is_table_array(value):
    return isinstance(value, list) and bool(value) and all(isinstance(entry, dict) for entry in value)


def emit(data, path=()):
    """TOML text of a parsed document: plain keys first, then each sub-table under its full header
    (arrays of tables as [[...]]); round trip checked by the caller."""
    lines = []
    tables = []
    for name, value in data.items():
        if isinstance(value, dict):
            tables.append((name, value, False))
        elif _is_table_array(value):
            tables.append((name, value, True))
        else:
            lines.append("%s = %s" % (_key(name), _scalar(value, ".".join(path + (name,)))))
    out = "\n".join(lines) + ("\n" if lines else "")
    for name, value, is_array in tables:
        sub = path + (name,)
        header = ".".join(_key(part) for part in sub)
        entries = value if is_array else [value]
        for entry in entries:
            scalars = {k: v for k, v in entry.items() if not (isinstance(v, dict) or _is_table_array(v))}
            # A table with only sub-tables needs no header of its own (TOML defines it implicitly).
            if is_array or scalars or not entry:
                out += "\n[%s%s%s]\n" % ("[" if is_array else "", header, "]" if is_array else "")
            out += emit(entry, sub)
    return out


def _settings_problems(settings, path, data):
    problems = []
    cri = _table(data, "plugins", CRI) or {}
    registry = cri.get("registry") if isinstance(cri.get("registry"), dict) else {}
    wanted_registry = settings.get("registry") if isinstance(settings.get("registry"), dict) else {}
    if wanted_registry.get("config_path") and (registry.get("mirrors") or wanted_registry.get("mirrors")):
        problems.append("%s sets registry.mirrors in the CRI plugin, which containerd refuses beside registry.config_path:"
                        " move those mirrors to hosts.toml files (kubernetes_registry_mirrors) and remove them" % path)
    return problems


def _check(data, path):
    problems = []
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version not in (1, 2):
        problems.append("%s has version = %s: this module merges into version 2 files (containerd 1.x and 2.x read"
                        " them)" % (path, json.dumps(version, default=str)))
    elif version == 1 and data:
        problems.append("%s has no version = 2 line: it is a version 1 configuration (short plugin names); write a"
                        " version 2 one first (containerd config default > %s)" % (path, path))
    elif isinstance(_table(data, "plugins"), dict) and CRI_V1 in data["plugins"]:
        problems.append("%s sets the CRI plugin by its version 1 name [plugins.cri]: use %s" % (path, json.dumps(CRI)))
    disabled = data.get("disabled_plugins", [])
    if isinstance(disabled, list) and (CRI in disabled or CRI_V1 in disabled):
        problems.append("%s disables the CRI plugin (disabled_plugins, as Docker's containerd.io package ships it):"
                        " Kubernetes cannot use this containerd; remove cri from disabled_plugins" % path)
    return problems


def _cgroup(settings):
    options = _table(settings, "containerd", "runtimes", RUNC, "options") or {}
    value = options.get("SystemdCgroup")
    return value if isinstance(value, bool) else None


def _block(block, path, cgroup):
    """The nvidia runtime's marked block with SystemdCgroup as runc's (None: the block as it is)."""
    if block is None or cgroup is None:
        return block
    text = "\n".join(block) + "\n"
    runtimes = _table(_loads(text) if _parses(text) else {}, "plugins", CRI, "containerd", "runtimes") or {}
    if len(runtimes) != 1:
        raise ContainerdCriError("the marked nvidia runtime block in %s does not hold one runtime: let the"
                                 " container_toolkit role write it again (or remove it)" % path)
    name, runtime = next(iter(runtimes.items()))
    binary = (runtime.get("options") or {}).get("BinaryName")
    if not isinstance(binary, str):
        raise ContainerdCriError("the marked nvidia runtime block in %s has no options.BinaryName" % path)
    return runtime_toml(name, binary, cgroup).splitlines()


def _merged_text(wanted, path, what):
    new = emit(wanted)
    if not _parses(new) or _loads(new) != wanted:
        raise ContainerdCriError("%s to %s cannot be written back as the same TOML: change it by hand" % (what, path))
    return new


def plan(config_path, config_text, major, settings, dropins=None):
    """What config.toml (and each imported drop-in that sets the CRI plugin) must hold.

    config_text: the file's text, None when it does not exist. major: containerd's major version
    (None: unknown, treated as 1.x). settings: the CRI plugin's settings, as nested tables.
    dropins: {path: text} of the files config.toml imports.
    Returns a dict: config (new text), dropins ({path: new text} of those that change), changes
    (what differs, in words; empty when nothing does). Raises ContainerdCriError with every problem."""
    if not isinstance(settings, dict):
        raise ContainerdCriError("settings must be a dict of the CRI plugin's settings")
    cgroup = _cgroup(settings)
    stripped, block, offset = split_block(config_text or "")
    try:
        data = _loads(stripped) if config_text is not None else {}
    except ValueError as err:
        raise ContainerdCriError("%s is not valid TOML: %s" % (config_path, err))
    problems = _check(data, config_path) + _settings_problems(settings, config_path, data)
    new_block = _block(block, config_path, cgroup) if not problems else block
    if problems:
        raise ContainerdCriError("; ".join(problems))
    wanted = deep_merge(data, {"plugins": {CRI: settings}})
    # version = 2 first, as containerd writes it.
    wanted = dict([("version", wanted.get("version", 2))] + [(k, v) for k, v in wanted.items() if k != "version"])
    changes = []
    text = config_text
    if wanted != data:
        body = _merged_text(wanted, config_path, "merging the CRI settings")
        header = ("# containerd configuration; gpucluster.core's kubernetes role merges its CRI settings into it\n"
                  "# (the file is written again from its parsed content when one of them differs).\n")
        # The nvidia block goes back at the end (offset None): its tables only add runtimes.
        text = header + body if new_block is None else _with_block(header + body, None, "\n".join(new_block) + "\n")
        changes.append(("created %s" if config_text is None else "merged the CRI settings into %s") % config_path)
    elif new_block != block:
        text = _with_block(stripped, offset, "\n".join(new_block) + "\n")
        changes.append("set the nvidia runtime's SystemdCgroup to runc's (%s) in %s"
                       % ("true" if cgroup else "false", config_path))
    if not _parses(text) or (settings and _table(_loads(text), "plugins", CRI) is None):
        raise ContainerdCriError("the merged %s is not valid TOML: change it by hand" % config_path)
    new_dropins = {}
    if major is None or major < 2:
        for path, dropin_text in sorted((dropins or {}).items()):
            try:
                dropin = _loads(dropin_text)
            except ValueError as err:
                raise ContainerdCriError("%s (imported by %s) is not valid TOML: %s" % (path, config_path, err))
            if _table(dropin, "plugins", CRI) is None:
                continue
            dropin_wanted = deep_merge(dropin, {"plugins": {CRI: settings}})
            if dropin_wanted != dropin:
                new_dropins[path] = ("# Imported by %s; gpucluster.core's kubernetes role merged its CRI settings in\n"
                                     "# (containerd 1.x takes the CRI plugin's whole section from this file).\n"
                                     % config_path) + _merged_text(dropin_wanted, path,
                                                                   "merging the CRI settings")
                changes.append("merged the CRI settings into %s (containerd 1.x takes the CRI plugin's whole"
                               " section from it)" % path)
    return dict(config=text, dropins=new_dropins, changes=changes)
