# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``nvidia-smi -q -x``, ``nvidia-smi -L``, ``nvidia-smi topo -m`` and the NVIDIA PCI devices in sysfs.

Private module_utils of gpucluster.core: pure functions, no Ansible imports, so that
they can be unit tested on their own. Runs on the managed hosts, so the code keeps to
Python 3.6 syntax (no dataclasses, no walrus, no postponed annotations).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import os
import re
import xml.etree.ElementTree as ET
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_text as _read

from ansible_collections.gpucluster.core.plugins.module_utils._numbers import (
    leading_int as _to_int,  # '32510 MiB' -> 32510, '0x100' -> 256, '-1' -> -1
)

NVIDIA_PCI_VENDOR = "0x10de"

# Values nvidia-smi prints when a field has no value on this GPU/driver. They become None.
_NULL_VALUES = frozenset([
    "",
    "n/a",
    "[n/a]",
    "not supported",
    "[not supported]",
    "requested functionality has been deprecated",
    "none",
])

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DEVICE_COL_RE = re.compile(r"^(GPU|NIC|CPU|NVS|MLX)\d+$", re.IGNORECASE)
_NUMBER_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")
# nvidia-smi -L: "GPU 0: NVIDIA H200 (UUID: GPU-0d427690-...)", and under a GPU in MIG mode one
# indented line per MIG device: "  MIG 1g.10gb     Device  0: (UUID: MIG-...)".
_LIST_GPU_RE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9A-Fa-f-]+)\)$")
_LIST_MIG_RE = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[0-9A-Za-z/-]+)\)$")


class NvidiaSmiError(Exception):
    """Raised when nvidia-smi output cannot be used; the message says why."""


def _null(value):
    # type: (Optional[str]) -> Optional[str]
    """Strip a text value and map nvidia-smi's placeholders (N/A, deprecated...) to None."""
    if value is None:
        return None
    value = value.strip()
    if value.lower() in _NULL_VALUES:
        return None
    return value


def _text(node, path):
    # type: (Optional[ET.Element], str) -> Optional[str]
    if node is None:
        return None
    child = node.find(path)
    if child is None:
        return None
    return _null(child.text)


def _first_text(node, paths):
    # type: (Optional[ET.Element], List[str]) -> Optional[str]
    for path in paths:
        value = _text(node, path)
        if value is not None:
            return value
    return None


def _to_float(value):
    # type: (Optional[str]) -> Optional[float]
    """'250.00 W' -> 250.0."""
    if value is None:
        return None
    match = _NUMBER_RE.match(value)
    if not match:
        return None
    return float(match.group(1))


def _mode_pair(node, current, pending):
    # type: (Optional[ET.Element], str, str) -> Dict[str, Optional[str]]
    return {"current": _text(node, current), "pending": _text(node, pending)}


def _line_col_offset(text, start):
    # type: (str, int) -> int
    return text.count("\n", 0, start)


def _xml_start(text):
    # type: (str) -> int
    for marker in ("<?xml", "<!DOCTYPE", "<nvidia_smi_log"):
        idx = text.find(marker)
        if idx != -1:
            return idx
    return -1


def _xml_root(text):
    # type: (str) -> ET.Element
    """The ``<nvidia_smi_log>`` element of ``nvidia-smi -q -x`` output, or NvidiaSmiError."""
    if text is None or not text.strip():
        raise NvidiaSmiError("nvidia-smi -q -x returned no output")
    start = _xml_start(text)
    if start == -1:
        first = text.strip().splitlines()[0]
        raise NvidiaSmiError("nvidia-smi -q -x did not return XML; its output starts with: %s" % first)
    if "<!ENTITY" in text:
        # nvidia-smi never declares entities; refusing them keeps entity expansion
        # attacks away from old expat versions on the targets (no defusedxml there).
        raise NvidiaSmiError("nvidia-smi -q -x output declares XML entities; refusing to parse it")
    line_offset = _line_col_offset(text, start)
    body = text[start:]
    try:
        root = ET.fromstring(body.encode("utf-8"))
    except ET.ParseError as exc:
        line, column = getattr(exc, "position", (0, 0))
        reason = str(exc).split(":", 1)[0]
        raise NvidiaSmiError(
            "nvidia-smi -q -x returned malformed XML: %s at line %d, column %d"
            % (reason, line + line_offset, column)
        )
    if root.tag != "nvidia_smi_log":
        raise NvidiaSmiError(
            "nvidia-smi -q -x returned XML whose root element is <%s>, not <nvidia_smi_log>" % root.tag
        )
    return root


def parse_xml(text):
    # type: (str) -> Dict[str, Any]
    """Parse the output of ``nvidia-smi -q -x``.

    Returns a dict with driver_version, cuda_version, attached_gpus, gpu_count and gpus
    (one dict per ``<gpu>`` element, in output order, which is nvidia-smi's index order).
    Raises NvidiaSmiError on output that is not nvidia-smi XML or is malformed.
    """
    root = _xml_root(text)
    gpus = []  # type: List[Dict[str, Any]]
    for index, gpu in enumerate(root.findall("gpu")):
        gpus.append(_parse_gpu(gpu, index))

    return {
        "driver_version": _text(root, "driver_version"),
        "cuda_version": _text(root, "cuda_version"),
        "attached_gpus": _to_int(_text(root, "attached_gpus")),
        "gpu_count": len(gpus),
        "gpus": gpus,
    }


def _parse_mig_devices(gpu):
    # type: (ET.Element) -> List[Dict[str, Any]]
    devices = []  # type: List[Dict[str, Any]]
    container = gpu.find("mig_devices")
    if container is None:
        return devices
    for mig in container.findall("mig_device"):
        shared = mig.find("device_attributes/shared")
        devices.append({
            "index": _to_int(_text(mig, "index")),
            "gpu_instance_id": _to_int(_text(mig, "gpu_instance_id")),
            "compute_instance_id": _to_int(_text(mig, "compute_instance_id")),
            "uuid": _first_text(mig, ["uuid", "mig_uuid"]),
            "profile": _first_text(mig, ["profile", "profile_name", "gpu_instance_profile"]),
            "multiprocessor_count": _to_int(_text(shared, "multiprocessor_count")),
            "memory_total_mib": _to_int(_text(mig, "fb_memory_usage/total")),
        })
    return devices


def _parse_gpu(gpu, index):
    # type: (ET.Element, int) -> Dict[str, Any]
    minor = _to_int(_text(gpu, "minor_number"))
    bus_id = _text(gpu, "pci/pci_bus_id") or _null(gpu.get("id"))
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")
    power_limit = _first_text(power, ["current_power_limit", "enforced_power_limit", "power_limit"])
    return {
        "index": index,
        "minor_number": minor,
        "device_file": None if minor is None else "/dev/nvidia%d" % minor,
        "uuid": _text(gpu, "uuid"),
        "name": _text(gpu, "product_name"),
        "brand": _text(gpu, "product_brand"),
        "architecture": _text(gpu, "product_architecture"),
        "pci_bus_id": bus_id,
        "pci_device_id": _text(gpu, "pci/pci_device_id"),
        "memory_total_mib": _to_int(_text(gpu, "fb_memory_usage/total")),
        "persistence_mode": _text(gpu, "persistence_mode"),
        "compute_mode": _text(gpu, "compute_mode"),
        "driver_model": _mode_pair(gpu.find("driver_model"), "current_dm", "pending_dm"),
        "ecc_mode": _mode_pair(gpu.find("ecc_mode"), "current_ecc", "pending_ecc"),
        "power_limit_w": _to_float(power_limit),
        "default_power_limit_w": _to_float(_text(power, "default_power_limit")),
        "min_power_limit_w": _to_float(_text(power, "min_power_limit")),
        "max_power_limit_w": _to_float(_text(power, "max_power_limit")),
        "mig_mode": _mode_pair(gpu.find("mig_mode"), "current_mig", "pending_mig"),
        "mig_devices": _parse_mig_devices(gpu),
        "serial": _text(gpu, "serial"),
        "vbios_version": _text(gpu, "vbios_version"),
    }


# ---------------------------------------------------------------------------
# nvidia-smi -q -x: the health fields (validation's passive checks)
# ---------------------------------------------------------------------------

def _yes(value):
    # type: (Optional[str]) -> Optional[bool]
    """'Yes' -> True, 'No' -> False, N/A -> None."""
    if value is None:
        return None
    return value.strip().lower() == "yes"


def _active_reasons(gpu):
    # type: (ET.Element) -> Optional[List[str]]
    """Clock event (throttle) reasons that are Active, without their prefix.

    Drivers up to 535 print ``<clocks_throttle_reasons>`` / ``clocks_throttle_reason_*``,
    newer ones ``<clocks_event_reasons>`` / ``clocks_event_reason_*``. None when absent.
    """
    for container, prefix in (("clocks_event_reasons", "clocks_event_reason_"),
                              ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        node = gpu.find(container)
        if node is None:
            continue
        active = []  # type: List[str]
        for child in node:
            if _null(child.text) == "Active":
                name = child.tag[len(prefix):] if child.tag.startswith(prefix) else child.tag
                active.append(name)
        return active
    return None


def _uncorrectable(gpu, scope):
    # type: (ET.Element, str) -> Optional[int]
    """Uncorrectable ECC errors in ``ecc_errors/<scope>`` (volatile or aggregate).

    v12+ schema: dram_uncorrectable + sram_uncorrectable (or its _parity/_secded split);
    v11 schema: double_bit/total. None when the GPU reports none of them (no ECC).
    """
    node = gpu.find("ecc_errors/" + scope)
    if node is None:
        return None
    values = [_to_int(_text(node, name)) for name in (
        "dram_uncorrectable", "sram_uncorrectable", "sram_uncorrectable_parity",
        "sram_uncorrectable_secded")]
    if all(value is None for value in values):
        values = [_to_int(_text(node, "double_bit/total"))]
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _link(gpu, path):
    # type: (ET.Element, str) -> Optional[int]
    return _to_int(_text(gpu, "pci/pci_gpu_link_info/" + path))


def _health_gpu(gpu, index):
    # type: (ET.Element, int) -> Dict[str, Any]
    retired = gpu.find("retired_pages")
    remapped = gpu.find("remapped_rows")
    pending_retirement = None  # type: Optional[bool]
    if retired is not None:
        flags = [_yes(_text(retired, name)) for name in ("pending_blacklist", "pending_retirement")]
        known = [flag for flag in flags if flag is not None]
        pending_retirement = any(known) if known else None
    row_remap = None  # type: Optional[Dict[str, Any]]
    if remapped is not None and _null(remapped.text) is None and len(remapped):
        row_remap = {
            "correctable": _to_int(_text(remapped, "remapped_row_corr")),
            "uncorrectable": _to_int(_text(remapped, "remapped_row_unc")),
            "pending": _yes(_text(remapped, "remapped_row_pending")),
            "failure": _yes(_text(remapped, "remapped_row_failure")),
        }
    return {
        "index": index,
        "name": _text(gpu, "product_name"),
        "architecture": _text(gpu, "product_architecture"),
        "uuid": _text(gpu, "uuid"),
        "pci_bus_id": _text(gpu, "pci/pci_bus_id") or _null(gpu.get("id")),
        "persistence_mode": _text(gpu, "persistence_mode"),
        "ecc_mode": _mode_pair(gpu.find("ecc_mode"), "current_ecc", "pending_ecc"),
        "retired_pages": {
            "single_bit": _to_int(_text(retired, "multiple_single_bit_retirement/retired_count")),
            "double_bit": _to_int(_text(retired, "double_bit_retirement/retired_count")),
            "pending": pending_retirement,
        },
        "row_remap": row_remap,
        "uncorrectable_volatile": _uncorrectable(gpu, "volatile"),
        "uncorrectable_aggregate": _uncorrectable(gpu, "aggregate"),
        "pcie": {
            "max_gen": _link(gpu, "pcie_gen/max_link_gen"),
            "current_gen": _link(gpu, "pcie_gen/current_link_gen"),
            "max_width": _link(gpu, "link_widths/max_link_width"),
            "current_width": _link(gpu, "link_widths/current_link_width"),
        },
        "clock_event_reasons": _active_reasons(gpu),
        "utilization_pct": _to_int(_text(gpu, "utilization/gpu_util")),
    }


def parse_health_xml(text):
    # type: (str) -> Dict[str, Any]
    """The health fields of ``nvidia-smi -q -x``: per GPU the persistence and ECC modes,
    retired pages, row remapping, uncorrectable ECC errors, PCIe link generation and width
    (current and maximum) and the active clock event (throttle) reasons.

    A field the GPU or driver does not report is None. Raises NvidiaSmiError as parse_xml.
    """
    root = _xml_root(text)
    return {
        "driver_version": _text(root, "driver_version"),
        "cuda_version": _text(root, "cuda_version"),
        "gpus": [_health_gpu(gpu, index) for index, gpu in enumerate(root.findall("gpu"))],
    }


# ---------------------------------------------------------------------------
# nvidia-smi topo -m
# ---------------------------------------------------------------------------

def _split_cells(line):
    # type: (str) -> List[str]
    """Split a matrix line: on tabs when there are any, else on runs of 2+ blanks."""
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    return [cell.strip() for cell in re.split(r" {2,}", line)]


def _split_header(line):
    # type: (str) -> List[str]
    columns = []  # type: List[str]
    for cell in _split_cells(line):
        if not cell:
            continue
        words = cell.split()
        if len(words) > 1 and all(_DEVICE_COL_RE.match(w) for w in words):
            columns.extend(words)  # device names separated by a single blank
        else:
            columns.append(" ".join(words))
    return columns


def _column_key(name):
    # type: (str) -> str
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def parse_cpu_list(value):
    # type: (Optional[str]) -> Optional[List[int]]
    """'0-51,104-155' -> [0, 1, ..., 51, 104, ..., 155]; N/A or empty -> None."""
    value = _null(value)
    if value is None:
        return None
    cpus = []  # type: List[int]
    for part in value.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            try:
                first, last = int(low), int(high)
            except ValueError:
                raise NvidiaSmiError("cannot read CPU list %r" % value)
            if last < first:
                raise NvidiaSmiError("cannot read CPU list %r" % value)
            cpus.extend(range(first, last + 1))
        else:
            try:
                cpus.append(int(part))
            except ValueError:
                raise NvidiaSmiError("cannot read CPU list %r" % value)
    return cpus


def _assign_attributes(cells, attributes):
    # type: (List[str], List[str]) -> Dict[str, Optional[str]]
    """Map the cells after the link columns onto the attribute columns.

    nvidia-smi pads some cells with an extra tab (an empty cell after "NUMA Affinity"
    since the "GPU NUMA ID" column exists). When there are more cells than columns,
    the last column takes the last cell and the others are filled from the left.
    """
    result = {}  # type: Dict[str, Optional[str]]
    if not attributes:
        return result
    if len(cells) >= len(attributes):
        for name, cell in zip(attributes[:-1], cells):
            result[name] = cell
        result[attributes[-1]] = cells[-1]
    else:
        for pos, name in enumerate(attributes):
            result[name] = cells[pos] if pos < len(cells) else None
    return result


def parse_topology(text):
    # type: (str) -> Dict[str, Any]
    """Parse ``nvidia-smi topo -m``.

    Returns ``{"columns": [...], "devices": {label: {...}}, "nics": {NICn: name},
    "legend": {code: meaning}}``. Each device entry holds ``links`` (column label ->
    connection code, self left out), ``cpu_affinity`` (list of CPU ids or None),
    ``numa_node`` (int or None) and any further attribute column under a snake_case key.
    """
    if text is None or not text.strip():
        raise NvidiaSmiError("nvidia-smi topo -m returned no output")
    lines = _ANSI_RE.sub("", text).replace("\r", "").split("\n")

    header_idx = None
    for pos, line in enumerate(lines):
        if any(_DEVICE_COL_RE.match(tok) for tok in line.split()) and "=" not in line:
            header_idx = pos
            break
    if header_idx is None:
        raise NvidiaSmiError(
            "nvidia-smi topo -m output has no matrix header (a line naming GPU0...)"
        )
    columns = _split_header(lines[header_idx])
    device_cols, attributes = _split_columns(columns)
    attr_keys = [_column_key(a) for a in attributes]
    if not device_cols:
        raise NvidiaSmiError("nvidia-smi topo -m header names no device columns: %r" % lines[header_idx].strip())

    devices = {}  # type: Dict[str, Dict[str, Any]]
    pos = header_idx + 1
    while pos < len(lines):
        line = lines[pos]
        stripped = line.strip()
        if not stripped or stripped.endswith("Legend:"):
            break
        pos += 1
        cells = _split_cells(line)
        if "\t" not in line and " " in line.strip():
            # Space-separated (tabs expanded): every cell is one token.
            cells = line.split()
        label = cells[0]
        if not _DEVICE_COL_RE.match(label):
            raise NvidiaSmiError("nvidia-smi topo -m: unexpected matrix row %r" % stripped)
        rest = cells[1:]
        if len(rest) < len(device_cols):
            raise NvidiaSmiError(
                "nvidia-smi topo -m: row %s has %d link cells, the header names %d devices"
                % (label, len(rest), len(device_cols))
            )
        links = {}  # type: Dict[str, str]
        for col, cell in zip(device_cols, rest):
            if cell and cell != "X":
                links[col] = cell
        attrs = _assign_attributes(rest[len(device_cols):], attr_keys)
        entry = {"links": links}  # type: Dict[str, Any]
        for key in attr_keys:
            raw = attrs.get(key)
            if key == "cpu_affinity":
                entry["cpu_affinity"] = parse_cpu_list(raw)
            elif key == "numa_affinity":
                entry["numa_node"] = _to_int(_null(raw))
            elif key == "gpu_numa_id":
                entry["gpu_numa_id"] = _to_int(_null(raw))
            else:
                entry[key] = _null(raw)
        if "cpu_affinity" not in entry:
            entry["cpu_affinity"] = None
        if "numa_node" not in entry:
            entry["numa_node"] = None
        devices[label] = entry

    legend = {}  # type: Dict[str, str]
    nics = {}  # type: Dict[str, str]
    for line in lines[pos:]:
        match = re.match(r"^\s*([A-Za-z]+\d+)\s*:\s*(\S.*?)\s*$", line)
        if match and _DEVICE_COL_RE.match(match.group(1)):
            nics[match.group(1)] = match.group(2)
            continue
        match = re.match(r"^\s*(\S+)\s+=\s+(\S.*?)\s*$", line)
        if match:
            legend[match.group(1)] = match.group(2)

    return {"columns": device_cols, "devices": devices, "nics": nics, "legend": legend}


def merge_topology(facts, topology):
    # type: (Dict[str, Any], Dict[str, Any]) -> Dict[str, Any]
    """Copy each GPU's row of the topology matrix into facts['gpus'] (by GPU<index>)."""
    devices = topology.get("devices", {})
    for gpu in facts.get("gpus", []):
        row = devices.get("GPU%d" % gpu["index"])
        gpu["cpu_affinity"] = row.get("cpu_affinity") if row else None
        gpu["numa_node"] = row.get("numa_node") if row else None
        gpu["links"] = dict(row.get("links", {})) if row else {}
    facts["topology"] = topology
    return facts


# ---------------------------------------------------------------------------
# sysfs: NVIDIA PCI devices before any driver is installed
# ---------------------------------------------------------------------------

def scan_pci(sysfs_root="/sys"):
    # type: (str) -> Dict[str, Any]
    """List NVIDIA (vendor 0x10de) GPUs and NVSwitches from <sysfs_root>/bus/pci/devices.

    GPUs are PCI class 0x0300xx (VGA) or 0x0302xx (3D controller); NVSwitches are
    class 0x0680xx (other bridge), which means nvidia-fabricmanager is needed.
    """
    base = os.path.join(sysfs_root, "bus", "pci", "devices")
    gpus = []  # type: List[Dict[str, Any]]
    switches = []  # type: List[Dict[str, Any]]
    try:
        entries = sorted(os.listdir(base))
    except (IOError, OSError):
        entries = []
    for address in entries:
        dev = os.path.join(base, address)
        vendor = _read(os.path.join(dev, "vendor"))
        if vendor is None or vendor.lower() != NVIDIA_PCI_VENDOR:
            continue
        pci_class = (_read(os.path.join(dev, "class")) or "").lower()
        driver_link = os.path.join(dev, "driver")
        driver = os.path.basename(os.path.realpath(driver_link)) if os.path.lexists(driver_link) else None
        item = {
            "pci_address": address,
            "device_id": _read(os.path.join(dev, "device")),
            "class": pci_class,
            "driver": driver,
            "numa_node": _to_int(_read(os.path.join(dev, "numa_node"))),
        }
        if pci_class.startswith("0x0300") or pci_class.startswith("0x0302"):
            gpus.append(item)
        elif pci_class.startswith("0x0680"):
            switches.append(item)
    return {
        "gpus": gpus,
        "gpu_count": len(gpus),
        "nvswitches": switches,
        "nvswitch_count": len(switches),
        "fabric_manager_required": bool(switches),
    }


def parse_list(text):
    # type: (str) -> List[Dict[str, Any]]
    """``nvidia-smi -L`` -> one {index, name, uuid, mig} per GPU (``mig``: its MIG devices, each
    {profile, index, uuid}). Every non-empty line must be a GPU line or, after one, a MIG device
    line; anything else (nvidia-smi's own error text) is an error naming the line."""
    gpus = []  # type: List[Dict[str, Any]]
    for number, raw in enumerate(_ANSI_RE.sub("", text or "").splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        match = _LIST_GPU_RE.match(line)
        if match:
            gpus.append({"index": int(match.group(1)), "name": match.group(2).strip(),
                         "uuid": match.group(3), "mig": []})
            continue
        match = _LIST_MIG_RE.match(line)
        if match and gpus:
            gpus[-1]["mig"].append({"profile": match.group(1), "index": int(match.group(2)),
                                    "uuid": match.group(3)})
            continue
        raise NvidiaSmiError("nvidia-smi -L: line %d is not a GPU or MIG device line: %r" % (number, line.strip()[:200]))
    if not gpus:
        raise NvidiaSmiError("nvidia-smi -L: no GPU listed")
    return gpus


def command_error(args, rc, stdout, stderr):
    # type: (List[str], int, str, str) -> str
    """Build the failure message for an nvidia-smi run that exited non-zero."""
    message = " ".join(
        line.strip() for line in ((stdout or "") + "\n" + (stderr or "")).splitlines() if line.strip()
    )
    return "%s failed (rc=%d): %s" % (" ".join(args), rc, message or "no output")


def _split_columns(columns):
    # type: (List[str]) -> Tuple[List[str], List[str]]
    """Split header columns into the leading device columns and the attribute columns."""
    device_cols = []  # type: List[str]
    for name in columns:
        if _DEVICE_COL_RE.match(name):
            device_cols.append(name)
        else:
            break
    return device_cols, columns[len(device_cols):]
