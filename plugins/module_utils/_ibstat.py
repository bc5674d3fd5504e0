# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for ``ibstat``, ``ibstatus`` and /sys/class/infiniband.

Private module_utils of gpucluster.core: pure functions (the sysfs reader takes its root
as a parameter). Python 3.6 syntax, as it runs on the managed hosts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import os
import re
from typing import Any, Dict, List, Optional

from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_text as _read

from ansible_collections.gpucluster.core.plugins.module_utils._numbers import (
    leading_number as _num,  # '200 Gb/sec (4X HDR)' -> 200, '2.5' -> 2.5, '0x33bf' -> 13247
)

# IB port states by number (ibstatus and sysfs print "4: ACTIVE"), spelled as ibstat does.
_STATES = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}
_PHYS_STATES = {
    1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining",
    5: "LinkUp", 6: "LinkErrorRecovery", 7: "PhyTest",
}

_CA_RE = re.compile(r"^CA '([^']+)'\s*$")
_IBSTATUS_RE = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:\s*$")
_PORT_RE = re.compile(r"^\s+Port (\d+):\s*$")
_KV_RE = re.compile(r"^\s+([A-Za-z][A-Za-z0-9 _/-]*?):\s*(.*?)\s*$")


class IbstatError(Exception):
    """Raised when ibstat/ibstatus output is incomplete or not understood."""


def _key(name):
    # type: (str) -> str
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _state(value, names):
    # type: (Optional[str], Dict[int, str]) -> Optional[str]
    """'4: ACTIVE' -> 'Active'; 'Active' stays."""
    if value is None:
        return None
    match = re.match(r"^\s*(\d+)\s*:\s*(\S+)", value)
    if match:
        return names.get(int(match.group(1)), match.group(2).capitalize())
    return value.strip()


def _guid(value):
    # type: (Optional[str]) -> Optional[str]
    """'946d:ae03:00cd:e72c' or '0x946dae0300cde72c' -> '0x946dae0300cde72c'."""
    if value is None:
        return None
    value = value.strip().lower()
    if ":" in value:
        value = "0x" + value.replace(":", "")
    return value or None


def _gid_guid(gid):
    # type: (Optional[str]) -> Optional[str]
    """The interface id (low 64 bits) of a full GID 'fe80:0000:0000:0000:0015:5dff:fd34:11eb'."""
    if gid and gid.count(":") == 7:
        return _guid(":".join(gid.strip().split(":")[4:]))
    return None


def _new_port(number):
    # type: (int) -> Dict[str, Any]
    return {
        "port": number,
        "state": None,
        "physical_state": None,
        "rate_gbps": None,
        "base_lid": None,
        "sm_lid": None,
        "lmc": None,
        "port_guid": None,
        "link_layer": None,
    }


def _new_ca(name):
    # type: (str) -> Dict[str, Any]
    return {
        "name": name,
        "type": None,
        "number_of_ports": None,
        "firmware_version": None,
        "hardware_version": None,
        "node_guid": None,
        "system_image_guid": None,
        "ports": [],
    }


_CA_KEYS = {
    "ca_type": ("type", None),
    "number_of_ports": ("number_of_ports", _num),
    "firmware_version": ("firmware_version", None),
    "hardware_version": ("hardware_version", None),
    "node_guid": ("node_guid", _guid),
    "system_image_guid": ("system_image_guid", _guid),
}
_PORT_KEYS = {
    "state": ("state", lambda v: _state(v, _STATES)),
    "physical_state": ("physical_state", lambda v: _state(v, _PHYS_STATES)),
    "phys_state": ("physical_state", lambda v: _state(v, _PHYS_STATES)),
    "rate": ("rate_gbps", _num),
    "base_lid": ("base_lid", _num),
    "sm_lid": ("sm_lid", _num),
    "lmc": ("lmc", _num),
    "port_guid": ("port_guid", _guid),
    "link_layer": ("link_layer", None),
    "default_gid": ("port_guid", _gid_guid),
}


def _fail_line(number, line, why):
    # type: (int, str, str) -> IbstatError
    return IbstatError("%s at line %d: %r" % (why, number, line.strip()))


def parse_ibstat(text):
    # type: (str) -> List[Dict[str, Any]]
    """Parse ``ibstat`` or ``ibstatus`` output into a list of CAs (see module docs).

    Tabs or spaces may indent. Any line that is neither a CA/port header nor an indented
    ``key: value`` (for example an ``ibpanic:``/``ibwarn:`` error line) fails the parse, as
    do ports missing their state, rate or link layer and CAs listing fewer ports than they report.
    """
    cas = []  # type: List[Dict[str, Any]]
    by_name = {}  # type: Dict[str, Dict[str, Any]]
    ca = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    for number, line in enumerate((text or "").replace("\r", "").split("\n"), 1):
        if not line.strip():
            continue
        match = _CA_RE.match(line)
        if match:
            ca = _new_ca(match.group(1))
            cas.append(ca)
            by_name[ca["name"]] = ca
            port = None
            continue
        match = _IBSTATUS_RE.match(line)
        if match:
            name = match.group(1)
            ca = by_name.get(name)
            if ca is None:
                ca = _new_ca(name)
                cas.append(ca)
                by_name[name] = ca
            port = _new_port(int(match.group(2)))
            ca["ports"].append(port)
            continue
        match = _PORT_RE.match(line)
        if match:
            if ca is None:
                raise _fail_line(number, line, "port outside any CA")
            port = _new_port(int(match.group(1)))
            ca["ports"].append(port)
            continue
        match = _KV_RE.match(line)
        if match and ca is not None:
            key, value = _key(match.group(1)), match.group(2)
            if port is not None and key in _PORT_KEYS:
                field, conv = _PORT_KEYS[key]
                port[field] = conv(value) if conv else value
            elif port is None and key in _CA_KEYS:
                field, conv = _CA_KEYS[key]
                ca[field] = conv(value) if conv else value
            continue  # other keys (capability mask, default gid...) are not reported
        raise _fail_line(number, line, "ibstat output not understood")

    for ca in cas:
        expected = ca["number_of_ports"]
        if expected is not None and len(ca["ports"]) != expected:
            raise IbstatError(
                "ibstat output is incomplete: CA %s reports %d ports, the output lists %d"
                % (ca["name"], expected, len(ca["ports"]))
            )
        for port in ca["ports"]:
            # Link layer is the last line of each port in ibstat and ibstatus: a port
            # without it means the output was cut short.
            missing = [f for f in ("state", "physical_state", "rate_gbps", "link_layer") if port[f] is None]
            if missing:
                raise IbstatError(
                    "ibstat output is incomplete: %s port %d has no %s"
                    % (ca["name"], port["port"], ", ".join(missing))
                )
    return cas


def read_sysfs(sysfs_root="/sys"):
    # type: (str) -> List[Dict[str, Any]]
    """Read <sysfs_root>/class/infiniband/*; [] when there is none."""
    base = os.path.join(sysfs_root, "class", "infiniband")
    try:
        names = sorted(os.listdir(base))
    except (IOError, OSError):
        return []
    cas = []  # type: List[Dict[str, Any]]
    for name in names:
        dev = os.path.join(base, name)
        ca = _new_ca(name)
        ca["type"] = _read(os.path.join(dev, "hca_type"))
        ca["firmware_version"] = _read(os.path.join(dev, "fw_ver"))
        ca["hardware_version"] = _read(os.path.join(dev, "hw_rev"))
        ca["node_guid"] = _guid(_read(os.path.join(dev, "node_guid")))
        ca["system_image_guid"] = _guid(_read(os.path.join(dev, "sys_image_guid")))
        try:
            ports = sorted(os.listdir(os.path.join(dev, "ports")), key=lambda p: int(p) if p.isdigit() else 0)
        except (IOError, OSError):
            ports = []
        for pnum in ports:
            if not pnum.isdigit():
                continue
            pdir = os.path.join(dev, "ports", pnum)
            port = _new_port(int(pnum))
            port["state"] = _state(_read(os.path.join(pdir, "state")), _STATES)
            port["physical_state"] = _state(_read(os.path.join(pdir, "phys_state")), _PHYS_STATES)
            port["rate_gbps"] = _num(_read(os.path.join(pdir, "rate")))
            port["base_lid"] = _num(_read(os.path.join(pdir, "lid")))
            port["sm_lid"] = _num(_read(os.path.join(pdir, "sm_lid")))
            port["lmc"] = _num(_read(os.path.join(pdir, "lid_mask_count")))
            port["link_layer"] = _read(os.path.join(pdir, "link_layer")) or "InfiniBand"
            port["port_guid"] = _gid_guid(_read(os.path.join(pdir, "gids", "0")))
            ca["ports"].append(port)
        ca["number_of_ports"] = len(ca["ports"])
        cas.append(ca)
    return cas


def _natural(name):
    # type: (str) -> List[Any]
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def summarize(cas, source):
    # type: (List[Dict[str, Any]], Optional[str]) -> Dict[str, Any]
    """Build the infiniband facts: the CAs plus the derived port lists.

    ``active_ib_ports``/``active_roce_ports`` are ``<ca>:<port>`` strings of Active ports
    with link layer InfiniBand/Ethernet, in natural order (mlx5_2 before mlx5_10).
    ``nccl_ib_hca`` joins the active InfiniBand ports, or the active RoCE ports when there
    is no active InfiniBand port, as NCCL_IB_HCA expects.
    """
    cas = sorted(cas, key=lambda c: _natural(c["name"]))
    ib = []  # type: List[str]
    roce = []  # type: List[str]
    for ca in cas:
        for port in ca["ports"]:
            if port["state"] != "Active":
                continue
            label = "%s:%d" % (ca["name"], port["port"])
            if (port["link_layer"] or "").lower() == "ethernet":
                roce.append(label)
            else:
                ib.append(label)
    return {
        "source": source,
        "ca_count": len(cas),
        "cas": cas,
        "active_ib_ports": ib,
        "active_roce_ports": roce,
        "nccl_ib_hca": ",".join(ib or roce),
    }
