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
import time
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
[ "$1" = show ] && { cat "%(node)s"; exit 0; }
[ -e "%(refuse)s" ] && { echo "slurm_update error: Invalid node state specified" >&2; exit 1; }
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
    utils.mkdir(parents=True, exist_ok=True)
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
                listing: str | None = None, listing_rc: int = 0, budget: dict | None = None,
                expected: dict | None = None, tools: dict | None = None, metrics: dict | None = None,
                settings: dict | None = None, slurm: bool = True, tool_settings: dict | None = None) -> tuple[dict, list[str]]:
    """Run the installed program under env -i with --slurm --json; (its JSON, scontrol's calls).
    ``expected`` adds to the config's expectations, ``tools`` to its tools, ``tool_settings`` to its
    settings, ``settings`` to the config itself (confirm_runs...); ``metrics`` is the config's
    (default: the textfile folder tmp_path/textfile, made here). The state file is
    tmp_path/state.json; the stderr goes to tmp_path/stderr.txt. Called again with the same
    tmp_path, it runs the program again over the same state."""
    extra_tools = tools or {}
    program = install(tmp_path)
    vendor = tmp_path / "vendor" / "bin"  # outside any default search path, as /usr/local/bin was for slurmd
    vendor.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "scontrol.log"
    log.unlink(missing_ok=True)
    missing = tmp_path / "missing"
    tools = {name: str(missing / name) for name in ("systemctl", "journalctl", "dmesg", "timeout", "stat", "chronyc",
                                                    "timedatectl")}
    (tmp_path / "node.txt").write_text(node_state, encoding="utf-8")
    (tmp_path / "cluster.txt").write_text(node_state if listing is None else listing, encoding="utf-8")
    scontrol = vendor / "scontrol"
    scontrol.write_text(SCONTROL % {"log": log, "node": tmp_path / "node.txt", "cluster": tmp_path / "cluster.txt",
                                    "cluster_rc": listing_rc, "refuse": tmp_path / "refuse-updates"}, encoding="utf-8")
    scontrol.chmod(0o755)
    tools["scontrol"] = str(scontrol)
    tools["nvidia-smi"] = str(missing / "nvidia-smi")
    if nvidia_smi is not None:
        (vendor / "nvidia-smi").write_text(nvidia_smi, encoding="utf-8")
        (vendor / "nvidia-smi").chmod(0o755 if nvidia_smi.startswith("#!") else 0o644)
        tools["nvidia-smi"] = str(vendor / "nvidia-smi")
    tools.update(extra_tools)
    if metrics is None:
        (tmp_path / "textfile").mkdir(exist_ok=True)
        metrics = {"dir": str(tmp_path / "textfile"), "interval": 30}
    config = {"expected": dict({"gpu_count": {"value": gpus, "source": "Slurm (gres/gpu=%d)" % gpus}}, **(expected or {})),
              "reason_prefix": "gpucluster-validation:",
              "settings": dict({"nvidia_smi": "nvidia-smi", "tools": tools}, **(tool_settings or {})),
              "metrics": metrics, "state_file": str(tmp_path / "state.json"), **(settings or {})}
    if budget is not None:
        config["drain_budget"] = budget
    (tmp_path / "healthcheck.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(["/usr/bin/env", "-i", shutil.which("python3") or "/usr/bin/python3", str(program),
                           "--config", str(tmp_path / "healthcheck.json"), "--node", "gpu01", "--json"] + (["--slurm"] if slurm else []),
                          capture_output=True, text=True, timeout=120, env={}, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    (tmp_path / "stderr.txt").write_text(proc.stderr, encoding="utf-8")
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


def test_slow_tool_is_cut_at_the_checks_deadline_and_the_rest_is_not_run(tmp_path):
    # nvidia-smi hangs: it is stopped when the checks' time is spent (2 s here, 40 by default), the
    # tools after it are not started (tooling faults, no verdict), and the node's own drain is kept
    # (gpu_count not judged), so the program ends well inside Slurm's 60 s.
    document, calls = healthcheck(tmp_path, OURS, "#!/bin/sh\nexec /bin/sleep 30\n", gpus=8,
                                  tool_settings={"checks_deadline": 2})
    assert check(document, "gpu_count")["message"] == (
        "nvidia-smi could not be used, no GPU judged: nvidia-smi rc=124: %s: timed out after 2 s"
        % (tmp_path / "vendor" / "bin" / "nvidia-smi"))
    assert (document["verdict"], document["tooling"], document["action"]) == (
        "warn", ["gpu_count", "xid"], "kept drained (not judged: gpu_count)")
    assert "not run, the program's 2 s for its checks were spent" in check(document, "xid")["message"]
    assert calls == ["show node gpu01"]


# ---------------------------------------------------------------------------
# time_sync and disk_space run by the program; its metrics for the node exporter
# ---------------------------------------------------------------------------

TRACKING = ("Reference ID    : 0AE7010A (10.231.1.10)\nStratum         : 11\n"
            "Ref time (UTC)  : Thu Nov 27 14:02:11 2026\n"
            "System time     : %s of NTP time\nLast offset     : -0.000009211 seconds\n"
            "RMS offset      : 0.000031770 seconds\nFrequency       : 4.118 ppm fast\n"
            "Update interval : 64.4 seconds\nLeap status     : Normal\n")
TIME = {"max_offset": 0.5, "fail_offset": 60, "source": "validation_time_max_offset"}


def chronyc(tmp_path: Path, system_time: str) -> dict:
    """A chronyc stand-in that prints tracking with the System time given; the tools entry for it."""
    path = tmp_path / "vendor" / "chronyc"
    path.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tracking.txt").write_text(TRACKING % system_time, encoding="utf-8")
    path.write_text("#!/bin/sh\n[ \"$*\" = \"-n tracking\" ] && exec /bin/cat %s\nexit 1\n" % (tmp_path / "tracking.txt"),
                    encoding="utf-8")
    path.chmod(0o755)
    return {"chronyc": str(path)}


def metrics(tmp_path: Path) -> dict[str, float]:
    """The program's textfile as {series: value} (HELP and TYPE lines checked, then left out)."""
    text = (tmp_path / "textfile" / "gpucluster_health.prom").read_text(encoding="utf-8")
    assert text.endswith("\n")
    series = {}
    for line in text.splitlines():
        if line.startswith("# "):
            assert line.split()[1] in ("HELP", "TYPE"), line
            continue
        name, value = line.rsplit(" ", 1)
        series[name] = float(value)
    assert [p.name for p in (tmp_path / "textfile").iterdir()] == ["gpucluster_health.prom"]  # no temporary file left
    return series


def test_time_sync_and_disk_space_pass_under_slurm(tmp_path):
    document, calls = healthcheck(
        tmp_path, IDLE, FAULTY, gpus=1, tools=chronyc(tmp_path, "0.000012417 seconds slow"),
        expected={"time_sync": TIME, "disk_space": {"paths": [str(tmp_path), str(tmp_path / "absent")],
                                                    "min_free_percent": 0, "source": "validation_disk_space_paths"}})
    time_sync, disk_space = check(document, "time_sync"), check(document, "disk_space")
    assert (time_sync["status"], time_sync["message"]) == ("pass", "clock synchronized (chronyc tracking, 12 us slow)")
    assert disk_space["status"] == "pass"
    assert disk_space["message"].startswith("free space: %s " % tmp_path)
    assert disk_space["message"].endswith("; not present: %s" % (tmp_path / "absent"))
    assert isinstance(disk_space["measured"], float)  # the least free share of the paths, in %
    assert (document["verdict"], document["action"]) == ("warn", "none")  # xid: no kernel log tool here


@pytest.mark.parametrize("system_time, disk_free, reason", [
    ("400.000000000 seconds fast", 0, "time_sync"),  # skew munge cannot take
    ("0.000012417 seconds slow", 99.99, "disk_space"),  # a file system with less free than asked: full
], ids=["clock-skew", "disk-full"])
def test_clock_skew_and_a_full_disk_drain(tmp_path, system_time, disk_free, reason):
    document, calls = healthcheck(
        tmp_path, IDLE, FAULTY, gpus=1, tools=chronyc(tmp_path, system_time),
        expected={"time_sync": TIME, "disk_space": {"paths": [str(tmp_path)], "min_free_percent": disk_free,
                                                    "source": "validation_disk_space_paths"}})
    assert (document["verdict"], document["action"]) == ("fail", "drained")
    assert calls[-1] == "update nodename=gpu01 state=drain reason=gpucluster-validation: %s" % reason
    assert check(document, reason)["status"] == "fail"


def test_time_sync_without_its_tools_is_a_tooling_warn(tmp_path):
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=1, expected={"time_sync": TIME})
    missing = tmp_path / "missing"
    assert check(document, "time_sync")["message"] == (
        "whether the clock is synchronized is unknown: chronyc rc=127: %s/chronyc: No such file or directory; "
        "timedatectl rc=127: %s/timedatectl: No such file or directory" % (missing, missing))
    assert (document["verdict"], document["tooling"], document["action"]) == ("warn", ["xid", "time_sync"], "none")
    assert calls == ["show node gpu01"]


def test_metrics_after_a_drain(tmp_path):
    before = time.time()
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8)
    assert document["action"] == "drained"
    series = metrics(tmp_path)
    assert series['gpucluster_health_check_status{check="gpu_count",status="fail"}'] == 1
    assert series['gpucluster_health_check_status{check="gpu_count",status="pass"}'] == 0
    assert series['gpucluster_health_check_status{check="disk_space",status="skip"}'] == 1
    assert series['gpucluster_health_check_tooling{check="xid"}'] == 1
    assert series["gpucluster_health_tooling_faults"] == 1
    assert series['gpucluster_health_verdict{verdict="fail"}'] == 1
    assert [name for name, value in series.items() if name.startswith("gpucluster_health_action{") and value] == [
        'gpucluster_health_action{action="drained"}']
    assert series["gpucluster_health_drain_held"] == 0
    assert series["gpucluster_health_interval_seconds"] == 30
    assert before <= series["gpucluster_health_last_run_timestamp_seconds"] <= time.time()
    assert 0 <= series["gpucluster_health_run_duration_seconds"] < 60
    assert len([name for name in series if name.startswith("gpucluster_health_check_status{")]) == 4 * 17


def test_metrics_after_a_hold(tmp_path):
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8, listing=cluster(2, 0, 17))
    assert document["action"].startswith("held (drain budget spent")
    series = metrics(tmp_path)
    assert (series["gpucluster_health_drain_held"], series['gpucluster_health_action{action="held"}'],
            series['gpucluster_health_verdict{verdict="fail"}']) == (1, 1, 1)


def test_metrics_after_a_pass_that_resumes(tmp_path):
    document, calls = healthcheck(tmp_path, OURS, FAULTY, gpus=1)
    assert document["action"] == "resumed"
    series = metrics(tmp_path)
    assert (series["gpucluster_health_drain_held"], series['gpucluster_health_action{action="resumed"}'],
            series['gpucluster_health_check_status{check="gpu_count",status="pass"}']) == (0, 1, 1)


def test_metrics_folder_missing_is_noted_not_failed(tmp_path):
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8, metrics={"dir": str(tmp_path / "no-exporter")})
    assert (document["verdict"], document["action"]) == ("fail", "drained")
    assert (tmp_path / "stderr.txt").read_text(encoding="utf-8") == (
        "metrics not written: %s is not a directory\n" % (tmp_path / "no-exporter"))
    assert not (tmp_path / "no-exporter").exists()


def test_metrics_off(tmp_path):
    healthcheck(tmp_path, IDLE, FAULTY, gpus=8, metrics={"dir": ""})
    assert (tmp_path / "stderr.txt").read_text(encoding="utf-8") == ""


# --- History across runs (issue 32 item 4): confirmation of transient readings, flapping ---------
NARROW = H100.read_text(encoding="utf-8").replace("<current_link_width>16x</current_link_width>",
                                                  "<current_link_width>8x</current_link_width>", 1)
PCIE_FAIL = "PCIe link narrower than the device's maximum on GPU0 (00000000:00:06.0): x8 of x16"


def cycles(tmp_path: Path, runs: list, settings: dict | None = None) -> list[tuple[str, str, list[str]]]:
    """Run the program once per item of ``runs`` as slurmd would, each ``(reading, gpus)``: reading
    "ok" (the H100 capture), "narrow" (its PCIe link trained down to x8) or "resume" (no run: an admin
    resumes the node). Slurm is simulated: a drain the program asks for drains the node with that
    reason for the next run, a resume lifts it. Returns (verdict, action, scontrol updates) per run."""
    xml = tmp_path / "reading.xml"
    node_state = IDLE
    out = []
    for reading, gpus in runs:
        if reading == "resume":
            node_state = IDLE
            continue
        xml.write_text(NARROW if reading == "narrow" else H100.read_text(encoding="utf-8"), encoding="utf-8")
        document, calls = healthcheck(tmp_path, node_state, "#!/bin/sh\nexec /bin/cat %s\n" % xml, gpus=gpus,
                                      settings=settings)
        updates = [call for call in calls if call.startswith("update ")]
        for call in updates:
            if "state=drain" in call:
                node_state = ("NodeName=gpu01 Arch=x86_64\n   State=IDLE+DRAIN ThreadsPerCore=1\n   Reason=%s [root@2026-11-27T14:00:00]\n"
                              % call.split("reason=", 1)[1])
            elif "state=resume" in call:
                node_state = IDLE
        out.append((document["verdict"], document["action"], updates))
    return out


DRAIN_PCIE = "update nodename=gpu01 state=drain reason=gpucluster-validation: pcie_link"
DRAIN_GPUS = "update nodename=gpu01 state=drain reason=gpucluster-validation: gpu_count"
RESUME = "update nodename=gpu01 state=resume"


def test_transient_reading_drains_on_its_second_consecutive_run(tmp_path):
    document, _calls = healthcheck(tmp_path, IDLE, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=1)
    (tmp_path / "narrow.xml").write_text(NARROW, encoding="utf-8")
    narrow = "#!/bin/sh\nexec /bin/cat %s\n" % (tmp_path / "narrow.xml")
    document, calls = healthcheck(tmp_path, IDLE, narrow, gpus=1)
    pcie = check(document, "pcie_link")
    assert (pcie["status"], pcie["message"]) == ("fail", PCIE_FAIL)
    assert (document["verdict"], document["action"]) == ("fail", "unconfirmed (pcie_link 1/2)")
    assert document["history"] == {"confirmed": [], "unconfirmed": [["pcie_link", 1]], "flapping": [], "confirm_runs": 2}
    assert calls == ["show node gpu01"]
    document, calls = healthcheck(tmp_path, IDLE, narrow, gpus=1)
    assert (document["verdict"], document["action"], document["notes"]) == ("fail", "drained", [])
    assert calls == ["show node gpu01", "show node", DRAIN_PCIE]
    state = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    assert (state["node"], state["checks"]["pcie_link"], state["checks"]["gpu_count"], state["checks"]["xid"]) == (
        "gpu01", "PFF", "PPP", "---")


@pytest.mark.parametrize("runs, settings, want", [
    # a link that reads low once and is back at the next run: never drained
    ([("narrow", 1), ("ok", 1), ("ok", 1)], None,
     [("fail", "unconfirmed (pcie_link 1/2)", []), ("warn", "none", []), ("warn", "none", [])]),
    # confirmed, then the repair resumes it
    ([("narrow", 1), ("narrow", 1), ("narrow", 1), ("ok", 1)], None,
     [("fail", "unconfirmed (pcie_link 1/2)", []), ("fail", "drained", [DRAIN_PCIE]), ("fail", "none", []),
      ("warn", "resumed", [RESUME])]),
    # three runs to confirm
    ([("narrow", 1), ("narrow", 1), ("narrow", 1)], {"confirm_runs": 3},
     [("fail", "unconfirmed (pcie_link 1/3)", []), ("fail", "unconfirmed (pcie_link 2/3)", []),
      ("fail", "drained", [DRAIN_PCIE])]),
    # confirm_runs 1: at once, as before
    ([("narrow", 1)], {"confirm_runs": 1}, [("fail", "drained", [DRAIN_PCIE])]),
    # a hard fault (1 GPU of 8) drains on its first run, with the transient reading beside it unconfirmed
    ([("ok", 8)], None, [("fail", "drained", [DRAIN_GPUS])]),
    ([("narrow", 8)], None, [("fail", "drained", [DRAIN_GPUS])]),
], ids=["passing-reading", "confirmed-then-repaired", "confirm-3", "confirm-1", "hard-fault", "hard-fault-beside-transient"])
def test_confirmation_over_runs(tmp_path, runs, settings, want):
    assert cycles(tmp_path, runs, settings) == want


FLAP_PCIE = "update nodename=gpu01 state=drain reason=gpucluster-validation: flapping pcie_link"
FLAP_GPUS = "update nodename=gpu01 state=drain reason=gpucluster-validation: flapping gpu_count"


def test_transient_flapping_node_is_drained_and_not_resumed(tmp_path):
    # fail, pass, fail, pass, fail: never two in a row, three spells in the window of 10
    got = cycles(tmp_path, [("narrow", 1), ("ok", 1), ("narrow", 1), ("ok", 1), ("narrow", 1), ("ok", 1), ("ok", 1)])
    assert got == [
        ("fail", "unconfirmed (pcie_link 1/2)", []), ("warn", "none", []),
        ("fail", "unconfirmed (pcie_link 1/2)", []), ("warn", "none", []),
        ("fail", "drained (flapping: pcie_link)", [FLAP_PCIE]),
        ("warn", "kept drained (flapping: pcie_link)", []), ("warn", "kept drained (flapping: pcie_link)", []),
    ]


def test_hard_fault_flapping_is_held_until_someone_resumes_it(tmp_path):
    # drained and resumed twice, the third failure drains for flapping; passing does not resume it;
    # an admin's resume starts the history afresh: the next failure is an ordinary drain again
    got = cycles(tmp_path, [("ok", 8), ("ok", 1), ("ok", 8), ("ok", 1), ("ok", 8), ("ok", 1), ("resume", 0),
                            ("ok", 1), ("ok", 8)])
    assert got == [
        ("fail", "drained", [DRAIN_GPUS]), ("warn", "resumed", [RESUME]),
        ("fail", "drained", [DRAIN_GPUS]), ("warn", "resumed", [RESUME]),
        ("fail", "drained (flapping: gpu_count)", [FLAP_GPUS]), ("warn", "kept drained (flapping: gpu_count)", []),
        ("warn", "none", []), ("fail", "drained", [DRAIN_GPUS]),
    ]


def test_flapping_drain_keeps_to_the_drain_budget(tmp_path):
    settings = {"flapping": {"window": 5, "threshold": 2}}
    got = cycles(tmp_path, [("narrow", 1), ("ok", 1)], settings)
    assert got == [("fail", "unconfirmed (pcie_link 1/2)", []), ("warn", "none", [])]
    (tmp_path / "narrow.xml").write_text(NARROW, encoding="utf-8")
    document, calls = healthcheck(tmp_path, IDLE, "#!/bin/sh\nexec /bin/cat %s\n" % (tmp_path / "narrow.xml"),
                                  listing=cluster(2, 0, 17), settings=settings)
    assert (document["action"], document["history"]["flapping"]) == (HELD % (2, 20, 2, 20, 2), ["pcie_link"])
    assert calls == ["show node gpu01", "show node"]


@pytest.mark.parametrize("content, why", [
    ("{not json", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ('{"version": 1, "node": "gpu01", "checks": {"pcie_link": "FFX"}, "flapping": []}',
     "not a health check history of version 1"),
    ('{"version": 1, "node": "gpu02", "checks": {"pcie_link": "F"}, "flapping": []}',
     "the history of node 'gpu02', not 'gpu01'"),
    (None, "Is a directory"),
], ids=["not-json", "bad-shape", "another-node", "a-directory"])
def test_unusable_state_file_warns_and_does_not_drain(tmp_path, content, why):
    state = tmp_path / "state.json"
    if content is None:
        state.mkdir()
    else:
        state.write_text(content, encoding="utf-8")
    (tmp_path / "narrow.xml").write_text(NARROW, encoding="utf-8")
    document, calls = healthcheck(tmp_path, IDLE, "#!/bin/sh\nexec /bin/cat %s\n" % (tmp_path / "narrow.xml"))
    note = "the state file %s could not be used, started afresh: %s" % (state, why)
    written = "the state file %s could not be written, transient readings cannot be confirmed: Is a directory" % state
    assert (document["verdict"], document["action"]) == ("fail", "unconfirmed (pcie_link 1/2)")
    assert document["notes"] == ([note, written] if content is None else [note])
    assert calls == ["show node gpu01"]
    if content is not None:  # started afresh: the next run confirms
        assert json.loads(state.read_text(encoding="utf-8"))["checks"]["pcie_link"] == "F"


def test_run_without_slurm_keeps_no_history(tmp_path):
    # a person running gpucluster-healthcheck: reported, the history neither read nor advanced
    (tmp_path / "narrow.xml").write_text(NARROW, encoding="utf-8")
    narrow = "#!/bin/sh\nexec /bin/cat %s\n" % (tmp_path / "narrow.xml")
    for dummy in range(2):
        document, calls = healthcheck(tmp_path, IDLE, narrow, slurm=False)
        assert (document["verdict"], document["action"], document["history"], document["notes"]) == ("fail", None, None, [])
        assert calls == []
    assert not (tmp_path / "state.json").exists()
    document, calls = healthcheck(tmp_path, IDLE, narrow)
    assert (document["action"], calls) == ("unconfirmed (pcie_link 1/2)", ["show node gpu01"])


def test_own_drain_turns_into_a_flapping_drain(tmp_path):
    # drained for the GPU count, the PCIe link flaps meanwhile: the reason becomes the flapping one
    # (no budget spent, the node is this system's already), and it is no longer resumed
    got = cycles(tmp_path, [("narrow", 8), ("ok", 8), ("narrow", 8), ("ok", 1)], {"flapping": {"window": 5, "threshold": 2}})
    assert got == [
        ("fail", "drained", [DRAIN_GPUS]), ("fail", "none", []),
        ("fail", "drained (flapping: pcie_link)", [FLAP_PCIE]), ("warn", "kept drained (flapping: pcie_link)", []),
    ]


# --- Kubernetes (--kubernetes, run by the systemd timer on Kubernetes nodes without Slurm) ---------
# kubectl is a stand-in that answers `get nodes` from a file (with an exit code) and logs every call.
KUBECTL = """#!/bin/sh
echo "$*" >> "%(log)s"
case "$*" in *" get nodes "*) cat "%(nodes)s"; exit %(rc)s;; esac
if [ -e "%(conflict)s" ]; then
  rm -f "%(conflict)s"
  echo 'Error from server (Conflict): Operation cannot be fulfilled on nodes "gpu01": the object has been modified;'\\
' please apply your changes to the latest version and try again' >&2
  exit 1
fi
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
    vendor.mkdir(parents=True, exist_ok=True)
    missing = tmp_path / "missing"
    tools = {name: str(missing / name) for name in ("systemctl", "journalctl", "dmesg", "timeout", "stat", "scontrol")}
    log = tmp_path / "kubectl.log"
    log.unlink(missing_ok=True)
    (tmp_path / "nodes.json").write_text(nodes, encoding="utf-8")
    kubectl = vendor / "kubectl"
    kubectl.write_text(KUBECTL % {"log": log, "nodes": tmp_path / "nodes.json", "rc": rc, "conflict": tmp_path / "conflict-once"},
                       encoding="utf-8")
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
              "settings": {"nvidia_smi": "nvidia-smi", "tools": tools},
              "state_file": str(tmp_path / "state.json"), "metrics": {"dir": ""}}
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


def test_own_drain_for_a_check_the_program_does_not_run_is_kept(tmp_path):
    # validate.yml drained the node for an active check (ib_write_bw between a pair): the passive checks
    # passing prove nothing about it, so the program keeps the drain (validate.yml lifts it)
    active = OURS.replace("gpucluster-validation: gpu_count", "gpucluster-validation: ib_bw,gpu_count")
    document, calls = healthcheck(tmp_path, active, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=1)
    assert check(document, "gpu_count")["status"] == "pass"
    assert (document["verdict"], document["action"]) == ("warn", "kept drained (not judged: ib_bw)")
    assert calls == ["show node gpu01"]


def test_kubernetes_transient_reading_cordons_once_confirmed(tmp_path):
    # GPU 0's PCIe link read at x4 of x16 (the real H100 capture, that one field changed): the timer's
    # first run does not cordon (unconfirmed), the second in a row does, as in Slurm.
    narrow = "#!/bin/sh\nexec /bin/sed 's/<current_link_width>16x</<current_link_width>4x</' %s\n" % H100
    nodes = kube_cluster(kube_node("gpu01"), idle=3)
    first, calls = kube_healthcheck(tmp_path, nodes, narrow, gpus=1)
    assert check(first, "pcie_link")["status"] == "fail"
    assert (first["verdict"], first["action"]) == ("fail", "unconfirmed (pcie_link 1/2)")
    assert calls == [GET]
    second, calls = kube_healthcheck(tmp_path, nodes, narrow, gpus=1)
    assert (second["verdict"], second["action"]) == ("fail", "cordoned")
    assert calls[1].startswith(PATCH) and "gpucluster-validation: pcie_link" in calls[1]


def test_a_drain_slurm_refuses_is_said_so(tmp_path):
    # scontrol update answers an error: the program says the node was not drained (a held drain for the
    # metrics and the alert), never "drained"
    (tmp_path / "refuse-updates").write_text("", encoding="utf-8")
    document, calls = healthcheck(tmp_path, IDLE, FAULTY, gpus=8)
    assert (document["verdict"], document["action"]) == (
        "fail", "not drained: scontrol rc=1: slurm_update error: Invalid node state specified")
    assert calls[-1] == "update nodename=gpu01 state=drain reason=gpucluster-validation: gpu_count"
    assert metrics(tmp_path)["gpucluster_health_drain_held"] == 1


def test_slurmd_names_the_node(tmp_path):
    # slurmd runs its HealthCheckProgram with SLURMD_NODENAME (NodeName may differ from the host name)
    program = install(tmp_path)
    proc = subprocess.run(["/usr/bin/env", "-i", "SLURMD_NODENAME=gpu-a17", shutil.which("python3") or "/usr/bin/python3",
                           str(program), "--config", str(tmp_path / "none.json"), "--json"],
                          capture_output=True, text=True, timeout=120, env={}, check=False)
    assert json.loads(proc.stdout)["node"] == "gpu-a17"


def test_kubernetes_own_cordon_for_a_transient_reading_is_lifted_once_repaired(tmp_path):
    # the timer's runs: the link reads narrow twice (cordoned), then it is repaired: the next run uncordons
    narrow = "#!/bin/sh\nexec /bin/sed 's/<current_link_width>16x</<current_link_width>4x</' %s\n" % H100
    kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01"), idle=3), narrow, gpus=1)
    second, _calls = kube_healthcheck(tmp_path, kube_cluster(kube_node("gpu01"), idle=3), narrow, gpus=1)
    assert second["action"] == "cordoned"
    cordoned = kube_cluster(kube_node("gpu01", True, "gpucluster-validation: pcie_link"), idle=3)
    third, calls = kube_healthcheck(tmp_path, cordoned, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=1)
    assert (third["verdict"], third["action"]) == ("warn", "uncordoned")
    assert calls[1].startswith(PATCH)


def test_kubernetes_patch_refused_for_a_stale_read_is_judged_again(tmp_path):
    # the node changed between the read and the patch (the node controller's taint after a cordon): the
    # API server refuses the patch for its resourceVersion; the program reads the nodes again and patches
    (tmp_path / "conflict-once").write_text("", encoding="utf-8")
    cordoned = kube_cluster(kube_node("gpu01", True, "gpucluster-validation: gpu_count"), idle=3)
    document, calls = kube_healthcheck(tmp_path, cordoned, "#!/bin/sh\nexec /bin/cat %s\n" % H100, gpus=1)
    assert (document["verdict"], document["action"]) == ("warn", "uncordoned")
    assert [call.split(" --patch=")[0] for call in calls] == [GET, PATCH[:-len(" --patch=")], GET, PATCH[:-len(" --patch=")]]
