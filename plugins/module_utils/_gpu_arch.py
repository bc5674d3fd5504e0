# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA GPU architecture from the PCI device ID, and the kernel module flavour it needs.

Pure functions, no I/O. The driver role reads PCI IDs from sysfs before any driver is
installed, so nvidia-smi's product_architecture is not available yet. NVIDIA allocates
device IDs in blocks per chip family; the table lists those blocks. IDs above the last
block are newer than the table and treated as the newest architecture (open modules),
which is what every GPU released since Blackwell needs.

Open kernel modules support Turing and newer; Blackwell (and Grace Hopper) support only
the open modules; Maxwell, Pascal and Volta only the proprietary ones.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

# (first, last, architecture), by first ID; a later block inside an earlier one wins.
_BLOCKS = (
    (0x1340, 0x17FF, "maxwell"),
    (0x15F0, 0x15FF, "pascal"),  # GP100 (Tesla P100) sits inside the Maxwell-era block
    (0x1800, 0x1D7F, "pascal"),
    (0x1D80, 0x1DFF, "volta"),
    (0x1E00, 0x1FFF, "turing"),
    (0x2000, 0x20FF, "ampere"),  # GA100
    (0x2100, 0x21FF, "turing"),  # TU116 / TU117
    (0x2200, 0x22FF, "ampere"),  # GA102
    (0x2300, 0x23FF, "hopper"),  # GH100 / GH200
    (0x2400, 0x25FF, "ampere"),  # GA103 / GA104 / GA106 / GA107
    (0x2600, 0x28FF, "ada"),  # AD102 .. AD107
    (0x2900, 0xFFFF, "blackwell"),  # GB100 / GB20x and newer
)

ARCHITECTURES = ("maxwell", "pascal", "volta", "turing", "ampere", "hopper", "ada", "blackwell")
_OPEN_ONLY = frozenset(["blackwell"])
_PROPRIETARY_ONLY = frozenset(["maxwell", "pascal", "volta"])
FLAVOURS = ("auto", "open", "proprietary")


class GpuArchError(Exception):
    """A device ID or a flavour request that cannot be honoured."""


def parse_device_id(value):
    # type: (object) -> int
    """0x2330, "2330", "0x2330" or nvidia-smi's "233010DE" (device + vendor) -> 0x2330."""
    if isinstance(value, bool):
        raise GpuArchError("PCI device ID must be hex text or an integer, got %r" % (value,))
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip().lower()
        if text.startswith("0x"):
            text = text[2:]
        if len(text) == 8 and text.endswith("10de"):
            text = text[:4]
        if not text or len(text) > 4 or any(c not in "0123456789abcdef" for c in text):
            raise GpuArchError("PCI device ID %r is not a 16-bit hex number" % (value,))
        number = int(text, 16)
    else:
        raise GpuArchError("PCI device ID must be hex text or an integer, got %r" % (value,))
    if not 0 <= number <= 0xFFFF:
        raise GpuArchError("PCI device ID %r is not a 16-bit hex number" % (value,))
    return number


def architecture(device_id):
    # type: (object) -> str
    """The architecture of an NVIDIA PCI device ID; GpuArchError for IDs older than Maxwell."""
    number = parse_device_id(device_id)
    found = None
    for first, last, name in _BLOCKS:
        if first <= number <= last:
            found = name  # later (narrower) blocks win over the block they sit in
    if found is None:
        raise GpuArchError(
            "PCI device ID 0x%04x is older than Maxwell or not an NVIDIA GPU: current drivers do not support it"
            % number
        )
    return found


def kernel_module_flavour(device_ids, requested="auto"):
    # type: (list, str) -> str
    """open or proprietary for the GPUs of one host.

    auto: open when every GPU supports it (Turing and newer), proprietary when one needs it
    (Volta and older). A host with both a GPU that needs open and one that needs proprietary
    modules cannot be served by one driver. An explicit request is checked against the GPUs.
    """
    if requested not in FLAVOURS:
        raise GpuArchError("kernel module flavour must be one of %s, got %r" % (", ".join(FLAVOURS), requested))
    archs = sorted(set(architecture(device_id) for device_id in device_ids), key=ARCHITECTURES.index)
    need_open = [a for a in archs if a in _OPEN_ONLY]
    need_proprietary = [a for a in archs if a in _PROPRIETARY_ONLY]
    if need_open and need_proprietary:
        raise GpuArchError(
            "this host mixes GPUs that need the open kernel modules (%s) with GPUs that need the proprietary "
            "ones (%s): no single driver serves both" % (", ".join(need_open), ", ".join(need_proprietary))
        )
    if requested == "open" and need_proprietary:
        raise GpuArchError(
            "open kernel modules were asked for, but %s GPUs need the proprietary ones" % ", ".join(need_proprietary)
        )
    if requested == "proprietary" and need_open:
        raise GpuArchError(
            "proprietary kernel modules were asked for, but %s GPUs need the open ones" % ", ".join(need_open)
        )
    if requested != "auto":
        return requested
    return "proprietary" if need_proprietary else "open"
