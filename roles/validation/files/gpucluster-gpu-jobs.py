# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one Slurm GPU job on each node at once and report, as JSON, what each job saw.

    gpucluster-gpu-jobs [--timeout SECONDS] [--srun srun] [--dcgm-diag LEVEL [--dcgmi dcgmi]]
                        [--container-image IMAGE [--docker docker]] NODE=GPUS [NODE=GPUS ...]

Each job asks for the node's GPUs (``srun -w NODE --gres=gpu:GPUS``) and reports how many
GPUs CUDA_VISIBLE_DEVICES lists and how many /dev/nvidiaN devices its devices cgroup lets it
open: with Slurm's ConstrainDevices, exactly the GPUs it was given. With --dcgm-diag, the job
then runs ``dcgmi diag -r LEVEL`` while it holds every GPU of the node (no other job is on
them), where dcgmi is installed, and reports its output. Installed by gpucluster.core's
validation role.
"""

import argparse
import json
import subprocess
import sys
import time

# The devices cgroup answers EPERM for a GPU the job was not given; any other outcome of open()
# (success, or ENXIO where no driver is loaded) means the job may use the device.
PROBE = r"""
import errno, glob, json, os, re, shutil, subprocess, sys
usable = 0
for path in glob.glob('/dev/nvidia[0-9]*'):
    if re.match(r'^/dev/nvidia[0-9]+$', path):
        try:
            os.close(os.open(path, os.O_RDONLY))
            usable += 1
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EACCES):
                usable += 1
visible = [d for d in os.environ.get('CUDA_VISIBLE_DEVICES', '').split(',') if d.strip()]
report = {'visible': len(visible), 'usable': usable, 'devices': os.environ.get('CUDA_VISIBLE_DEVICES', '')}
level, dcgmi = int(sys.argv[1]), shutil.which(sys.argv[2])
if level:
    report['dcgmi'] = {'level': level, 'path': dcgmi, 'rc': None, 'output': None}
    if dcgmi:
        try:
            proc = subprocess.run([dcgmi, 'diag', '-r', str(level)], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True, check=False)
            report['dcgmi'].update(rc=proc.returncode, output=proc.stdout)
        except OSError as exc:
            report['dcgmi'].update(rc=127, output=str(exc))
image, docker = sys.argv[3], shutil.which(sys.argv[4])
if image:
    box = report['container'] = {'image': image, 'path': docker, 'pull_rc': None, 'rc': None, 'uuids': None,
                                 'output': None}

    def run(argv, timeout):
        try:
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                  timeout=timeout, check=False)
            return proc.returncode, proc.stdout
        except subprocess.TimeoutExpired as exc:
            return 'timeout after %ds' % timeout, exc.output or ''
        except OSError as exc:
            return 127, str(exc)

    if docker:
        if run([docker, 'image', 'inspect', '--format', '{{.Id}}', image], 60)[0] != 0:
            box['pull_rc'], box['output'] = run([docker, 'pull', '--quiet', image], 600)
        if box['pull_rc'] in (None, 0):
            box['rc'], out = run([docker, 'run', '--rm', '--gpus', 'all', '--network', 'none', image,
                                  'nvidia-smi', '-q', '-x'], 300)
            box['output'] = out[-1500:]
            if box['rc'] == 0:
                import xml.etree.ElementTree as ET
                try:
                    root = ET.fromstring(out[out.find('<'):] if '<' in out else out)
                    box['uuids'] = [(node.text or '').strip() for node in root.findall('gpu/uuid')]
                    box['output'] = None
                except ET.ParseError:
                    pass
print('GPUCLUSTER-GPU-JOB ' + json.dumps(report))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--srun", default="srun")
    parser.add_argument("--dcgm-diag", type=int, default=0, choices=range(0, 5), metavar="LEVEL",
                        help="dcgmi diag's run level in each job (0: none)")
    parser.add_argument("--dcgmi", default="dcgmi", help="dcgmi's name or path on the nodes")
    parser.add_argument("--container-image", default="", help="docker run --gpus all this image in each job")
    parser.add_argument("--docker", default="docker", help="docker's name or path on the nodes")
    parser.add_argument("nodes", nargs="+", metavar="NODE=GPUS")
    args = parser.parse_args()
    jobs = []
    for spec in args.nodes:
        node, dummy, gpus = spec.partition("=")
        if not node or not gpus.isdigit() or int(gpus) < 1:
            parser.error("%r is not NODE=GPUS with GPUS >= 1" % spec)
        argv = [args.srun, "--immediate=60", "--nodes=1", "--ntasks=1", "--nodelist=" + node,
                "--gres=gpu:%d" % int(gpus), "--time=%d" % max(1, args.timeout // 60),
                "--job-name=gpucluster-validation", "python3", "-c", PROBE, str(args.dcgm_diag), args.dcgmi,
                args.container_image, args.docker]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        jobs.append((node, int(gpus), proc))
    deadline = time.time() + args.timeout
    report = []
    for node, gpus, proc in jobs:
        try:
            output, dummy = proc.communicate(timeout=max(1, deadline - time.time()))
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            output, dummy = proc.communicate()
            rc = "timeout after %ds" % args.timeout
        entry = {"host": node, "gpus": gpus, "rc": rc, "visible": None, "usable": None, "output": output[-2000:]}
        for line in output.splitlines():
            if line.startswith("GPUCLUSTER-GPU-JOB "):
                entry.update(json.loads(line[len("GPUCLUSTER-GPU-JOB "):]))
                entry["output"] = "\n".join(text for text in output.splitlines()
                                            if not text.startswith("GPUCLUSTER-GPU-JOB "))[-2000:]
        report.append(entry)
    json.dump({"jobs": report}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
