# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the local, GPG-signed apt mirror of vendor TEST DOUBLES described by packages.yml.

    .venv/bin/python tests/harness/mirror/build.py [--spec packages.yml] [--artifacts FILE] --out DIR [--force]

DIR gets the URL layout of the vendors' servers under one root (serve it with
``python3 -m http.server --directory DIR``). Every package is a tiny stand-in with the
vendor's name, version and dependency shape; its Description says it is a TEST DOUBLE.
Nothing is rebuilt while DIR holds a stamp of the same spec, artifact list and builder. The
last line printed on stdout is DIR.

Without --artifacts the whole catalogue (packages.yml) is built. With --artifacts FILE (the
JSON of playbooks/artifacts.yml) the mirror holds exactly what the list names: each apt
repository at its URL's path (its key at the key URL's path), with the listed packages at the
listed versions ("newest": the newest the catalogue has that the list's pins allow) and their
Depends closure from the same catalogue repository. A package, version, repository layout or
file the catalogue cannot provide stops the build naming it (exit 2).

Needs python3 with PyYAML, dpkg-deb, apt-ftparchive (apt-utils) and gpg. The Packages and
Release indexes are written by apt-ftparchive.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from urllib.parse import urlsplit

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_SPEC = HERE / "packages.yml"
STAMP = ".gpc-mirror-stamp"
GNUPG_DIR = ".gnupg"
MANIFEST = "mirror.json"
FORMAT = "gpc-mirror-1"

TEST_DOUBLE_NOTE = "TEST DOUBLE built by gpucluster.core tests/harness/mirror; not the vendor's package."
MAINTAINER = "gpucluster.core test doubles <test-doubles@gpucluster.invalid>"
KEY_EMAIL = "test-doubles@gpucluster.invalid"
DEFAULT_SOURCE_DATE_EPOCH = 1717200000  # 2024-06-01, the era of the versions in packages.yml

TOP_KEYS = {"repos": True, "source_date_epoch": False}
REPO_KEYS = {
    "name": True, "layout": True, "path": True, "key_file": True, "packages": True,
    "origin": False, "label": False, "description": False, "architectures": False,
    "suite": False, "codename": False, "component": False, "pool": False,
}
PACKAGE_KEYS = {
    "name": True, "description": True, "version": False, "versions": False, "architecture": False,
    "section": False, "priority": False, "multi_arch": False, "homepage": False, "source": False,
    "depends": False, "pre_depends": False, "recommends": False, "suggests": False, "provides": False,
    "conflicts": False, "breaks": False, "replaces": False,
    "files": False, "scripts": False, "triggers": False,
}
RELATION_FIELDS = {
    "pre_depends": "Pre-Depends", "depends": "Depends", "recommends": "Recommends", "suggests": "Suggests",
    "provides": "Provides", "conflicts": "Conflicts", "breaks": "Breaks", "replaces": "Replaces",
}
FILE_KEYS = {"content", "mode", "link", "elf_soname", "from"}
SCRIPTS = ("preinst", "postinst", "prerm", "postrm")
LAYOUTS = ("flat", "dists")
ARCHITECTURES = ("amd64", "all")
MULTI_ARCH = ("same", "foreign", "allowed", "no")

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
VERSION_RE = re.compile(r"^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*(?<!-)$")
RELATION_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(?::[a-z0-9]+)?(?:\s*\((?:<<|<=|=|>=|>>)\s*[A-Za-z0-9.+~:-]+\))?$")
TOKEN_RE = re.compile(r"@([A-Z][A-Z_]*)@")
MODE_RE = re.compile(r"^0?[0-7]{3}$")
# ":" too: pkgs.k8s.io names its repositories core:/stable:/v1.NN/deb.
REL_PATH_RE = re.compile(r"^[A-Za-z0-9._+:-]+(?:/[A-Za-z0-9._+:-]+)*$")


class SpecError(Exception):
    """The spec is wrong; the message names the place and the problem."""


class BuildError(Exception):
    """A tool failed while building the mirror."""


class ArtifactsError(Exception):
    """The artifact list asks for what the catalogue cannot provide; one problem per line."""


@dataclass
class Package:
    name: str
    version: str
    architecture: str
    fields: dict[str, str]
    files: dict[str, dict]
    scripts: dict[str, str]
    triggers: list[str]

    @property
    def deb_name(self) -> str:
        return f"{self.name}_{self.version.split(':', 1)[-1]}_{self.architecture}.deb"


@dataclass
class Repo:
    name: str
    layout: str
    path: str
    key_file: str
    origin: str
    label: str
    description: str
    architectures: list[str]
    suite: str = ""
    codename: str = ""
    component: str = ""
    pool: str = ""
    packages: list[Package] = field(default_factory=list)

    @property
    def key_uid(self) -> str:
        return f"gpucluster.core TEST DOUBLE apt mirror ({self.name}) <{KEY_EMAIL}>"

    @property
    def index_dir(self) -> str:
        """Where Packages lives, relative to the repo path."""
        if self.layout == "flat":
            return "."
        return f"dists/{self.suite}/{self.component}/binary-amd64"

    @property
    def release_dir(self) -> str:
        return "." if self.layout == "flat" else f"dists/{self.suite}"


# ----------------------------------------------------------------------------- spec


def _check_keys(where: str, data: object, schema: dict[str, bool]) -> dict:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in schema:
            allowed = ", ".join(sorted(schema))
            raise SpecError(f"{where}: unknown key '{key}' (allowed: {allowed})")
    for key, required in schema.items():
        if required and key not in data:
            raise SpecError(f"{where}: missing required key '{key}'")
    return data


def _string(where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: must be a non-empty string")
    return value


def _rel_path(where: str, value: object) -> str:
    text = _string(where, value).strip("/")
    if not REL_PATH_RE.match(text) or ".." in text.split("/"):
        raise SpecError(f"{where}: '{value}' is not a relative URL path (letters, digits, . _ + - : and /)")
    return text


def version_tokens(name: str, version: str) -> dict[str, str]:
    """@TOKEN@ values for one package version."""
    upstream = version.split(":", 1)[-1]
    if "-" in upstream:
        upstream = upstream.rsplit("-", 1)[0]
    tokens = {"NAME": name, "VERSION": version, "UPSTREAM": upstream, "TEST_DOUBLE": TEST_DOUBLE_NOTE}
    parts = upstream.split(".")
    for token, index in (("MAJOR", 0), ("MINOR", 1), ("PATCH", 2)):
        if len(parts) > index and parts[index].isdigit():
            tokens[token] = parts[index]
    return tokens


def _expand(where: str, text: str, tokens: dict[str, str]) -> str:
    def replace(match: re.Match) -> str:
        token = match.group(1)
        if token not in tokens:
            known = ", ".join(f"@{t}@" for t in sorted(tokens))
            raise SpecError(f"{where}: unknown token @{token}@ for version {tokens['VERSION']} (known: {known})")
        return tokens[token]

    return TOKEN_RE.sub(replace, text)


def _relations(where: str, value: object, tokens: dict[str, str]) -> str:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise SpecError(f"{where}: must be a string or a non-empty list of strings")
    out = []
    for item in items:
        if "," in item:
            raise SpecError(f"{where}: '{item}' holds a comma; give one relation per list item")
        alternatives = [" ".join(a.split()) for a in _expand(where, item, tokens).split("|")]
        for alternative in alternatives:
            if not RELATION_RE.match(alternative):
                raise SpecError(f"{where}: '{alternative}' is not a valid package relation")
        out.append(" | ".join(alternatives))
    return ", ".join(out)


def _files(where: str, value: object, tokens: dict[str, str]) -> dict[str, dict]:
    if not isinstance(value, dict):
        raise SpecError(f"{where}: must be a mapping of absolute path to content")
    files: dict[str, dict] = {}
    for raw_path, spec in value.items():
        here = f"{where} '{raw_path}'"
        path = _expand(here, str(raw_path), tokens)
        if not path.startswith("/") or ".." in path.split("/") or path.startswith("/DEBIAN") or path.endswith("/"):
            raise SpecError(f"{here}: must be an absolute file path")
        if isinstance(spec, str):
            spec = {"content": spec}
        if not isinstance(spec, dict):
            raise SpecError(f"{here}: must be a string (the content) or a mapping")
        for key in spec:
            if key not in FILE_KEYS:
                raise SpecError(f"{here}: unknown key '{key}' (allowed: {', '.join(sorted(FILE_KEYS))})")
        kinds = [k for k in ("content", "link", "elf_soname", "from") if k in spec]
        if len(kinds) != 1:
            raise SpecError(f"{here}: needs exactly one of content, link, elf_soname, from")
        entry: dict = {"kind": kinds[0]}
        if "mode" in spec:
            if kinds[0] == "link":
                raise SpecError(f"{here}: a link has no mode")
            mode = spec["mode"]
            if not isinstance(mode, str) or not MODE_RE.match(mode):
                raise SpecError(f"{here}: mode must be a quoted octal string such as '0755', got {mode!r}")
            entry["mode"] = int(mode, 8)
        else:
            entry["mode"] = 0o644
        if kinds[0] == "content":
            if not isinstance(spec["content"], str):
                raise SpecError(f"{here}: content must be a string")
            entry["value"] = _expand(here, spec["content"], tokens)
        elif kinds[0] == "from":
            # A file of the build machine ($VARIABLES from the environment): built software, not a double.
            source = os.path.expandvars(_expand(here, _string(f"{here} from", spec["from"]), tokens))
            if not source.startswith("/") or not os.path.isfile(source):
                raise SpecError(f"{here}: from must name an existing file of this machine (got {source!r})")
            entry["value"] = source
        else:
            entry["value"] = _expand(here, _string(f"{here} {kinds[0]}", spec[kinds[0]]), tokens)
        if path in files:
            raise SpecError(f"{here}: path given twice")
        files[path] = entry
    return files


def _package_versions(where: str, data: dict) -> list[str]:
    has_one, has_many = "version" in data, "versions" in data
    if has_one == has_many:
        raise SpecError(f"{where}: needs exactly one of 'version' or 'versions'")
    versions = [data["version"]] if has_one else data["versions"]
    if not isinstance(versions, list) or not versions:
        raise SpecError(f"{where}: 'versions' must be a non-empty list")
    for version in versions:
        if not isinstance(version, str) or not VERSION_RE.match(version):
            raise SpecError(f"{where}: '{version}' is not a valid Debian version (quote it in YAML)")
    return versions


def _packages(where: str, data: dict) -> list[Package]:
    name = _string(f"{where} name", data["name"])
    if not NAME_RE.match(name):
        raise SpecError(f"{where}: '{name}' is not a valid Debian package name")
    arch = data.get("architecture", "amd64")
    if arch not in ARCHITECTURES:
        raise SpecError(f"{where}: architecture must be one of {', '.join(ARCHITECTURES)}, got '{arch}'")
    multi_arch = data.get("multi_arch")
    if multi_arch is not None and multi_arch not in MULTI_ARCH:
        raise SpecError(f"{where}: multi_arch must be one of {', '.join(MULTI_ARCH)}, got '{multi_arch}'")
    description = _string(f"{where} description", data["description"]).strip()
    scripts = data.get("scripts", {})
    if not isinstance(scripts, dict):
        raise SpecError(f"{where} scripts: must be a mapping")
    for script, body in scripts.items():
        if script not in SCRIPTS:
            raise SpecError(f"{where} scripts: unknown script '{script}' (allowed: {', '.join(SCRIPTS)})")
        if not isinstance(body, str) or not body.startswith("#!"):
            raise SpecError(f"{where} scripts.{script}: must be a script starting with '#!'")
    triggers = data.get("triggers", [])
    if not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
        raise SpecError(f"{where} triggers: must be a list of strings")

    packages = []
    for version in _package_versions(where, data):
        tokens = version_tokens(name, version)
        summary, _newline, long_text = _expand(f"{where} description", description, tokens).partition("\n")
        fields = {
            "Package": name,
            "Version": version,
            "Architecture": arch,
            "Maintainer": MAINTAINER,
        }
        if "source" in data:
            fields["Source"] = _string(f"{where} source", data["source"])
        if multi_arch:
            fields["Multi-Arch"] = multi_arch
        fields["Priority"] = data.get("priority", "optional")
        fields["Section"] = data.get("section", "misc")
        for key, control in RELATION_FIELDS.items():
            if key in data:
                fields[control] = _relations(f"{where} {key}", data[key], tokens)
        if "homepage" in data:
            fields["Homepage"] = _string(f"{where} homepage", data["homepage"])
        body = [TEST_DOUBLE_NOTE]
        if long_text.strip():
            body += ["", *long_text.strip().splitlines()]
        fields["Description"] = f"{summary.strip()} (TEST DOUBLE)\n" + "\n".join(
            f" {line}" if line.strip() else " ." for line in body
        )
        files = _files(f"{where} files", data.get("files", {}), tokens)
        doc = f"/usr/share/doc/{name}/README.test-double"
        files.setdefault(doc, {"kind": "content", "mode": 0o644, "value": f"{name} {version}\n\n{TEST_DOUBLE_NOTE}\n"})
        expanded_scripts = {s: _expand(f"{where} scripts.{s}", b, tokens) for s, b in scripts.items()}
        packages.append(Package(name, version, arch, fields, files, expanded_scripts, list(triggers)))
    return packages


def parse_spec(data: object) -> tuple[list[Repo], int]:
    """Validate a loaded spec; return its repos (one Package per version) and SOURCE_DATE_EPOCH."""
    _check_keys("spec", data, TOP_KEYS)
    epoch = data.get("source_date_epoch", DEFAULT_SOURCE_DATE_EPOCH)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch <= 0:
        raise SpecError("spec: source_date_epoch must be a positive integer")
    if not isinstance(data["repos"], list) or not data["repos"]:
        raise SpecError("spec: repos must be a non-empty list")
    repos: list[Repo] = []
    seen_names: set[str] = set()
    for index, raw in enumerate(data["repos"]):
        label = raw.get("name", "?") if isinstance(raw, dict) else "?"
        where = f"repos[{index}] ({label})"
        _check_keys(where, raw, REPO_KEYS)
        name = _string(f"{where} name", raw["name"])
        if name in seen_names:
            raise SpecError(f"{where}: repo name '{name}' is used twice")
        seen_names.add(name)
        layout = raw["layout"]
        if layout not in LAYOUTS:
            raise SpecError(f"{where}: layout must be one of {', '.join(LAYOUTS)}, got '{layout}'")
        if layout == "dists":
            for key in ("suite", "component"):
                if key not in raw:
                    raise SpecError(f"{where}: layout 'dists' needs '{key}'")
        else:
            for key in ("suite", "codename", "component"):
                if key in raw:
                    raise SpecError(f"{where}: '{key}' is only for layout 'dists'")
        archs = raw.get("architectures", ["amd64"])
        if not isinstance(archs, list) or "amd64" not in archs:
            raise SpecError(f"{where}: architectures must be a list that includes amd64")
        repo = Repo(
            name=name,
            layout=layout,
            path=_rel_path(f"{where} path", raw["path"]),
            key_file=_rel_path(f"{where} key_file", raw["key_file"]),
            origin=str(raw.get("origin", f"gpucluster.core test doubles ({name})")),
            label=str(raw.get("label", f"TEST DOUBLE {name}")),
            description=str(raw.get("description", TEST_DOUBLE_NOTE)),
            architectures=[str(a) for a in archs],
        )
        if layout == "dists":
            repo.suite = _rel_path(f"{where} suite", raw["suite"])
            repo.codename = str(raw.get("codename", repo.suite))
            repo.component = _rel_path(f"{where} component", raw["component"])
        repo.pool = _rel_path(f"{where} pool", raw["pool"]) if "pool" in raw else (
            "." if layout == "flat" else f"pool/{repo.component}")
        if not isinstance(raw["packages"], list) or not raw["packages"]:
            raise SpecError(f"{where}: packages must be a non-empty list")
        first_seen: dict[tuple[str, str], int] = {}
        for pindex, praw in enumerate(raw["packages"]):
            pname = praw.get("name", "?") if isinstance(praw, dict) else "?"
            pwhere = f"{where} packages[{pindex}] ({pname})"
            _check_keys(pwhere, praw, PACKAGE_KEYS)
            for package in _packages(pwhere, praw):
                key = (package.name, package.version)
                if key in first_seen:
                    raise SpecError(
                        f"{where}: duplicate package {package.name}={package.version} "
                        f"(packages[{first_seen[key]}] and packages[{pindex}])"
                    )
                first_seen[key] = pindex
                repo.packages.append(package)
        repos.append(repo)
    key_files = [r.key_file for r in repos]
    for repo in repos:
        if key_files.count(repo.key_file) > 1:
            raise SpecError(f"repos ({repo.name}): key_file '{repo.key_file}' is used by more than one repo")
    return repos, epoch


def load_spec(path: Path) -> tuple[list[Repo], int]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read spec: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"not valid YAML: {exc}") from exc
    return parse_spec(data)


# ----------------------------------------------------------------------------- debs


def tiny_elf_so(soname: str) -> bytes:
    """A minimal x86-64 ELF shared object with a DT_SONAME: ldconfig registers it and dlopen loads it."""
    ehsize, phentsize, phnum = 64, 56, 2
    dynstr = b"\0" + soname.encode() + b"\0"
    strtab = ehsize + phentsize * phnum
    symtab = (strtab + len(dynstr) + 7) & ~7
    hashtab = symtab + 24  # one null symbol
    dynamic_at = (hashtab + 16 + 7) & ~7
    dt_soname, dt_hash, dt_strtab, dt_symtab, dt_strsz, dt_syment = 14, 4, 5, 6, 10, 11
    dynamic = b"".join(
        struct.pack("<qQ", tag, value)
        for tag, value in (
            (dt_soname, 1), (dt_hash, hashtab), (dt_strtab, strtab), (dt_symtab, symtab),
            (dt_strsz, len(dynstr)), (dt_syment, 24), (0, 0),
        )
    )
    total = dynamic_at + len(dynamic)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, ehsize, 0, 0, ehsize, phentsize, phnum, 64, 0, 0)
    pt_load = struct.pack("<IIQQQQQQ", 1, 6, 0, 0, 0, total, total, 0x1000)
    pt_dynamic = struct.pack("<IIQQQQQQ", 2, 6, dynamic_at, dynamic_at, dynamic_at, len(dynamic), len(dynamic), 8)
    image = bytearray(total)
    image[0:len(header)] = header
    image[ehsize:ehsize + 2 * phentsize] = pt_load + pt_dynamic
    image[strtab:strtab + len(dynstr)] = dynstr
    image[hashtab:hashtab + 16] = struct.pack("<4I", 1, 1, 0, 0)
    image[dynamic_at:] = dynamic
    return bytes(image)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        detail = result.stderr.strip() or result.stdout.strip()
        raise BuildError(f"{' '.join(cmd)} failed ({result.returncode}): {detail}")
    return result


def build_deb(package: Package, work: Path, dest: Path, epoch: int) -> Path:
    root = work / f"{package.name}_{package.version.replace(':', '_')}"
    control_dir = root / "DEBIAN"
    control_dir.mkdir(parents=True)
    installed_kib = 0
    for path, entry in sorted(package.files.items()):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry["kind"] == "link":
            target.symlink_to(entry["value"])
            installed_kib += 1
            continue
        if entry["kind"] == "from":
            data = Path(entry["value"]).read_bytes()
        elif entry["kind"] == "elf_soname":
            data = tiny_elf_so(entry["value"])
        else:
            data = entry["value"].encode()
        target.write_bytes(data)
        target.chmod(entry["mode"])
        installed_kib += (len(data) + 1023) // 1024
    fields = dict(package.fields)
    fields["Installed-Size"] = str(max(installed_kib, 1))
    order = ["Package", "Source", "Version", "Architecture", "Multi-Arch", "Maintainer", "Installed-Size",
             "Pre-Depends", "Depends", "Recommends", "Suggests", "Conflicts", "Breaks", "Replaces", "Provides",
             "Section", "Priority", "Homepage", "Description"]
    control = "".join(f"{key}: {fields[key]}\n" for key in order if key in fields)
    (control_dir / "control").write_text(control, encoding="utf-8")
    conffiles = [p for p, e in sorted(package.files.items()) if p.startswith("/etc/") and e["kind"] != "link"]
    if conffiles:
        (control_dir / "conffiles").write_text("".join(f"{p}\n" for p in conffiles), encoding="utf-8")
    if package.triggers:
        (control_dir / "triggers").write_text("".join(f"{t}\n" for t in package.triggers), encoding="utf-8")
    for script, body in package.scripts.items():
        (control_dir / script).write_text(body if body.endswith("\n") else body + "\n", encoding="utf-8")
        (control_dir / script).chmod(0o755)
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames:
            (Path(directory) / name).chmod(0o755)
        for name in [*dirnames, *filenames, "."]:
            os.utime(Path(directory) / name, (epoch, epoch), follow_symlinks=False)
    root.chmod(0o755)
    for control_file in control_dir.iterdir():
        if control_file.name not in SCRIPTS:
            control_file.chmod(0o644)
    out = dest / package.deb_name
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch))
    # Built software (from) is large: gzip packs it several times faster than xz.
    compression = "-Zgzip" if any(e["kind"] == "from" for e in package.files.values()) else "-Zxz"
    _run(["dpkg-deb", "--root-owner-group", compression, "--build", str(root), str(out)], env=env)
    return out


# ----------------------------------------------------------------------------- signing


class Signer:
    """One throwaway, passphrase-less key per repo in a GNUPGHOME of its own."""

    def __init__(self, home: Path):
        self.home = home
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        home.chmod(0o700)

    def gpg(self, *args: str) -> subprocess.CompletedProcess:
        return _run(["gpg", "--homedir", str(self.home), "--batch", "--no-tty", "--quiet",
                     "--pinentry-mode", "loopback", "--passphrase", "", *args])

    def _fingerprints(self) -> dict[str, str]:
        listing = self.gpg("--with-colons", "--list-secret-keys").stdout
        found: dict[str, str] = {}
        fpr = None
        for line in listing.splitlines():
            parts = line.split(":")
            if parts[0] == "sec":
                fpr = None
            elif parts[0] == "fpr" and fpr is None:
                fpr = parts[9]
            elif parts[0] == "uid" and fpr:
                found[parts[9]] = fpr
        return found

    def key_for(self, uid: str) -> str:
        known = self._fingerprints()
        if uid not in known:
            self.gpg("--quick-generate-key", uid, "ed25519", "sign", "never")
            known = self._fingerprints()
        return known[uid]

    def sign(self, fpr: str, release: Path) -> None:
        folder = release.parent
        self.gpg("--local-user", fpr, "--digest-algo", "SHA512", "--yes",
                 "--clearsign", "--output", str(folder / "InRelease"), str(release))
        self.gpg("--local-user", fpr, "--digest-algo", "SHA512", "--yes", "--armor",
                 "--detach-sign", "--output", str(folder / "Release.gpg"), str(release))

    def export(self, fpr: str, dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(self.gpg("--armor", "--export", fpr).stdout, encoding="ascii")

    def close(self) -> None:
        subprocess.run(["gpgconf", "--homedir", str(self.home), "--kill", "all"], capture_output=True, check=False)


# ----------------------------------------------------------------------------- indexes


def packages_index(repo: Repo, repo_root: Path) -> bytes:
    """The Packages index of every deb under the repo's pool, written by apt-ftparchive.

    Run from the repo root so each Filename is relative to the URL the sources line names:
    ``./x.deb`` in a flat repo (as NVIDIA's), ``dists/<suite>/pool/...`` in a dists repo.
    """
    pool = "." if repo.layout == "flat" else repo.pool
    return _run(["apt-ftparchive", "--md5", "--sha1", "--sha256", "--no-sha512", "packages", pool],
                cwd=repo_root).stdout.encode("utf-8")


def release_options(repo: Repo) -> list[str]:
    """apt-ftparchive -o options for the Release fields of one repo."""
    fields = {"Origin": repo.origin, "Label": repo.label}
    if repo.layout == "dists":
        fields.update({"Suite": repo.suite, "Codename": repo.codename})
    fields["Architectures"] = " ".join(repo.architectures)
    if repo.layout == "dists":
        fields["Components"] = repo.component
    fields["Description"] = repo.description
    options = []
    for name, value in fields.items():
        options += ["-o", f"APT::FTPArchive::Release::{name}={value}"]
    return options


def write_release(repo: Repo, release_dir: Path) -> Path:
    """Release over the indexes below release_dir, written by apt-ftparchive (build time as Date)."""
    text = _run(["apt-ftparchive", "--md5", "--no-sha1", "--sha256", "--no-sha512", *release_options(repo),
                 "release", "."], cwd=release_dir).stdout
    release = release_dir / "Release"
    release.write_text(text, encoding="utf-8")
    return release


def build_repo(repo: Repo, root: Path, work: Path, signer: Signer, epoch: int) -> dict:
    repo_root = root / repo.path
    pool = repo_root / repo.pool
    pool.mkdir(parents=True, exist_ok=True)
    debs = []
    debian_pool = repo.layout == "dists" and repo.pool == f"pool/{repo.component}"
    for package in sorted(repo.packages, key=lambda p: (p.name, p.version)):
        # A Debian-style pool sorts by first letter and name; a flat repo or a vendor pool holds the files directly.
        dest = pool / package.name[0] / package.name if debian_pool else pool
        dest.mkdir(parents=True, exist_ok=True)
        debs.append((package, build_deb(package, work / repo.name, dest, epoch)))
    index_dir = repo_root / repo.index_dir
    index_dir.mkdir(parents=True, exist_ok=True)
    text = packages_index(repo, repo_root)
    (index_dir / "Packages").write_bytes(text)
    (index_dir / "Packages.gz").write_bytes(gzip.compress(text, mtime=0))
    release = write_release(repo, repo_root / repo.release_dir)
    fpr = signer.key_for(repo.key_uid)
    signer.sign(fpr, release)
    signer.export(fpr, root / repo.key_file)
    return {
        "name": repo.name,
        "layout": repo.layout,
        "path": repo.path,
        "key_file": repo.key_file,
        "key_fingerprint": fpr,
        "suite": repo.suite or None,
        "component": repo.component or None,
        "sources_line": (f"deb [signed-by=KEYRING] http://MIRROR/{repo.path}/ /" if repo.layout == "flat"
                         else f"deb [signed-by=KEYRING] http://MIRROR/{repo.path} {repo.suite} {repo.component}"),
        "packages": [{"name": p.name, "version": p.version, "architecture": p.architecture} for p, _deb in debs],
    }


# ----------------------------------------------------------------------------- artifact list

ARTIFACTS_FORMAT = "gpucluster.core.artifacts/1"
NEWEST = "newest"
RELATION_PARTS_RE = re.compile(r"^([a-z0-9][a-z0-9+.-]+)(?::[a-z0-9]+)?(?:\s*\((<<|<=|=|>=|>>)\s*([^)\s]+)\))?$")


def _order(char: str) -> int:
    if char == "~":
        return -1
    if char.isdigit() or not char:
        return 0
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _verrevcmp(a: str, b: str) -> int:
    """dpkg's comparison of an upstream version or a revision."""
    i = j = 0
    while i < len(a) or j < len(b):
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _order(a[i] if i < len(a) else "")
            bc = _order(b[j] if j < len(b) else "")
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        first_diff = 0
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def compare_versions(a: str, b: str) -> int:
    """<0, 0 or >0 as Debian version a sorts before, with or after b (dpkg --compare-versions)."""
    def split(version: str) -> tuple[int, str, str]:
        epoch, _colon, rest = version.rpartition(":") if ":" in version else ("0", "", version)
        upstream, _hyphen, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
        return int(epoch or 0), upstream, revision

    (ea, ua, ra), (eb, ub, rb) = split(a), split(b)
    if ea != eb:
        return ea - eb
    return _verrevcmp(ua, ub) or _verrevcmp(ra, rb)


def satisfies(version: str, op: str | None, wanted: str | None) -> bool:
    if op is None:
        return True
    result = compare_versions(version, wanted)
    return {"<<": result < 0, "<=": result <= 0, "=": result == 0, ">=": result >= 0, ">>": result > 0}[op]


def _url_path(url: str) -> str:
    return urlsplit(url).path.replace("$(ARCH)", "amd64").strip("/")


def load_artifacts(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArtifactsError(f"cannot read the artifact list: {exc.strerror}") from exc
    except ValueError as exc:
        raise ArtifactsError(f"not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != ARTIFACTS_FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ArtifactsError(f"not an artifact list of {ARTIFACTS_FORMAT} (format: {found!r})")
    for key in ("repositories", "files", "charts", "manifests"):
        if not isinstance(doc.get(key), list):
            raise ArtifactsError(f"{key} must be a list")
    return doc


@dataclass
class _Served:
    """One repository of the artifact list as the mirror serves it."""

    label: str
    layout: str
    path: str
    key_file: str
    suite: str = ""
    component: str = ""


def _served(repo: dict) -> tuple[_Served | None, list[str]]:
    name = repo.get("name", "?")
    url = repo.get("url")
    if not url:
        return None, [f"repository {name}: no URL (the role does not add it), so there is nothing to serve it at"]
    suites, components = list(repo.get("suites") or []), list(repo.get("components") or [])
    label = f"repository {name} ({' '.join([url, *suites, *components])})"
    if repo.get("type") != "apt":
        return None, [f"{label}: a {repo.get('type')} repository; the test-double mirror serves apt repositories only"]
    other = [a for a in repo.get("architectures") or ["amd64"] if a != "amd64"]
    if other:
        return None, [f"{label}: architectures {', '.join(other)}: the test doubles are amd64 only"]
    if not repo.get("key_url"):
        return None, [f"{label}: no key URL; the mirror signs every repository"]
    path = _url_path(url)
    key_file = _url_path(repo["key_url"])
    for where, value in (("URL", path), ("key URL", key_file)):
        if not REL_PATH_RE.match(value) or ".." in value.split("/"):
            return None, [f"{label}: the {where} path '{value}' cannot be served"]
    if len(suites) == 1 and suites[0].endswith("/") and not components:
        flat = "/".join(p for p in (path, suites[0].strip("./").strip("/")) if p)
        return _Served(label, "flat", flat, key_file), []
    if len(suites) == 1 and len(components) == 1:
        return _Served(label, "dists", path, key_file, suites[0], components[0]), []
    return None, [f"{label}: one suite and one component (or a flat repository) is what the mirror serves"]


def _describe(repo: Repo) -> str:
    if repo.layout == "flat":
        return f"{repo.name} at {repo.path} (flat)"
    return f"{repo.name} at {repo.path} suite {repo.suite} component {repo.component}"


def _pinned(pins: list[dict], name: str, versions: list[str]) -> list[str]:
    """The versions the list's pins allow for a package (all when no pin names it)."""
    for pin in pins:
        if fnmatchcase(name, pin.get("name", "")):
            return [v for v in versions if fnmatchcase(v, pin.get("version", ""))]
    return versions


def _newest(versions: list[str]) -> str:
    best = versions[0]
    for version in versions[1:]:
        if compare_versions(version, best) > 0:
            best = version
    return best


def _depends(package: Package) -> list[str]:
    text = ", ".join(package.fields[f] for f in ("Pre-Depends", "Depends") if f in package.fields)
    return [r.strip() for r in text.split(",") if r.strip()]


def _closure(label: str, catalogue: Repo, listed: list[tuple[str, str]], pins: list[dict]
             ) -> tuple[list[tuple[Package, str]], list[str], list[str]]:
    """The listed packages and their Depends closure inside one catalogue repository: (package, why),
    the dependencies left to the distribution, and the problems."""
    by_name: dict[str, list[Package]] = {}
    for package in catalogue.packages:
        by_name.setdefault(package.name, []).append(package)
    chosen: dict[tuple[str, str], tuple[Package, str]] = {}
    problems: list[str] = []
    external: list[str] = []
    for name, version in listed:
        candidates = by_name.get(name, [])
        have = ", ".join(p.version for p in candidates)
        if not candidates:
            problems.append(f"{label}: the catalogue has no test double of {name}")
            continue
        if version == NEWEST:
            allowed = _pinned(pins, name, [p.version for p in candidates])
            if not allowed:
                problems.append(f"{label}: no test double of {name} matches its pin (it has: {have})")
                continue
            version = _newest(allowed)
        match = [p for p in candidates if p.version == version]
        if not match:
            problems.append(f"{label}: the catalogue has no test double of {name} {version} (it has: {have})")
            continue
        chosen.setdefault((name, version), (match[0], "listed"))
    queue = [package for package, _why in chosen.values()]
    while queue:
        package = queue.pop(0)
        for relation in _depends(package):
            alternatives = []
            for text in relation.split("|"):
                parts = RELATION_PARTS_RE.match(text.strip())
                if parts:
                    alternatives.append(parts.groups())
            if any(satisfies(v, op, want) for dep, op, want in alternatives for n, v in chosen if n == dep):
                continue
            if not any(dep in by_name for dep, _op, _want in alternatives):
                _add_once(external, relation)
                continue
            for dep, op, want in alternatives:
                allowed = set(_pinned(pins, dep, [p.version for p in by_name.get(dep, [])]))
                fitting = [p for p in by_name.get(dep, []) if p.version in allowed and satisfies(p.version, op, want)]
                if fitting:
                    best = _newest([p.version for p in fitting])
                    found = next(p for p in fitting if p.version == best)
                    chosen[(dep, best)] = (found, f"depends of {package.name} {package.version}")
                    queue.append(found)
                    break
            else:
                problems.append(f"{label}: {package.name} {package.version} depends on {relation}, which the "
                                f"catalogue's repository {catalogue.name} cannot satisfy")
    return list(chosen.values()), external, problems


def _add_once(items: list[str], value: str) -> None:
    if value not in items:
        items.append(value)


def select_from_artifacts(repos: list[Repo], doc: dict) -> tuple[list[Repo], dict]:
    """The repos to build for an artifact list: each listed apt repository at its URL's path with its
    packages and their closure from the catalogue repository served at that path. Raises
    ArtifactsError with every problem, one per line."""
    problems: list[str] = []
    for key, what in (("files", "files downloaded by URL"), ("charts", "Helm charts"), ("manifests", "manifests")):
        for entry in doc[key]:
            named = entry.get("url") or " ".join(str(entry.get(k, "")) for k in ("repository", "name", "version"))
            problems.append(f"{key[:-1]} {named}: the catalogue has no test double of {what}")
    selected: list[Repo] = []
    distribution = sum(len(group.get("packages") or []) for group in doc.get("distribution_packages") or [])
    report: dict = {"repos": [], "not_served": {"images": [i.get("name") for i in doc.get("images") or []],
                                                "distribution_packages": distribution}}
    paths: dict[tuple[str, str, str], str] = {}
    keys: dict[str, str] = {}
    for repo in doc["repositories"]:
        served, found = _served(repo)
        problems.extend(found)
        if served is None:
            continue
        spot = (served.path, served.suite, served.component)
        if spot in paths or (served.key_file in keys and keys[served.key_file] != served.path):
            problems.append(f"{served.label}: served at the same place or with the same key file as "
                            f"{paths.get(spot) or keys.get(served.key_file)}")
            continue
        paths[spot] = served.label
        keys[served.key_file] = served.path
        # The catalogue repository at that place, else the one of the same name and layout: another
        # release's path or suite (debian13, trixie) gets the same test doubles.
        catalogue = next((r for r in repos if r.layout == served.layout and r.path == served.path
                          and r.suite == served.suite and r.component == served.component), None) or next(
            (r for r in repos if r.layout == served.layout and r.name == repo.get("name")), None)
        if catalogue is None:
            where = served.path if served.layout == "flat" else (
                f"{served.path} suite {served.suite} component {served.component}")
            problems.append(f"{served.label}: the catalogue has no {served.layout} repository at {where} "
                            f"nor one named {repo.get('name')} (it has: {'; '.join(_describe(r) for r in repos)})")
            continue
        listed = [(p.get("name"), p.get("version") or NEWEST) for p in repo.get("packages") or []]
        chosen, external, found = _closure(served.label, catalogue, listed, list(repo.get("pins") or []))
        problems.extend(found)
        copy = Repo(name=catalogue.name, layout=catalogue.layout, path=served.path, key_file=served.key_file,
                    origin=catalogue.origin, label=catalogue.label, description=catalogue.description,
                    architectures=catalogue.architectures, suite=served.suite or catalogue.suite,
                    codename=served.suite or catalogue.codename, component=served.component or catalogue.component,
                    pool=(catalogue.pool.replace(catalogue.suite, served.suite)
                          if served.suite and catalogue.suite else catalogue.pool),
                    packages=[package for package, _why in chosen])
        selected.append(copy)
        report["repos"].append({
            "name": copy.name, "url": repo.get("url"), "path": copy.path,
            "packages": [{"name": p.name, "version": p.version, "why": why} for p, why in chosen],
            "left_to_the_distribution": external})
    if problems:
        raise ArtifactsError("\n".join(problems))
    return selected, report


# ----------------------------------------------------------------------------- main


def spec_stamp(spec_path: Path, artifacts: Path | None = None, sources: list[str] | None = None) -> str:
    digest = hashlib.sha256(FORMAT.encode())
    digest.update(spec_path.read_bytes())
    for source in sorted(set(sources or [])):
        digest.update(b"\0from\0" + source.encode() + b"\0" + hashlib.sha256(Path(source).read_bytes()).digest())
    if artifacts is not None:
        digest.update(b"\0artifacts\0" + artifacts.read_bytes())
    digest.update(Path(__file__).resolve().read_bytes())
    return digest.hexdigest()


def build(spec_path: Path, out: Path, force: bool = False, artifacts: Path | None = None) -> Path:
    repos, epoch = load_spec(spec_path)
    selection = None
    if artifacts is not None:
        repos, selection = select_from_artifacts(repos, load_artifacts(artifacts))
    out = out.resolve()
    sources = [entry["value"] for repo in repos for package in repo.packages
               for entry in package.files.values() if entry["kind"] == "from"]
    stamp = spec_stamp(spec_path, artifacts, sources)
    stamp_file = out / STAMP
    if out.exists():
        if not out.is_dir():
            raise BuildError(f"{out} exists and is not a directory")
        if stamp_file.exists():
            if not force and stamp_file.read_text(encoding="utf-8").strip() == stamp:
                print(f"mirror at {out} is current (stamp {stamp[:12]})", file=sys.stderr)
                return out
        elif any(out.iterdir()):
            raise BuildError(f"refusing to build into {out}: not empty and not a mirror built by build.py")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    # gpg-agent's socket path must stay short: sign from a GNUPGHOME in TMPDIR, keep a copy in the output.
    gnupg_home = Path(tempfile.mkdtemp(prefix="gpc-gnupg-"))
    no_sockets = shutil.ignore_patterns("S.*", "*.lock", ".#*")
    try:
        if (out / GNUPG_DIR).is_dir():
            shutil.copytree(out / GNUPG_DIR, gnupg_home, ignore=no_sockets, dirs_exist_ok=True)
        signer = Signer(gnupg_home)
        work = Path(tempfile.mkdtemp(prefix="gpc-mirror-work-"))
        manifest = {"format": FORMAT, "stamp": stamp, "test_double_note": TEST_DOUBLE_NOTE, "repos": []}
        if selection is not None:
            manifest["artifacts"] = dict(selection, file=str(artifacts.resolve()))
        try:
            for repo in repos:
                print(f"building repo {repo.name}: {len(repo.packages)} packages", file=sys.stderr)
                manifest["repos"].append(build_repo(repo, staging, work, signer, epoch))
        finally:
            signer.close()
            shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(gnupg_home, staging / GNUPG_DIR, ignore=no_sockets)
        (staging / GNUPG_DIR).chmod(0o700)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (staging / STAMP).write_text(stamp + "\n", encoding="utf-8")
        staging.chmod(0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            old.rmdir()
            out.rename(old)
            staging.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(gnupg_home, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="package spec (default: %(default)s)")
    parser.add_argument("--artifacts", type=Path, help="build only what this artifact list (playbooks/artifacts.yml's JSON) names")
    parser.add_argument("--out", type=Path, required=True, help="output root, served as the mirror")
    parser.add_argument("--force", action="store_true", help="rebuild even when the stamp matches")
    args = parser.parse_args(argv)
    for tool in ("dpkg-deb", "apt-ftparchive", "gpg", "gpgconf"):
        if shutil.which(tool) is None:
            print(f"build.py: error: '{tool}' is not installed", file=sys.stderr)
            return 2
    try:
        out = build(args.spec, args.out, force=args.force, artifacts=args.artifacts)
    except SpecError as exc:
        print(f"{args.spec}: error: {exc}", file=sys.stderr)
        return 2
    except ArtifactsError as exc:
        for line in str(exc).splitlines():
            print(f"{args.artifacts}: error: {line}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"build.py: error: {exc}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
