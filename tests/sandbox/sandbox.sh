#!/usr/bin/env bash
# The sandbox cluster: inventories/sandbox (the lab's shape) as systemd containers.
#   tests/sandbox/sandbox.sh up     install what is needed, start the nodes and the package mirror,
#                                   run site.yml, print the result
#   tests/sandbox/sandbox.sh down   remove the nodes and their networks
#   --os debian12 (default) or --os debian13: the nodes' OS (Debian 12 bookworm or 13 trixie)
#   up --kubernetes                 the Kubernetes variant (inventories/sandbox-kubernetes): the same nodes
#                                   with Kubernetes instead of Slurm (kubeadm, the GPU Operator, the training
#                                   operator and a training job given as data), from the Kubernetes test
#                                   bed's mirror (tests/harness/k8s: v1.20.2 built from Debian's source the
#                                   first time, about 7 minutes, then cached); Debian 12 nodes only.
#                                   `down` removes either variant.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
usage() { echo "usage: $0 up|down [--os debian12|debian13] [--kubernetes]" >&2; exit 2; }
action=${1:-}
case "$action" in
  up|down) shift ;;
  *) usage ;;
esac
node_os=debian12
kubernetes=0
while [ $# -gt 0 ]; do
  case "$1" in
    --os) node_os=${2:-}; shift 2 || usage ;;
    --kubernetes) kubernetes=1; shift ;;
    *) usage ;;
  esac
done
case "$node_os" in
  debian12 | debian13) export GPC_NODE_IMAGE="gpucluster/node-${node_os}:latest" ;;
  *) echo "unknown --os $node_os (debian12, debian13)" >&2; exit 2 ;;
esac
if [ "$kubernetes" = 1 ] && [ "$action" = up ] && [ "$node_os" != debian12 ]; then
  echo "--kubernetes runs on Debian 12 nodes only (the Kubernetes test bed's, as molecule/kubernetes)" >&2
  exit 2
fi

if [ "$action" = up ]; then
  bash tests/harness/bootstrap-host.sh
  bash tests/harness/setup-venv.sh
fi
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
inventory=(-i inventories/sandbox)
# `down` removes the Kubernetes variant's volumes too, whichever variant is up.
nodes=(-e sandbox_action="$action" -e sandbox_kubernetes=true)
if [ "$action" = up ]; then
  # One sandbox at a time: the variants share the nodes' names, networks and addresses.
  if mounts=$(docker inspect --format '{{range .Mounts}}{{.Destination}} {{end}}' gpc-sandbox-master 2>/dev/null); then
    case " $mounts " in
      *" /var/lib/containerd "*) running=1 ;;
      *) running=0 ;;
    esac
    if [ "$running" != "$kubernetes" ]; then
      variant=Slurm; [ "$running" = 0 ] || variant=Kubernetes
      echo "the sandbox is up as its $variant variant: tests/sandbox/sandbox.sh down first" >&2
      exit 2
    fi
  fi
  nodes=(-e sandbox_action=up -e sandbox_kubernetes="$([ "$kubernetes" = 1 ] && echo true || echo false)")
  [ "$kubernetes" = 0 ] || inventory=(-i inventories/sandbox-kubernetes)
fi

ansible-playbook "${inventory[@]}" tests/sandbox/nodes.yml "${nodes[@]}"
if [ "$action" = up ] && [ "$kubernetes" = 1 ]; then
  start=$SECONDS
  echo "NOTE: the sandbox's GPUs are emulated: device nodes plus an nvidia-smi test double that"
  echo "      prints a recorded 8x Tesla V100S capture (tests/harness/doubles/PROVENANCE.md)."
  echo "NOTE: vendor packages (NVIDIA driver, CUDA, cuDNN, NCCL, container toolkit, DCGM, Grafana) come"
  echo "      from the sandbox's mirror of TEST DOUBLES (tests/harness/mirror/README.md), not the vendors'."
  echo "NOTE: Kubernetes is real (v1.20.2 built from Debian's source package, tests/harness/k8s); the GPU"
  echo "      Operator chart and the training operator's CRDs are the real ones (../shared/k8s). Their"
  echo "      images cannot run here: a device plugin TEST DOUBLE advertises the GPUs, the validation's"
  echo "      GPU pod runs an nvidia-smi TEST DOUBLE, and no training job starts (no controller)."
  ansible-playbook "${inventory[@]}" tests/sandbox/gpus.yml
  ansible-playbook "${inventory[@]}" tests/sandbox/kubernetes/prepare.yml
  # The summary is printed even when some node failed: the site playbook goes on without it.
  ansible-playbook "${inventory[@]}" site.yml || echo "site.yml ended with failed hosts (listed above)"
  ansible-playbook "${inventory[@]}" tests/sandbox/kubernetes/runtime-class.yml \
    || echo "runtime-class.yml failed: the validation's GPU pods will say why"
  # Validation: a verdict per node (GPU pods in Kubernetes, no Slurm), in /var/tmp/gpc-sandbox-validation.
  ansible-playbook "${inventory[@]}" playbooks/validate.yml -e validation_results_dir=/var/tmp/gpc-sandbox-validation \
    || echo "validate.yml ended with failed hosts (listed above)"
  ansible-playbook "${inventory[@]}" tests/sandbox/kubernetes/summary.yml
  echo "sandbox.sh up --kubernetes took $((SECONDS - start)) s after the nodes were up"
elif [ "$action" = up ]; then
  echo "NOTE: the sandbox's GPUs are emulated: device nodes plus an nvidia-smi test double that"
  echo "      prints a recorded 8x Tesla V100S capture (tests/harness/doubles/PROVENANCE.md)."
  echo "NOTE: vendor packages (NVIDIA driver, CUDA, cuDNN, NCCL, container toolkit, DCGM, Grafana) come"
  echo "      from the sandbox's mirror of TEST DOUBLES (tests/harness/mirror/README.md), not the vendors'."
  echo "NOTE: the validation's dcgmi diag and GPU container print recorded outputs (test doubles):"
  echo "      tests/harness/doubles/PROVENANCE.md."
  ansible-playbook "${inventory[@]}" tests/sandbox/gpus.yml
  ansible-playbook "${inventory[@]}" tests/sandbox/mirror.yml
  # The summary is printed even when some node failed: the site playbook goes on without it.
  ansible-playbook "${inventory[@]}" site.yml || echo "site.yml ended with failed hosts (listed above)"
  # The validation's GPU container image, loaded into the GPU nodes' Docker (no registry here).
  ansible-playbook "${inventory[@]}" tests/sandbox/images.yml \
    || echo "images.yml ended with failed hosts (listed above): their GPU container check will say why"
  ansible-playbook "${inventory[@]}" tests/sandbox/summary.yml
  # Validation: a verdict per node, the results and report in /var/tmp/gpc-sandbox-validation.
  # torch's CPU wheel here is for Python 3.11 (Debian 12): no DDP smoke test on Debian 13 nodes.
  validate=(-e validation_results_dir=/var/tmp/gpc-sandbox-validation)
  [ "$node_os" = debian12 ] || validate+=(-e '{"validation_ddp": false}')
  ansible-playbook "${inventory[@]}" playbooks/validate.yml "${validate[@]}" \
    || echo "validate.yml ended with failed hosts (listed above)"
  echo "Validation report: /var/tmp/gpc-sandbox-validation/latest.html (and latest.md, latest.json)"
fi
