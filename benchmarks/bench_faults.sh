#!/usr/bin/env bash
# The fault scoreboard (issue 32): the sandbox built by site.yml as a user builds it, with Slurm's
# health check every INTERVAL seconds (slurm_health_check_interval, the documented knob), then
# benchmarks/bench_faults.py injects each fault class on the running nodes and measures what the
# HealthCheckProgram path does with no Ansible run in between. Prints a Markdown table; not part
# of the test suite (CI asserts the behaviour in molecule/validation's health_loop.yml). Leaves
# no nodes behind.
#   benchmarks/bench_faults.sh [INTERVAL] [HEALTHY_RUNS]      (defaults 10 and 50)
#   BENCH_FAULTS=gpu-gone,disk-full benchmarks/bench_faults.sh   only those fault classes
# Holds /tmp/gpc-docker.lock for the whole run (one docker engine, shared with molecule).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
interval=${1:-10}
healthy_runs=${2:-50}
cd "$ROOT" || exit 2
# shellcheck source=benchmarks/sandbox-bench.sh
source benchmarks/sandbox-bench.sh
gpc_bench_sandbox_start "$@"
gpc_bench_logs /var/tmp/gpc-bench-faults

# What the bench adds to the sandbox's inventory: the interval, the HCAs of a recorded H100 RoCE
# node (an ibstat double outside every search path, so the ofed role does not see it), and a shared
# mount the health check expects (a small tmpfs standing in for the NFS mount this kernel lacks).
cat >"$logs/vars.yml" <<VARS
slurm_health_check_interval: $interval
validation_hca: {link_layers: [Ethernet]}
validation_ibstat_path: /usr/local/libexec/gpc-bench/ibstat
validation_mounts: [{path: /mnt/gpc-bench-shared, fstype: tmpfs}]
VARS

down
ansible-playbook "${inv[@]}" tests/sandbox/nodes.yml -e sandbox_action=up >"$logs/nodes.log" 2>&1 || { echo "nodes failed" >&2; exit 1; }
ansible-playbook "${inv[@]}" tests/sandbox/gpus.yml >"$logs/gpus.log" 2>&1 || { echo "gpus failed" >&2; exit 1; }
ansible-playbook "${inv[@]}" tests/sandbox/mirror.yml >"$logs/mirror.log" 2>&1 || { echo "mirror failed" >&2; exit 1; }
for node in master worker1 worker2; do
  c=gpc-sandbox-$node
  docker exec "$c" mkdir -p /usr/local/libexec/gpc-bench /mnt/gpc-bench-shared || exit 1
  docker cp benchmarks/bench_faults_node.py "$c:/usr/local/libexec/gpc-bench/bench_faults_node.py" >/dev/null || exit 1
  docker cp tests/harness/doubles/ibstat "$c:/usr/local/libexec/gpc-bench/ibstat" >/dev/null || exit 1
  docker cp tests/harness/doubles/ibstat-h100-12x-roce-ethernet-cx7-400g-cx6dx-100g-all-active.txt \
    "$c:/usr/share/gpucluster-test-double/ibstat.txt" >/dev/null || exit 1
  docker cp tests/harness/doubles/ibstat-h100-12x-roce-ethernet-2-cx7-ports-down.txt \
    "$c:/usr/share/gpucluster-test-double/ibstat-2-ports-down.txt" >/dev/null || exit 1
  docker exec "$c" mount -t tmpfs -o size=1m gpc-bench-shared /mnt/gpc-bench-shared || exit 1
done
start=$(date +%s)
ansible-playbook "${inv[@]}" site.yml -e "@$logs/vars.yml" >"$logs/site.log" 2>&1 || { echo "site.yml failed: $logs/site.log" >&2; exit 1; }
echo "site.yml: $(( $(date +%s) - start )) s; HealthCheckInterval ${interval} s"
# BENCH_FAULTS=gpu-gone,pcie-down,...: only those classes (a short run); default every class.
python3 benchmarks/bench_faults.py --interval "$interval" --healthy-runs "$healthy_runs" --out "$logs/table.md" \
  ${BENCH_FAULTS:+--only "$BENCH_FAULTS"}
