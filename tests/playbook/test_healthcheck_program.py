# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/validation/files/gpucluster-healthcheck.py installed as the validation role installs it
(the program with the collection's module_utils next to it) and run as slurmd runs its
HealthCheckProgram: `env -i`, no PATH, --slurm. A tool that cannot run (missing, not executable)
must give a tooling warn and no drain (issue 32: "nvidia-smi: not found" drained every node);
a real fault (a real capture with fewer GPUs than expected) must still drain, within the drain
budget. scontrol is a stand-in that answers `show node <node>` and `show node` (the cluster) from
files and logs every call."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "roles" / "validation" / "files" / "gpucluster-healthcheck.py"
MODULES = yaml.safe_load((ROOT / "roles" / "validation" / "vars" / "main.yml").read_text())["__validation_healthcheck_modules"]
H100 = ROOT / "tests" / "unit" / "fixtures" / "h100-80gb-hbm3-driver580" / "nvidia-smi-q.xml"
SCONTROL = """#!/bin/sh
echo "$*" >> "%(log)s"
[ "$1 $2 $3" = "show node " ] && { cat "%(cluster)s"; exit %(cluster_rc)s; }
[ "$1" = show ] && cat "%(node)s"
exit 0
"""
IDLE = "NodeName=gpu01 Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n   Reason=\n"
OURS = ("NodeName=gpu01 Arch=x86_64\n   State=IDLE+DRAIN ThreadsPerCore=1\n"
        "   Reason=gpucluster-validation: gpu_count [root@2026-11-27T14:00:00]\n")
ADMIN_OTHER = ("NodeName=gpu01 Arch=x86_64\n   State=IDLE+DRAIN ThreadsPerCore=1\n"
               "   Reason=gpucluster-validation: mounts [root@2026-11-27T14:00:00]\n")


def install(tmp_path: Path) -> Path:
    """The layout tools.yml makes under /usr/local/lib/gpucluster."""
    lib = tmp_path / "lib"
    utils = lib / "ansible_collections" / "gpucluster" / "core" / "plugins" / "module_utils"
    utils.mkdir(parents=True)
    for name in MODULES:
        shutil.copy(ROOT / "plugins" / "module_utils" / name, utils / name)
    shutil.copy(PROGRAM, lib / PROGRAM.name)
    return lib / PROGRAM.name


def cluster(ours: int, admin: int, idle: int) -> str:
    """`scontrol show node` of a cluster: gpu01 idle (the node checked), ``ours`` nodes drained by this
    system, ``admin`` by an admin, ``idle`` more idle ones."""
    records = [IDLE]
    for i in range(ours):
        records.append(OURS.replace("gpu01", "gpu%02d" % (i + 2)))
    for i in range(admin):
        records.append(("NodeName=adm%02d Arch=x86_64\n   State=IDLE+DRAIN ThreadsPerCore=1\n"
                        "   Reason=Kill task failed [root@2024-08-08T19:12:57]\n") % i)
    for i in range(idle):
        records.append(IDLE.replace("gpu01", "idle%02d" % i))
    return "\n".join(records)


def healthcheck(tmp_path: Path, node_state: str, nvidia_smi: str | None, gpus: int = 1,
                listing: str | None = None, listing_rc: int = 0, budget: dict | None = None) -> tuple[dict, list[str]]:
    """Run the installed program under env -i with --slurm --json; (its JSON, scontrol's calls)."""
    program = install(tmp_path)
    vendor = tmp_path / "vendor" / "bin"  # outside any default search path, as /usr/local/bin was for slurmd
    vendor.mkdir(parents=True)
    missing = tmp_path / "missing"
    tools = {name: str(missing / name) for name in ("systemctl", "journalctl", "dmesg", "timeout", "stat")}
    log = tmp_path / "scontrol.log"
    (tmp_path / "node.txt").write_text(node_state, encoding="utf-8")
    (tmp_path / "cluster.txt").write_text(node_state if listing is None else listing, encoding="utf-8")
    scontrol = vendor / "scontrol"
    scontrol.write_text(SCONTROL % {"log": log, "node": tmp_path / "node.txt", "cluster": tmp_path / "cluster.txt",
                                    "cluster_rc": listing_rc}, encoding="utf-8")
    scontrol.chmod(0o755)
    tools["scontrol"] = str(scontrol)
    tools["nvidia-smi"] = str(missing / "nvidia-smi")
    if nvidia_smi is not None:
        (vendor / "nvidia-smi").write_text(nvidia_smi, encoding="utf-8")
        (vendor / "nvidia-smi").chmod(0o755 if nvidia_smi.startswith("#!") else 0o644)
        tools["nvidia-smi"] = str(vendor / "nvidia-smi")
    config = {"expected": {"gpu_count": {"value": gpus, "source": "Slurm (gres/gpu=%d)" % gpus}},
              "reason_prefix": "gpucluster-validation:", "settings": {"nvidia_smi": "nvidia-smi", "tools": tools}}
    if budget is not None:
        config["drain_budget"] = budget
    (tmp_path / "healthcheck.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(["/usr/bin/env", "-i", shutil.which("python3") or "/usr/bin/python3", str(program),
                           "--config", str(tmp_path / "healthcheck.json"), "--node", "gpu01", "--slurm", "--json"],
                          capture_output=True, text=True, timeout=120, env={}, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return json.loads(proc.stdout), calls


def check(document: dict, name: str) -> dict:
    return next(item for item in document["checks"] if item["check"] == name)


@pytest.mark.parametrize("nvidia_smi, words", [
    (None, "No such file or directory"),
    ("not a program\n", "Permission denied"),
], ids=["missing", "not-executable"])
def test_tool_that_cannot_run_warns_and_drains_nothing(tmp_path, nvidia_smi, words):
    document, calls = healthcheck(tmp_path, IDLE, nvidia_smi, gpus=8)
    gpu_count = check(document, "gpu_count")
    where = tmp_path / ("missing" if nvidia_smi is None else "vendor/bin") / "nvidia-smi"
    assert (gpu_count["status"], gpu_count["measured"], gpu_count["tooling"], gpu_count["message"]) == (
        "warn", None, True,
        "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=%d: %s: %s" % (
            127 if nvidia_smi is None else 126, where, words))
    assert check(document, "xid")["message"] == (
        "the kernel log could not be read: journalctl rc=127: %s/journalctl: No such file or directory; "
        "dmesg rc=127: %s/dmesg: No such file or directory" % (tmp_path / "missing", tmp_path / "missing"))
    assert (document["verdict"], document["tooling"], document["action"]) == ("warn", ["gpu_count", "xid"], "none")
    assert [c["check"] for c in document["checks"] if c["status"] == "fail"] == []
    assert calls == ["show node gpu01"]


def test_own_drain_is_kept_while_its_check_cannot_be_judged(tmp_path):
    document, calls = healthcheck(tmp_path, OURS, None, gpus=8)
    assert (document["verdict"], document["action"]) == ("warn", "kept drained (not judged: gpu_count)")
    assert calls == ["show node gpu01"]


def test_own_drain_for_a_check_judged_again_is_resumed(tmp_path):
    # drained for mounts, which passes now (none expected): the nvidia-smi fault does not block it
    document, calls = healthcheck(tmp_path, ADMIN_OTHER, None, gpus=8)
    assert (document["verdict"], document["action"]) == ("warn", "resumed")
    assert calls == ["show node gpu01", "update nodename=gpu01 state=resume"]


def test_tool_outside_the_default_path_is_found_and_a_real_fault_drains(tmp_path):
    # nvidia-smi in a vendor directory, named by absolute path in the config: it runs under env -i,
    # and the real H100 capture (1 GPU) where 8 are expected is a hardware verdict: drained.
    document, calls = healthcheck(tmp_path, IDLE, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=8)
    gpu_count = check(document, "gpu_count")
    assert (gpu_count["status"], gpu_count["measured"], gpu_count["message"]) == (
        "fail", 1, "1 GPUs answer nvidia-smi, 8 expected")
    assert "tooling" not in gpu_count
    assert (document["verdict"], document["action"]) == ("fail", "drained")
    assert calls == ["show node gpu01", "show node",
                     "update nodename=gpu01 state=drain reason=gpucluster-validation: gpu_count"]


def test_healthy_node_with_its_tool_resumes_its_own_drain(tmp_path):
    document, calls = healthcheck(tmp_path, OURS, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=1)
    assert check(document, "gpu_count")["status"] == "pass"
    assert (document["verdict"], document["tooling"], document["action"]) == ("warn", ["xid"], "resumed")
    assert calls == ["show node gpu01", "update nodename=gpu01 state=resume"]


FAULTY = "#!/bin/sh\nexec /bin/cat %s\n" % H100  # 1 GPU where 8 are expected: a hardware verdict, fail
HELD = "held (drain budget spent: %d of %d nodes drained by gpucluster-validation, budget %d (10%% of %d, at least %d))"


@pytest.mark.parametrize("listing, budget, action", [
    # 20 nodes, 2 drained by us (budget 2): held; the verdict stays fail
    (cluster(2, 0, 17), {"fraction": 0.1, "min_nodes": 2}, HELD % (2, 20, 2, 20, 2)),
    # the defaults when the config has none (an older install): 10 %, at least 2
    (cluster(2, 0, 17), None, HELD % (2, 20, 2, 20, 2)),
    # 30 nodes: 10 % is 3, one place left
    (cluster(2, 0, 27), {"fraction": 0.1, "min_nodes": 2}, "drained"),
    # an admin's drains are not counted
    (cluster(1, 5, 14), {"fraction": 0.1, "min_nodes": 2}, "drained"),
    # a one-node cluster: the floor lets it drain itself
    (IDLE, {"fraction": 0.1, "min_nodes": 2}, "drained"),
    (IDLE, {"fraction": 0.1, "min_nodes": 0}, HELD.replace("at least %d", "at least 0") % (0, 1, 0, 1)),
], ids=["spent", "default-budget", "room", "admin-not-counted", "one-node", "one-node-no-floor"])
def test_real_fault_keeps_to_the_drain_budget(tmp_path, listing, budget, action):
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8, listing=listing, budget=budget)
    assert (document["verdict"], document["action"]) == ("fail", action)
    drain = ["update nodename=gpu01 state=drain reason=gpucluster-validation: gpu_count"] if action == "drained" else []
    assert calls == ["show node gpu01", "show node"] + drain


@pytest.mark.parametrize("listing, rc, why", [
    ("", 1, "scontrol rc=1: no output"),
    ("slurm_load_node error: Unable to contact slurm controller (connect failure)\n", 1,
     "scontrol rc=1: slurm_load_node error: Unable to contact slurm controller (connect failure)"),
    ("Reason=garbled\n", 0, "scontrol show node: line 1 comes before any NodeName= line: Reason=garbled"),
], ids=["no-output", "controller-down", "not-a-listing"])
def test_unreadable_listing_drains_nothing(tmp_path, listing, rc, why):
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8, listing=listing, listing_rc=rc)
    assert (document["verdict"], document["action"]) == (
        "fail", "not drained: the nodes could not be read to keep the drain budget (tooling): " + why)
    assert calls == ["show node gpu01", "show node"]


# --- Kubernetes (--kubernetes, run by the systemd timer on Kubernetes nodes without Slurm) ---------
# kubectl is a stand-in that answers `get nodes` from a file (with an exit code) and logs every call.
KUBECTL = """#!/bin/sh
echo "$*" >> "%(log)s"
case "$*" in *" get nodes "*) cat "%(nodes)s"; exit %(rc)s;; esac
exit 0
"""
MARK = "gpucluster.core/validation-cordon"
READER = "/etc/gpucluster/healthcheck-kubernetes.conf"
KUBELET = "/etc/kubernetes/kubelet.conf"


def kube_node(name: str, cordoned: bool = False, mark: str | None = None) -> dict:
    meta: dict = {"name": name, "resourceVersion": "41"}
    if mark is not None:
        meta["annotations"] = {MARK: mark}
    return {"metadata": meta, "spec": {"unschedulable": True} if cordoned else {}}


def kube_cluster(own: dict, ours: int = 0, admin: int = 0, idle: int = 0) -> str:
    """`kubectl get nodes --output=json`: gpu01 (``own``), ``ours`` nodes cordoned by this system,
    ``admin`` by an admin, ``idle`` more schedulable ones."""
    items = [own] + [kube_node("gpu%02d" % (i + 2), True, "gpucluster-validation: xid") for i in range(ours)]
    items += [kube_node("adm%02d" % i, True) for i in range(admin)] + [kube_node("idle%02d" % i) for i in range(idle)]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def kube_healthcheck(tmp_path: Path, nodes: str, nvidia_smi: str | None, gpus: int = 8,
                     rc: int = 0) -> tuple[dict, list[str]]:
    """Run the installed program under env -i with --kubernetes --json; (its JSON, kubectl's calls)."""
    program = install(tmp_path)
    vendor = tmp_path / "vendor" / "bin"
    vendor.mkdir(parents=True)
    missing = tmp_path / "missing"
    tools = {name: str(missing / name) for name in ("systemctl", "journalctl", "dmesg", "timeout", "stat", "scontrol")}
    log = tmp_path / "kubectl.log"
    (tmp_path / "nodes.json").write_text(nodes, encoding="utf-8")
    kubectl = vendor / "kubectl"
    kubectl.write_text(KUBECTL % {"log": log, "nodes": tmp_path / "nodes.json", "rc": rc}, encoding="utf-8")
    kubectl.chmod(0o755)
    tools["kubectl"] = str(kubectl)
    tools["nvidia-smi"] = str(missing / "nvidia-smi")
    if nvidia_smi is not None:
        (vendor / "nvidia-smi").write_text(nvidia_smi, encoding="utf-8")
        (vendor / "nvidia-smi").chmod(0o755)
        tools["nvidia-smi"] = str(vendor / "nvidia-smi")
    config = {"expected": {"gpu_count": {"value": gpus, "source": "inventory"}},
              "reason_prefix": "gpucluster-validation:", "drain_budget": {"fraction": 0.1, "min_nodes": 2},
              "kubernetes": {"node": "gpu01", "kubeconfig": KUBELET, "read_kubeconfig": READER, "mark": MARK},
              "settings": {"nvidia_smi": "nvidia-smi", "tools": tools}}
    (tmp_path / "healthcheck.json").write_text(json.dumps(config), encoding="utf-8")
    # --node names another host: the config's Kubernetes node name wins.
    proc = subprocess.run(["/usr/bin/env", "-i", shutil.which("python3") or "/usr/bin/python3", str(program),
                           "--config", str(tmp_path / "healthcheck.json"), "--node", "gpu01-host", "--kubernetes", "--json"],
                          capture_output=True, text=True, timeout=120, env={}, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return json.loads(proc.stdout), calls


GET = "--kubeconfig %s get nodes --output=json" % READER
PATCH = "--kubeconfig %s patch node gpu01 --type=merge --patch=" % KUBELET


def test_kubernetes_real_fault_cordons_within_budget(tmp_path):
    # 30 nodes, 2 cordoned by this system, 3 by an admin (not counted): 10 % is 3, one place left.
    document, calls = kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01"), ours=2, admin=3, idle=24), FAULTY)
    assert (document["verdict"], document["action"]) == ("fail", "cordoned")
    assert calls == [GET, PATCH + json.dumps({"metadata": {"annotations": {MARK: "gpucluster-validation: gpu_count"},
                                                           "resourceVersion": "41"}, "spec": {"unschedulable": True}},
                                             sort_keys=True)]


def test_kubernetes_budget_holds_the_cordon(tmp_path):
    document, calls = kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01"), ours=2, admin=3, idle=14), FAULTY)
    assert (document["verdict"], document["action"]) == (
        "fail", "held (drain budget spent: 2 of 20 nodes cordoned by gpucluster-validation, budget 2 (10% of 20, at least 2))")
    assert calls == [GET]


@pytest.mark.parametrize("nvidia_smi, gpus", [(FAULTY, 8), (FAULTY, 1)], ids=["failing", "passing"])
def test_kubernetes_admin_cordon_is_untouched(tmp_path, nvidia_smi, gpus):
    document, calls = kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01", True), idle=3), nvidia_smi, gpus=gpus)
    assert document["action"] == "kept cordoned (admin)"
    assert calls == [GET]


def test_kubernetes_own_cordon_is_lifted_after_its_check_passes(tmp_path):
    own = kube_node("gpu01", True, "gpucluster-validation: gpu_count")
    document, calls = kube_healthcheck(tmp_path, kube_cluster(own, idle=3), FAULTY, gpus=1)
    assert (check(document, "gpu_count")["status"], document["action"]) == ("pass", "uncordoned")
    assert calls == [GET, PATCH + json.dumps({"metadata": {"annotations": {MARK: None}, "resourceVersion": "41"},
                                              "spec": {"unschedulable": False}}, sort_keys=True)]


@pytest.mark.parametrize("mark, action", [
    ("gpucluster-validation: gpu_count", "kept cordoned (not judged: gpu_count)"),    # nvidia-smi missing
    ("gpucluster-validation: kubernetes_gpu_pod", "kept cordoned (not judged: kubernetes_gpu_pod)"),  # validate.yml's
], ids=["tooling", "active-check"])
def test_kubernetes_own_cordon_is_kept_while_not_judged(tmp_path, mark, action):
    document, calls = kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01", True, mark), idle=3), None)
    assert (document["verdict"], document["action"]) == ("warn", action)
    assert calls == [GET]


@pytest.mark.parametrize("nodes, rc, why", [
    ("", 1, "kubectl rc=1: no output"),
    ('Error from server (Forbidden): nodes is forbidden: User "system:node:gpu01" cannot list resource "nodes"\n', 1,
     'kubectl rc=1: Error from server (Forbidden): nodes is forbidden: User "system:node:gpu01" cannot list resource "nodes"'),
    ("{", 0, "kubectl get nodes: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
], ids=["no-output", "forbidden", "not-json"])
def test_kubernetes_unreadable_node_list_cordons_nothing(tmp_path, nodes, rc, why):
    document, calls = kube_healthcheck(tmp_path, nodes, FAULTY, rc=rc)
    assert (document["verdict"], document["action"]) == (
        "fail", "no action: the nodes could not be read to keep the drain budget (tooling): " + why)
    assert calls == [GET]
