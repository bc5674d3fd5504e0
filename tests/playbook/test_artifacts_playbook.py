# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/artifacts.yml: the artifact list of an inventory, without docker.

The hosts are unreachable (ssh to a closed port) and described by a fact cache seeded here
(Debian 12, Debian 13, Ubuntu 22.04, with and without GPUs), one host is known nowhere, and one
is this machine (local connection, read in the run). The expected content comes from the lab
inventory's pins and the roles' own variable files, so a role or a pin that changes shows here.
Then the sandbox inventory's list builds the test-double mirror with build.py --artifacts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from roleplay import seed_fact_cache

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".venv" / "collections"))
from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _support as support_matrix  # noqa: E402

LAB_VARS = yaml.safe_load((ROOT / "inventories/lab/group_vars/cluster.yml").read_text(encoding="utf-8"))
NVIDIA = "https://developer.download.nvidia.com/compute/cuda/repos"
DOCKER = "https://download.docker.com/linux"
TOOLKIT = "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)"
UNREACHABLE = {"ansible_connection": "ssh", "ansible_ssh_host": "127.0.0.1", "ansible_port": 1}


def os_facts(distribution, version, release, kernel):
    return {"ansible_distribution": distribution, "ansible_distribution_version": version,
            "ansible_distribution_major_version": version.split(".")[0], "ansible_distribution_release": release,
            "ansible_os_family": "Debian", "ansible_architecture": "x86_64", "ansible_pkg_mgr": "apt",
            "ansible_kernel": kernel, "ansible_python": {"version": {"major": 3, "minor": 11}}}


def gpus(device_id, count=8, nvswitches=0):
    """What gpucluster.core.nvidia_smi_facts reports on a node with GPUs and no driver yet (PCI scan)."""
    return {"driver_available": False, "gpu_count": 0, "gpus": [],
            "pci": {"gpus": [{"device_id": device_id}] * count, "gpu_count": count,
                    "nvswitches": [{}] * nvswitches, "nvswitch_count": nvswitches}}


# Tesla V100S (Volta: proprietary modules); H100 SXM5 with NVSwitches (Hopper: open modules, fabric manager).
CACHED = {
    "deb12-gpu": dict(os_facts("Debian", "12.8", "bookworm", "6.1.0-28-amd64"), nvidia=gpus("0x1df6")),
    "deb13-gpu": dict(os_facts("Debian", "13.1", "trixie", "6.12.48+deb13-amd64"), nvidia=gpus("0x2330", nvswitches=4)),
    "jammy-gpu": os_facts("Ubuntu", "22.04", "jammy", "5.15.0-125-generic"),
    "deb12-cpu": dict(os_facts("Debian", "12.8", "bookworm", "6.1.0-28-amd64"), nvidia=gpus("0x1df6", count=0)),
    # A release the roles do not support.
    "focal-cpu": os_facts("Ubuntu", "20.04", "focal", "5.4.0-200-generic"),
    # An image build: a GPU node by the inventory, no GPU in it.
    "image-build": dict(os_facts("Debian", "12.8", "bookworm", "6.1.0-28-amd64"), nvidia=gpus("0x1df6", count=0)),
}


def run_artifacts(tmp_path: Path, inventories, facts_by_host, *extra):
    cache = tmp_path / "facts"
    seed_fact_cache(cache, facts_by_host)
    out = tmp_path / "artifacts.json"
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache),
               ANSIBLE_CACHE_PLUGIN_TIMEOUT="86400", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_SSH_ARGS="-o ConnectTimeout=5 -o BatchMode=yes")
    args = ["ansible-playbook"]
    for inventory in inventories:
        args += ["-i", str(inventory)]
    args += [str(ROOT / "playbooks/artifacts.yml"), "-e", f"gpucluster_artifacts_file={out}", *extra]
    result = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), result


def recap(stdout: str) -> dict:
    return {host: dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", counts))
            for host, counts in re.findall(r"^(\S+)\s+: (ok=.*)$", stdout, re.M)}


def supported(role: str, distribution: str, major: str) -> bool:
    """A role's supported releases, from the collection's support matrix."""
    return any(r.distribution == distribution and r.major == major for r in support_matrix.role_releases(role))


def repo(doc, url, suite=None):
    found = [r for r in doc["repositories"] if r["url"] == url and (suite is None or r["suites"] == [suite])]
    assert len(found) == 1, (url, suite, [(r["url"], r["suites"]) for r in doc["repositories"]])
    return found[0]


def packages(repository, host):
    return {p["name"]: p["version"] for p in repository["packages"] if host in p["hosts"]}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mixed")
    inventory = {"all": {"children": {
        "cluster": {"hosts": {
            "deb12-gpu": dict(UNREACHABLE), "deb13-gpu": dict(UNREACHABLE),
            "jammy-gpu": dict(UNREACHABLE, gpucluster_gpu_node=True),
            "deb12-cpu": dict(UNREACHABLE, nfs_exports=[{"path": "/data/shared", "clients": ["192.168.1.0/24"]}]),
            "focal-cpu": dict(UNREACHABLE, gpucluster_gpu_node=False),
            "image-build": dict(UNREACHABLE, gpucluster_gpu_node=True),
            "unknown": dict(UNREACHABLE),
            "this-machine": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                             "gpucluster_gpu_node": False}}},
        "slurm_controller": {"hosts": {"deb12-cpu": None}},
        "slurm_compute": {"hosts": {"deb12-gpu": None, "deb13-gpu": None}}}}}
    (tmp / "inventory").mkdir()
    (tmp / "inventory/hosts.yml").write_text(yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
    # The lab's settings and pins, as they are.
    (tmp / "inventory/group_vars").mkdir()
    shutil.copy(ROOT / "inventories/lab/group_vars/cluster.yml", tmp / "inventory/group_vars/cluster.yml")
    return run_artifacts(tmp, [tmp / "inventory"], CACHED)


def test_every_known_host_is_listed_and_the_unknown_one_is_warned_about(mixed):
    doc, result = mixed
    hosts = {h["host"]: h for h in doc["hosts"]}
    assert [h["host"] for h in doc["hosts"]] == ["deb12-gpu", "deb13-gpu", "jammy-gpu", "deb12-cpu", "focal-cpu",
                                                 "image-build", "unknown", "this-machine"]
    assert {name: (h["os_from"], h["listed"]) for name, h in hosts.items()} == {
        "deb12-gpu": ("fact cache", True), "deb13-gpu": ("fact cache", True), "jammy-gpu": ("fact cache", True),
        "deb12-cpu": ("fact cache", True), "focal-cpu": ("fact cache", True), "image-build": ("fact cache", True),
        "unknown": ("unknown", False), "this-machine": ("gathered", True)}
    assert hosts["deb13-gpu"]["os"] == {"distribution": "Debian", "version": "13.1", "major_version": "13",
                                        "release": "trixie", "os_family": "Debian", "architecture": "x86_64",
                                        "pkg_mgr": "apt"}
    assert hosts["this-machine"]["os"]["distribution"] and hosts["this-machine"]["reason"] is None
    assert hosts["unknown"]["reason"].startswith("not reachable: ")
    assert {name: (h["gpu_node"], h["gpu_node_from"]) for name, h in hosts.items()} == {
        "deb12-gpu": (True, "fact cache"), "deb13-gpu": (True, "fact cache"), "jammy-gpu": (True, "gpucluster_gpu_node"),
        "deb12-cpu": (False, "fact cache"), "focal-cpu": (False, "gpucluster_gpu_node"),
        "image-build": (True, "gpucluster_gpu_node"), "unknown": (None, None), "this-machine": (False, "gpucluster_gpu_node")}
    gpu_roles = ["base_os", "nvidia_driver", "cuda", "ofed", "container_toolkit", "nfs", "monitoring"]
    assert hosts["deb12-gpu"]["roles"] == gpu_roles + ["slurm"]
    assert hosts["jammy-gpu"]["roles"] == gpu_roles
    assert hosts["deb12-cpu"]["roles"] == ["base_os", "ofed", "nfs", "monitoring", "slurm"]
    assert hosts["unknown"]["roles"] == []
    assert ("host 'unknown': unknown OS (not reachable in this run and not in the fact cache): nothing is listed "
            "for it") in doc["warnings"]
    assert "host 'deb13-gpu': not reachable in this run: its OS (Debian 13.1 (trixie)) comes from the fact cache" \
        in doc["warnings"]
    assert not any("this-machine" in w for w in doc["warnings"])
    # The table on stdout; nothing changed on any host (only the JSON on the controller).
    assert "gpucluster.core artifacts: 7 of 8 hosts listed (JSON: " in result.stdout
    counts = recap(result.stdout)
    assert {host: c["changed"] for host, c in counts.items()} == {
        "deb12-gpu": 0, "deb13-gpu": 0, "jammy-gpu": 0, "deb12-cpu": 0, "focal-cpu": 0, "image-build": 0, "unknown": 0,
        "this-machine": 0, "localhost": 1}
    assert all(c["failed"] == 0 and c["unreachable"] == 0 for c in counts.values()), counts


def test_cuda_repository_per_release_with_the_lab_pins(mixed):
    doc, _result = mixed
    branch, version = LAB_VARS["nvidia_driver_branch"], LAB_VARS["nvidia_driver_version"]
    toolkit = LAB_VARS["cuda_default_toolkit"]
    cuda = {"cuda-toolkit-" + toolkit.replace(".", "-"): LAB_VARS["cuda_toolkit_versions"][toolkit],
            "libcudnn9-cuda-12": LAB_VARS["cuda_cudnn_version"], "libcudnn9-dev-cuda-12": LAB_VARS["cuda_cudnn_version"],
            "libnccl2": LAB_VARS["cuda_nccl_version"], "libnccl-dev": LAB_VARS["cuda_nccl_version"]}
    driver = "cuda-drivers-" + branch
    expected = {
        # Volta: the proprietary modules.
        ("debian12", "deb12-gpu"): {driver: version, "nvidia-kernel-dkms": version, **cuda},
        # Hopper with NVSwitches: the open modules and the fabric manager, locked to the driver.
        ("debian13", "deb13-gpu"): {driver: version, "nvidia-kernel-open-dkms": version,
                                    "nvidia-fabricmanager-" + branch: version, **cuda},
        # GPUs known nowhere: both flavours and the fabric manager (auto).
        ("ubuntu2204", "jammy-gpu"): {driver: version, "nvidia-kernel-open-dkms": version,
                                      "nvidia-kernel-dkms": version, "nvidia-fabricmanager-" + branch: version, **cuda},
    }
    for (path, host), wanted in expected.items():
        url = f"{NVIDIA}/{path}/x86_64/"
        repository = repo(doc, url)
        assert (repository["type"], repository["name"], repository["suites"], repository["components"],
                repository["key_url"], repository["hosts"], repository["roles"]) == (
            "apt", "cuda", ["/"], [], url + "3bf863cc.pub", [host] + (["image-build"] if path == "debian12" else []),
            ["nvidia_driver", "cuda", "monitoring"]), path
        # The monitoring role's DCGM exporter comes from the same repository, at its newest.
        assert packages(repository, host) == {**wanted, "datacenter-gpu-manager-4-core": "newest",
                                              "datacenter-gpu-manager-exporter": "newest"}, path
        # The driver packages pinned to the version, the cuda packages to theirs.
        pins = {p["name"]: p["version"] for p in repository["pins"]}
        assert pins["cuda-drivers*"] == version and pins["nvidia-kernel-*"] == version
        assert {name: pins[name] for name in cuda} == cuda
    assert ("host 'jammy-gpu': nvidia_driver: GPU hardware unknown: the packages of both kernel module flavours are "
            "listed") in doc["warnings"]


def test_a_gpu_node_the_inventory_declares_gets_its_driver_without_gpus(mixed):
    # An image build: gpucluster_gpu_node true, no GPU found. site.yml installs the driver there
    # (playbooks/tasks/declared_gpu_node.yml), with the open modules the role picks without GPUs.
    doc, _result = mixed
    debian12 = repo(doc, f"{NVIDIA}/debian12/x86_64/")
    assert packages(debian12, "image-build") == {
        "cuda-drivers-550": LAB_VARS["nvidia_driver_version"], "nvidia-kernel-open-dkms": LAB_VARS["nvidia_driver_version"],
        "cuda-toolkit-12-4": "12.4.1-1", "libcudnn9-cuda-12": LAB_VARS["cuda_cudnn_version"],
        "libcudnn9-dev-cuda-12": LAB_VARS["cuda_cudnn_version"], "libnccl2": LAB_VARS["cuda_nccl_version"],
        "libnccl-dev": LAB_VARS["cuda_nccl_version"],
        "datacenter-gpu-manager-4-core": "newest", "datacenter-gpu-manager-exporter": "newest"}
    assert not [w for w in doc["warnings"] if w.startswith("host 'image-build': nvidia_driver: no driver")]
    # A GPU node with GPUs keeps the role's choice (V100S: the proprietary modules).
    assert "nvidia-kernel-dkms" in packages(debian12, "deb12-gpu")
    assert "image-build" in repo(doc, TOOLKIT)["hosts"]


def test_docker_and_toolkit_repositories(mixed):
    doc, _result = mixed
    for url, suite, hosts in ((f"{DOCKER}/debian", "bookworm", ["deb12-gpu", "image-build"]),
                              (f"{DOCKER}/debian", "trixie", ["deb13-gpu"]), (f"{DOCKER}/ubuntu", "jammy", ["jammy-gpu"])):
        docker = repo(doc, url, suite)
        assert (docker["components"], docker["key_url"], docker["hosts"]) == (["stable"], url + "/gpg", hosts)
        host = hosts[0]
        assert packages(docker, host) == {name: "newest" for name in (
            "docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin", "docker-compose-plugin")}
    toolkit = repo(doc, TOOLKIT)
    assert toolkit["hosts"] == ["deb12-gpu", "deb13-gpu", "jammy-gpu", "image-build"]
    assert {p["name"]: p["version"] for p in toolkit["packages"]} == {name: LAB_VARS["container_toolkit_version"] for name in (
        "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1")}
    assert [i["name"] for i in doc["images"]] == ["nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"]


def test_cpu_only_hosts_get_no_gpu_artifacts(mixed):
    doc, _result = mixed
    for entry in doc["repositories"] + doc["images"] + doc["files"]:
        assert not {"deb12-cpu", "focal-cpu", "this-machine"} & set(entry["hosts"]), entry
    debian12 = next(g for g in doc["distribution_packages"] if g["os"] == "Debian 12 (bookworm)")
    by_name = {p["name"]: p for p in debian12["packages"]}
    assert "deb12-cpu" in by_name["chrony"]["hosts"]
    assert "deb12-cpu" in by_name["rdma-core"]["hosts"]  # the lab's inbox RDMA stack
    assert by_name["nfs-kernel-server"]["hosts"] == ["deb12-cpu"]
    assert "deb12-cpu" in by_name["slurmctld"]["hosts"] and "deb12-gpu" in by_name["slurmd"]["hosts"]
    assert by_name["linux-headers-6.1.0-28-amd64"]["hosts"] == ["deb12-gpu", "image-build"]
    assert by_name["initramfs-tools"]["roles"] == ["nvidia_driver"]
    assert "deb12-cpu" not in by_name["initramfs-tools"]["hosts"]
    # The apt tools the common role installs before a vendor source: only where a role adds one.
    assert "deb12-cpu" not in by_name["python3-debian"]["hosts"] and "deb12-gpu" in by_name["python3-debian"]["hosts"]
    assert all(p["version"] is None for g in doc["distribution_packages"] for p in g["packages"])


def test_unsupported_releases_are_warned_about_as_the_roles_decide(mixed):
    doc, _result = mixed
    checked = []
    for entry in doc["hosts"]:
        if entry["os"] is None:
            continue
        distribution, version = entry["os"]["distribution"], entry["os"]["version"]
        for role in set(entry["roles"]) - {"common"}:
            warning = (f"host '{entry['host']}': {role} does not support {distribution} {version} (its preflight "
                       "stops there): listed as it would install")
            expected = not supported(role, distribution, entry["os"]["major_version"])
            assert (warning in doc["warnings"]) == expected, warning
            checked.append(expected)
    assert True in checked and False in checked


def test_the_sandbox_list_builds_its_mirror(tmp_path):
    """The sandbox inventory's own list (its nodes as Debian 12 with the emulated V100S GPUs, from the fact
    cache) builds the test-double mirror with exactly the listed packages and their dependencies."""
    missing = [tool for tool in ("dpkg-deb", "apt-ftparchive", "gpg", "gpgconf") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    override = tmp_path / "unreachable.yml"
    override.write_text(yaml.safe_dump({"all": {"hosts": {h: UNREACHABLE for h in ("master", "worker1", "worker2")}}}))
    doc, _result = run_artifacts(tmp_path, [ROOT / "inventories/sandbox", override],
                                 {h: CACHED["deb12-gpu"] for h in ("master", "worker1", "worker2")})
    cuda = repo(doc, "http://mirror:8080/compute/cuda/repos/debian12/x86_64/")
    assert {p["name"]: p["version"] for p in cuda["packages"]} == {
        "cuda-drivers-550": "550.54.15-1", "nvidia-kernel-dkms": "550.54.15-1", "cuda-toolkit-12-4": "12.4.1-1",
        "libcudnn9-cuda-12": "9.1.0.70-1", "libcudnn9-dev-cuda-12": "9.1.0.70-1",
        "libnccl2": "2.21.5-1+cuda12.4", "libnccl-dev": "2.21.5-1+cuda12.4",
        "datacenter-gpu-manager-4-core": "newest", "datacenter-gpu-manager-exporter": "newest"}
    # Grafana's repository for master, the sandbox's monitoring host.
    assert [r["url"] for r in doc["repositories"]] == [
        "http://mirror:8080/compute/cuda/repos/debian12/x86_64/", "http://mirror:8080/libnvidia-container/stable/deb/amd64",
        "http://mirror:8080/grafana"]
    assert repo(doc, "http://mirror:8080/grafana")["packages"] == [
        {"name": "grafana", "version": "newest", "roles": ["monitoring"], "hosts": ["master"]}]
    out = tmp_path / "www"
    build = subprocess.run([sys.executable, ROOT / "tests/harness/mirror/build.py", "--artifacts", tmp_path / "artifacts.json",
                            "--out", out], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    manifest = json.loads((out / "mirror.json").read_text())
    served = {r["path"]: {(p["name"], p["version"]) for p in r["packages"]} for r in manifest["repos"]}
    for repository in doc["repositories"]:
        path = repository["url"].split("mirror:8080/", 1)[1].strip("/")
        # A package listed at its newest is served at the version the build chose.
        assert {(p["name"], p["version"]) for p in repository["packages"]} <= (
            served[path] | {(name, "newest") for name, _version in served[path]})
    # The driver's dependencies at the pinned version, none of the newer driver the catalogue also has.
    assert {v for n, v in served["compute/cuda/repos/debian12/x86_64"] if n.startswith(("nvidia-", "libcuda"))} == {
        "550.54.15-1"}


def test_a_site_slurm_repository_lists_the_slurm_packages_from_it(tmp_path):
    """slurm_repository set: the packages the node's Slurm roles need come from it (the repository as
    tasks/packages.yml adds it: the suite defaults to the host's release), none from the distribution."""
    site_repo = {"url": "https://slurm.example.org/debian", "key_url": "https://slurm.example.org/key.asc"}
    inventory = {"all": {"children": {
        "cluster": {"hosts": {"deb13-gpu": dict(UNREACHABLE, gpucluster_gpu_node=False, slurm_repository=site_repo)}},
        "slurm_controller": {"hosts": {"deb13-gpu": None}}}}}
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory/hosts.yml").write_text(yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
    doc, _result = run_artifacts(tmp_path, [tmp_path / "inventory"], {"deb13-gpu": CACHED["deb13-gpu"]})
    slurm = repo(doc, site_repo["url"])
    assert (slurm["name"], slurm["key_url"], slurm["suites"], slurm["components"]) == (
        "gpucluster-slurm", site_repo["key_url"], ["trixie"], ["main"])
    assert packages(slurm, "deb13-gpu") == {"munge": "newest", "slurm-client": "newest", "slurmctld": "newest"}
    listed = {p["name"] for g in doc["distribution_packages"] for p in g["packages"]}
    assert not {"munge", "slurm-client", "slurmctld"} & listed


def test_kubernetes_hosts_list_the_kubernetes_repository_images_chart_and_manifest(tmp_path):
    inventory = {"all": {"children": {
        "cluster": {"hosts": {"deb12-cpu": dict(UNREACHABLE), "deb12-gpu": dict(UNREACHABLE)}},
        "k8s_control_plane": {"hosts": {"deb12-cpu": None}},
        "k8s_workers": {"hosts": {"deb12-gpu": None}}}}}
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory/hosts.yml").write_text(yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
    (tmp_path / "inventory/group_vars").mkdir()
    shutil.copy(ROOT / "inventories/lab/group_vars/cluster.yml", tmp_path / "inventory/group_vars/cluster.yml")
    doc, _result = run_artifacts(tmp_path, [tmp_path / "inventory"], CACHED)
    kubernetes = repo(doc, "https://pkgs.k8s.io/core:/stable:/v1.33/deb/")
    for host in ("deb12-cpu", "deb12-gpu"):
        assert packages(kubernetes, host) == {"kubelet": "1.33.5-1.1", "kubeadm": "1.33.5-1.1", "kubectl": "1.33.5-1.1"}
    images = {entry["name"]: entry["hosts"] for entry in doc["images"]}
    assert images["registry.k8s.io/kube-apiserver:v1.33.5"] == ["deb12-cpu"]
    assert images["registry.k8s.io/kube-proxy:v1.33.5"] == ["deb12-cpu", "deb12-gpu"]
    assert images["registry.k8s.io/pause:3.10"] == ["deb12-cpu", "deb12-gpu"]
    assert [(c["repository"], c["name"], c["version"], c["hosts"]) for c in doc["charts"]] == [
        ("https://helm.ngc.nvidia.com/nvidia", "gpu-operator", "v25.3.4", ["deb12-cpu"])]
    assert [m["url"] for m in doc["manifests"]] == [
        "https://github.com/flannel-io/flannel/releases/download/v0.26.7/kube-flannel.yml",
        "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.8.1"]
    assert "https://get.helm.sh/helm-v3.17.2-linux-amd64.tar.gz" in [f["url"] for f in doc["files"]]
    assert "host 'deb12-cpu': kubernetes: the control plane also pulls etcd and CoreDNS at the versions kubeadm 1.33.5" \
        " decides: kubeadm config images list --kubernetes-version v1.33.5 --image-repository registry.k8s.io names them" \
        in doc["warnings"]
    # The Python Kubernetes client of kubernetes.core's modules on the control plane node: Debian 12's is too old, pip's.
    debian12 = next(g for g in doc["distribution_packages"] if g["os"] == "Debian 12 (bookworm)")
    by_name = {p["name"]: p["hosts"] for p in debian12["packages"]}
    assert by_name["python3-venv"] == ["deb12-cpu"] and by_name["python3-packaging"] == ["deb12-cpu"]
    assert "python3-kubernetes" not in by_name
    assert "host 'deb12-cpu': kubernetes: kubernetes.core's modules run with the Python Kubernetes client pip installs into" \
        " /opt/gpucluster/kubernetes-client: kubernetes==30.1.0 and jsonpatch==1.33 with their dependencies, from PyPI or the" \
        " index kubernetes_client_pip_env names" in doc["warnings"]
    assert not [w for w in doc["warnings"] if "deb12-gpu" in w and "Python Kubernetes client" in w]
