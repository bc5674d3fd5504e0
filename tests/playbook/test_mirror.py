# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/harness/mirror: the signed apt mirror of vendor TEST DOUBLES builds, verifies and resolves.

apt runs with a private configuration (APT_CONFIG, every directory in tmp): the host's
sources, keys, lists and caches are not read or changed.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

MIRROR_SRC = Path(__file__).resolve().parents[1] / "harness" / "mirror"
BUILD = MIRROR_SRC / "build.py"
SPEC = MIRROR_SRC / "packages.yml"
NOTE = "TEST DOUBLE built by gpucluster.core tests/harness/mirror; not the vendor's package."
CUDA = "compute/cuda/repos/debian12/x86_64"
TOOLKIT = "libnvidia-container/stable/deb/amd64"

MISSING = [tool for tool in ("dpkg-deb", "gpg", "gpgconf", "apt-get", "apt-cache", "ldconfig")
           if shutil.which(tool) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)}")


def _load_builder():
    spec = importlib.util.spec_from_file_location("gpc_mirror_build", BUILD)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


builder = _load_builder()


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False, **kwargs)


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    out = tmp_path_factory.mktemp("mirror") / "www"
    result = run([sys.executable, BUILD, "--spec", SPEC, "--out", out])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out.resolve())
    return out


@pytest.fixture(scope="module")
def base_url(mirror):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(mirror)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def keyring(mirror, key_file, dest):
    """What a role does with the vendor key: gpg --dearmor into a keyring for signed-by."""
    home = dest.parent / "gnupg"
    home.mkdir(mode=0o700, exist_ok=True)
    result = run(["gpg", "--homedir", home, "--batch", "--yes", "--dearmor", "-o", dest, mirror / key_file])
    assert result.returncode == 0, result.stderr
    return dest


class PrivateApt:
    """apt with every configuration, state and cache directory under one tmp folder."""

    def __init__(self, root: Path, sources: list[str], preferences: str = ""):
        self.root = root
        for sub in ("parts", "sources.list.d", "preferences.d", "trusted.gpg.d", "lists/partial",
                    "cache/archives/partial", "log"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "sources.list").write_text("".join(f"{line}\n" for line in sources))
        (root / "preferences").write_text(preferences)
        settings = {
            "Dir::Etc::Main": root / "apt.conf-none",
            "Dir::Etc::Parts": root / "parts",
            "Dir::Etc::SourceList": root / "sources.list",
            "Dir::Etc::SourceParts": root / "sources.list.d",
            "Dir::Etc::Preferences": root / "preferences",
            "Dir::Etc::PreferencesParts": root / "preferences.d",
            "Dir::Etc::Trusted": root / "trusted.gpg",
            "Dir::Etc::TrustedParts": root / "trusted.gpg.d",
            "Dir::State::Lists": root / "lists",
            "Dir::Cache": root / "cache",
            "Dir::Log": root / "log",
            "APT::Architecture": "amd64",
            "APT::Sandbox::User": "root",
            "Acquire::Languages": "none",
            "Acquire::http::Proxy": "DIRECT",
            "Acquire::Retries": "0",
        }
        text = "".join(f'{key} "{value}";\n' for key, value in settings.items())
        text += 'APT::Architectures { "amd64"; };\n'
        (root / "apt.conf").write_text(text)
        self.env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        self.env.update(APT_CONFIG=str(root / "apt.conf"), LC_ALL="C", DEBIAN_FRONTEND="noninteractive")

    def __call__(self, *args):
        return run(args, env=self.env)


def sources(mirror, base_url, tmp_path, cuda_key=f"{CUDA}/3bf863cc.pub"):
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    cuda = keyring(mirror, cuda_key, keys / "cuda.gpg")
    toolkit = keyring(mirror, "libnvidia-container/gpgkey", keys / "toolkit.gpg")
    docker = keyring(mirror, "linux/debian/gpg", keys / "docker.gpg")
    return [
        f"deb [signed-by={cuda}] {base_url}/{CUDA}/ /",
        f"deb [signed-by={toolkit}] {base_url}/libnvidia-container/stable/deb/$(ARCH) /",
        f"deb [signed-by={docker}] {base_url}/linux/debian bookworm stable",
    ]


@pytest.fixture(scope="module")
def apt(mirror, base_url, tmp_path_factory):
    root = tmp_path_factory.mktemp("apt")
    private = PrivateApt(root, sources(mirror, base_url, root))
    result = private("apt-get", "update")
    assert result.returncode == 0, result.stdout + result.stderr
    private.update_output = result.stdout + result.stderr
    return private


def installs(result):
    """{package: version} from `apt-get -s` output."""
    return dict(re.findall(r"^Inst (\S+) \((\S+) ", result.stdout, re.M))


def deb(mirror, name, version, arch="amd64", repo=CUDA):
    path = mirror / repo / f"{name}_{version}_{arch}.deb"
    assert path.is_file(), path
    return path


def extract(debfile, dest):
    result = run(["dpkg-deb", "-x", debfile, dest])
    assert result.returncode == 0, result.stderr
    return dest


# ----------------------------------------------------------------------------- build


def test_build_prints_output_and_reuses_its_stamp(mirror):
    stamp = (mirror / ".gpc-mirror-stamp").read_text()
    result = run([sys.executable, BUILD, "--spec", SPEC, "--out", mirror])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(mirror.resolve())
    assert "is current" in result.stderr
    assert (mirror / ".gpc-mirror-stamp").read_text() == stamp


def test_manifest_and_layout(mirror):
    manifest = json.loads((mirror / "mirror.json").read_text())
    assert [r["name"] for r in manifest["repos"]] == ["cuda", "nvidia-container-toolkit", "docker", "grafana"]
    for name in ("InRelease", "Release", "Release.gpg", "Packages", "Packages.gz", "3bf863cc.pub"):
        assert (mirror / CUDA / name).is_file(), name
    for name in ("InRelease", "Release", "Release.gpg", "Packages", "Packages.gz"):
        assert (mirror / TOOLKIT / name).is_file(), name
    assert (mirror / "libnvidia-container/gpgkey").read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    assert (mirror / "linux/debian/gpg").read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    assert (mirror / "linux/debian/dists/bookworm/stable/binary-amd64/Packages.gz").is_file()
    assert (mirror / "linux/debian/dists/bookworm/pool/stable/amd64/"
            "docker-compose-plugin_2.31.0-1~debian.12~bookworm_amd64.deb").is_file()
    release = (mirror / "linux/debian/dists/bookworm/Release").read_text()
    for field in ("Suite: bookworm", "Codename: bookworm", "Components: stable", "Architectures: amd64",
                  "MD5Sum:", "SHA256:", "Date: "):
        assert field in release
    assert " stable/binary-amd64/Packages.gz\n" in release
    assert (mirror / "grafana/gpg.key").read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    assert (mirror / "grafana/dists/stable/main/binary-amd64/Packages.gz").is_file()
    assert "MD5Sum:" in (mirror / CUDA / "Release").read_text()
    fingerprints = {r["key_fingerprint"] for r in manifest["repos"]}
    assert len(fingerprints) == 4, "each repo has its own key"


def test_rebuild_keeps_the_repo_keys(tmp_path):
    spec = tmp_path / "small.yml"
    spec.write_text(yaml.safe_dump({"repos": [{
        "name": "r", "layout": "flat", "path": "r", "key_file": "r/key.asc",
        "packages": [{"name": "tool", "version": "1.0-1", "description": "A tool"}]}]}))
    out = tmp_path / "www"
    assert run([sys.executable, BUILD, "--spec", spec, "--out", out]).returncode == 0
    key = (out / "r/key.asc").read_text()
    result = run([sys.executable, BUILD, "--spec", spec, "--out", out, "--force"])
    assert result.returncode == 0, result.stderr
    assert (out / "r/key.asc").read_text() == key
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".www.")], "staging folders are cleaned up"


def test_refuses_a_foreign_output_folder(tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "data.txt").write_text("keep me")
    result = run([sys.executable, BUILD, "--spec", SPEC, "--out", out])
    assert result.returncode == 1
    assert "not empty and not a mirror built by build.py" in result.stderr
    assert (out / "data.txt").read_text() == "keep me"


def test_debs_are_reproducible(tmp_path):
    repos, epoch = builder.load_spec(SPEC)
    package = next(p for r in repos for p in r.packages if p.name == "libnccl2")
    digests = []
    for attempt in ("a", "b"):
        (tmp_path / attempt).mkdir()
        built = builder.build_deb(package, tmp_path / f"work-{attempt}", tmp_path / attempt, epoch)
        digests.append(hashlib.sha256(built.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_every_package_says_it_is_a_test_double(mirror):
    debs = sorted(mirror.rglob("*.deb"))
    repos = builder.load_spec(SPEC)[0]
    assert len(debs) == sum(len(repo.packages) for repo in repos)
    for path in debs:
        fields = run(["dpkg-deb", "-f", path, "Description", "Maintainer"]).stdout
        assert NOTE in fields, path.name
        assert "(TEST DOUBLE)" in fields.splitlines()[0], path.name
        assert "test-doubles@gpucluster.invalid" in fields, path.name


def test_packages_index_matches_the_debs(mirror):
    stanzas = (mirror / CUDA / "Packages").read_text().strip().split("\n\n")
    cuda = next(repo for repo in builder.load_spec(SPEC)[0] if repo.path == CUDA)
    assert len(stanzas) == len(cuda.packages)
    for stanza in stanzas:
        fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", stanza, re.M))
        data = (mirror / CUDA / fields["Filename"]).read_bytes()
        assert fields["Filename"].startswith("./")
        assert int(fields["Size"]) == len(data)
        assert fields["SHA256"] == hashlib.sha256(data).hexdigest()
        assert NOTE in stanza


# ----------------------------------------------------------------------------- contents


def test_driver_records_its_version_and_ships_no_nvidia_smi(mirror, tmp_path):
    listing = run(["dpkg-deb", "-c", deb(mirror, "nvidia-driver", "550.90.07-1")]).stdout
    assert "./usr/share/doc/nvidia-driver/README.test-double" in listing
    root = extract(deb(mirror, "nvidia-driver", "550.90.07-1"), tmp_path / "root")
    assert (root / "usr/lib/nvidia/TEST-DOUBLE-VERSION").read_text() == "550.90.07\n"
    for name in ("nvidia-driver", "nvidia-driver-libs", "libcuda1", "libnvidia-ml1", "cuda-drivers"):
        listing = run(["dpkg-deb", "-c", deb(mirror, name, "550.54.15-1")]).stdout
        assert "nvidia-smi" not in listing, name
        assert ".so" not in listing, name
    fields = run(["dpkg-deb", "-f", deb(mirror, "nvidia-kernel-open-dkms", "550.54.15-1"),
                  "Provides", "Conflicts"]).stdout
    assert fields == "Provides: nvidia-kernel-550.54.15\nConflicts: nvidia-kernel-dkms\n"


@pytest.mark.parametrize("package, version, path, expected", [
    ("cuda-nvcc-12-4", "12.4.131-1", "usr/local/cuda-12.4/bin/nvcc",
     "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
     "Built on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, V12.4.131\n"
     "Build cuda_12.4.r12.4/compiler.34097967_0\n"),
    ("cuda-nvcc-12-6", "12.6.85-1", "usr/local/cuda-12.6/bin/nvcc",
     "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
     "Built on Tue_Oct_29_23:50:19_PDT_2024\nCuda compilation tools, release 12.6, V12.6.85\n"
     "Build cuda_12.6.r12.6/compiler.35059454_0\n"),
])
def test_nvcc_prints_the_release_version(mirror, tmp_path, package, version, path, expected):
    listing = run(["dpkg-deb", "-c", deb(mirror, package, version)]).stdout
    assert re.search(rf"^-rwxr-xr-x root/root .* \./{re.escape(path)}$", listing, re.M), listing
    nvcc = extract(deb(mirror, package, version), tmp_path / "root") / path
    assert run([nvcc, "--version"]).stdout == expected
    assert run([nvcc, "x.cu"]).returncode == 1


def test_version_headers(mirror, tmp_path):
    root = extract(deb(mirror, "libcudnn9-dev-cuda-12", "9.5.1.17-1"), tmp_path / "cudnn")
    header = (root / "usr/include/x86_64-linux-gnu/cudnn_version_v9.h").read_text()
    assert re.findall(r"#define (CUDNN_MAJOR|CUDNN_MINOR|CUDNN_PATCHLEVEL) (\d+)", header) == [
        ("CUDNN_MAJOR", "9"), ("CUDNN_MINOR", "5"), ("CUDNN_PATCHLEVEL", "1")]
    root = extract(deb(mirror, "libnccl-dev", "2.21.5-1+cuda12.4"), tmp_path / "nccl")
    header = (root / "usr/include/nccl.h").read_text()
    assert re.findall(r"#define (NCCL_MAJOR|NCCL_MINOR|NCCL_PATCH) (\d+)", header) == [
        ("NCCL_MAJOR", "2"), ("NCCL_MINOR", "21"), ("NCCL_PATCH", "5")]
    assert os.readlink(root / "usr/lib/x86_64-linux-gnu/libnccl.so") == "libnccl.so.2"
    fields = run(["dpkg-deb", "-f", deb(mirror, "libnccl-dev", "2.21.5-1+cuda12.4"), "Depends"]).stdout
    assert fields == "libnccl2 (= 2.21.5-1+cuda12.4)\n"


def test_libraries_register_with_ldconfig_and_load(mirror, tmp_path):
    root = tmp_path / "root"
    for name, version in (("libnccl2", "2.21.5-1+cuda12.4"), ("libcudnn9-cuda-12", "9.1.0.70-1")):
        extract(deb(mirror, name, version), root)
        control = run(["dpkg-deb", "-I", deb(mirror, name, version), "triggers"]).stdout
        assert control == "activate-noawait ldconfig\n"
    libdir = root / "usr/lib/x86_64-linux-gnu"
    assert os.readlink(libdir / "libnccl.so.2") == "libnccl.so.2.21.5"
    assert os.readlink(libdir / "libcudnn.so.9") == "libcudnn.so.9.1.0"
    conf = tmp_path / "ld.so.conf"
    conf.write_text("")
    cache = tmp_path / "ld.so.cache"
    result = run(["ldconfig", "-C", cache, "-f", conf, libdir])
    assert result.returncode == 0, result.stderr
    listing = run(["ldconfig", "-p", "-C", cache]).stdout
    assert f"libnccl.so.2 (libc6,x86-64) => {libdir}/libnccl.so.2" in listing
    assert f"libcudnn.so.9 (libc6,x86-64) => {libdir}/libcudnn.so.9" in listing
    load = run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libnccl.so.2'); ctypes.CDLL('libcudnn.so.9')"],
               env=dict(os.environ, LD_LIBRARY_PATH=str(libdir)))
    assert load.returncode == 0, load.stderr


def test_container_toolkit_doubles(mirror, tmp_path):
    root = extract(deb(mirror, "nvidia-container-toolkit-base", "1.17.4-1", repo=TOOLKIT), tmp_path / "root")
    ctk, runtime = root / "usr/bin/nvidia-ctk", root / "usr/bin/nvidia-container-runtime"
    assert run([ctk, "--version"]).stdout == "NVIDIA Container Toolkit CLI version 1.17.4\ncommit: TEST-DOUBLE\n"
    daemon = tmp_path / "etc/docker/daemon.json"
    daemon.parent.mkdir(parents=True)
    daemon.write_text('{"log-driver": "json-file"}\n')
    result = run([ctk, "runtime", "configure", "--runtime=docker", f"--config={daemon}", "--set-as-default"])
    assert result.returncode == 0, result.stderr
    assert f"Wrote updated config to {daemon}" in result.stderr
    assert json.loads(daemon.read_text()) == {
        "default-runtime": "nvidia",
        "log-driver": "json-file",
        "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}},
    }
    assert run([ctk, "runtime", "configure", "--runtime=containerd"]).returncode == 2
    bogus = run([ctk, "runtime", "configure", "--bogus"])
    assert bogus.stderr == "Incorrect Usage: flag provided but not defined: --bogus\n"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "runc").write_text('#!/bin/sh\necho "runc $*"\n')
    (bin_dir / "runc").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    assert run([runtime, "--root", "/run/x", "create", "--bundle", "b", "id"], env=env).stdout == \
        "runc --root /run/x create --bundle b id\n"


def _double_programs(interpreters):
    """The test doubles' programs (file contents with a #! line naming one of interpreters) and
    maintainer scripts (always sh), each as (name, body)."""
    for package in (p for r in builder.load_spec(SPEC)[0] for p in r.packages):
        bodies = [e["value"] for e in package.files.values() if e["kind"] == "content"
                  and e["value"].split("\n", 1)[0] in interpreters]
        if "#!/bin/sh" in interpreters:
            bodies += list(package.scripts.values())
        for index, body in enumerate(bodies):
            yield f"{package.name}_{package.version}_{index}", body


def test_shell_scripts_pass_shellcheck(tmp_path):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    scripts = []
    for name, body in _double_programs(("#!/bin/sh", "#!/bin/bash")):
        path = tmp_path / f"{name}.sh"
        path.write_text(body)
        scripts.append(path)
    assert len(scripts) > 10
    result = run(["shellcheck", "-s", "sh", *scripts])
    assert result.returncode == 0, result.stdout


def test_python_doubles_compile():
    programs = list(_double_programs(("#!/usr/bin/python3", "#!/usr/bin/env python3")))
    assert programs, "no Python test double found"
    for name, body in programs:
        compile(body, name, "exec")


# ----------------------------------------------------------------------------- apt


def test_apt_update_verifies_every_signature(apt):
    assert "NO_PUBKEY" not in apt.update_output, apt.update_output
    assert "W:" not in apt.update_output, apt.update_output
    lists = sorted(p.name for p in (apt.root / "lists").glob("*InRelease"))
    assert len(lists) == 3, lists


def test_apt_update_fails_with_the_wrong_keyring(mirror, base_url, tmp_path):
    lines = sources(mirror, base_url, tmp_path, cuda_key="linux/debian/gpg")
    private = PrivateApt(tmp_path / "apt", lines[:1])
    result = private("apt-get", "update")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "NO_PUBKEY" in output, output
    assert "is not signed" in output, output
    assert not list((tmp_path / "apt/lists").glob("*Packages")), "nothing unverified was stored"


@pytest.mark.parametrize("package, versions", [
    ("nvidia-driver", ["550.90.07-1", "550.54.15-1"]),
    ("nvidia-kernel-open-dkms", ["550.90.07-1", "550.54.15-1"]),
    ("libcudnn9-cuda-12", ["9.5.1.17-1", "9.1.0.70-1"]),
    ("libnccl2", ["2.23.4-1+cuda12.6", "2.21.5-1+cuda12.4"]),
    ("nvidia-container-toolkit", ["1.17.8-1", "1.17.4-1"]),
    ("docker-compose-plugin", ["2.31.0-1~debian.12~bookworm"]),
])
def test_apt_policy_lists_every_version(apt, package, versions):
    result = apt("apt-cache", "policy", package)
    assert result.returncode == 0, result.stderr
    assert re.findall(r"^ {5}(?:\*\*\* )?(\S+) 500$", result.stdout, re.M) == versions, result.stdout
    assert f"Candidate: {versions[0]}" in result.stdout


def test_pinned_toolkit_resolves_inside_the_mirror(apt):
    result = apt("apt-get", "install", "-s", "cuda-toolkit-12-4=12.4.1-1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installs(result) == {
        "cuda-toolkit-12-4": "12.4.1-1",
        "cuda-compiler-12-4": "12.4.1-1",
        "cuda-libraries-12-4": "12.4.1-1",
        "cuda-nvcc-12-4": "12.4.131-1",
        "cuda-cudart-12-4": "12.4.127-1",
        "cuda-toolkit-12-4-config-common": "12.4.127-1",
        "cuda-toolkit-12-config-common": "12.6.77-1",
        "cuda-toolkit-config-common": "12.6.77-1",
    }
    assert all("(TEST DOUBLE):127.0.0.1" in line for line in result.stdout.splitlines() if line.startswith("Inst "))


def test_download_only_fetches_and_verifies_the_debs(apt):
    result = apt("apt-get", "install", "--download-only", "-y", "-q", "cuda-toolkit-12-6=12.6.3-1", "libnccl-dev")
    assert result.returncode == 0, result.stdout + result.stderr
    fetched = sorted(p.name for p in (apt.root / "cache/archives").glob("*.deb"))
    assert "cuda-nvcc-12-6_12.6.85-1_amd64.deb" in fetched
    assert "libnccl2_2.23.4-1+cuda12.6_amd64.deb" in fetched
    assert len(fetched) == 10, fetched


def test_driver_branch_needs_a_version_pin_like_the_real_repo(apt, tmp_path):
    # As against NVIDIA's repo: pinning the metapackage alone leaves its "=" dependencies on
    # the newest candidate and apt gives up.
    alone = apt("apt-get", "install", "-s", "cuda-drivers=550.54.15-1")
    assert alone.returncode == 100
    assert " cuda-drivers : Depends: cuda-drivers-550 (= 550.54.15-1) but " in alone.stdout
    pin = tmp_path / "preferences"
    pin.write_text("Package: nvidia-* libnvidia-* libcuda1 cuda-drivers*\n"
                   "Pin: version 550.54.15-1\nPin-Priority: 1001\n")
    result = apt("apt-get", "-o", f"Dir::Etc::Preferences={pin}", "install", "-s", "cuda-drivers",
                 "nvidia-kernel-open-dkms")
    assert result.returncode == 0, result.stdout + result.stderr
    chosen = installs(result)
    assert set(chosen.values()) == {"550.54.15-1"}
    assert "nvidia-kernel-open-dkms" in chosen
    assert "nvidia-kernel-dkms" not in chosen


def test_default_driver_flavour_is_proprietary(apt):
    chosen = installs(apt("apt-get", "install", "-s", "cuda-drivers"))
    assert chosen["nvidia-kernel-dkms"] == "550.90.07-1"
    assert "nvidia-kernel-open-dkms" not in chosen


def test_container_toolkit_pins_resolve(apt):
    result = apt("apt-get", "install", "-s", *(f"{name}=1.17.4-1" for name in (
        "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
        "libnvidia-container1")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert installs(result) == {name: "1.17.4-1" for name in (
        "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
        "libnvidia-container1")}


# ----------------------------------------------------------------------------- spec errors


def minimal_spec():
    return {"repos": [{
        "name": "r", "layout": "flat", "path": "r", "key_file": "r/key.asc",
        "packages": [{"name": "pkg", "version": "1.0-1", "description": "A package"}],
    }]}


def with_change(change):
    spec = minimal_spec()
    change(spec)
    return spec


PACKAGE_KEYS = ("architecture, breaks, conflicts, depends, description, files, homepage, multi_arch, name, "
                "pre_depends, priority, provides, recommends, replaces, scripts, section, source, suggests, "
                "triggers, version, versions")


@pytest.mark.parametrize("change, message", [
    pytest.param(lambda s: s.update(extra=1),
                 "spec: unknown key 'extra' (allowed: repos, source_date_epoch)", id="unknown-top-key"),
    pytest.param(lambda s: s["repos"][0].update(flavour="open"),
                 "repos[0] (r): unknown key 'flavour' (allowed: architectures, codename, component, description, "
                 "key_file, label, layout, name, origin, packages, path, pool, suite)", id="unknown-repo-key"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(verison="1.0-2"),
                 f"repos[0] (r) packages[0] (pkg): unknown key 'verison' (allowed: {PACKAGE_KEYS})",
                 id="unknown-package-key"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].pop("version"),
                 "repos[0] (r) packages[0] (pkg): needs exactly one of 'version' or 'versions'", id="missing-version"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(version=1.0),
                 "repos[0] (r) packages[0] (pkg): '1.0' is not a valid Debian version (quote it in YAML)",
                 id="unquoted-version"),
    pytest.param(lambda s: s["repos"][0]["packages"].append(copy.deepcopy(s["repos"][0]["packages"][0])),
                 "repos[0] (r): duplicate package pkg=1.0-1 (packages[0] and packages[1])", id="duplicate"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(version=None, versions=["1.0-1"]),
                 "repos[0] (r) packages[0] (pkg): needs exactly one of 'version' or 'versions'",
                 id="version-and-versions"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(files={"/x": "@FOO@"}),
                 "repos[0] (r) packages[0] (pkg) files '/x': unknown token @FOO@ for version 1.0-1 "
                 "(known: @MAJOR@, @MINOR@, @NAME@, @TEST_DOUBLE@, @UPSTREAM@, @VERSION@)", id="unknown-token"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(depends=["q (=> 1)"]),
                 "repos[0] (r) packages[0] (pkg) depends: 'q (=> 1)' is not a valid package relation",
                 id="bad-relation"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(files={"/usr/bin/x": {"content": "", "mode": 493}}),
                 "repos[0] (r) packages[0] (pkg) files '/usr/bin/x': mode must be a quoted octal string such as "
                 "'0755', got 493", id="unquoted-mode"),
    pytest.param(lambda s: s["repos"][0]["packages"][0].update(files={"usr/bin/x": "y"}),
                 "repos[0] (r) packages[0] (pkg) files 'usr/bin/x': must be an absolute file path", id="relative-file"),
    pytest.param(lambda s: s["repos"][0].update(layout="dists"),
                 "repos[0] (r): layout 'dists' needs 'suite'", id="dists-without-suite"),
    pytest.param(lambda s: s["repos"][0].pop("key_file"),
                 "repos[0] (r): missing required key 'key_file'", id="missing-key-file"),
])
def test_spec_errors_name_the_place(change, message):
    with pytest.raises(builder.SpecError) as error:
        builder.parse_spec(with_change(change))
    assert str(error.value) == message


def test_cli_reports_spec_errors_and_builds_nothing(tmp_path):
    spec = tmp_path / "bad.yml"
    spec.write_text(yaml.safe_dump(with_change(lambda s: s["repos"][0]["packages"][0].pop("version"))))
    out = tmp_path / "www"
    result = run([sys.executable, BUILD, "--spec", spec, "--out", out])
    assert result.returncode == 2
    assert result.stderr == (f"{spec}: error: repos[0] (r) packages[0] (pkg): "
                             "needs exactly one of 'version' or 'versions'\n")
    assert not out.exists()


def test_the_spec_covers_what_the_roles_need():
    repos = builder.load_spec(SPEC)[0]
    versions = {}
    for package in (p for r in repos for p in r.packages):
        versions.setdefault(package.name, []).append(package.version)
    for name in ("nvidia-driver", "nvidia-kernel-dkms", "nvidia-kernel-open-dkms", "cuda-drivers",
                 "cuda-drivers-550", "libcudnn9-cuda-12", "libcudnn9-dev-cuda-12", "libnccl2", "libnccl-dev",
                 "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
                 "libnvidia-container1"):
        assert len(versions[name]) == 2, name
    assert versions["cuda-toolkit-12-4"] == ["12.4.1-1"]
    assert versions["cuda-toolkit-12-6"] == ["12.6.3-1"]


# ----------------------------------------------------------------------------- --artifacts (an artifact list)

NVIDIA_URL = "https://developer.download.nvidia.com/" + CUDA + "/"
DRIVER = "550.54.15-1"


def artifact_list(**changes):
    """An artifact list as playbooks/artifacts.yml writes it (the fields build.py reads), with the vendors' URLs."""
    def used(**entry):
        return dict(entry, roles=["r"], hosts=["gpu1"])

    doc = {
        "format": "gpucluster.core.artifacts/1",
        "hosts": [],
        "repositories": [
            used(name="cuda", type="apt", url=NVIDIA_URL, suites=["/"], components=[], key_url=NVIDIA_URL + "3bf863cc.pub",
                 architectures=["amd64"],
                 packages=[used(name="cuda-drivers-550", version=DRIVER), used(name="nvidia-kernel-dkms", version=DRIVER),
                           used(name="cuda-toolkit-12-4", version="12.4.1-1"),
                           used(name="libnccl-dev", version="2.21.5-1+cuda12.4")],
                 pins=[used(name=n, version=DRIVER) for n in ("cuda-drivers*", "nvidia-*", "libcuda1")]),
            used(name="nvidia-container-toolkit", type="apt", url="https://nvidia.github.io/" + TOOLKIT.replace("amd64", "$(ARCH)"),
                 suites=["/"], components=[], key_url="https://nvidia.github.io/libnvidia-container/gpgkey",
                 architectures=["amd64"], packages=[used(name="nvidia-container-toolkit", version="1.17.4-1")], pins=[]),
            used(name="docker", type="apt", url="https://download.docker.com/linux/debian", suites=["bookworm"],
                 components=["stable"], key_url="https://download.docker.com/linux/debian/gpg", architectures=["amd64"],
                 packages=[used(name="docker-compose-plugin", version="newest")], pins=[]),
        ],
        "files": [], "images": [used(name="nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04")], "charts": [], "manifests": [],
        "distribution_packages": [{"os": "Debian 12 (bookworm)", "packages": [used(name="chrony", version=None)]}],
        "warnings": [],
    }
    for path, value in changes.items():
        target = doc
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        target[keys[-1]] = value
    return doc


# The listed packages and their Depends closure inside each catalogue repository: the driver's at the
# pinned version; unversioned or ">=" dependencies at the newest the catalogue has.
LISTED_CLOSURE = {
    CUDA: {
        "cuda-drivers-550": DRIVER, "nvidia-kernel-dkms": DRIVER, "cuda-toolkit-12-4": "12.4.1-1",
        "libnccl-dev": "2.21.5-1+cuda12.4", "libnccl2": "2.21.5-1+cuda12.4",
        "nvidia-driver": DRIVER, "nvidia-persistenced": DRIVER, "nvidia-driver-libs": DRIVER, "libcuda1": DRIVER,
        "libnvidia-ml1": DRIVER, "cuda-compiler-12-4": "12.4.1-1", "cuda-libraries-12-4": "12.4.1-1",
        "cuda-nvcc-12-4": "12.4.131-1", "cuda-cudart-12-4": "12.4.127-1",
        "cuda-toolkit-12-4-config-common": "12.4.127-1", "cuda-toolkit-12-config-common": "12.6.77-1",
        "cuda-toolkit-config-common": "12.6.77-1",
    },
    TOOLKIT: {"nvidia-container-toolkit": "1.17.4-1", "nvidia-container-toolkit-base": "1.17.4-1",
              "libnvidia-container-tools": "1.17.8-1", "libnvidia-container1": "1.17.8-1"},
    "linux/debian": {"docker-compose-plugin": "2.31.0-1~debian.12~bookworm"},
}


@pytest.fixture(scope="module")
def listed_mirror(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("listed")
    listing = tmp / "artifacts.json"
    listing.write_text(json.dumps(artifact_list()))
    out = tmp / "www"
    result = run([sys.executable, BUILD, "--spec", SPEC, "--artifacts", listing, "--out", out])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(out.resolve())
    return out


@pytest.fixture(scope="module")
def listed_apt(listed_mirror, tmp_path_factory):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(listed_mirror)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    root = tmp_path_factory.mktemp("listed-apt")
    # The list's pins as the nvidia_driver role writes them (apt preferences, Pin-Priority 1001).
    pins = "\n".join(f"Package: {p['name']}\nPin: version {p['version']}\nPin-Priority: 1001\n"
                     for p in artifact_list()["repositories"][0]["pins"])
    private = PrivateApt(root, sources(listed_mirror, base, root), preferences=pins)
    result = private("apt-get", "update")
    assert result.returncode == 0, result.stdout + result.stderr
    yield private
    server.shutdown()
    server.server_close()


def test_artifacts_mode_builds_exactly_the_listed_packages_and_their_closure(listed_mirror):
    manifest = json.loads((listed_mirror / "mirror.json").read_text())
    built = {r["path"]: {p["name"]: p["version"] for p in r["packages"]} for r in manifest["repos"]}
    assert built == LISTED_CLOSURE
    debs = sorted(p.relative_to(listed_mirror).as_posix() for p in listed_mirror.rglob("*.deb"))
    assert len(debs) == sum(len(v) for v in LISTED_CLOSURE.values()) == 22
    # Each repository at its URL's path, its key at the key URL's path ($(ARCH) is amd64).
    assert [(r["path"], r["key_file"]) for r in manifest["repos"]] == [
        (CUDA, CUDA + "/3bf863cc.pub"), (TOOLKIT, "libnvidia-container/gpgkey"), ("linux/debian", "linux/debian/gpg")]
    why = {(p["name"], p["why"]) for r in manifest["artifacts"]["repos"] for p in r["packages"]}
    assert ("libnccl2", "depends of libnccl-dev 2.21.5-1+cuda12.4") in why
    assert ("cuda-drivers-550", "listed") in why
    assert manifest["artifacts"]["not_served"] == {"images": ["nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"],
                                                   "distribution_packages": 1}
    assert manifest["artifacts"]["repos"][1]["left_to_the_distribution"] == ["libc6 (>= 2.7)", "libseccomp2"]


def test_artifacts_mode_apt_resolves_the_listed_packages_inside_the_mirror(listed_apt):
    # Only the listed driver version is there (the catalogue also has 550.90.07-1).
    policy = listed_apt("apt-cache", "policy", "cuda-drivers-550", "libcuda1")
    # (at the pin's priority, 1001)
    assert re.findall(r"^ {5}(?:\*\*\* )?(\S+) (\d+)$", policy.stdout, re.M) == [(DRIVER, "1001")] * 2, policy.stdout
    result = listed_apt("apt-get", "install", "-s", "cuda-drivers-550", "nvidia-kernel-dkms", "cuda-toolkit-12-4=12.4.1-1",
                        "libnccl-dev=2.21.5-1+cuda12.4", "nvidia-container-toolkit=1.17.4-1", "docker-compose-plugin")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = {name: version for packages in LISTED_CLOSURE.values() for name, version in packages.items()}
    assert installs(result) == expected


def test_artifacts_mode_rebuilds_for_another_list(listed_mirror, tmp_path):
    stamp = (listed_mirror / ".gpc-mirror-stamp").read_text()
    other = tmp_path / "other.json"
    other.write_text(json.dumps(artifact_list(repositories=artifact_list()["repositories"][2:])))
    out = tmp_path / "www"
    shutil.copytree(listed_mirror, out, symlinks=True)
    result = run([sys.executable, BUILD, "--spec", SPEC, "--artifacts", other, "--out", out])
    assert result.returncode == 0, result.stderr
    assert (out / ".gpc-mirror-stamp").read_text() != stamp
    assert sorted(p.name for p in out.rglob("*.deb")) == ["docker-compose-plugin_2.31.0-1~debian.12~bookworm_amd64.deb"]


def test_artifacts_mode_serves_another_release_from_the_catalogue_repository_of_the_same_name(tmp_path):
    # Debian 13 nodes: NVIDIA's debian13 path and Docker's trixie suite get the same test doubles.
    listing = tmp_path / "artifacts.json"
    listing.write_text(json.dumps(artifact_list(
        repositories__0__url=NVIDIA_URL.replace("debian12", "debian13"),
        repositories__0__key_url=NVIDIA_URL.replace("debian12", "debian13") + "3bf863cc.pub",
        repositories__2__suites=["trixie"])))
    out = tmp_path / "www"
    result = run([sys.executable, BUILD, "--spec", SPEC, "--artifacts", listing, "--out", out])
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "mirror.json").read_text())
    assert [(r["path"], r["key_file"]) for r in manifest["repos"]] == [
        (CUDA.replace("debian12", "debian13"), CUDA.replace("debian12", "debian13") + "/3bf863cc.pub"),
        (TOOLKIT, "libnvidia-container/gpgkey"), ("linux/debian", "linux/debian/gpg")]
    built = {r["path"]: {p["name"]: p["version"] for p in r["packages"]} for r in manifest["repos"]}
    assert built[CUDA.replace("debian12", "debian13")] == LISTED_CLOSURE[CUDA]
    assert (out / "linux/debian/dists/trixie/InRelease").is_file()
    assert not (out / "linux/debian/dists/bookworm").exists()
    assert sorted(p.relative_to(out).as_posix() for p in (out / "linux/debian").rglob("*.deb")) == [
        "linux/debian/dists/trixie/pool/stable/amd64/docker-compose-plugin_2.31.0-1~debian.12~bookworm_amd64.deb"]


LISTED = "repository cuda (" + NVIDIA_URL + " /)"
DOCKER_TRIXIE = "repository docker (https://download.docker.com/linux/debian trixie stable)"
CATALOGUE = ("cuda at compute/cuda/repos/debian12/x86_64 (flat); nvidia-container-toolkit at "
             "libnvidia-container/stable/deb/amd64 (flat); docker at linux/debian suite bookworm component stable; "
             "grafana at grafana suite stable component main")


@pytest.mark.parametrize("changes, errors", [
    pytest.param({"repositories__0__packages__3__name": "nvidia-driver-999"},
                 [f"{LISTED}: the catalogue has no test double of nvidia-driver-999"], id="unknown-package"),
    pytest.param({"repositories__0__packages__0__version": "550.11.11-1"},
                 [f"{LISTED}: the catalogue has no test double of cuda-drivers-550 550.11.11-1 "
                  "(it has: 550.54.15-1, 550.90.07-1)"], id="unknown-version"),
    pytest.param({"repositories__0__packages__0__version": "newest",
                  "repositories__0__pins__0__version": "560.*"},
                 [f"{LISTED}: no test double of cuda-drivers-550 matches its pin (it has: 550.54.15-1, 550.90.07-1)"],
                 id="pin-the-catalogue-cannot-meet"),
    pytest.param({"repositories__2__suites": ["trixie"], "repositories__2__name": "docker-ce"},
                 [f"{DOCKER_TRIXIE.replace('docker', 'docker-ce', 1)}: the catalogue has no dists repository at "
                  f"linux/debian suite trixie component stable nor one named docker-ce (it has: {CATALOGUE})"],
                 id="layout-it-cannot-serve"),
    pytest.param({"repositories__1__architectures": ["amd64", "arm64"]},
                 ["repository nvidia-container-toolkit (https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /): "
                  "architectures arm64: the test doubles are amd64 only"], id="arm64"),
    pytest.param({"repositories__2__type": "dnf"},
                 ["repository docker (https://download.docker.com/linux/debian bookworm stable): a dnf repository; the "
                  "test-double mirror serves apt repositories only"], id="dnf"),
    pytest.param({"files": [{"url": "https://m/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", "checksum": "sha256:0"}],
                  "repositories__0__packages__3__name": "nvidia-driver-999"},
                 ["file https://m/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz: the catalogue has no test double of "
                  "files downloaded by URL", f"{LISTED}: the catalogue has no test double of nvidia-driver-999"],
                 id="file-and-package-at-once"),
    pytest.param({"format": "gpucluster.core.artifacts/0"},
                 ["not an artifact list of gpucluster.core.artifacts/1 (format: 'gpucluster.core.artifacts/0')"],
                 id="format"),
])
def test_artifacts_mode_refuses_what_the_catalogue_cannot_provide(tmp_path, changes, errors):
    listing = tmp_path / "artifacts.json"
    listing.write_text(json.dumps(artifact_list(**changes)))
    out = tmp_path / "www"
    result = run([sys.executable, BUILD, "--spec", SPEC, "--artifacts", listing, "--out", out])
    assert result.returncode == 2
    assert result.stderr == "".join(f"{listing}: error: {error}\n" for error in errors)
    assert result.stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("a, b", [
    ("1.0", "1.0"), ("1.0-1", "1.0-2"), ("1.0~rc1", "1.0"), ("1:0.9", "2.0"), ("2.21.5-1+cuda12.4", "2.23.4-1+cuda12.6"),
    ("12.4.127-1", "12.4.131-1"), ("550.54.15-1", "550.90.07-1"), ("1.17.10-1", "1.17.8-1"), ("1.0a", "1.0+"),
    ("2.31.0-1~debian.12~bookworm", "2.31.0-1"), ("1.0", "1.0-0"), ("0:1.0", "1.0"), ("1.01", "1.1"),
])
def test_compare_versions_agrees_with_dpkg(a, b):
    expected = {run(["dpkg", "--compare-versions", a, op, b]).returncode == 0: op for op in ("lt", "eq", "gt")}[True]
    result = builder.compare_versions(a, b)
    assert {"lt": result < 0, "eq": result == 0, "gt": result > 0}[expected], (a, b, expected, result)
