# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault injection on one sandbox node (benchmark tooling, never a role): bench_faults.py copies it
into the node and runs `python3 bench_faults_node.py inject|repair FAULT`.

The GPU faults edit the node's copy of the recorded nvidia-smi capture that the test double prints
(one field of GPU 0, or the last GPU dropped); the whole capture is kept beside it and put back by
the repair. The HCA faults give the ibstat double the real capture of the same kind of node with
two ports down, or change one port's rate. The others act on the node itself: a service stopped,
a shared mount unmounted, a full file system (a 1 MiB tmpfs over /tmp, filled), the clock read
through a chronyc that reports the node two minutes off. Nothing here is invented output beyond
the one field a fault changes.
"""

import os
import re
import shutil
import subprocess
import sys

CAPTURE = "/usr/share/gpucluster-test-double/nvidia-smi-q-x.xml"
IBSTAT = "/usr/share/gpucluster-test-double/ibstat.txt"
IBSTAT_DOWN = "/usr/share/gpucluster-test-double/ibstat-2-ports-down.txt"
SHARED = "/mnt/gpc-bench-shared"
CHRONYC = "/usr/bin/chronyc"
SKEWED_CHRONYC = """#!/bin/sh
# gpucluster.core benchmark tooling: the node's chronyc with its System time line reporting the
# clock 120 s fast (a clock skew; the containers share the host's clock, which is not touched).
%s.real "$@" | sed 's/^System time *:.*/System time     : 120.000000000 seconds fast of NTP time/'
""" % CHRONYC


def keep(path):
    if not os.path.exists(path + ".whole"):
        shutil.copyfile(path, path + ".whole")
    with open(path + ".whole") as handle:
        return handle.read()


def put_back(path):
    if os.path.exists(path + ".whole"):
        os.replace(path + ".whole", path)


def write(path, text):
    with open(path + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(path + ".tmp", path)


def edit_gpu0(pattern, replacement):
    text = keep(CAPTURE)
    start = text.index("<gpu id=")
    end = text.index("</gpu>", start)
    gpu, count = re.subn(pattern, replacement, text[start:end], count=1, flags=re.S)
    if count != 1:
        raise SystemExit("GPU 0 of the capture has no %r" % pattern)
    write(CAPTURE, text[:start] + gpu + text[end:])


def drop_last_gpu():
    text = keep(CAPTURE)
    cut = text.rindex("<gpu id=")
    write(CAPTURE, text[:cut] + text[text.index("</gpu>", cut) + len("</gpu>"):])


def driver(version):
    text = keep(CAPTURE)
    write(CAPTURE, re.sub(r"<driver_version>[^<]*</driver_version>", "<driver_version>%s</driver_version>" % version,
                          text, count=1))


def ibstat_rate():
    text = keep(IBSTAT)
    write(IBSTAT, text.replace("Rate: 400", "Rate: 200", 1))


def sh(*argv):
    subprocess.run(argv, check=True)


def skew_clock():
    if not os.path.exists(CHRONYC + ".real"):
        os.rename(CHRONYC, CHRONYC + ".real")
    write(CHRONYC, SKEWED_CHRONYC)
    os.chmod(CHRONYC, 0o755)


def clock_back():
    if os.path.exists(CHRONYC + ".real"):
        os.replace(CHRONYC + ".real", CHRONYC)


def fill_tmp():
    sh("mount", "-t", "tmpfs", "-o", "size=1m", "gpc-bench-full", "/tmp")
    subprocess.run(["dd", "if=/dev/zero", "of=/tmp/fill", "bs=64k"], stderr=subprocess.DEVNULL, check=False)


FAULTS = {
    "gpu-gone": (drop_last_gpu, lambda: put_back(CAPTURE)),
    "ecc-uncorrectable": (lambda: edit_gpu0(r"(<volatile>.*?<double_bit>\s*<device_memory>)0(<.*?<total>)0(<)",
                                            r"\g<1>1\g<2>1\g<3>"), lambda: put_back(CAPTURE)),
    "page-pending": (lambda: edit_gpu0(r"<pending_retirement>No<", "<pending_retirement>Yes<"), lambda: put_back(CAPTURE)),
    "pcie-down": (lambda: edit_gpu0(r"<current_link_width>16x<", "<current_link_width>4x<"), lambda: put_back(CAPTURE)),
    "hw-slowdown": (lambda: edit_gpu0(r"<clocks_throttle_reason_hw_slowdown>Not Active<",
                                      "<clocks_throttle_reason_hw_slowdown>Active<"), lambda: put_back(CAPTURE)),
    "wrong-driver": (lambda: driver("460.32.03"), lambda: put_back(CAPTURE)),
    "hca-port-down": (lambda: (keep(IBSTAT), shutil.copyfile(IBSTAT_DOWN, IBSTAT)), lambda: put_back(IBSTAT)),
    "hca-lower-rate": (ibstat_rate, lambda: put_back(IBSTAT)),
    "mount-gone": (lambda: sh("umount", SHARED), lambda: sh("mount", "-t", "tmpfs", "-o", "size=1m", "gpc-bench-shared", SHARED)),
    "docker-stopped": (lambda: sh("systemctl", "stop", "docker.socket", "docker.service"),
                       lambda: sh("systemctl", "start", "docker.service")),
    "munge-stopped": (lambda: sh("systemctl", "stop", "munge"), lambda: sh("systemctl", "start", "munge")),
    "slurmd-stopped": (lambda: sh("systemctl", "stop", "slurmd"), lambda: sh("systemctl", "start", "slurmd")),
    "clock-skew": (skew_clock, clock_back),
    "disk-full": (fill_tmp, lambda: sh("umount", "/tmp")),
    "nvidia-smi-unusable": (lambda: os.chmod("/usr/local/bin/nvidia-smi", 0o644),
                            lambda: os.chmod("/usr/local/bin/nvidia-smi", 0o755)),
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("inject", "repair") or sys.argv[2] not in FAULTS:
        raise SystemExit("usage: bench_faults_node.py inject|repair %s" % "|".join(FAULTS))
    inject, repair = FAULTS[sys.argv[2]]
    (inject if sys.argv[1] == "inject" else repair)()


if __name__ == "__main__":
    main()
