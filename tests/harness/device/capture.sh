#!/usr/bin/env bash
# Capture a lent GPU machine for tests/unit/fixtures and run the collection there for real.
#
#   bash tests/harness/device/capture.sh OUTDIR [idle|modules|validation|busy|nccl|nccl_options|nccl_build ...]
#
# With no section named, the first four run in that order. nccl and nccl_options run an all_reduce_perf binary of
# NVIDIA's nccl-tests built elsewhere (NCCL_TESTS=its path; the machines have no network), against
# the NCCL of the machine's torch. nccl_build runs the validation role's own nccl-tests build from a
# source archive (NCCL_TESTS_SOURCE=its path), without MPI (no Open MPI package can be fetched there).
# Run from the repository root on a machine with an NVIDIA driver and the python3 that holds
# torch (the device tool's machines). Ansible itself comes from wheels the caller installed on
# PYTHONPATH (the machine has no network). Writes one file per command into OUTDIR and
# OUTDIR/commands.log with each command line and its exit status; a command's stderr goes to
# NAME.stderr when it printed any. Nothing is masked: GPU UUIDs and serials are hardware IDs.
set -u
out=${1:?usage: capture.sh OUTDIR}
mkdir -p "$out"
repo=$(pwd)
log="$out/commands.log"
: >"$log"

cap() { # cap NAME COMMAND...: stdout to OUTDIR/NAME
  local name=$1 rc
  shift
  timeout 300 "$@" >"$out/$name" 2>"$out/$name.stderr"
  rc=$?
  [ -s "$out/$name.stderr" ] || rm -f "$out/$name.stderr"
  printf '%s\trc=%s\t$ %s\n' "$name" "$rc" "$*" >>"$log"
}

coll=$(mktemp -d)
mkdir -p "$coll/ansible_collections/gpucluster"
ln -s "$repo" "$coll/ansible_collections/gpucluster/core"
files=roles/validation/files
health_fields=index,name,pci.bus_id,driver_version,persistence_mode,ecc.mode.current,retired_pages.pending,remapped_rows.pending,remapped_rows.failure,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_throttle_reasons.active

# What the machine itself says it has: the expectations of the health checks run here.
gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)
gpu_count=$(printf '%s' "$gpu_names" | grep -c .)
gpu_model=$(printf '%s\n' "$gpu_names" | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
cuda=$(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')

healthcheck_config() { # healthcheck_config GPUS: this machine's expectations, with GPUS GPUs
  cat <<JSON
{"expected": {"gpu_count": {"value": $1, "source": "the lent machine"},
              "gpu_model": {"value": "$gpu_model", "source": "nvidia-smi"},
              "driver_version": {"value": "$driver", "source": "nvidia-smi"},
              "cuda_version": {"value": "$cuda", "source": "nvcc on the lent machine"}},
 "settings": {"kernel_log_minutes": 60}}
JSON
}

# --- the machine, as the nvidia_smi_facts module and the health checks see it ---------------
idle() {
all_fields=$(sed 's/.*--query-gpu=\([^ ]*\).*/\1/' tests/unit/fixtures/h100-80gb-hbm3-driver580/nvidia-smi-query-all.query.txt)
cap nvidia-smi-q.xml nvidia-smi -q -x
cap nvidia-smi-q.txt nvidia-smi -q
cap nvidia-smi.txt nvidia-smi
cap nvidia-smi-L.txt nvidia-smi -L
cap nvidia-smi-topo-m.txt nvidia-smi topo -m
cap nvidia-smi-query-all.csv nvidia-smi --query-gpu="$all_fields" --format=csv
echo "nvidia-smi --query-gpu=$all_fields --format=csv" >"$out/nvidia-smi-query-all.query.txt"
cap nvidia-smi-query-health.csv nvidia-smi --query-gpu="$health_fields" --format=csv
echo "nvidia-smi --query-gpu=$health_fields --format=csv" >"$out/nvidia-smi-query-health.query.txt"
cap nvidia-smi-nvlink-s.txt nvidia-smi nvlink -s
cap nvidia-smi-mig-lgip.txt nvidia-smi mig -lgip
cap driver-version.txt cat /proc/driver/nvidia/version
cap dmesg-xid.txt sh -c 'dmesg | grep -i -E "NVRM|xid"'
cap journalctl-dmesg.txt journalctl --dmesg --no-pager --quiet --since -60min
# shellcheck disable=SC2016  # expanded by the inner sh
cap sysfs-nvidia.txt sh -c 'for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor)" = 0x10de ] || continue; for f in vendor device class current_link_speed max_link_speed current_link_width max_link_width numa_node; do printf "%s %s %s\n" "${d##*/}" "$f" "$(cat $d/$f 2>/dev/null)"; done; done'
cap cuda-version.json cat /usr/local/cuda/version.json
cap nvcc-version.txt /usr/local/cuda/bin/nvcc --version
# shellcheck disable=SC2016  # expanded by the inner sh
cap environment.txt sh -c 'uname -srm; nproc; grep -m1 "model name" /proc/cpuinfo; python3 --version; python3 -c "import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"nccl\", \".\".join(map(str, torch.cuda.nccl.version())))"; for t in dcgmi nv-hostengine docker nvidia-ctk all_reduce_perf ib_write_bw ibstat srun; do printf "%s: %s\n" "$t" "$(command -v $t || echo absent)"; done; ls /sys/class/infiniband 2>&1 | head -3'
}

# --- the collection's modules, run there by Ansible --------------------------------------------
ansible_env() {
  local python
  python=$(command -v python3)
  export ANSIBLE_COLLECTIONS_PATH=$coll ANSIBLE_CALLBACK_RESULT_FORMAT=yaml ANSIBLE_NOCOLOR=1 \
  ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 LC_ALL=C.UTF-8 \
  ANSIBLE_PYTHON_INTERPRETER=$python
}

modules() {
ansible_env
cap module-nvidia_smi_facts.txt ansible localhost -c local -i localhost, -m gpucluster.core.nvidia_smi_facts
cap module-playbook.txt ansible-playbook -c local -i localhost, -e "gpc_cuda_release=$cuda" tests/harness/device/modules.yml
}

# --- the validation role's programs -----------------------------------------------------------
validation() {
healthcheck_config "$gpu_count" >"$out/healthcheck-config.json"
healthcheck_config $((gpu_count + 1)) >"$out/healthcheck-config-one-more-gpu.json"
export PYTHONPATH="$coll${PYTHONPATH:+:$PYTHONPATH}"
cap healthcheck.json python3 $files/gpucluster-healthcheck.py --json --node lent --config "$out/healthcheck-config.json"
cap healthcheck.txt python3 $files/gpucluster-healthcheck.py --node lent --config "$out/healthcheck-config.json"
cap healthcheck-one-more-gpu.txt python3 $files/gpucluster-healthcheck.py --node lent --config "$out/healthcheck-config-one-more-gpu.json"

# DDP smoke test: NCCL on the GPU (one rank), torchrun (one rank), gloo on the CPU (two ranks),
# and one NCCL rank more than the machine has GPUs, which the script refuses.
export MASTER_ADDR=127.0.0.1 NCCL_DEBUG=WARN
cap ddp-nccl-1rank.txt env RANK=0 WORLD_SIZE=1 MASTER_PORT=29511 python3 $files/gpucluster-ddp-smoke.py --backend nccl --expect-world-size 1
cap ddp-torchrun-1gpu.txt torchrun --standalone --nproc-per-node 1 $files/gpucluster-ddp-smoke.py --expect-world-size 1
cap ddp-gloo-2ranks.txt sh -c "RANK=1 WORLD_SIZE=2 MASTER_PORT=29512 python3 $files/gpucluster-ddp-smoke.py --backend gloo >/dev/null & RANK=0 WORLD_SIZE=2 MASTER_PORT=29512 python3 $files/gpucluster-ddp-smoke.py --backend gloo --expect-world-size 2; rc=\$?; wait; exit \$rc"
cap ddp-nccl-one-more-rank.txt timeout 120 torchrun --standalone --nproc-per-node $((gpu_count + 1)) \
  $files/gpucluster-ddp-smoke.py --backend nccl --expect-world-size $((gpu_count + 1))
}

# --- the GPU busy: 8192x8192 bf16 matrix products for 40 s, read after 15 s --------------------
busy() {
python3 -c 'import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 40
while time.time() < end:
    for _ in range(50):
        c = a @ a
    torch.cuda.synchronize()' &
local load=$!
sleep 15
export PYTHONPATH="$coll${PYTHONPATH:+:$PYTHONPATH}"
healthcheck_config "$gpu_count" >"$out/healthcheck-config.json"
cap nvidia-smi-q-busy.xml nvidia-smi -q -x
cap nvidia-smi-query-health-busy.csv nvidia-smi --query-gpu="$health_fields" --format=csv
cap healthcheck-busy.json python3 $files/gpucluster-healthcheck.py --json --node lent --config "$out/healthcheck-config.json"
wait $load
printf 'busy-load\trc=%s\t$ python3 -c <40 s of bf16 matrix products>\n' "$?" >>"$log"
}

# --- nccl-tests' all_reduce_perf on this machine's GPUs ----------------------------------------
nccl_env() { # the NCCL of the machine's torch for the carried binary
  local lib
  lib=$(python3 -c 'import glob, sysconfig; print(glob.glob(sysconfig.get_paths()["purelib"] + "/nvidia/nccl/lib")[0])')
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

nccl() {
local bin=${NCCL_TESTS:?set NCCL_TESTS to an all_reduce_perf binary}
nccl_env
cap nccl-all-reduce-version.txt "$bin" --help
cap "nccl-all-reduce-${gpu_count}gpu.txt" "$bin" -b 8 -e 1G -f 2 -g "$gpu_count"
cap "nccl-all-reduce-${gpu_count}gpu-nccl-info.txt" env NCCL_DEBUG=INFO "$bin" -b 1M -e 16M -f 4 -g "$gpu_count"
cap "nccl-all-reduce-${gpu_count}gpu-json-run.txt" "$bin" -b 8 -e 128M -f 2 -g "$gpu_count" \
  -J "$out/nccl-all-reduce-${gpu_count}gpu.json"
cap nccl-all-reduce-one-more-gpu.txt "$bin" -b 8 -e 8K -f 2 -g $((gpu_count + 1))
}

# --- all_reduce_perf's other printing options, one each (the parser reads every one) ------------
nccl_options() {
local bin=${NCCL_TESTS:?set NCCL_TESTS to an all_reduce_perf binary} opts name
nccl_env
for opts in "-C 1" "-S 1" "-M 1" "-N 2" "-d all" "-o all" "-c 0" "-a 3" "-G 2" "-R 1" "-z 0 -y 1" "-u 1"; do
  name="nccl-all-reduce-option$(printf '%s' "$opts" | tr -d ' ').txt"
  # shellcheck disable=SC2086  # the options are words
  cap "$name" "$bin" -b 8 -e 1M -f 8 -g "$gpu_count" $opts
done
}

# --- the validation role's nccl-tests build there, twice, and the binary it made ----------------
nccl_build() {
local src=${NCCL_TESTS_SOURCE:?set NCCL_TESTS_SOURCE to an nccl-tests source archive} sum
local -a vars
ansible_env
sum=sha256:$(sha256sum "$src" | cut -d' ' -f1)
vars=(-e "validation_nccl_tests_source=file://$src" -e "validation_nccl_tests_checksum=$sum"
      -e validation_nccl_tests_dir=/tmp/gpucluster-nccl-tests)
cap nccl-build-run1.txt ansible-playbook -c local -i localhost, "${vars[@]}" tests/harness/device/nccl-tests-build.yml
cap nccl-build-run2.txt ansible-playbook -c local -i localhost, "${vars[@]}" tests/harness/device/nccl-tests-build.yml
cap nccl-build-all-reduce.txt /tmp/gpucluster-nccl-tests/all_reduce_perf -b 8 -e 64M -f 8 -g "$gpu_count"
cap nccl-build-ldd.txt ldd /tmp/gpucluster-nccl-tests/all_reduce_perf
}

sections=("${@:2}")
[ ${#sections[@]} -gt 0 ] || sections=(idle modules validation busy)
for section in "${sections[@]}"; do "$section"; done
cat "$log"
