#!/usr/bin/env bash
# The sandbox cluster: inventories/sandbox (the lab's shape) as systemd containers.
#   tests/sandbox/sandbox.sh up     install what is needed, start the nodes and the package mirror,
#                                   run site.yml, print the result
#   tests/sandbox/sandbox.sh down   remove the nodes and their networks
#   --os debian12 (default) or --os debian13: the nodes' OS (Debian 12 bookworm or 13 trixie)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
usage() { echo "usage: $0 up|down [--os debian12|debian13]" >&2; exit 2; }
action=${1:-}
case "$action" in
  up|down) shift ;;
  *) usage ;;
esac
node_os=debian12
while [ $# -gt 0 ]; do
  case "$1" in
    --os) node_os=${2:-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
case "$node_os" in
  debian12 | debian13) export GPC_NODE_IMAGE="gpucluster/node-${node_os}:latest" ;;
  *) echo "unknown --os $node_os (debian12, debian13)" >&2; exit 2 ;;
esac

if [ "$action" = up ]; then
  bash tests/harness/bootstrap-host.sh
  bash tests/harness/setup-venv.sh
fi
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
inventory=(-i inventories/sandbox)

ansible-playbook "${inventory[@]}" tests/sandbox/nodes.yml -e sandbox_action="$action"
if [ "$action" = up ]; then
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
