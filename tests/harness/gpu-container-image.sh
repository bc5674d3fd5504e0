#!/usr/bin/env bash
# The validation's GPU container image for test nodes (test tooling only, never a role): no registry
# is reachable from the test machines, so the image that the gpu_container check runs
# (`docker run --rm --gpus all --network none IMAGE nvidia-smi -q -x`) is built here and saved as a
# docker archive that `docker load` reads on each node. Debian's static busybox and the nvidia-smi
# test double of doubles/gpu-container/ with the recorded capture that the GPU nodes' own
# nvidia-smi double prints (doubles/PROVENANCE.md): where the NVIDIA Container Toolkit would mount
# the node's nvidia-smi into the container, the test mirror's toolkit injects nothing.
#   tests/harness/gpu-container-image.sh OUT_DIR
# Cached in OUT_DIR by the hash of its inputs. The last stdout line is the archive's path; the image
# is tagged $GPC_GPU_CONTAINER_IMAGE (the name the sandbox inventory gives the validation).
set -euo pipefail
OUT_DIR=${1:?usage: gpu-container-image.sh OUT_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
exec bash "$HERE/busybox-image.sh" "$OUT_DIR" gpu-container "${GPC_GPU_CONTAINER_IMAGE:-gpc-test.local/gpu-container:v1}" \
  "$HERE/doubles/gpu-container/nvidia-smi:/usr/bin/nvidia-smi:0755" \
  "$HERE/doubles/8x-tesla-v100s-pcie-32gb-driver460-v11.xml:/usr/share/gpucluster-test-double/nvidia-smi-q-x.xml" \
  -- "gpucluster.core TEST DOUBLE: nvidia-smi prints a recorded capture"
