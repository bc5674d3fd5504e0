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

import json
import math
import re
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


def evaluate(observed, expected):
    # type: (Dict[str, Any], Dict[str, Any]) -> List[Dict[str, Any]]
    """Every passive check of one node.

    ``observed``: ``nvidia_smi`` (parse_health_xml's dict, or None with ``nvidia_smi_error``),
    ``cuda_toolkit_version`` (what the node's nvcc reports), ``persistenced_active``,
    ``kernel_log`` ({text, window} or None with ``kernel_log_error``), ``ibstat`` (the ibstat
    summary, or None with ``ibstat_error``), ``mounts`` ([{path, fstype}]), ``services``
    ({name: systemctl is-active word}) and ``services_errors`` ({name: why systemctl could
    not tell}). A tool that could not run gives a ``tooling`` warn, never a hardware verdict.
    ``expected``: ``gpu_count``, ``gpu_model``, ``driver_version``, ``cuda_version`` (each
    ``{value, source}`` or None), ``xid_codes``, ``hca``
    ({rate_gbps, source, link_layers, ignore, count} or None), ``mounts`` ([{path, fstype,
    source}]), ``services`` ([names]), ``severity`` ({check: fail|warn|skip}).
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


def unjudged(results, names):
    # type: (List[Dict[str, Any]], List[str]) -> List[str]
    """Those of ``names`` (say, the checks a drain reason names) this run could not judge
    because a tool could not run: the repair is not proven, so such a drain stays."""
    return [item["check"] for item in results if item["check"] in names and item.get("tooling")]


def reason_checks(reason, prefix):
    # type: (str, str) -> List[str]
    """The checks a drain reason of this system names: ``<prefix> gpu_count,xid`` as Slurm
    shows it (with its `` [user@time]`` tail); none when the reason is not ours."""
    if not reason.startswith(prefix):
        return []
    words = reason[len(prefix):].split()
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


def collect(run, read_file, settings, expected):
    # type: (Runner, Callable[[str], Optional[str]], Dict[str, Any], Dict[str, Any]) -> Dict[str, Any]
    """Read what the passive checks look at, with ``run`` and ``read_file`` (path -> text or None).

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
