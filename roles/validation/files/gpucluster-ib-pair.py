# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run perftest's ib_write_bw between the two nodes of one Slurm job step.

    srun --nodes=2 --ntasks-per-node=1 --nodelist=A,B \\
        gpucluster-ib-pair --perftest /usr/bin/ib_write_bw --server A [--device A=mlx5_0 ...]

Each task looks at the node it runs on (SLURMD_NODENAME): on the --server node it starts
ib_write_bw as the server; on the other it runs the client against the server, trying again
while the server is not listening yet. Both sweep every message size (-a) and report Gb/s
(--report_gbits); -F keeps a CPU frequency warning from failing the run. The client's output
(the result judged) goes to stdout, the server's to stderr. Installed by gpucluster.core's
validation role.
"""

import argparse
import os
import socket
import subprocess
import sys
import time

# What perftest's client prints while no server listens on the port yet.
NOT_LISTENING = ("Couldn't connect", "Unable to open file descriptor for socket connection")


def run(argv, timeout):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout, check=False)
    except OSError as exc:
        return 127, "%s: %s\n" % (argv[0], exc)
    except subprocess.TimeoutExpired:
        return 124, "%s did not finish in %d s\n" % (argv[0], timeout)
    return proc.returncode, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--perftest", required=True, help="the path of ib_write_bw")
    parser.add_argument("--server", required=True, help="the Slurm node name of the server side")
    parser.add_argument("--device", action="append", default=[], metavar="NODE=DEVICE",
                        help="the adapter a node runs on (perftest's default where none is given)")
    parser.add_argument("--port", type=int, default=18515)
    parser.add_argument("--tries", type=int, default=20, help="client attempts, a second apart")
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args()

    devices = {}
    for item in args.device:
        node, sep, device = item.partition("=")
        if not sep or not node or not device:
            parser.error("--device %r is not NODE=DEVICE" % item)
        devices[node] = device
    me = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    argv = [args.perftest, "-a", "-F", "--report_gbits", "-p", str(args.port)]
    if me in devices:
        argv.extend(["-d", devices[me]])

    if me == args.server:
        rc, out = run(argv, args.timeout)
        sys.stderr.write("".join("%s (server): %s\n" % (me, line) for line in out.splitlines()))
        return rc

    rc, out = 1, ""
    for dummy in range(max(1, args.tries)):
        time.sleep(1)
        rc, out = run(argv + [args.server], args.timeout)
        if rc == 0 or not any(text in out for text in NOT_LISTENING):
            break
    sys.stdout.write(out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
