# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build Slurm gres.conf content and the matching slurm.conf Gres= string from nvidia facts.

Private module_utils of gpucluster.core: pure functions except the two small sysfs/procfs
readers, which take their root path as a parameter. Python 3.6 syntax (runs on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import os
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ansible_collections.gpucluster.core.plugins.module_utils._sysfs import read_text

_BAD_TYPE_RE = re.compile(r"[\s,:=()]")
_VENDOR_WORDS = frozenset(["nvidia", "tesla", "geforce", "quadro"])


class GresError(Exception):
    """Raised when gres.conf cannot be built from the facts; the message names the problem."""


def nvml_type_name(product_name):
    # type: (str) -> str
    """Slurm's own type name for an NVML-autodetected GPU.

    Slurm (src/plugins/gpu/common/gpu_common.c, gpu_common_underscorify_tolower(), called
    on nvmlDeviceGetName() in gpu_nvml.c) lowercases every character and turns each space
    into an underscore; hyphens and dots stay: "NVIDIA H100 80GB HBM3" ->
    "nvidia_h100_80gb_hbm3", "Tesla V100S-PCIE-32GB" -> "tesla_v100s-pcie-32gb".
    """
    return "".join("_" if ch == " " else ch.lower() for ch in product_name)


def short_type_name(product_name):
    # type: (str) -> str
    """A short model name: vendor words dropped, words up to the first one with a digit
    joined, cut at the first hyphen, lowercased ("NVIDIA A100-SXM4-80GB" -> "a100",
    "NVIDIA GeForce RTX 3080" -> "rtx3080"). Falls back to nvml_type_name()."""
    words = [w for w in product_name.split() if w.lower() not in _VENDOR_WORDS]
    picked = []  # type: List[str]
    for word in words:
        picked.append(word)
        if any(ch.isdigit() for ch in word):
            return "".join(picked).split("-", 1)[0].lower()
    return nvml_type_name(product_name)


def format_ranges(numbers):
    # type: (Iterable[int]) -> str
    """[0, 1, 2, 5] -> '0-2,5'."""
    values = sorted(set(numbers))
    parts = []  # type: List[str]
    if not values:
        return ""
    start = prev = values[0]
    for value in values[1:]:
        if value == prev + 1:
            prev = value
            continue
        parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
        start = prev = value
    parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
    return ",".join(parts)


def read_cpu_cores(sysfs_root="/sys"):
    # type: (str) -> Dict[int, int]
    """Map each online CPU id to Slurm's logical core index.

    Slurm's gres.conf Cores= takes logical core indices (core 0 is the first core of the
    first socket, as lstopo's Core L#), not CPU ids: hyper-thread siblings share a core.
    Cores are ranked by (physical_package_id, core_id). Empty when sysfs has no topology.
    """
    base = os.path.join(sysfs_root, "devices", "system", "cpu")
    try:
        names = os.listdir(base)
    except (IOError, OSError):
        return {}
    cpu_key = {}  # type: Dict[int, Tuple[int, int]]
    for name in names:
        if not re.match(r"^cpu\d+$", name):
            continue
        topo = os.path.join(base, name, "topology")
        package_id = read_text(os.path.join(topo, "physical_package_id"))
        core_id = read_text(os.path.join(topo, "core_id"))
        try:
            package, core = int(package_id), int(core_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        cpu_key[int(name[3:])] = (package, core)
    ranks = {}  # type: Dict[Tuple[int, int], int]
    for key in sorted(set(cpu_key.values())):
        ranks[key] = len(ranks)
    return dict((cpu, ranks[key]) for cpu, key in cpu_key.items())


def read_mig_minors(path="/proc/driver/nvidia-caps/mig-minors"):
    # type: (str) -> Dict[str, int]
    """Read nvidia-caps mig-minors ('gpu0/gi3/access 30' per line) into a dict."""
    minors = {}  # type: Dict[str, int]
    try:
        with open(path) as handle:
            for line in handle:
                parts = line.split()
                if len(parts) == 2 and parts[1].isdigit():
                    minors[parts[0]] = int(parts[1])
    except (IOError, OSError):
        pass
    return minors


def _check_type(name, what):
    # type: (str, str) -> str
    if not name or _BAD_TYPE_RE.search(name):
        raise GresError(
            "invalid GRES type %r for %s: a type may not be empty or contain blanks, ',', ':', '=' or parentheses"
            % (name, what)
        )
    return name


def gpu_type(gpu, type_style, type_map):
    # type: (Dict[str, Any], str, Dict[str, str]) -> Optional[str]
    """Type of one GPU: type_map (by product name or by its NVML type name) wins, then the style."""
    name = gpu.get("name")
    if not name:
        raise GresError("GPU %s has no product name; cannot derive its GRES type" % gpu.get("index"))
    nvml = nvml_type_name(name)
    if name in type_map:
        return _check_type(type_map[name], "GPU %s (%s)" % (gpu.get("index"), name))
    if nvml in type_map:
        return _check_type(type_map[nvml], "GPU %s (%s)" % (gpu.get("index"), name))
    if type_map:
        # An explicit map is the site's list of GPU types: a model it does not name is refused, not
        # written under a type derived some other way.
        raise GresError(
            "GPU %s (%s) is not in type_map (it names %s): add the product name %r or the NVML type name %r"
            % (gpu.get("index"), name, ", ".join(repr(k) for k in sorted(type_map)), name, nvml)
        )
    if type_style == "none":
        return None
    if type_style == "short":
        return _check_type(short_type_name(name), "GPU %s (%s)" % (gpu.get("index"), name))
    return _check_type(nvml, "GPU %s (%s)" % (gpu.get("index"), name))


def _links(gpu, gpus):
    # type: (Dict[str, Any], List[Dict[str, Any]]) -> str
    """Slurm Links=: per GPU in index order, -1 for itself, else the NVLink count (0 for none)."""
    links = gpu.get("links")
    if links is None:
        raise GresError(
            "links=true needs the NVLink matrix: gather the facts with nvidia_smi_facts topology=true"
        )
    values = []  # type: List[str]
    for other in gpus:
        if other["index"] == gpu["index"]:
            values.append("-1")
            continue
        code = links.get("GPU%d" % other["index"], "")
        match = re.match(r"^NV(\d+)$", code or "")
        values.append(match.group(1) if match else "0")
    return ",".join(values)


def _cores(gpu, cpu_cores, node_cores):
    # type: (Dict[str, Any], Dict[int, int], Optional[int]) -> Optional[str]
    affinity = gpu.get("cpu_affinity")
    if not affinity:
        return None
    if cpu_cores:
        missing = [cpu for cpu in affinity if cpu not in cpu_cores]
        if missing:
            raise GresError(
                "GPU %d CPU affinity names CPUs %s that this node does not have (it has CPUs %s)"
                % (gpu["index"], format_ranges(missing), format_ranges(cpu_cores))
            )
        cores = sorted(set(cpu_cores[cpu] for cpu in affinity))
    else:
        cores = sorted(set(affinity))
    if node_cores is not None:
        outside = [c for c in cores if c >= node_cores]
        if outside:
            raise GresError(
                "GPU %d Cores=%s lie outside the node's %d cores (0-%d)"
                % (gpu["index"], format_ranges(outside), node_cores, node_cores - 1)
            )
    return format_ranges(cores)


def build_gres(
    facts,  # type: Dict[str, Any]
    autodetect="none",  # type: str
    type_style="nvml",  # type: str
    type_map=None,  # type: Optional[Dict[str, str]]
    links=False,  # type: bool
    cores=True,  # type: bool
    expected_gpus=None,  # type: Optional[int]
    cpu_cores=None,  # type: Optional[Dict[int, int]]
    node_cores=None,  # type: Optional[int]
    mig_minors=None,  # type: Optional[Dict[str, int]]
    extra_lines=None,  # type: Optional[List[str]]
    header=None,  # type: Optional[str]
):
    # type: (...) -> Dict[str, Any]
    """Return {'content', 'gres', 'lines', 'devices', 'gpu_count', 'types'}.

    One line per GPU (or per MIG device), never compressed into File=/dev/nvidia[0-3]: each
    line can carry its own Cores= and Links=, and a diff then shows exactly which GPU changed.
    """
    type_map = type_map or {}
    cpu_cores = cpu_cores or {}
    gpus = list(facts.get("gpus") or [])
    if expected_gpus is not None and len(gpus) != expected_gpus:
        raise GresError("expected %d GPUs, the nvidia facts list %d" % (expected_gpus, len(gpus)))

    lines = []  # type: List[str]
    counts = []  # type: List[List[Any]]  # [type or None, count] in first-seen order
    devices = []  # type: List[str]
    seen = {}  # type: Dict[str, str]

    def count(gres_type, number=1):
        # type: (Optional[str], int) -> None
        for item in counts:
            if item[0] == gres_type:
                item[1] += number
                return
        counts.append([gres_type, number])

    def claim(path, owner):
        # type: (str, str) -> None
        if path in seen:
            raise GresError("duplicate device %s: %s and %s" % (path, seen[path], owner))
        seen[path] = owner
        devices.append(path)

    if autodetect == "nvml":
        lines.append("AutoDetect=nvml")

    for gpu in gpus:
        what = "GPU %d" % gpu["index"]
        base_type = gpu_type(gpu, type_style, type_map)
        mig_on = (gpu.get("mig_mode") or {}).get("current") == "Enabled"
        minor = gpu.get("minor_number")
        if minor is None and autodetect != "nvml":
            raise GresError("%s (%s) has no minor number, so no /dev/nvidia<minor> device file" % (what, gpu.get("name")))
        if mig_on:
            migs = gpu.get("mig_devices") or []
            if not migs:
                raise GresError("%s has MIG enabled but no MIG devices; create GPU and compute instances first" % what)
            for mig in migs:
                mwhat = "%s MIG device %s" % (what, mig.get("index"))
                if not mig.get("profile"):
                    raise GresError(
                        "%s (GPU instance %s) has no profile name in the nvidia-smi output, so its GRES type "
                        "cannot be derived; use autodetect=nvml for MIG GPUs" % (mwhat, mig.get("gpu_instance_id"))
                    )
                profile = mig["profile"].replace("MIG ", "").strip()
                mtype = _check_type("%s_%s" % (base_type, profile) if base_type else profile, mwhat)
                count(mtype)
                if autodetect == "nvml":
                    continue
                gi_key = "gpu%d/gi%s/access" % (minor, mig.get("gpu_instance_id"))
                ci_key = "gpu%d/gi%s/ci%s/access" % (minor, mig.get("gpu_instance_id"), mig.get("compute_instance_id"))
                mig_minors = mig_minors or {}
                if gi_key not in mig_minors or ci_key not in mig_minors:
                    raise GresError("%s: %s or %s missing from nvidia-caps mig-minors" % (mwhat, gi_key, ci_key))
                files = [
                    "/dev/nvidia%d" % minor,
                    "/dev/nvidia-caps/nvidia-cap%d" % mig_minors[gi_key],
                    "/dev/nvidia-caps/nvidia-cap%d" % mig_minors[ci_key],
                ]
                for path in files[1:]:
                    claim(path, mwhat)
                line = "Name=gpu Type=%s MultipleFiles=%s" % (mtype, ",".join(files))
                core_list = _cores(gpu, cpu_cores, node_cores) if cores else None
                if core_list:
                    line += " Cores=%s" % core_list
                lines.append(line)
            continue

        count(base_type)
        if autodetect == "nvml":
            continue
        path = "/dev/nvidia%d" % minor
        claim(path, what)
        line = "Name=gpu"
        if base_type:
            line += " Type=%s" % base_type
        line += " File=%s" % path
        core_list = _cores(gpu, cpu_cores, node_cores) if cores else None
        if core_list:
            line += " Cores=%s" % core_list
        if links:
            line += " Links=%s" % _links(gpu, gpus)
        lines.append(line)

    for extra in extra_lines or []:
        extra = extra.strip()
        if not extra:
            continue
        if "\n" in extra:
            raise GresError("extra line %r spans several lines; give one list item per line" % extra)
        lines.append(extra)

    body = []  # type: List[str]
    if header:
        body.extend(("# " + h).rstrip() for h in header.splitlines())
    body.extend(lines)
    gres = ",".join(
        "gpu:%s:%d" % (t, n) if t else "gpu:%d" % n for t, n in counts
    )
    return {
        "content": "\n".join(body) + "\n",
        "lines": lines,
        "gres": gres,
        "devices": devices,
        "gpu_count": len(gpus),
        "types": [t for t, _n in counts if t],
    }
