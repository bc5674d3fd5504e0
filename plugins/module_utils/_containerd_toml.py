# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Put a runtime (nvidia) into containerd's CRI plugin: decide from containerd's parsed config.toml
whether it goes into a drop-in that config.toml imports or into a marked block of config.toml,
and compute both files' new text (pure, no Ansible).

The files stay text written by hand-sized edits: config.toml only ever gets a `version = 2` line,
an entry in its top-level `imports`, or the marked block; WHERE each goes is decided from the
parsed structure (tomllib, or tomli before Python 3.11), and every result is parsed again before
it is returned.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import json
import os
import re
import sys

try:
    import tomllib as _toml  # Python 3.11+
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        import tomli as _toml  # the same API, before Python 3.11
    except ImportError:
        _toml = None

# containerd's CRI plugin in version 2 files (containerd 1.x and 2.x), and its short version 1 name.
CRI = "io.containerd.grpc.v1.cri"
CRI_V1 = "cri"
# containerd 2.x's own version 3 name of the plugin that holds the runtimes.
CRI_RUNTIME_V3 = "io.containerd.cri.v1.runtime"
# The runtime whose cgroup driver the new runtime copies (kubelet's cgroupDriver must match it).
RUNC = "runc"
RUNTIME_TYPE = "io.containerd.runc.v2"
MARKER = "# {mark} gpucluster.core container_toolkit: nvidia runtime"
BEGIN = MARKER.format(mark="BEGIN")
END = MARKER.format(mark="END")
MODE_DROPIN = "drop-in"
MODE_INLINE = "config.toml"

_VERSION_RE = re.compile(r"\sv?(([0-9]+)[.][0-9]+\S*)")
_BARE_KEY_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_HEADER_RE = re.compile(r"^[ \t]*\[", re.M)
_IMPORTS_RE = re.compile(r"^[ \t]*(?:imports|\"imports\"|'imports')[ \t]*=[ \t]*", re.M)


class ContainerdTomlError(Exception):
    """containerd's configuration cannot take the runtime (every reason, in one message)."""


def require_toml():
    """Raise ContainerdTomlError when neither tomllib nor tomli can be imported."""
    if _toml is None:
        raise ContainerdTomlError(
            "reading containerd's TOML needs Python 3.11 or later (tomllib) or the tomli package, and %s is"
            " Python %d.%d without tomli: install python3-tomli (Ubuntu 22.04, EL 9) or run the module with"
            " a Python 3.11 or later" % (sys.executable, sys.version_info[0], sys.version_info[1]))


def containerd_version(output):
    """(version, major) from `containerd --version`; (None, None) when it names no version.

    containerd containerd.io 1.7.27 05044ec0... -> ('1.7.27', 1);
    containerd github.com/containerd/containerd/v2 v2.0.0 207ad71... -> ('2.0.0', 2)."""
    match = _VERSION_RE.search(" " + (output or ""))
    if not match:
        return None, None
    return match.group(1), int(match.group(2))


def _loads(text):
    require_toml()
    return _toml.loads(text)


def parse(text, path):
    """The parsed TOML document; ContainerdTomlError naming the file when it is not valid TOML."""
    try:
        return _loads(text)
    except ValueError as err:  # tomllib.TOMLDecodeError is a ValueError
        raise ContainerdTomlError("%s is not valid TOML: %s" % (path, err))


def _parses(text):
    try:
        _loads(text)
    except ValueError:
        return False
    return True


def _table(data, *keys):
    """data[k0][k1]... when every step is a table, else None."""
    for key in keys:
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            return None
        data = data[key]
    return data


def _key(name):
    """A TOML key: bare when it can be, else quoted."""
    return name if _BARE_KEY_RE.match(name) else json.dumps(name)


def split_block(text):
    """(text without the role's marked block, the block's lines between the markers or None,
    the offset the block started at).

    Markers are whole lines (trailing blanks ignored), as Ansible's blockinfile matches them;
    an unfinished block (BEGIN without END) is not a block."""
    lines = text.splitlines(True)
    start = None
    for index, line in enumerate(lines):
        stripped = line.rstrip()
        if start is None and stripped == BEGIN:
            start = index
        elif start is not None and stripped == END:
            inner = [entry.rstrip("\r\n") for entry in lines[start + 1:index]]
            offset = sum(len(entry) for entry in lines[:start])
            return "".join(lines[:start] + lines[index + 1:]), inner, offset
    return text, None, None


def runtime_toml(runtime_name, binary, systemd_cgroup):
    """The runtime's tables, as the role has always written them (a version 2 name)."""
    table = "plugins.%s.containerd.runtimes.%s" % (json.dumps(CRI), _key(runtime_name))
    return (
        "[%s]\n"
        "  runtime_type = %s\n"
        "\n"
        "  [%s.options]\n"
        "    BinaryName = %s\n"
        "    SystemdCgroup = %s\n"
    ) % (table, json.dumps(RUNTIME_TYPE), table, json.dumps(binary), "true" if systemd_cgroup else "false")


def dropin_text(config_path, runtime):
    """The drop-in file: a header and the runtime, a version 2 file (containerd 2.x migrates it)."""
    return (
        "# The nvidia runtime for containerd's CRI plugin, imported by %s\n"
        "# (gpucluster.core.containerd_nvidia_runtime writes this file: changes here are replaced).\n"
        "# Kubernetes selects it with a RuntimeClass whose handler is its name.\n"
        "# A version 2 file: containerd 2.x migrates it to its own version as it reads it.\n"
        "version = 2\n"
        "\n%s"
    ) % (config_path, runtime)


def new_config_text(dropin_glob):
    """config.toml when there was none: a version 2 file that imports the drop-ins."""
    return (
        "# containerd configuration (gpucluster.core.containerd_nvidia_runtime wrote it, none was there).\n"
        "version = 2\n"
        "imports = %s\n"
    ) % json.dumps([dropin_glob])


def systemd_cgroup(data):
    """True when runc's options in config.toml's CRI plugin (version 2 or 3 names) have SystemdCgroup."""
    for plugin in (CRI, CRI_RUNTIME_V3):
        options = _table(data, "plugins", plugin, "containerd", "runtimes", RUNC, "options")
        if options is not None:
            return options.get("SystemdCgroup") is True
    return False


def has_cri_settings(data):
    """config.toml sets something in the CRI plugin's section (containerd 1.x drops it when a drop-in
    sets the same plugin: containerd issue 5837)."""
    plugins = _table(data, "plugins") or {}
    return any(isinstance(plugins.get(name), dict) and plugins[name] for name in (CRI, CRI_V1))


def _statement_starts(text, pattern):
    """The matches of pattern (at the start of a line) that start a statement: the text before them is
    whole TOML, so they are not inside a multi-line array or string."""
    for match in pattern.finditer(text):
        if _parses(text[:match.start()]):
            yield match


def first_table_offset(text):
    """Where the first table header ([table] or [[array]]) starts; len(text) when there is none."""
    for match in _statement_starts(text, _HEADER_RE):
        return match.start()
    return len(text)


def _imports_span(text):
    """(start, end) of the top-level imports array's text, `[` to `]` included."""
    limit = first_table_offset(text)
    for match in _statement_starts(text, _IMPORTS_RE):
        if match.start() >= limit:
            break
        start = match.end()
        for end in range(start + 1, len(text) + 1):
            if text[end - 1] == "]" and _parses("x = " + text[start:end]):
                return start, end
    return None


def _problems(data, path, major, inline, runtime_name):
    problems = []
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        problems.append("%s has version = %s: containerd knows the numbers 1, 2 and 3"
                        % (path, json.dumps(version, default=str)))
    elif version < 2 and data:
        problems.append(
            "%s has no version = 2 (or 3) line: it is a version 1 configuration, which is not added to (its short"
            " plugin names break beside a version 2 drop-in). Write a version 2 or 3 one first (containerd config"
            " default > %s, as a Kubernetes install does)" % (path, path))
    disabled = data.get("disabled_plugins", [])
    if isinstance(disabled, list) and (CRI in disabled or CRI_V1 in disabled):
        problems.append(
            "%s disables the CRI plugin (disabled_plugins, as Docker's containerd.io package ships it): Kubernetes"
            " cannot use this containerd, so an nvidia runtime for it would do nothing" % path)
    imports = data.get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(entry, str) for entry in imports):
        problems.append("%s has imports = %s: containerd takes a list of paths there"
                        % (path, json.dumps(imports, default=str)))
    if inline and _table(data, "plugins", CRI, "containerd", "runtimes", runtime_name) is not None:
        problems.append(
            "%s already defines the %s runtime table (nvidia-ctk runtime configure?): containerd %s.x would refuse"
            " a second one; remove it, this module writes it" % (path, runtime_name, 1 if major is None else major))
    return problems


def _with_block(text, offset, wanted):
    """text (the block taken out) with the marked block put back where it was, or appended."""
    chunk = "\n".join([BEGIN] + wanted.splitlines() + [END]) + "\n"
    if offset is None:
        if text and not text.endswith("\n"):
            text += "\n"
        return text + chunk
    return text[:offset] + chunk + text[offset:]


def _checked(text, path, what):
    """The new text parsed again: a result that would not be valid TOML is refused, not written."""
    try:
        return _loads(text)
    except ValueError as err:
        raise ContainerdTomlError("%s to %s would make it invalid TOML (%s): fix its layout by hand first"
                                  % (what, path, err))


def _inline(config_path, config_text, stripped, block, offset, dropin_path, dropin_now, major, runtime_name, runtime):
    """containerd 1.x with CRI settings in config.toml: the runtime in config.toml's marked block, no drop-in."""
    changes = []
    if block is None:
        changes.append("added the %s runtime to %s (a marked block)" % (runtime_name, config_path))
    elif block != runtime.splitlines():
        changes.append("updated the %s runtime block in %s" % (runtime_name, config_path))
    text = _with_block(stripped, offset, runtime) if changes else config_text
    parsed = _checked(text, config_path, "adding the %s runtime" % runtime_name)
    if _table(parsed, "plugins", CRI, "containerd", "runtimes", runtime_name) is None:
        raise ContainerdTomlError("the %s runtime block in %s is not where containerd reads it (inside a multi-line"
                                  " value?): fix its layout by hand first" % (runtime_name, config_path))
    if dropin_now is not None:
        changes.append("removed %s (containerd %s.x with CRI settings in %s)"
                       % (dropin_path, 1 if major is None else major, config_path))
    return text, None, changes


def _dropin(config_path, config_text, data, stripped, block, dropin_path, dropin_now, runtime_name, runtime):
    """The runtime in a drop-in, config.toml made to import the drop-ins' folder."""
    dropin_glob = os.path.join(os.path.dirname(dropin_path), "*.toml")
    changes = []
    text = stripped
    if block is not None:
        changes.append("removed the %s runtime block from %s (now in %s)" % (runtime_name, config_path, dropin_path))
    if config_text is None:
        text = new_config_text(dropin_glob)
        changes.append("created %s (version 2, imports %s)" % (config_path, dropin_glob))
    else:
        if data.get("version", 1) < 2:
            text = "version = 2\n" + text
            changes.append("added version = 2 to %s" % config_path)
        imports = data.get("imports")
        if imports is None:
            # A top-level key goes before the first table.
            at = first_table_offset(text)
            line = "imports = %s\n" % json.dumps([dropin_glob])
            if at == len(text) and text and not text.endswith("\n"):
                line = "\n" + line
            text = text[:at] + line + text[at:]
            changes.append("added imports = %s to %s" % (json.dumps([dropin_glob]), config_path))
        elif dropin_glob not in imports:
            span = _imports_span(text)
            if span is None:
                raise ContainerdTomlError("the imports of %s are not written as imports = [...] before the first"
                                          " table: add %s to them by hand" % (config_path, dropin_glob))
            text = text[:span[0]] + json.dumps(imports + [dropin_glob]) + text[span[1]:]
            changes.append("added %s to the imports of %s" % (dropin_glob, config_path))
    if not changes:
        text = config_text
    parsed = _checked(text, config_path, "adding imports = %s" % json.dumps([dropin_glob]))
    if dropin_glob not in parsed.get("imports", []):
        raise ContainerdTomlError("the imports line added to %s is not where containerd reads it: add %s to its"
                                  " imports by hand" % (config_path, dropin_glob))
    dropin = dropin_text(config_path, runtime)
    if dropin_now is None:
        changes.append("wrote the %s runtime to %s" % (runtime_name, dropin_path))
    elif not _parses(dropin_now) or _loads(dropin_now) != _loads(dropin):
        changes.append("updated the %s runtime in %s" % (runtime_name, dropin_path))
    else:
        dropin = dropin_now
    return text, dropin, changes


def plan(config_path, config_text, dropin_path, dropin_now, major, runtime_name, binary):
    """What config.toml and the drop-in must hold.

    config_text, dropin_now: the files' text, None when a file does not exist.
    major: containerd's major version, None when unknown (treated as 1.x).
    Returns a dict: mode (drop-in or config.toml), systemd_cgroup, config (config.toml's new text),
    dropin (the drop-in's new text, None when it must not exist) and changes (what differs, in words,
    empty when nothing does). Raises ContainerdTomlError with every problem at once."""
    stripped, block, offset = split_block(config_text or "")
    try:
        data = _loads(stripped)
    except ValueError as err:
        if block is not None and _parses(config_text):
            raise ContainerdTomlError("%s is not valid TOML without the role's marked block: %s" % (config_path, err))
        raise ContainerdTomlError("%s is not valid TOML: %s" % (config_path, err))
    inline = (major is None or major < 2) and has_cri_settings(data)
    problems = _problems(data, config_path, major, inline, runtime_name)
    if problems:
        raise ContainerdTomlError("; ".join(problems))
    cgroup = systemd_cgroup(data)
    runtime = runtime_toml(runtime_name, binary, cgroup)
    if inline:
        text, dropin, changes = _inline(config_path, config_text, stripped, block, offset, dropin_path, dropin_now,
                                        major, runtime_name, runtime)
    else:
        text, dropin, changes = _dropin(config_path, config_text, data, stripped, block, dropin_path, dropin_now,
                                        runtime_name, runtime)
    return dict(mode=MODE_INLINE if inline else MODE_DROPIN, systemd_cgroup=cgroup, config=text, dropin=dropin,
                changes=changes)
