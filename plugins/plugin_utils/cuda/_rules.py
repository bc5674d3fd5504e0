# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda role's input rules and derived values (controller side, pure, no Ansible imports).

- ``cuda_errors``: every error in one host's cuda variables, at once (preflight).
- ``packages``: the packages the role installs, each with its pinned version and its name as
  the package manager takes it (``name=version`` or ``name-version``).
- ``unavailable``: which of those packages (or pinned versions) the repository lacks, from
  ``apt-cache madison`` / ``dnf repoquery`` lines.
- ``verify_problems``: what the role's checks found that differs from what was asked for.

Values are compared as text the way the role's templates write them (an unquoted ``12.4``
from YAML is the float 12.4 and reads as ``12.4``, an unquoted ``12.10`` reads as ``12.1``).
"""

from __future__ import annotations

import base64
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._input_types import describe
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._host_rules import batch_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import repository_errors
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._repository_rules import text as _text
from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, RoleInput, RuleError, duplicates

# Besides the role's own options, each host's values hold what its preflight passes about the
# nvidia_driver role, which writes the same `cuda` source: nvidia_driver_cuda_repository (the source
# that role recorded for this host when it ran on it earlier in this run: {url, key_url, ...}, {}
# when it writes none there, else None), nvidia_driver_in_play (whether that role is in this play,
# it may run after this one) and its nvidia_driver_source, nvidia_driver_repo_url and
# nvidia_driver_repo_key_url as this host sees them (None when not visible here).

_TOOLKIT_RE = re.compile(r"[0-9]+[.][0-9]+")
_CUDNN_PACKAGE_VERSION_RE = re.compile(r"[0-9]+([.][0-9]+){2,3}-[0-9A-Za-z.+~]+")
_CUDNN_VERSION_RE = re.compile(r"[0-9]+([.][0-9]+){2,3}(-[0-9A-Za-z.+~]+)?")
_NCCL_VERSION_RE = re.compile(r"[0-9]+([.][0-9]+){2}-[0-9]+[+]cuda([0-9]+)[.]([0-9]+)")
_ARCHIVE_URL_RE = re.compile(r"(https?|file)://[^\s?#]*/[^/\s?#]+[.](tar[.]xz|tar[.]gz|tgz)")
_CHECKSUM_RE = re.compile(r"sha256:[0-9A-Fa-f]{64}|sha512:[0-9A-Fa-f]{128}")


def _version(value: Any) -> str:
    """An optional version: '' when unset."""
    return "" if value is None else _text(value)


def _toolkit_errors(errors: Errors, values: Mapping[str, Any]) -> Optional[List[str]]:
    """cuda_toolkits and cuda_default_toolkit; the toolkits as text, or None when not a list."""
    raw = values.get("cuda_toolkits")
    if not isinstance(raw, list):
        errors.add("cuda_toolkits", 'must be a list of toolkit versions X.Y such as ["12.4"] (got %s)'
                   % describe(raw))
        return None
    toolkits = [_text(t) for t in raw]
    if not toolkits:
        errors.add("cuda_toolkits", 'must name at least one toolkit, such as "12.4" (got [])')
    for index, (toolkit, original) in enumerate(zip(toolkits, raw)):
        if not _TOOLKIT_RE.fullmatch(toolkit):
            errors.add("cuda_toolkits[%d]" % index,
                       'must be a toolkit version X.Y such as "12.4", quoted (unquoted 12.10 is 12.1) (got %r)'
                       % (original,))
    for toolkit in duplicates(toolkits):
        errors.add("cuda_toolkits", "lists %s more than once" % toolkit)
    default = values.get("cuda_default_toolkit")
    if toolkits and _text(default) not in toolkits:
        errors.add("cuda_default_toolkit", "must be one of cuda_toolkits (%s) (got %r)" % (", ".join(toolkits), default))
    return toolkits


def _pin_errors(errors: Errors, values: Mapping[str, Any], toolkits: Optional[List[str]]) -> None:
    pins = values.get("cuda_toolkit_versions")
    if pins is None:
        pins = {}
    if not isinstance(pins, Mapping):
        errors.add("cuda_toolkit_versions", 'must be a dict of toolkit to package version such as {"12.4": "12.4.1-1"}'
                   " (got %s)" % describe(pins))
        return
    for key, version in pins.items():
        if not isinstance(key, str):
            errors.add("cuda_toolkit_versions", 'keys must be quoted toolkit versions such as "12.4" (got %s unquoted)'
                       % (key,))
        elif toolkits is not None and key not in toolkits:
            errors.add("cuda_toolkit_versions['%s']" % key,
                       "pins a toolkit that is not one of cuda_toolkits (%s)" % ", ".join(toolkits))
        elif not re.fullmatch(re.escape(key) + r"([.][0-9]+)*-[0-9A-Za-z.+~]+", _text(version)):
            errors.add("cuda_toolkit_versions['%s']" % key, "must be a cuda-toolkit-%s package version such as %s.1-1 (got %r)"
                       % (key.replace(".", "-"), key, _text(version)))


def _cudnn_errors(errors: Errors, values: Mapping[str, Any]) -> None:
    source = values.get("cuda_cudnn_source")
    if source not in ("repo", "archive"):
        errors.add("cuda_cudnn_source", "must be repo (packages) or archive (NVIDIA's tar.xz) (got %r)" % (source,))
    if not values.get("cuda_cudnn"):
        return
    version = values.get("cuda_cudnn_version")
    if version != "":
        if source == "repo" and not _CUDNN_PACKAGE_VERSION_RE.fullmatch(_text(version)):
            errors.add("cuda_cudnn_version", "must be a cuDNN package version such as 9.1.0.70-1, or empty (got %r)"
                       % (version,))
        elif source == "archive" and not _CUDNN_VERSION_RE.fullmatch(_text(version)):
            errors.add("cuda_cudnn_version", "must be a cuDNN version such as 9.1.0.70, or empty (got %r)" % (version,))
    # cuDNN is built for one CUDA major: a package version (+cudaX.Y) or an archive
    # (..._cudaX-archive.tar.xz) for another major than the default toolkit's does not load with it.
    default = _text(values.get("cuda_default_toolkit"))
    major = default.split(".", 1)[0] if re.match(r"[0-9]+[.]", default) else None
    built = None
    if source == "repo" and version != "":
        built = ("cuda_cudnn_version", version, re.search(r"[+~]cuda([0-9]+)", _text(version)))
    elif source == "archive" and isinstance(values.get("cuda_cudnn_archive_url"), str):
        archive_name = values["cuda_cudnn_archive_url"].rsplit("/", 1)[-1]
        built = ("cuda_cudnn_archive_url", archive_name, re.search(r"_cuda([0-9]+)(?![0-9])", archive_name))
    if major and built and built[2] and built[2].group(1) != major:
        errors.add(built[0], "%s is built for CUDA %s, but the default toolkit cuda_default_toolkit is %s (CUDA %s):"
                   " pick a cuDNN built for CUDA %s" % (built[1], built[2].group(1), default, major, major))
    if source == "archive":
        archive = values.get("cuda_cudnn_archive_url")
        if not isinstance(archive, str) or not _ARCHIVE_URL_RE.fullmatch(archive):
            errors.add("cuda_cudnn_archive_url",
                       "must be the http(s):// or file:// URL of a .tar.xz, .tar.gz or .tgz archive, without ? or #,"
                       " when cuda_cudnn_source is archive (got %r)" % (archive,))
        checksum = values.get("cuda_cudnn_archive_checksum")
        if not isinstance(checksum, str) or not _CHECKSUM_RE.fullmatch(checksum):
            errors.add("cuda_cudnn_archive_checksum",
                       "must be the archive's checksum as sha256:<64 hex digits> or sha512:<128 hex digits>"
                       " when cuda_cudnn_source is archive (got %r)" % (checksum,))


def _nccl_errors(errors: Errors, values: Mapping[str, Any]) -> None:
    version = values.get("cuda_nccl_version")
    if not values.get("cuda_nccl") or version == "":
        return
    match = _NCCL_VERSION_RE.fullmatch(_text(version))
    if not match:
        errors.add("cuda_nccl_version", "must be an NCCL package version with the CUDA it is built for, such as"
                   " 2.21.5-1+cuda12.4, or empty (got %r)" % (version,))
        return
    default = _text(values.get("cuda_default_toolkit"))
    major = default.split(".", 1)[0]
    if re.match(r"[0-9]+[.]", default) and match.group(2) != major:
        errors.add("cuda_nccl_version", "%s is built for CUDA %s, but the default toolkit cuda_default_toolkit is %s"
                   " (CUDA %s): pick a +cuda%s.x build (apt-cache madison libnccl2)"
                   % (version, match.group(2), default, major, major))


def driver_repository(values: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    """The `cuda` source the nvidia_driver role writes on this host ({url, key_url}), or None."""
    recorded = values.get("nvidia_driver_cuda_repository")
    if isinstance(recorded, Mapping):
        return recorded or None
    if values.get("nvidia_driver_in_play") is True and values.get("nvidia_driver_repo_url") is not None \
            and values.get("nvidia_driver_source") in (None, "cuda_repo"):
        return {"url": values.get("nvidia_driver_repo_url"), "key_url": values.get("nvidia_driver_repo_key_url")}
    return None


def _repository_errors(errors: Errors, values: Mapping[str, Any]) -> None:
    if not values.get("cuda_repo_manage"):
        return
    repository_errors(errors, values, "cuda_repo_url", "cuda_repo_key_url")
    # One owner for each apt source: the nvidia_driver role writes `cuda` too.
    driver = driver_repository(values)
    if driver is None:
        return
    for own, theirs, key in (("cuda_repo_url", "nvidia_driver_repo_url", "url"),
                             ("cuda_repo_key_url", "nvidia_driver_repo_key_url", "key_url")):
        if driver.get(key) is not None and values.get(own) != driver.get(key):
            errors.add(own, "is %r, but %s is %r, and the nvidia_driver role writes the same cuda package source on"
                       " this host: set both alike (%s defaults to %s where that is defined)"
                       % (values.get(own), theirs, driver.get(key), own, theirs))


def cuda_errors(values: Mapping[str, Any], host: str) -> List[str]:
    """Every error in one host's cuda variables, as messages naming host and variable."""
    if not isinstance(values, Mapping):
        raise RuleError("cuda_errors: the input must be a dict of the role's variables")
    errors = Errors(host)
    toolkits = _toolkit_errors(errors, values)
    _pin_errors(errors, values, toolkits)
    _cudnn_errors(errors, values)
    _nccl_errors(errors, values)
    _repository_errors(errors, values)
    return errors.messages


def input_errors(given: RoleInput) -> List[str]:
    """The rules over this batch's hosts, each with its values as it sees them (the defaults are
    templated per host) and what it knows of the nvidia_driver role."""
    return batch_errors(given, cuda_errors)


# --- What the role installs ----------------------------------------------------------------

def _package(name: str, version: str, separator: str) -> Dict[str, str]:
    return {"name": name, "version": version, "spec": (name + separator + version) if version else name}


def packages(values: Mapping[str, Any], cudnn_packages: Iterable[str], nccl_packages: Iterable[str],
             separator: str) -> List[Dict[str, str]]:
    """Every package the role installs: {name, version ('' = newest, unpinned), spec}.

    The toolkits (cuda-toolkit-X-Y, pinned by cuda_toolkit_versions), cuDNN's packages when
    cuDNN comes from the repository, NCCL's when wanted; ``spec`` is what the package manager
    takes (``name=version`` on apt, ``name-version`` on dnf: ``separator``).
    """
    if not isinstance(values, Mapping):
        raise RuleError("cuda_packages: the input must be a dict of the role's variables")
    pins = values.get("cuda_toolkit_versions") or {}
    out = []
    for toolkit in (_text(t) for t in values.get("cuda_toolkits") or []):
        out.append(_package("cuda-toolkit-" + toolkit.replace(".", "-"), _version(pins.get(toolkit, "")), separator))
    if values.get("cuda_cudnn") and values.get("cuda_cudnn_source") == "repo":
        out.extend(_package(_text(p), _version(values.get("cuda_cudnn_version")), separator) for p in cudnn_packages)
    if values.get("cuda_nccl"):
        out.extend(_package(_text(p), _version(values.get("cuda_nccl_version")), separator) for p in nccl_packages)
    return out


def available(lines: Iterable[str]) -> Dict[str, List[str]]:
    """Package name -> the versions the repository has, from "name | version | source" lines."""
    out: Dict[str, List[str]] = {}
    for line in lines:
        fields = [field.strip() for field in _text(line).split("|")]
        if len(fields) >= 3:
            out.setdefault(fields[0], []).append(fields[1])
    return out


def unavailable(wanted: Iterable[Mapping[str, Any]], *reads: Any) -> List[str]:
    """What the repository lacks of ``wanted`` ({name, version}), one message per package.

    ``reads`` are the registered results of the repository reads in the order they ran; the
    last one that ran (has ``stdout_lines``) counts.
    """
    lines: List[str] = []
    for read in reads:
        if isinstance(read, Mapping) and "stdout_lines" in read:
            lines = read["stdout_lines"] or []
    has = available(lines)
    out = []
    for package in wanted:
        name, version = _text(package["name"]), _version(package.get("version"))
        versions = list(dict.fromkeys(has.get(name, [])))
        if not versions:
            out.append("%s is not in the repository at all" % name)
        elif version and version not in versions:
            out.append("%s %s is not in the repository (has: %s)" % (name, version, ", ".join(versions)))
    return out


# --- The checks after installing ------------------------------------------------------------

_RELEASE_RE = re.compile(r"release [0-9]+[.][0-9]+")
_X_Y_Z_RE = re.compile(r"^[0-9]+[.][0-9]+[.][0-9]+")


def _release(result: Mapping[str, Any]) -> Optional[str]:
    match = _RELEASE_RE.search(_text(result.get("stdout", "")))
    return match.group() if match else None


def _said(result: Mapping[str, Any]) -> str:
    """What a command said besides its output (its stderr, or the error of a command that did not run)."""
    return _text(result["stderr"] if "stderr" in result else result.get("msg", "")).strip()


def _nvcc_problem(path: str, release: str, result: Mapping[str, Any]) -> Optional[str]:
    found = _release(result)
    if found == "release " + release:
        return None
    return "%s --version: expected release %s, found %s" % (path, release, found or _said(result) or "no release")


def _header_text(result: Any) -> Optional[str]:
    """A slurp result's text; None when the file was not read."""
    if not isinstance(result, Mapping) or "content" not in result:
        return None
    return base64.b64decode(_text(result["content"])).decode("utf-8", errors="replace")


def _header_version(text: Optional[str], prefix: str, parts: Iterable[str]) -> str:
    found = []
    for part in parts:
        match = re.search("#define %s%s +([0-9]+)" % (prefix, part), text or "")
        found.append(match.group(1) if match else "?")
    return ".".join(found)


def _x_y_z(version: str) -> Optional[str]:
    match = _X_Y_Z_RE.search(version)
    return match.group() if match else None


def verify_problems(found: Mapping[str, Any], expected: Mapping[str, Any]) -> List[str]:
    """Each way what the checks read (``found``) differs from what was asked for (``expected``).

    found: nvcc (the results of each toolkit's ``nvcc --version``, item = the toolkit),
    nvcc_default (/usr/local/cuda's), link (the stat of /usr/local/cuda), cudnn_header and
    nccl_header (slurp results), ldconfig (the result of ``ldconfig -p``), packages (the
    package facts). expected: default_toolkit, default_dir, cuda_major, cudnn (bool),
    cudnn_header, cudnn_major, cudnn_version, nccl (bool), nccl_header, nccl_version,
    nccl_package, pins ([{name, version}]). Keys are read only where they matter.
    """
    if not isinstance(found, Mapping) or not isinstance(expected, Mapping):
        raise RuleError("cuda_verify_problems: the input and its argument must be dicts")
    out = []
    for result in found.get("nvcc") or []:
        toolkit = _text(result.get("item"))
        problem = _nvcc_problem("/usr/local/cuda-%s/bin/nvcc" % toolkit, toolkit, result)
        if problem:
            out.append(problem)
    default = _text(expected["default_toolkit"])
    problem = _nvcc_problem("/usr/local/cuda/bin/nvcc", default, found.get("nvcc_default") or {})
    if problem:
        out.append(problem)
    default_dir = _text(expected["default_dir"])
    link = (found.get("link") or {}).get("lnk_source")
    if (link if link is not None else "") != default_dir:
        out.append("/usr/local/cuda: expected to lead to %s, found %s"
                   % (default_dir, link if link is not None else "no such link"))
    packages_found = found.get("packages") or {}
    libs = []
    if expected.get("cudnn"):
        major = _text(expected["cudnn_major"])
        libs.append("libcudnn.so." + major)
        header = _text(expected["cudnn_header"])
        text = _header_text(found.get("cudnn_header"))
        have = _header_version(text, "CUDNN_", ("MAJOR", "MINOR", "PATCHLEVEL"))
        version = _version(expected.get("cudnn_version"))
        want = _x_y_z(version) if version else ""
        if text is None:
            out.append("%s: expected cuDNN %s, found no such file" % (header, want or major + ".x"))
        elif have != want and not (want == "" and have.split(".", 1)[0] == major):
            out.append("%s: expected cuDNN %s, found %s" % (header, want or major + ".x", have))
    if expected.get("nccl"):
        libs.append("libnccl.so.2")
        header = _text(expected["nccl_header"])
        text = _header_text(found.get("nccl_header"))
        have = _header_version(text, "NCCL_", ("MAJOR", "MINOR", "PATCH"))
        version = _version(expected.get("nccl_version"))
        want = _x_y_z(version) if version else have
        if text is None or have != want:
            out.append("%s: expected NCCL %s, found %s" % (header, want, have if text is not None else "no such file"))
        package = _text(expected["nccl_package"])
        entries = packages_found.get(package, [{}])
        installed = _version((entries[0] if entries else {}).get("version", ""))
        built = re.search(r"[+]cuda([0-9]+)[.]", installed)
        cuda_major = _text(expected["cuda_major"])
        if (built.group(1) if built else "none") != cuda_major:
            out.append("%s: expected a build for CUDA %s (the default toolkit %s), found %s"
                       % (package, cuda_major, default, installed or "not installed"))
    ldconfig = found.get("ldconfig") or {}
    stdout = _text(ldconfig.get("stdout", ""))
    lines = ldconfig.get("stdout_lines")
    lines = stdout.splitlines() if lines is None else lines
    for lib in libs:
        if re.search(r"(?m)^\s+" + re.escape(lib) + " ", stdout):
            continue
        prefix = re.escape(lib.split(".so")[0]) + "[.]so"
        names = dict.fromkeys(_text(line).strip().split(" ")[0] for line in lines if re.search(prefix, _text(line)))
        out.append("ldconfig -p: expected %s, found %s" % (lib, ", ".join(names) or "none of its name"))
    for pin in expected.get("pins") or []:
        name, version = _text(pin["name"]), _text(pin["version"])
        installed_versions = [_text(entry.get("version")) for entry in packages_found.get(name, [])]
        if installed_versions != [version]:
            out.append("%s: expected %s installed, found %s"
                       % (name, version, ", ".join(installed_versions) or "not installed"))
    return out


_CUDNN_TREES = ("include", "lib", "lib64")


def cudnn_entries(files: Iterable[Mapping[str, Any]], stage_dir: str, toolkit_dir: str) -> List[Dict[str, Any]]:
    """The unpacked cuDNN archive's include/, lib/ and lib64/ folders and everything in them (of the
    ``files`` ansible.builtin.find listed under ``stage_dir``), sorted by path, each with ``dest``,
    where it goes in the default toolkit (``toolkit_dir``): include/... into its include/, lib/...
    and lib64/... into its lib64/. Anything else in the archive stays out. The order is Jinja's
    ``sort(attribute='path')`` (case-insensitive), which the role used before."""
    entries = []
    for found in files:
        path = found["path"]
        if not path.startswith(stage_dir + "/"):
            continue
        relative = path[len(stage_dir) + 1:]
        top, _sep, rest = relative.partition("/")
        if top not in _CUDNN_TREES:
            continue
        dest = "%s/%s" % (toolkit_dir, "include" if top == "include" else "lib64")
        entries.append(dict(found, dest=dest + ("/" + rest if rest else "")))
    return sorted(entries, key=lambda entry: entry["path"].lower())
