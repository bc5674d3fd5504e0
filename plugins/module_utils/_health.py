# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The passive health checks of a node: what the node reports against what is expected.

Private module_utils of gpucluster.core: pure functions over what the node printed (the
``node_health`` module and the node's health check program collect it). Every check gives
one result: ``{check, kind, status, measured, expected, unit, source, message}`` with status
``pass``, ``warn``, ``fail`` or ``skip``. ``expected`` values carry where they came from
(``source``), so a verdict can be traced to the inventory, the scheduler or a baseline.
A check whose tool could not run (missing, not executable, timed out, the driver not
answering, output that does not parse) is a tooling fault, never a hardware verdict: it
warns with the command's own words and carries ``tooling: true``; the checks that need that
tool's output skip.
Runs on the managed hosts: Python 3.6 syntax.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import errno
import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._ibstat import (
    IbstatError,
    parse_ibstat,
    read_sysfs,
    summarize,
)
from ansible_collections.gpucluster.core.plugins.module_utils._nvidia_smi import (
    NvidiaSmiError,
    parse_health_xml,
)

# Check names in the order they are reported, with the status a problem gives by default.
DEFAULT_SEVERITY = {
    "gpu_count": "fail",
    "gpu_model": "fail",
    "driver_version": "fail",
    "cuda_version": "fail",
    "persistence_mode": "warn",
    "ecc_mode": "warn",
    "ecc_errors": "fail",
    "retired_pages": "fail",
    "row_remap": "fail",
    "pcie_link": "fail",
    "clock_events": "warn",
    "xid": "fail",
    "hca_ports": "fail",
    "mounts": "fail",
    "services": "fail",
    # A clock off by more than the expectation's fail_offset: munge (Slurm's authentication)
    # rejects credentials across its TTL (300 s by default), so jobs cannot start. A clock that is
    # only not synchronized, or off by more than max_offset, warns: it harms nothing yet, and a
    # time service that just started (or a test container's) must not drain the node.
    "time_sync": "fail",
    # A full /var (Slurm's spool, the journal, container images) or /tmp breaks jobs and daemons.
    "disk_space": "fail",
}
CHECKS = tuple(DEFAULT_SEVERITY)
GPU_CHECKS = CHECKS[:12]

# XIDs NVIDIA's XID catalogue says need action on the node (reset, drain, RMA): double-bit
# ECC (48), row remap / page retirement event and failure (63, 64), NVLink (74), fallen off
# the bus (79), contained and uncontained ECC (94, 95), GSP RPC timeout and error (119, 120).
DEFAULT_XID_CODES = (48, 63, 64, 74, 79, 94, 95, 119, 120)

# Clock event reasons that mean the hardware is slowing the GPU down (not idle, not a cap
# the admin set, not the software power cap a busy GPU normally hits).
SLOWDOWN_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")

_NVCC_RE = re.compile(r"release (\d+\.\d+)")
_XID_RE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)\): (\d+)\b")
_VERSION_SPLIT_RE = re.compile(r"[.]")

# What ``systemctl is-active UNIT`` prints when it could ask systemd (older systemd prints
# ``unknown`` for a unit it does not know). Anything else means systemctl could not be used.
SERVICE_STATES = ("active", "reloading", "inactive", "failed", "activating", "deactivating", "maintenance",
                  "refreshing", "unknown")

# The search path the health check program adds after its own (Slurm runs it with an empty
# environment): vendor tools often live in /usr/local/bin, the Slurm and IB tools in sbin.
FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The drain budget's defaults (the validation role's validation_drain_budget_fraction and
# validation_drain_budget_min_nodes): this system keeps at most 10 % of the nodes drained at once,
# and at least 2 (so a small cluster can still take one faulty node out, and a second one).
DRAIN_BUDGET_FRACTION = 0.1
DRAIN_BUDGET_MIN_NODES = 2

# time_sync's defaults (the validation role's validation_time_max_offset and
# validation_time_fail_offset): seconds between the clock and its time source.
TIME_MAX_OFFSET = 0.5
TIME_FAIL_OFFSET = 60.0
# disk_space's defaults (validation_disk_space_paths, validation_disk_space_min_free_percent): the
# paths whose file systems must keep free space (those present), and how much, in % of their size.
DISK_SPACE_PATHS = ("/var", "/tmp", "/var/lib/slurm")
DISK_MIN_FREE_PERCENT = 5.0

_CHRONY_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z ()]*?)\s*:\s*(.*)$")
_CHRONY_SYSTEM_TIME_RE = re.compile(r"^([0-9.]+) seconds (fast|slow) of NTP time$")

_SCONTROL_NODE_RE = re.compile(r"^NodeName=(\S+)")
_GRES_GPU_RE = re.compile(r"(?:^|,)gpu(?::[^:,()]+)?:(\d+)")
_NATURAL_RE = re.compile(r"(\d+)")


class HealthError(Exception):
    """Raised for expectations the checks cannot use; the message names the setting."""


def xid_events(text):
    # type: (Optional[str]) -> List[Dict[str, Any]]
    """The XID events in kernel log text: ``[{pci, code, line}]`` in log order.

    Matches the driver's ``NVRM: Xid (PCI:0000:3b:00): 79, pid=...`` lines wherever the log
    puts them (dmesg's ``[  12.3]`` prefix, journalctl's date and host).
    """
    events = []  # type: List[Dict[str, Any]]
    for line in (text or "").splitlines():
        match = _XID_RE.search(line)
        if match:
            events.append({"pci": match.group(1), "code": int(match.group(2)), "line": line.strip()})
    return events


def version_matches(actual, pin):
    # type: (Optional[str], str) -> bool
    """Whether ``actual`` (``550.54.15``) is the pinned version: every dotted part of the pin
    matches, so a branch pin ``550`` matches any 550 driver. A Debian revision or epoch on the
    pin (``1:550.54.15-1``) is ignored: the driver and nvcc report the upstream version."""
    if not actual:
        return False
    upstream = pin.split(":", 1)[-1].split("-", 1)[0].split("+", 1)[0]
    want = [part for part in _VERSION_SPLIT_RE.split(upstream) if part]
    have = _VERSION_SPLIT_RE.split(actual.strip())
    return bool(want) and have[:len(want)] == want


class _Results(object):
    """Collects check results with the severity each problem carries."""

    def __init__(self, severity):
        # type: (Dict[str, str]) -> None
        self.severity = severity
        self.items = []  # type: List[Dict[str, Any]]

    def add(self, check, ok, measured, expected, source, message, unit=None, bad=None):
        # type: (str, bool, Any, Any, Optional[str], str, Optional[str], Optional[str]) -> None
        status = "pass" if ok else (bad or self.severity[check])
        self.items.append({
            "check": check, "kind": "passive", "status": status, "measured": measured,
            "expected": expected, "unit": unit, "source": source, "message": message,
        })

    def tool_fault(self, check, message, expected=None, source=None, unit=None, bad="warn"):
        # type: (str, str, Any, Optional[str], Optional[str], str) -> None
        """The check could not run: nothing measured, warn (``bad`` fail only for a real fault
        found beside it), marked ``tooling``."""
        self.add(check, False, None, expected, source, message, unit=unit, bad=bad)
        self.items[-1]["tooling"] = True

    def skip(self, check, message, source=None, measured=None):
        # type: (str, str, Optional[str], Any) -> None
        self.items.append({
            "check": check, "kind": "passive", "status": "skip", "measured": measured,
            "expected": None, "unit": None, "source": source, "message": message,
        })


def _check_shape(expected):
    # type: (Dict[str, Any]) -> None
    for name in ("gpu_count", "gpu_model", "driver_version", "cuda_version"):
        value = expected.get(name)
        if value is not None and not (isinstance(value, dict) and "value" in value):
            raise HealthError("%s: must be a dict with value and source (got %r)" % (name, value))
    for name in ("hca", "severity"):
        if expected.get(name) is not None and not isinstance(expected[name], dict):
            raise HealthError("%s: must be a dict (got %r)" % (name, expected[name]))
    for name in ("mounts", "services", "xid_codes"):
        if expected.get(name) is not None and not isinstance(expected[name], list):
            raise HealthError("%s: must be a list (got %r)" % (name, expected[name]))
    for name in ("time_sync", "disk_space"):
        if expected.get(name) is not None and not isinstance(expected[name], dict):
            raise HealthError("%s: must be a dict (got %r)" % (name, expected[name]))
    paths = (expected.get("disk_space") or {}).get("paths")
    if paths is not None and not isinstance(paths, list):
        raise HealthError("disk_space.paths: must be a list (got %r)" % (paths,))


def _severity(expected):
    # type: (Dict[str, Any]) -> Dict[str, str]
    severity = dict(DEFAULT_SEVERITY)
    for name, value in (expected.get("severity") or {}).items():
        if name not in DEFAULT_SEVERITY:
            raise HealthError("severity: unknown check %r (checks: %s)" % (name, ", ".join(CHECKS)))
        if value not in ("fail", "warn", "skip"):
            raise HealthError("severity: %s is %r, expected fail, warn or skip" % (name, value))
        severity[name] = value
    return severity


def _gpu_list(gpus, indexes):
    # type: (List[Dict[str, Any]], List[int]) -> str
    if len(indexes) == len(gpus) > 1:
        return "all %d GPUs" % len(gpus)
    return ", ".join("GPU%d (%s)" % (gpus[i]["index"], gpus[i].get("pci_bus_id") or "?") for i in indexes)


def _check_gpus(res, observed, expected):
    # type: (_Results, Dict[str, Any], Dict[str, Any]) -> None
    smi = observed["nvidia_smi"]
    gpus = smi["gpus"]
    count = expected.get("gpu_count")
    if count:
        res.add("gpu_count", len(gpus) == count["value"], len(gpus), count["value"], count.get("source"),
                "%d GPUs answer nvidia-smi, %d expected" % (len(gpus), count["value"]))
    else:
        res.add("gpu_count", True, len(gpus), None, None, "%d GPUs answer nvidia-smi" % len(gpus))

    model = expected.get("gpu_model")
    names = ", ".join(sorted(set(gpu["name"] or "?" for gpu in gpus))) or None
    if model:
        wrong = [i for i, gpu in enumerate(gpus) if model["value"].lower() not in (gpu["name"] or "").lower()]
        if not gpus:
            message = "no GPU answers nvidia-smi, %s expected" % model["value"]
        elif wrong:
            message = "%s not a %s" % (_gpu_list(gpus, wrong), model["value"])
        else:
            message = "every GPU is a %s" % model["value"]
        res.add("gpu_model", not wrong and bool(gpus), names, model["value"], model.get("source"), message)
    else:
        # The names are kept: a burn-in's baseline gives later runs their model.
        res.skip("gpu_model", "no GPU model expected", measured=names)

    for check, actual, label in (("driver_version", smi.get("driver_version"), "driver"),
                                 ("cuda_version", observed.get("cuda_toolkit_version"), "CUDA toolkit")):
        pin = expected.get(check)
        if not pin:
            res.skip(check, "no %s version pinned" % label)
            continue
        ok = version_matches(actual, pin["value"])
        res.add(check, ok, actual, pin["value"], pin.get("source"),
                "%s %s, pinned %s" % (label, actual or "not found", pin["value"]))

    off = [i for i, gpu in enumerate(gpus) if gpu["persistence_mode"] == "Disabled"]
    if all(gpu["persistence_mode"] is None for gpu in gpus):
        res.skip("persistence_mode", "no GPU reports a persistence mode")
    elif observed.get("persistenced_active"):
        res.add("persistence_mode", True, "nvidia-persistenced", "Enabled", None,
                "nvidia-persistenced is running")
    elif off and observed.get("persistenced_error"):
        res.tool_fault("persistence_mode", "persistence mode off on %s, and whether nvidia-persistenced runs is unknown: %s"
                       % (_gpu_list(gpus, off), observed["persistenced_error"]), "Enabled")
    else:
        res.add("persistence_mode", not off, "Disabled" if off else "Enabled", "Enabled", None,
                "persistence mode off on %s and nvidia-persistenced is not running" % _gpu_list(gpus, off)
                if off else "persistence mode on")

    with_ecc = [i for i, gpu in enumerate(gpus) if gpu["ecc_mode"]["current"] is not None]
    ecc_off = [i for i in with_ecc if gpus[i]["ecc_mode"]["current"] != "Enabled"]
    ecc_pending = [i for i in with_ecc if gpus[i]["ecc_mode"]["pending"] not in (None, gpus[i]["ecc_mode"]["current"])]
    if not with_ecc:
        res.skip("ecc_mode", "no GPU reports an ECC mode")
    else:
        problems = []
        if ecc_off:
            problems.append("ECC off on %s" % _gpu_list(gpus, ecc_off))
        if ecc_pending:
            problems.append("ECC mode change pending a GPU reset on %s" % _gpu_list(gpus, ecc_pending))
        res.add("ecc_mode", not problems, "Disabled" if ecc_off else "Enabled", "Enabled", None,
                "; ".join(problems) or "ECC on")

    volatile = [(i, gpu["uncorrectable_volatile"]) for i, gpu in enumerate(gpus) if gpu["uncorrectable_volatile"]]
    if all(gpu["uncorrectable_volatile"] is None for gpu in gpus):
        res.skip("ecc_errors", "no GPU reports ECC error counts")
    else:
        total = sum(count for dummy, count in volatile)
        res.add("ecc_errors", not volatile, total, 0, None,
                "uncorrectable ECC errors since the driver loaded: %s" % ", ".join(
                    "GPU%d: %d" % (gpus[i]["index"], count) for i, count in volatile) if volatile
                else "no uncorrectable ECC errors since the driver loaded")

    pending = [i for i, gpu in enumerate(gpus) if gpu["retired_pages"]["pending"]]
    if all(gpu["retired_pages"]["pending"] is None for gpu in gpus):
        res.skip("retired_pages", "no GPU reports page retirement (row remapping replaces it)")
    else:
        retired = sum(gpu["retired_pages"]["double_bit"] or 0 for gpu in gpus)
        res.add("retired_pages", not pending, retired, 0, None,
                "page retirement pending a GPU reset on %s" % _gpu_list(gpus, pending) if pending
                else "%d pages retired for double-bit errors, none pending" % retired)

    remap = [(i, gpu["row_remap"]) for i, gpu in enumerate(gpus) if gpu["row_remap"] is not None]
    if not remap:
        res.skip("row_remap", "no GPU reports row remapping")
    else:
        failed = [i for i, row in remap if row["failure"]]
        waiting = [i for i, row in remap if row["pending"]]
        problems = []
        if failed:
            problems.append("row remapping failed on %s (replace the GPU)" % _gpu_list(gpus, failed))
        if waiting:
            problems.append("row remapping pending a GPU reset on %s" % _gpu_list(gpus, waiting))
        res.add("row_remap", not problems, sum(row["uncorrectable"] or 0 for dummy, row in remap), None, None,
                "; ".join(problems) or "no row remapping failed or pending")

    narrow = [i for i, gpu in enumerate(gpus)
              if None not in (gpu["pcie"]["current_width"], gpu["pcie"]["max_width"])
              and gpu["pcie"]["current_width"] < gpu["pcie"]["max_width"]]
    slow = [i for i, gpu in enumerate(gpus)
            if None not in (gpu["pcie"]["current_gen"], gpu["pcie"]["max_gen"])
            and gpu["pcie"]["current_gen"] < gpu["pcie"]["max_gen"]
            and "gpu_idle" not in (gpu["clock_event_reasons"] or []) and gpu["utilization_pct"]]
    widths = sorted(set("x%d/x%d" % (g["pcie"]["current_width"], g["pcie"]["max_width"]) for g in gpus
                        if None not in (g["pcie"]["current_width"], g["pcie"]["max_width"])))
    if not widths:
        res.skip("pcie_link", "no GPU reports its PCIe link")
    elif narrow:
        res.add("pcie_link", False, ", ".join(widths), "full width", None,
                "PCIe link narrower than the device's maximum on %s: %s" % (_gpu_list(gpus, narrow), ", ".join(
                    "x%d of x%d" % (gpus[i]["pcie"]["current_width"], gpus[i]["pcie"]["max_width"]) for i in narrow)))
    elif slow:
        res.add("pcie_link", False, ", ".join(widths), "full speed", None,
                "PCIe link below its maximum generation while busy on %s" % _gpu_list(gpus, slow), bad="warn")
    else:
        res.add("pcie_link", True, ", ".join(widths), "full width", None,
                "every PCIe link at full width (an idle GPU may lower its generation)")

    events = [(i, sorted(set(gpu["clock_event_reasons"] or []) & set(SLOWDOWN_REASONS))) for i, gpu in enumerate(gpus)]
    events = [(i, reasons) for i, reasons in events if reasons]
    if all(gpu["clock_event_reasons"] is None for gpu in gpus):
        res.skip("clock_events", "no GPU reports clock event reasons")
    else:
        res.add("clock_events", not events, sorted(set(r for dummy, rs in events for r in rs)), [], None,
                "; ".join("GPU%d slowed down: %s" % (gpus[i]["index"], ", ".join(rs)) for i, rs in events)
                or "no hardware or thermal slowdown")


def _check_xid(res, observed, expected):
    # type: (_Results, Dict[str, Any], Dict[str, Any]) -> None
    log = observed.get("kernel_log")
    if log is None and observed.get("kernel_log_error"):
        res.tool_fault("xid", "the kernel log could not be read: %s" % observed["kernel_log_error"],
                       sorted(set(expected.get("xid_codes") or DEFAULT_XID_CODES)), "XIDs that need action")
        return
    if log is None:
        res.skip("xid", "the kernel log could not be read")
        return
    codes = set(expected.get("xid_codes") or DEFAULT_XID_CODES)
    events = xid_events(log.get("text"))
    bad = [event for event in events if event["code"] in codes]
    others = sorted(set(event["code"] for event in events) - codes)
    window = log.get("window") or "the kernel log"
    if bad:
        seen = sorted(set((event["code"], event["pci"]) for event in bad))
        res.add("xid", False, sorted(set(code for code, dummy in seen)), sorted(codes), "XIDs that need action",
                "XID %s in %s" % (", ".join("%d on %s" % pair for pair in seen), window))
    else:
        res.add("xid", True, others, sorted(codes), "XIDs that need action",
                "no XID that needs action in %s%s" % (
                    window, " (seen, application-level: %s)" % ", ".join(str(c) for c in others) if others else ""))


def _check_hca(res, observed, expected):
    # type: (_Results, Dict[str, Any], Dict[str, Any]) -> None
    hca = expected.get("hca")
    ibstat = observed.get("ibstat")
    if not hca:
        res.skip("hca_ports", "no HCA ports expected")
        return
    if ibstat is None:
        res.tool_fault("hca_ports", "ibstat could not be used, no port judged: %s" % (
            observed.get("ibstat_error") or "no output"), hca.get("rate_gbps"), hca.get("source"), unit="Gb/s")
        return
    layer_names = list(hca.get("link_layers") or ["InfiniBand"])
    layers = set(layer.lower() for layer in layer_names)
    ignore = set(hca.get("ignore") or [])
    ports = []
    for ca in ibstat["cas"]:
        for port in ca["ports"]:
            label = "%s:%d" % (ca["name"], port["port"])
            if ca["name"] in ignore or label in ignore:
                continue
            if (port["link_layer"] or "InfiniBand").lower() in layers:
                ports.append((label, ca.get("type") or "?", port))
    rate = hca.get("rate_gbps")
    source = hca.get("source")
    # Without a rate: each port against the fastest active port of the same adapter model
    # (a ConnectX-6 Dx storage NIC at 100 next to ConnectX-7 rails at 400 is as built).
    fastest = {}  # type: Dict[str, float]
    for _label, model, port in ports:
        if port["state"] == "Active" and port["rate_gbps"]:
            fastest[model] = max(fastest.get(model, 0), port["rate_gbps"])
    if not rate:
        source = "the fastest active port of the same adapter model"
    problems = []
    for label, model, port in ports:
        want = rate or fastest.get(model)
        if port["state"] != "Active":
            problems.append("%s %s (%s)" % (label, port["state"], port["physical_state"]))
        elif want and (port["rate_gbps"] or 0) < want:
            problems.append("%s at %s Gb/s, %s expected" % (label, port["rate_gbps"], want))
    active = len([p for dummy, dummy2, p in ports if p["state"] == "Active"])
    count = hca.get("count")
    if count and len(ports) < count:
        problems.append("%d ports found, %d expected" % (len(ports), count))
    if not ports:
        res.add("hca_ports", False, "0 of 0 Active", rate, source,
                "no %s port found (is the HCA driver loaded?)" % "/".join(layer_names), unit="Gb/s")
        return
    rates = ", ".join("%s Gb/s" % r for r in sorted(set(p["rate_gbps"] for dummy, dummy2, p in ports if p["state"] == "Active")))
    res.add("hca_ports", not problems and bool(ports), "%d of %d Active" % (active, len(ports)),
            rate or sorted(set(fastest.values())), source,
            "; ".join(problems) if problems else "%d ports Active at %s" % (active, rates), unit="Gb/s")


def _check_mounts(res, mounts, expected):
    # type: (_Results, List[Dict[str, str]], Dict[str, Any]) -> None
    wanted = expected.get("mounts") or []
    if not wanted:
        res.skip("mounts", "no shared file system expected")
        return
    by_path = {}  # type: Dict[str, str]
    for mount in mounts:
        by_path[mount["path"]] = mount["fstype"]
    missing = [m["path"] for m in wanted if not (by_path.get(m["path"]) or "").startswith(m.get("fstype") or "nfs")]
    res.add("mounts", not missing, sorted(set(m["path"] for m in wanted) - set(missing)),
            [m["path"] for m in wanted], wanted[0].get("source"),
            "not mounted: %s" % ", ".join("%s (%s)" % (p, by_path.get(p, "nothing")) for p in missing) if missing
            else "mounted: %s" % ", ".join(m["path"] for m in wanted))


def _check_services(res, services, expected, errors=None):
    # type: (_Results, Dict[str, str], Dict[str, Any], Optional[Dict[str, str]]) -> None
    wanted = expected.get("services") or []
    if not wanted:
        res.skip("services", "no service expected")
        return
    errors = errors or {}
    down = ["%s (%s)" % (name, services.get(name) or "unknown") for name in wanted
            if services.get(name) != "active" and name not in errors]
    unasked = ["%s (%s)" % (name, errors[name]) for name in wanted if name in errors]
    running = [name for name in wanted if services.get(name) == "active"]
    if unasked:
        message = "; ".join((["not running: %s" % ", ".join(down)] if down else [])
                            + ["systemctl could not be used for %s" % ", ".join(unasked)])
        res.tool_fault("services", message, list(wanted), bad="fail" if down else "warn")
        res.items[-1]["measured"] = running
        return
    res.add("services", not down, running, list(wanted), None,
            "not running: %s" % ", ".join(down) if down else "running: %s" % ", ".join(wanted))


def parse_chrony_tracking(text):
    # type: (str) -> Dict[str, Any]
    """``chronyc tracking`` -> ``{synchronized, offset}``: whether chronyd has a time source (its
    Leap status is not ``Not synchronised``) and the system clock's offset from it in seconds
    (``System time``; positive: the clock is fast). Raises HealthError for other text."""
    fields = {}  # type: Dict[str, str]
    for line in (text or "").splitlines():
        match = _CHRONY_FIELD_RE.match(line.strip())
        if match:
            fields[match.group(1)] = match.group(2).strip()
    leap = fields.get("Leap status")
    system = _CHRONY_SYSTEM_TIME_RE.match(fields.get("System time") or "")
    if not leap or not system:
        raise HealthError("no Leap status and System time in its output: %s" % _first_line(text, ""))
    offset = float(system.group(1)) * (1 if system.group(2) == "fast" else -1)
    return {"synchronized": leap != "Not synchronised", "offset": offset}


def read_time_sync(run):
    # type: (Runner) -> Dict[str, Any]
    """What time_sync judges, read with ``run``: ``{time_sync: {source, synchronized, offset, note}}``
    from ``chronyc -n tracking`` (the base_os role's chrony), else from ``timedatectl``'s
    NTPSynchronized (systemd-timesyncd or any other NTP client; no offset known); ``{time_sync:
    None, time_sync_error}`` when neither could tell."""
    errors = []
    rc, out, err = run(["chronyc", "-n", "tracking"])
    if rc == 0:
        try:
            return {"time_sync": dict(parse_chrony_tracking(out), source="chrony", note=None)}
        except HealthError as exc:
            errors.append("chronyc tracking: %s" % exc)
    else:
        errors.append(tool_error("chronyc", rc, out, err))
    rc, out, err = run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
    word = out.strip() if rc == 0 else ""
    if word in ("yes", "no"):
        # chronyc not installed says nothing; chronyc there but chronyd not answering is noted.
        note = None if errors[0].startswith("chronyc rc=127:") else errors[0]
        return {"time_sync": {"source": "timedatectl", "synchronized": word == "yes", "offset": None, "note": note}}
    errors.append(tool_error("timedatectl", rc, out, err) if rc != 0 or not word
                  else "timedatectl: NTPSynchronized is %r, not yes or no" % word)
    return {"time_sync": None, "time_sync_error": "; ".join(errors)}


def disk_usage(path):
    # type: (str) -> Optional[Tuple[int, int]]
    """``(size, free)`` in bytes of the file system that holds ``path`` (statvfs: its blocks, and
    those available to users, as jobs see it), None when ``path`` does not exist. Raises OSError
    when statvfs fails otherwise."""
    try:
        stat = os.statvfs(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise
    return stat.f_frsize * stat.f_blocks, stat.f_frsize * stat.f_bavail


def read_disk_space(disk, paths):
    # type: (DiskReader, List[str]) -> Dict[str, Any]
    """What disk_space judges, read with ``disk`` (disk_usage or a stand-in): ``{disk_space: {path:
    [size, free] or None when absent}}``, with ``disk_space_errors`` ({path: why}) for the paths
    statvfs could not read."""
    usage = {}  # type: Dict[str, Any]
    errors = {}  # type: Dict[str, str]
    for path in paths:
        try:
            found = disk(path)
        except OSError as exc:
            errors[path] = "statvfs %s: %s" % (path, exc.strerror or exc)
            continue
        usage[path] = list(found) if found else None
    observed = {"disk_space": usage}  # type: Dict[str, Any]
    if errors:
        observed["disk_space_errors"] = errors
    return observed


def _seconds(offset):
    # type: (float) -> str
    """0.8 -> ``800.0 ms fast``, -312.4 -> ``312.4 s slow``, 1.2e-05 -> ``12 us fast``."""
    size = abs(offset)
    text = "%.1f s" % size if size >= 1 else "%.1f ms" % (size * 1e3) if size >= 1e-3 else "%.0f us" % (size * 1e6)
    return "%s %s" % (text, "fast" if offset > 0 else "slow")


def _check_time_sync(res, observed, expected):
    # type: (_Results, Dict[str, Any], Dict[str, Any]) -> None
    want = expected.get("time_sync")
    if not want:
        res.skip("time_sync", "no clock synchronization expected")
        return
    max_offset = float(want.get("max_offset", TIME_MAX_OFFSET))
    fail_offset = float(want.get("fail_offset", TIME_FAIL_OFFSET))
    source = want.get("source")
    sync = observed.get("time_sync")
    if sync is None:
        res.tool_fault("time_sync", "whether the clock is synchronized is unknown: %s" % (
            observed.get("time_sync_error") or "not read"), max_offset, source, unit="s")
        return
    offset = sync.get("offset")
    by = "chronyc tracking" if sync["source"] == "chrony" else "timedatectl"
    note = " (%s)" % sync["note"] if sync.get("note") else ""
    measured = round(offset, 6) if offset is not None else None
    if offset is not None and abs(offset) > fail_offset:
        res.add("time_sync", False, measured, max_offset, source,
                "clock %s of its time source (%s), more than %g s: munge rejects Slurm's credentials across "
                "its TTL (300 s by default)%s" % (_seconds(offset), by, fail_offset, note), unit="s")
    elif not sync["synchronized"]:
        res.add("time_sync", False, measured, max_offset, source,
                "clock not synchronized to a time source (%s)%s" % (by, note), unit="s", bad="warn")
    elif offset is not None and abs(offset) > max_offset:
        res.add("time_sync", False, measured, max_offset, source,
                "clock %s of its time source (%s), at most %g s expected%s" % (_seconds(offset), by, max_offset, note),
                unit="s", bad="warn")
    else:
        res.add("time_sync", True, measured, max_offset, source,
                "clock synchronized (%s%s)%s" % (by, ", %s" % _seconds(offset) if offset is not None else "", note),
                unit="s")


def _size(count):
    # type: (float) -> str
    return "%.1f GiB" % (count / 2.0 ** 30) if count >= 2 ** 30 else "%d MiB" % (count // 2 ** 20)


def _check_disk_space(res, observed, expected):
    # type: (_Results, Dict[str, Any], Dict[str, Any]) -> None
    want = expected.get("disk_space")
    paths = list((want or {}).get("paths") or [])
    if not paths:
        res.skip("disk_space", "no free space expected")
        return
    percent = float(want.get("min_free_percent", DISK_MIN_FREE_PERCENT))
    least = int(want.get("min_free_bytes") or 0)
    usage = observed.get("disk_space") or {}
    errors = observed.get("disk_space_errors") or {}
    present = [p for p in paths if usage.get(p)]
    absent = [p for p in paths if p not in errors and not usage.get(p)]
    free_pct = dict((p, 100.0 * usage[p][1] / usage[p][0] if usage[p][0] else 100.0) for p in present)
    low = [p for p in present if usage[p][0] and (free_pct[p] < percent or usage[p][1] < least)]
    floor = "%g%%%s" % (percent, " and %s" % _size(least) if least else "")
    described = ["%s %.1f%% (%s)" % (p, free_pct[p], _size(usage[p][1])) for p in present]
    # The least free share of the paths (the results document takes a number; the message names each path).
    measured = round(min(free_pct.values()), 1) if free_pct else None
    tail = "; not present: %s" % ", ".join(absent) if absent else ""
    if low:
        message = "low free space: %s free, at least %s expected" % (
            ", ".join("%s %.1f%% (%s of %s)" % (p, free_pct[p], _size(usage[p][1]), _size(usage[p][0])) for p in low), floor)
    else:
        message = "free space: %s" % ", ".join(described) if described else ""
    if errors:
        message = "; ".join([m for m in (message,) if m] + ["statvfs could not be used: %s" % "; ".join(
            errors[p] for p in paths if p in errors)])
        res.tool_fault("disk_space", message + tail, percent, want.get("source"), unit="%", bad="fail" if low else "warn")
        res.items[-1]["measured"] = measured
        return
    if not present:
        res.skip("disk_space", "none of the paths exists: %s" % ", ".join(absent), want.get("source"))
        return
    res.add("disk_space", not low, measured, percent, want.get("source"), message + tail, unit="%")


def evaluate(observed, expected):
    # type: (Dict[str, Any], Dict[str, Any]) -> List[Dict[str, Any]]
    """Every passive check of one node.

    ``observed``: ``nvidia_smi`` (parse_health_xml's dict, or None with ``nvidia_smi_error``),
    ``cuda_toolkit_version`` (what the node's nvcc reports), ``persistenced_active``,
    ``kernel_log`` ({text, window} or None with ``kernel_log_error``), ``ibstat`` (the ibstat
    summary, or None with ``ibstat_error``), ``mounts`` ([{path, fstype}]), ``services``
    ({name: systemctl is-active word}) and ``services_errors`` ({name: why systemctl could
    not tell}), ``time_sync`` (read_time_sync's: {source, synchronized, offset, note}, or None with
    ``time_sync_error``), ``disk_space`` ({path: [size, free] bytes, or None when absent}) and
    ``disk_space_errors`` ({path: why statvfs failed}).
    A tool that could not run gives a ``tooling`` warn, never a hardware verdict.
    ``expected``: ``gpu_count``, ``gpu_model``, ``driver_version``, ``cuda_version`` (each
    ``{value, source}`` or None), ``xid_codes``, ``hca``
    ({rate_gbps, source, link_layers, ignore, count} or None), ``mounts`` ([{path, fstype,
    source}]), ``services`` ([names]), ``time_sync`` ({max_offset, fail_offset, source}: seconds),
    ``disk_space`` ({paths, min_free_percent, min_free_bytes, source}), ``severity`` ({check: fail|warn|skip}).
    A node expected to have no GPU gets its GPU checks skipped.
    """
    _check_shape(expected)
    severity = _severity(expected)
    res = _Results(severity)
    count = expected.get("gpu_count")
    smi = observed.get("nvidia_smi")
    if count is not None and not count.get("value"):
        for check in GPU_CHECKS:
            res.skip(check, "not a GPU node", count.get("source"))
    elif smi is None:
        res.tool_fault("gpu_count", "nvidia-smi could not be used, no GPU judged: %s" % (
            observed.get("nvidia_smi_error") or "no output"), count["value"] if count else None,
            count.get("source") if count else None)
        for check in GPU_CHECKS[1:]:
            if check != "xid":
                res.skip(check, "not judged: nvidia-smi could not be used")
                res.items[-1]["tooling"] = True
        _check_xid(res, observed, expected)
    else:
        _check_gpus(res, observed, expected)
        _check_xid(res, observed, expected)
    _check_hca(res, observed, expected)
    _check_mounts(res, observed.get("mounts") or [], expected)
    _check_services(res, observed.get("services") or {}, expected, observed.get("services_errors"))
    _check_time_sync(res, observed, expected)
    _check_disk_space(res, observed, expected)
    order = dict((name, i) for i, name in enumerate(CHECKS))
    results = sorted(res.items, key=lambda item: order[item["check"]])
    return [dict(item, status="skip", message="turned off (severity skip): " + item["message"])
            if severity[item["check"]] == "skip" else item for item in results]


def verdict(results):
    # type: (List[Dict[str, Any]]) -> str
    """fail when any check failed, else warn when any warned, else pass."""
    statuses = set(item["status"] for item in results)
    for status in ("fail", "warn"):
        if status in statuses:
            return status
    return "pass"


def tooling_faults(results):
    # type: (List[Dict[str, Any]]) -> List[str]
    """The checks whose tool could not run (and that were not turned off): the node is not
    known to be healthy, so a drain of its own must not be lifted on their account."""
    return [item["check"] for item in results if item.get("tooling") and item["status"] != "skip"]


def unjudged(results, names, absent=False):
    # type: (List[Dict[str, Any]], List[str], bool) -> List[str]
    """Those of ``names`` (say, the checks a drain reason names) this run could not judge
    because a tool could not run: the repair is not proven, so such a drain stays. With
    ``absent``, also those this run does not have at all: the node's health check program runs
    the passive checks only, so a drain for an active check (validate.yml's dcgm_diag, ib_bw, a
    GPU job) is never lifted by it."""
    blind = [item["check"] for item in results if item["check"] in names and item.get("tooling")]
    if absent:
        run = set(item["check"] for item in results)
        blind.extend(name for name in names if name not in run and name not in blind)
    return blind


def reason_checks(reason, prefix):
    # type: (str, str) -> List[str]
    """The checks a drain reason of this system names: ``<prefix> gpu_count,xid`` as Slurm
    shows it (with its `` [user@time]`` tail), ``<prefix> flapping xid`` too; none when the reason is
    not ours."""
    if not reason.startswith(prefix):
        return []
    words = reason[len(prefix):].split()
    if words and words[0] == FLAPPING_WORD:
        words = words[1:]
    return [name for name in words[0].split(",") if name] if words else []


def command_path(argv, tools):
    # type: (List[str], Dict[str, Any]) -> List[str]
    """``argv`` with its program replaced by the absolute path ``tools`` gives for that name
    (decided when the program was installed); a name without one, or a path that is not
    absolute, is left to the search path."""
    path = (tools or {}).get(argv[0])
    if isinstance(path, str) and path.startswith("/"):
        return [path] + list(argv[1:])
    return list(argv)


def command_environment(environ):
    # type: (Dict[str, str]) -> Dict[str, str]
    """The environment the tools run in: ``environ`` with LC_ALL=C and FALLBACK_PATH's
    directories added after its own PATH (all of them when Slurm gave it none)."""
    have = [part for part in (environ.get("PATH") or "").split(":") if part]
    extra = [part for part in FALLBACK_PATH.split(":") if part not in have]
    return dict(environ, LC_ALL="C", PATH=":".join(have + extra))


# A command runner: argv -> (rc, stdout, stderr); rc 127 when the program is not there.
Runner = Callable[[List[str]], Tuple[int, str, str]]
# A file system reader: path -> (size, free) bytes, None when the path does not exist (disk_usage).
DiskReader = Callable[[str], Optional[Tuple[int, int]]]


def _first_line(out, err):
    # type: (str, str) -> str
    """The command's own words: the first line of its error output, else of its output."""
    for text in (err, out):
        for line in (text or "").splitlines():
            if line.strip():
                return line.strip()
    return "no output"


def tool_error(name, rc, out, err):
    # type: (str, int, str, str) -> str
    """Why a tool could not be used, in its own words: ``nvidia-smi rc=9: NVIDIA-SMI has failed ...``."""
    return "%s rc=%d: %s" % (name, rc, _first_line(out, err))


def cuda_toolkit_version(run, nvcc, version_json_text):
    # type: (Runner, str, Optional[str]) -> Optional[str]
    """The default CUDA toolkit's version: ``cuda.version`` of its version.json (CUDA 11.1+),
    else the ``release X.Y`` nvcc prints. None when neither is there."""
    if version_json_text:
        try:
            version = json.loads(version_json_text)["cuda"]["version"]
            return ".".join(str(version).split(".")[:2])
        except (ValueError, KeyError, TypeError):
            pass
    rc, out, _err = run([nvcc, "--version"])
    match = _NVCC_RE.search(out) if rc == 0 else None
    return match.group(1) if match else None


def parse_mounts(text):
    # type: (str) -> List[Dict[str, str]]
    """/proc/mounts lines -> [{source, path, fstype}] (octal escapes such as ``\\040`` decoded)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            path = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[1])
            mounts.append({"source": fields[0], "path": path, "fstype": fields[2]})
    return mounts


def collect(run, read_file, settings, expected, disk=None):
    # type: (Runner, Callable[[str], Optional[str]], Dict[str, Any], Dict[str, Any], Optional[DiskReader]) -> Dict[str, Any]
    """Read what the passive checks look at, with ``run``, ``read_file`` (path -> text or None) and
    ``disk`` (path -> (size, free) bytes or None; default disk_usage, statvfs).

    ``settings``: ``nvidia_smi`` (path or name), ``nvcc``, ``cuda_home``, ``ibstat`` (path or
    name; empty reads sysfs), ``sysfs_root``, ``kernel_log_minutes``. Only what ``expected``
    asks about is read: no ibstat without HCA expectations, no nvcc without a CUDA pin.
    """
    _check_shape(expected)
    observed = {"services": {}}  # type: Dict[str, Any]
    count = expected.get("gpu_count")
    gpu_node = count is None or bool(count.get("value"))
    if gpu_node:
        smi = settings.get("nvidia_smi") or "nvidia-smi"
        rc, out, err = run([smi, "-q", "-x"])
        # By structure: whole XML is what the GPUs reported, whatever the exit code; anything
        # else (not found, not executable, timed out, the driver not answering) is the tool's fault.
        try:
            observed["nvidia_smi"] = parse_health_xml(out)
        except NvidiaSmiError as exc:
            observed["nvidia_smi"] = None
            observed["nvidia_smi_error"] = tool_error(smi, rc, out, err) if rc != 0 else str(exc)
        if expected.get("cuda_version"):
            home = settings.get("cuda_home") or "/usr/local/cuda"
            observed["cuda_toolkit_version"] = cuda_toolkit_version(
                run, settings.get("nvcc") or home + "/bin/nvcc", read_file(home + "/version.json"))
        rc, out, err = run(["systemctl", "is-active", "--quiet", "nvidia-persistenced"])
        observed["persistenced_active"] = rc == 0
        if rc in (124, 126, 127):  # systemctl could not be started or hung: nothing is known
            observed["persistenced_error"] = tool_error("systemctl", rc, out, err)
        minutes = int(settings.get("kernel_log_minutes") or 60)
        rc, out, err = run(["journalctl", "--dmesg", "--no-pager", "--quiet", "--since", "-%dmin" % minutes])
        window = "the kernel log of the last %d minutes" % minutes
        if rc != 0:
            journal_error = tool_error("journalctl", rc, out, err)
            rc, out, err = run(["dmesg"])
            window = "the kernel ring buffer (dmesg)"
            if rc != 0:
                observed["kernel_log_error"] = "%s; %s" % (journal_error, tool_error("dmesg", rc, out, err))
        observed["kernel_log"] = {"text": out, "window": window} if rc == 0 else None
    if expected.get("hca"):
        ibstat = settings.get("ibstat")
        if ibstat:
            rc, out, err = run([ibstat])
            if rc != 0:
                observed["ibstat"] = None
                observed["ibstat_error"] = tool_error(ibstat, rc, out, err)
            else:
                try:
                    observed["ibstat"] = summarize(parse_ibstat(out), "ibstat")
                except IbstatError as exc:
                    observed["ibstat"] = None
                    observed["ibstat_error"] = "%s: %s" % (ibstat, exc)
        else:
            observed["ibstat"] = summarize(read_sysfs(settings.get("sysfs_root") or "/sys"), "sysfs")
    wanted = expected.get("mounts") or []
    for mount in wanted:
        # stat first: an automount point mounts on access (timeout: a dead server must not hang us).
        run(["timeout", "10", "stat", "--", mount["path"]])
    observed["mounts"] = parse_mounts(read_file("/proc/mounts") or "") if wanted else []
    for name in expected.get("services") or []:
        rc, out, err = run(["systemctl", "is-active", name])
        words = out.split()
        if len(words) == 1 and words[0] in SERVICE_STATES:
            observed["services"][name] = words[0]
        else:
            observed["services"][name] = "unknown"
            observed.setdefault("services_errors", {})[name] = tool_error("systemctl", rc, out, err)
    if expected.get("time_sync"):
        observed.update(read_time_sync(run))
    paths = (expected.get("disk_space") or {}).get("paths") or []
    if paths:
        observed.update(read_disk_space(disk or disk_usage, paths))
    return observed


def hardware(observed):
    # type: (Dict[str, Any]) -> Dict[str, Any]
    """What the bandwidth expectations are derived from: the GPUs (count, names, UUIDs, architecture,
    the highest PCIe generation) and the HCAs as read (None when not read)."""
    smi = observed.get("nvidia_smi") or {"gpus": []}
    gpus = smi["gpus"]
    gens = [gpu["pcie"]["max_gen"] for gpu in gpus if gpu["pcie"]["max_gen"]]
    names = sorted(set(gpu["name"] for gpu in gpus if gpu["name"]))
    arches = sorted(set(gpu.get("architecture") for gpu in gpus if gpu.get("architecture")))
    return {
        "gpu_count": len(gpus),
        "gpu_names": names,
        "gpu_uuids": sorted(gpu["uuid"] for gpu in gpus if gpu.get("uuid")),
        "architecture": arches[0] if len(arches) == 1 else None,
        "pcie_max_gen": max(gens) if gens else None,
        "ibstat": observed.get("ibstat"),
    }


# ---------------------------------------------------------------------------
# The scheduler's view and the drain budget (shared by the controller and the node program)
# ---------------------------------------------------------------------------

def natural_key(name):
    # type: (str) -> List[Any]
    """node2 before node10."""
    return [int(part) if part.isdigit() else part for part in _NATURAL_RE.split(name)]


def scontrol_nodes(text):
    # type: (str) -> Dict[str, Dict[str, Any]]
    """``scontrol show node`` (multi-line form) -> {node: {state, flags, reason, gpus}}.

    ``state`` is the base state (IDLE, MIXED, ALLOCATED, DOWN...), ``flags`` the ``+`` flags
    (DRAIN, NOT_RESPONDING...), ``reason`` the whole Reason line (it may hold blanks) or None,
    ``gpus`` the configured ``gpu`` GRES count (``Gres=gpu:8``, ``gpu:h100:8(S:0-1)``) or None.
    Raises HealthError for text that is not that listing.
    """
    nodes = {}  # type: Dict[str, Dict[str, Any]]
    current = None  # type: Optional[Dict[str, Any]]
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        match = _SCONTROL_NODE_RE.match(line)
        if match:
            current = {"state": None, "flags": [], "reason": None, "gpus": None}
            nodes[match.group(1)] = current
        elif current is None:
            raise HealthError("scontrol show node: line %d comes before any NodeName= line: %s" % (number, line))
        if line.startswith("Reason="):
            current["reason"] = line[len("Reason="):].strip() or None
            continue
        for field in line.split():
            key, dummy, value = field.partition("=")
            if key == "State":
                parts = value.split("+")
                current["state"] = parts[0].rstrip("*")
                current["flags"] = parts[1:]
            elif key == "Gres":
                found = _GRES_GPU_RE.findall(value)
                current["gpus"] = sum(int(count) for count in found) if found else None
    for name, node in nodes.items():
        if node["state"] is None:
            raise HealthError("scontrol show node: node %s has no State= field" % name)
    return nodes


def node_drained(node):
    # type: (Dict[str, Any]) -> bool
    """Whether a node of scontrol_nodes is drained or draining."""
    return "DRAIN" in node["flags"] or node["state"] in ("DRAINED", "DRAINING")


# The reason playbooks/quarantine.yml gives a node that failed its deep retest (``rma: <checks>``):
# taken out by this system, so the drain budget counts it; never resumed automatically.
RMA_REASON_PREFIX = "rma:"


def drained_by(nodes, prefix):
    # type: (Dict[str, Dict[str, Any]], str) -> List[str]
    """The nodes of scontrol_nodes drained by this system (the reason starts with ``prefix``, or
    with RMA_REASON_PREFIX: the quarantine kept them out), in natural order. An admin's drain (any
    other reason) is not this system's."""
    return sorted((name for name, node in nodes.items()
                   if node_drained(node) and (node.get("reason") or "").startswith((prefix, RMA_REASON_PREFIX))),
                  key=natural_key)


def drain_budget(total, fraction, min_nodes):
    # type: (int, float, int) -> int
    """How many of the ``total`` nodes the scheduler lists this system may keep drained at once:
    ``fraction`` of them rounded down, at least ``min_nodes``."""
    # The tolerance keeps 0.29 * 100 (28.999999999999996 in binary) at 29.
    return max(int(min_nodes), int(math.floor(fraction * total + 1e-9)))


def budget_split(total, ours, wanted, fraction, min_nodes, prefix, verb="drained"):
    # type: (int, List[str], List[str], float, int, str, str) -> Dict[str, Any]
    """Which of the nodes that want a drain get it within the drain budget, in natural order.

    ``total``: the nodes the scheduler lists; ``ours``: those this system keeps drained (its
    reason, ``prefix``; an admin's drains are not counted: the budget limits what this system
    does); ``wanted``: the nodes to drain. A node of ``wanted`` already in ``ours`` (drained by
    this system, failing again) is drained again without spending budget.
    Returns ``{drain, held, budget, drained, why}``: ``drained`` the nodes this system keeps drained
    once ``drain`` is done, ``why`` the words a held node carries (empty when none is held; ``verb``:
    what this system does to a node, ``cordoned`` in Kubernetes).
    """
    budget = drain_budget(total, fraction, min_nodes)
    kept = set(ours)
    drain = []  # type: List[str]
    held = []  # type: List[str]
    for host in sorted(set(wanted), key=natural_key):
        if host in kept or len(kept) < budget:
            kept.add(host)
            drain.append(host)
        else:
            held.append(host)
    why = ""
    if held:
        why = ("drain budget spent: %d of %d nodes %s by %s, budget %d (%s%% of %d, at least %d)"
               % (len(kept), total, verb, prefix.rstrip(":") or prefix, budget, "%g" % (fraction * 100), total, int(min_nodes)))
    return {"drain": drain, "held": held, "budget": budget, "drained": len(kept), "why": why}


# ---------------------------------------------------------------------------
# Metrics for the node exporter's textfile collector (the monitoring role's alerts read them)
# ---------------------------------------------------------------------------

STATUSES = ("pass", "warn", "fail", "skip")
# What the health check program did about its node, as the label of gpucluster_health_action:
# drained; held (the drain budget was spent); not_drained (the nodes could not be read to keep the
# budget, or the scheduler refused the drain or cordon); unconfirmed (a transient reading failed, not yet in enough runs in a
# row to drain); resumed; kept (its own drain kept: a check it names could not be judged, or a
# drain for flapping); none; unknown (scontrol did not answer about the node); other (words this list lacks).
ACTIONS = ("drained", "held", "not_drained", "unconfirmed", "resumed", "kept", "none", "unknown", "other")
# The program's file in the textfile collector's folder (the monitoring role's
# monitoring_node_exporter_textfile_dir), and the interval it is run at when the config says none
# (slurm_health_check_interval's default): the staleness alert waits 3 of them.
METRICS_FILE = "gpucluster_health.prom"
METRICS_DIR = "/var/lib/prometheus/node-exporter"
HEALTHCHECK_INTERVAL = 120


def action_kind(action):
    # type: (Optional[str]) -> str
    """The ACTIONS word for the program's action (``held (drain budget spent: ...)`` -> ``held``)."""
    text = action or "none"
    for prefix, kind in (("drained", "drained"), ("cordoned", "drained"), ("held (drain budget", "held"),
                         ("not drained", "not_drained"), ("not cordoned", "not_drained"), ("no action", "not_drained"),
                         ("unconfirmed", "unconfirmed"), ("resumed", "resumed"),
                         ("uncordoned", "resumed"), ("kept", "kept"), ("none", "none"),
                         ("scontrol did not answer", "unknown")):
        if text.startswith(prefix):
            return kind
    return "other"


def _metric_value(value):
    # type: (Any) -> str
    if isinstance(value, bool) or isinstance(value, int):
        return "%d" % value
    return repr(float(value))


def _label_value(value):
    # type: (str) -> str
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def health_metrics(checks, action, now, duration=None, interval=None):
    # type: (List[Dict[str, Any]], Optional[str], float, Optional[float], Optional[float]) -> str
    """The health check program's run as Prometheus text (the node exporter's textfile format).

    ``checks``: evaluate's results; ``action``: what the program did (slurm_action's words);
    ``now``: the run's end (seconds since the epoch); ``duration``: the run's seconds;
    ``interval``: the seconds between runs (HEALTHCHECK_INTERVAL when None). Each check's status and
    the verdict and action are state sets (one series per state, 1 for the current one).
    """
    lines = []  # type: List[str]

    def metric(name, help_text, samples):
        # type: (str, str, List[Tuple[str, Any]]) -> None
        lines.extend(["# HELP %s %s" % (name, help_text), "# TYPE %s gauge" % name])
        lines.extend("%s%s %s" % (name, labels, _metric_value(value)) for labels, value in samples)

    def labels(**pairs):
        # type: (**str) -> str
        return "{%s}" % ",".join('%s="%s"' % (key, _label_value(value)) for key, value in sorted(pairs.items()))

    kind = action_kind(action)
    status = verdict(checks)
    tooling = tooling_faults(checks)
    metric("gpucluster_health_check_status", "A passive check's result on this node: 1 for its status (pass, warn, fail, skip).",
           [(labels(check=item["check"], status=word), int(item["status"] == word)) for item in checks for word in STATUSES])
    metric("gpucluster_health_check_tooling", "1 when the check's tool could not run: the check judged nothing.",
           [(labels(check=item["check"]), int(item["check"] in tooling)) for item in checks])
    metric("gpucluster_health_tooling_faults", "How many checks' tools could not run.", [("", len(tooling))])
    metric("gpucluster_health_verdict", "The node's verdict: 1 for pass, warn or fail.",
           [(labels(verdict=word), int(status == word)) for word in ("pass", "warn", "fail")])
    metric("gpucluster_health_action", "What the health check did about the node: 1 for its action.",
           [(labels(action=word), int(kind == word)) for word in ACTIONS])
    metric("gpucluster_health_drain_held", "1 when a check failed but the node was not drained: the drain budget was "
           "spent, the nodes could not be read to keep it, or the scheduler refused or did not answer.",
           [("", int(status == "fail" and kind in ("held", "not_drained", "unknown")))])
    metric("gpucluster_health_interval_seconds", "Seconds between the health check's runs.",
           [("", interval if interval else HEALTHCHECK_INTERVAL)])
    if duration is not None:
        metric("gpucluster_health_run_duration_seconds", "How long the last run took.", [("", round(duration, 3))])
    metric("gpucluster_health_last_run_timestamp_seconds", "When the last run ended (seconds since the epoch).",
           [("", round(now, 3))])
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# History across runs: confirmation of transient readings, flapping (the node's health check program)
# ---------------------------------------------------------------------------

# The checks whose failure can be a passing reading, confirmed by consecutive runs before a drain:
# clock_events (a thermal or power-brake slowdown lasts as long as the heat or the power event),
# pcie_link (a link that power management trained down reads narrow or slow until traffic retrains
# it), hca_ports (the bandwidth-like reading: a port renegotiating after a switch reboot or a cable
# reseat reads Down, Polling or a lower rate for seconds). The others read a fact that does not come
# and go by itself: a GPU gone, a wrong model or version, ECC errors and retired or remapped rows
# (counters until a reset), an XID in the kernel log, a mount or a service missing, a clock a minute
# off (time_sync fails only past validation_time_fail_offset; being unsynchronized is a warning), a
# file system full: they drain at once.
TRANSIENT_CHECKS = ("pcie_link", "clock_events", "hca_ports")
# The defaults of the validation role's validation_healthcheck_confirm_runs,
# validation_healthcheck_flapping_window and validation_healthcheck_flapping_threshold.
CONFIRM_RUNS = 2
FLAPPING_WINDOW = 10
FLAPPING_THRESHOLD = 3
STATE_FILE = "/var/lib/gpucluster/healthcheck-state.json"
HISTORY_VERSION = 1
# The word after the prefix in the reason of a drain for flapping: ``<prefix> flapping pcie_link``.
FLAPPING_WORD = "flapping"
# One character per run and check: F failed, P judged and not failed (pass or warn), - not judged
# (skipped, or its tool could not run).
_HISTORY_RE = re.compile(r"^[FP-]{0,100}$")
_CHECK_NAME_RE = re.compile(r"^[a-z0-9_]{1,64}$")


def _setting(config, key, low, high, default, label=None):
    # type: (Dict[str, Any], str, int, int, int, Optional[str]) -> int
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise HealthError("%s: must be an integer within %d-%d (got %r)" % (label or key, low, high, value))
    return value


def history_settings(config):
    # type: (Dict[str, Any]) -> Dict[str, Any]
    """The history's settings in the health check program's config: ``confirm_runs`` (1-10; 1 drains
    a transient reading at once), ``flapping`` ``{window, threshold}`` (runs, 3-100; fail episodes,
    2 to (window + 1) / 2, the most a window can hold) and ``state_file`` (an absolute path), each
    defaulted when missing. Raises HealthError naming a bad one."""
    flapping = config.get("flapping") or {}
    if not isinstance(flapping, dict):
        raise HealthError("flapping: must be a dict with window and threshold (got %r)" % (flapping,))
    window = _setting(flapping, "window", 3, 100, FLAPPING_WINDOW, "flapping.window")
    state_file = config.get("state_file") or STATE_FILE
    if not isinstance(state_file, str) or not state_file.startswith("/"):
        raise HealthError("state_file: must be an absolute path (got %r)" % (state_file,))
    return {
        "confirm_runs": _setting(config, "confirm_runs", 1, 10, CONFIRM_RUNS),
        "window": window,
        "threshold": _setting(flapping, "threshold", 2, (window + 1) // 2, min(FLAPPING_THRESHOLD, (window + 1) // 2),
                              "flapping.threshold"),
        "state_file": state_file,
    }


def new_history(node):
    # type: (str) -> Dict[str, Any]
    """A history with no run in it."""
    return {"version": HISTORY_VERSION, "node": node, "checks": {}, "flapping": []}


def history_from_text(text, node):
    # type: (Optional[str], str) -> Tuple[Dict[str, Any], Optional[str]]
    """``(history, note)`` from the state file's text (None: there is none yet, a first run). A file
    that is not this node's history (not JSON, another shape or version, another node's) gives a
    new history and a note saying why, never an error: the run goes on as a first run."""
    if text is None:
        return new_history(node), None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return new_history(node), "not JSON (%s)" % exc
    checks = data.get("checks") if isinstance(data, dict) else None
    flapping = data.get("flapping") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("version") != HISTORY_VERSION or not isinstance(checks, dict)
            or not isinstance(flapping, list)
            or not all(isinstance(k, str) and _CHECK_NAME_RE.match(k) and isinstance(v, str) and _HISTORY_RE.match(v)
                       for k, v in checks.items())
            or not all(isinstance(name, str) and _CHECK_NAME_RE.match(name) for name in flapping)):
        return new_history(node), "not a health check history of version %d" % HISTORY_VERSION
    if data.get("node") != node:
        return new_history(node), "the history of node %r, not %r" % (data.get("node"), node)
    return {"version": HISTORY_VERSION, "node": node, "checks": dict(checks), "flapping": list(flapping)}, None


def history_text(history):
    # type: (Dict[str, Any]) -> str
    """What the state file holds (one line of JSON, at most a few kilobytes)."""
    return json.dumps(history, sort_keys=True) + "\n"


def run_verdicts(results):
    # type: (List[Dict[str, Any]]) -> Dict[str, str]
    """This run's verdict per check, one character: F failed (a fault found beside a tooling fault
    too), P judged and not failed (pass or warn), - not judged (skipped, or its tool could not run)."""
    out = {}  # type: Dict[str, str]
    for item in results:
        if item["status"] == "fail":
            out[item["check"]] = "F"
        elif item["status"] == "skip" or item.get("tooling"):
            out[item["check"]] = "-"
        else:
            out[item["check"]] = "P"
    return out


def flapping_reason(prefix, checks):
    # type: (str, List[str]) -> str
    """The reason of a drain for flapping: ``gpucluster-validation: flapping pcie_link,xid``."""
    return "%s %s %s" % (prefix, FLAPPING_WORD, ",".join(checks))


def flapping_drain(reason, prefix):
    # type: (str, str) -> List[str]
    """The checks of a drain reason of this system for flapping; none for any other reason."""
    words = reason[len(prefix):].split() if reason.startswith(prefix) else []
    return reason_checks(reason, prefix) if words and words[0] == FLAPPING_WORD else []


def advance_history(history, results, flapping_now, keep):
    # type: (Dict[str, Any], List[Dict[str, Any]], Optional[List[str]], int) -> Dict[str, Any]
    """The history with this run's verdicts added, each check's last ``keep`` runs kept (a check
    this run does not report is dropped, so the file stays bounded).

    ``flapping_now``: the checks of this system's drain for flapping the node has now (see
    flapping_drain; [] when it has none, None when the scheduler could not be asked). When the
    history had one and the node no longer has it, someone lifted it (an admin, the quarantine
    loop after its retest): the runs before this one are forgotten, the node starts afresh.
    """
    checks = dict(history.get("checks") or {})
    flapping = list(history.get("flapping") or [])
    if flapping_now is not None:
        if flapping and not flapping_now:
            checks = {}
        flapping = list(flapping_now)
    verdicts = run_verdicts(results)
    return {"version": HISTORY_VERSION, "node": history.get("node"), "flapping": flapping,
            "checks": dict((name, (checks.get(name, "") + verdict)[-keep:]) for name, verdict in verdicts.items())}


def fail_streak(verdicts):
    # type: (str) -> int
    """The failed runs at the end of a check's history, not counting the runs that did not judge
    it (a tool that could not run neither confirms nor clears a reading)."""
    return len(verdicts.replace("-", "")) - len(verdicts.replace("-", "").rstrip("F"))


def fail_episodes(verdicts):
    # type: (str) -> int
    """The separate spells of failure in a check's history (FFPFP-F: 3), unjudged runs ignored."""
    return len(re.findall("F+", verdicts.replace("-", "")))


def history_decision(history, results, confirm_runs, window, threshold):
    # type: (Dict[str, Any], List[Dict[str, Any]], int, int, int) -> Dict[str, Any]
    """What this run's failures may do, over the history that holds this run already.

    Returns ``{confirmed, unconfirmed, flapping, confirm_runs}``: ``confirmed`` the failed checks that
    may drain (a hard fault at once, a TRANSIENT_CHECKS one once it failed in ``confirm_runs``
    consecutive runs), ``unconfirmed`` ``[[check, runs failed], ...]`` the transient ones that have
    not yet, ``flapping`` the failed checks whose last ``window`` runs hold ``threshold`` or more
    separate spells of failure (fail, pass, fail...): the node is held for flapping.
    """
    checks = history.get("checks") or {}
    confirmed = []  # type: List[str]
    unconfirmed = []  # type: List[List[Any]]
    flapping = []  # type: List[str]
    for item in results:
        if item["status"] != "fail":
            continue
        name = item["check"]
        verdicts = checks.get(name) or "F"
        streak = max(1, fail_streak(verdicts))
        if name in TRANSIENT_CHECKS and streak < confirm_runs:
            unconfirmed.append([name, streak])
        else:
            confirmed.append(name)
        if fail_episodes(verdicts[-window:]) >= threshold:
            flapping.append(name)
    return {"confirmed": confirmed, "unconfirmed": unconfirmed, "flapping": flapping, "confirm_runs": confirm_runs}


def unconfirmed_action(decision):
    # type: (Dict[str, Any]) -> str
    """What a run with only unconfirmed failures does: ``unconfirmed (pcie_link 1/2)``."""
    return "unconfirmed (%s)" % ", ".join("%s %d/%d" % (name, runs, decision["confirm_runs"])
                                          for name, runs in decision["unconfirmed"])


# ---------------------------------------------------------------------------
# Kubernetes: the node's own cordon (the health check program's --kubernetes mode)
# ---------------------------------------------------------------------------

# The annotation on the nodes this system cordoned, its value the reason (the validation role's
# __validation_cordon_mark).
CORDON_MARK = "gpucluster.core/validation-cordon"


def kubectl_nodes(text, mark):
    # type: (str, str) -> Dict[str, Dict[str, Any]]
    """``kubectl get nodes --output=json`` -> {node: {unschedulable, mark, resource_version}}:
    ``mark`` the value of the annotation ``mark`` (None without it). Raises HealthError for text
    that is not that listing."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise HealthError("kubectl get nodes: not JSON (%s)" % exc)
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise HealthError("kubectl get nodes: no items list (got %s)" % type(document).__name__)
    nodes = {}  # type: Dict[str, Dict[str, Any]]
    for index, item in enumerate(items):
        name, unschedulable, value, meta = kubectl_node(item, index, mark)
        nodes[name] = {"unschedulable": unschedulable, "mark": value, "resource_version": meta.get("resourceVersion")}
    return nodes


def kubectl_node(item, index, mark):
    # type: (Any, int, str) -> Tuple[str, bool, Optional[str], Dict[str, Any]]
    """One item of a Kubernetes node list: (name, spec.unschedulable, the ``mark`` annotation's value
    or None, its metadata). Raises HealthError naming the item or node when it is not a node."""
    meta = item.get("metadata") if isinstance(item, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise HealthError("kubectl get nodes: item %d has no metadata.name" % index)
    spec = item.get("spec")
    unschedulable = spec.get("unschedulable", False) if isinstance(spec, Mapping) else False
    if not isinstance(unschedulable, bool):
        raise HealthError("kubectl get nodes: node %s: spec.unschedulable is not true or false (got %r)"
                          % (name, unschedulable))
    annotations = meta.get("annotations")
    value = annotations.get(mark) if isinstance(annotations, Mapping) else None
    return name, unschedulable, value if isinstance(value, str) else None, meta


def cordoned_by(nodes, prefix):
    # type: (Dict[str, Dict[str, Any]], str) -> List[str]
    """The nodes of kubectl_nodes cordoned by this system (unschedulable, the mark's reason starts
    with ``prefix``), in natural order. A cordon without the mark (an admin's) is not this system's."""
    return sorted((name for name, node in nodes.items()
                   if node["unschedulable"] and (node.get("mark") or "").startswith(prefix)), key=natural_key)


def kubernetes_decision(node, nodes, results, prefix, fraction, min_nodes):
    # type: (str, Dict[str, Dict[str, Any]], List[Dict[str, Any]], str, float, int) -> Dict[str, Any]
    """What this node does in Kubernetes after its checks (``results``), as slurm_action does in
    Slurm: ``{action, reason, held}``; ``action`` is the words the program reports, and one of
    ``cordoned`` (cordon with the mark, its value ``reason``: ``<prefix> <failed checks>``),
    ``uncordoned`` (this system's cordon, and its mark, lifted), ``unmarked`` (the mark removed from
    a node someone uncordoned by hand, so that a later admin cordon is not read as this system's)
    is a change; the others (``none``, ``kept cordoned ...``, ``held (...)``, ``node ... not listed``)
    are not.

    A failing node is cordoned within the drain budget (``fraction``, ``min_nodes``) counted over
    ``nodes`` (kubectl_nodes); ``held`` is True when the budget held it. A node cordoned without the
    mark (an admin's) is never touched. This system's cordon is lifted once nothing fails and every
    check its reason names was judged again: not left unjudged by a tool that could not run, and not
    a check this program does not run (the validation's active checks, ``kubernetes_gpu_pod``).
    """
    state = nodes.get(node)
    if state is None:
        return {"action": "node %s is not in Kubernetes' node list: no action" % node, "reason": None, "held": False}
    status = verdict(results)
    mark = state.get("mark")
    ours = mark is not None and mark.startswith(prefix)
    if status == "fail":
        if state["unschedulable"]:
            return {"action": "kept cordoned" if ours else "kept cordoned (admin)", "reason": None, "held": False}
        split = budget_split(len(nodes), cordoned_by(nodes, prefix), [node], fraction, min_nodes, prefix, "cordoned")
        if split["held"]:
            return {"action": "held (%s)" % split["why"], "reason": None, "held": True}
        failed = [item["check"] for item in results if item["status"] == "fail"]
        return {"action": "cordoned", "reason": "%s %s" % (prefix, ",".join(failed)), "held": False}
    if state["unschedulable"] and ours:
        named = reason_checks(mark, prefix)
        blind = unjudged(results, named, absent=True)
        if blind:
            return {"action": "kept cordoned (not judged: %s)" % ",".join(blind), "reason": None, "held": False}
        return {"action": "uncordoned", "reason": None, "held": False}
    if state["unschedulable"]:
        return {"action": "kept cordoned (admin)", "reason": None, "held": False}
    if mark is not None:
        return {"action": "unmarked", "reason": None, "held": False}
    return {"action": "none", "reason": None, "held": False}


def kubernetes_patch(mark, action, reason=None, resource_version=None):
    # type: (str, str, Optional[str], Optional[str]) -> Optional[Dict[str, Any]]
    """The JSON merge patch (``kubectl patch node --type=merge``) of kubernetes_decision's ``action``
    (None: nothing to patch): cordon and mark in one patch, so the node is never cordoned without
    saying why. With ``resource_version`` the API server refuses it (a conflict) when the node changed
    since it was read: an admin's cordon in between is not lifted."""
    if action == "cordoned":
        patch = {"spec": {"unschedulable": True}, "metadata": {"annotations": {mark: reason}}}  # type: Dict[str, Any]
    elif action == "uncordoned":
        patch = {"spec": {"unschedulable": False}, "metadata": {"annotations": {mark: None}}}
    elif action == "unmarked":
        patch = {"metadata": {"annotations": {mark: None}}}
    else:
        return None
    if resource_version:
        patch["metadata"]["resourceVersion"] = resource_version
    return patch
