#!/usr/bin/env bash
# What one task costs on a no-op run, by kind, on the sandbox's three systemd containers (the
# docker connection, this checkout's ansible.cfg): 50 identical tasks per kind, seconds per task.
# Kinds: a skipped task, set_fact (controller only), command and stat (one module call), copy
# unchanged (a stat and a file module), gpucluster.core.files with three unchanged paths (one
# shell read), ansible.builtin.service on a running unit, and gpucluster.core.services on the
# same (one systemctl show). Prints numbers; not part of the test suite. Leaves no nodes behind.
#   benchmarks/bench_task_costs.sh
# Holds /tmp/gpc-docker.lock for the whole run (one docker engine, shared with molecule).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
# shellcheck source=benchmarks/sandbox-bench.sh
source benchmarks/sandbox-bench.sh
gpc_bench_sandbox_start "$@"
work=${BENCH_WORK:-/var/tmp/gpc-bench-tasks}
rm -rf "$work" && mkdir -p "$work"

trap down EXIT
down
ansible-playbook "${inv[@]}" tests/sandbox/nodes.yml -e sandbox_action=up >"$work/nodes.log" 2>&1 || { echo "nodes failed" >&2; exit 1; }

# A playbook of 50 copies of one task on the cluster nodes.
play() {
  local name=$1 task=$2
  {
    printf -- '---\n- name: %s\n  hosts: cluster\n  gather_facts: false\n  become: true\n  tasks:\n' "$name"
    for i in $(seq 1 50); do printf '    - name: %s %d\n%s\n' "$name" "$i" "$task"; done
  } >"$work/$name.yml"
}
play skipped "      ansible.builtin.command: 'true'
      when: false"
play set_fact "      ansible.builtin.set_fact:
        gpc_bench: 1"
play command "      ansible.builtin.command: 'true'
      changed_when: false"
play stat "      ansible.builtin.stat:
        path: /etc/hosts"
play copy "      ansible.builtin.copy:
        content: hello
        dest: /tmp/gpc-bench-copy
        mode: '0644'"
play files "      gpucluster.core.files:
        files:
          - {dest: /tmp/gpc-bench, state: directory, mode: '0755'}
          - {dest: /tmp/gpc-bench/a, content: hello, mode: '0644'}
          - {dest: /tmp/gpc-bench/b, content: world, mode: '0644'}"
# systemd-journald runs on every node container and is static (enabled as far as both modules go).
play service "      ansible.builtin.service:
        name: systemd-journald
        state: started
        enabled: true"
play services "      gpucluster.core.services:
        services:
          - {name: systemd-journald, state: started, enabled: true}"

for name in skipped set_fact command stat copy files service services; do
  # A first run writes what copy and files write; the timed run changes nothing.
  ansible-playbook "${inv[@]}" "$work/$name.yml" >"$work/$name-first.log" 2>&1 || { echo "FAILED: $name" >&2; exit 1; }
  start=$(date +%s.%N)
  ansible-playbook "${inv[@]}" "$work/$name.yml" >"$work/$name.log" 2>&1 || { echo "FAILED: $name" >&2; exit 1; }
  end=$(date +%s.%N)
  grep -q "changed=[1-9]" "$work/$name.log" && { echo "$name changed something: $work/$name.log" >&2; exit 1; }
  python3 -c "import sys; print(f'{sys.argv[1]:9s} {(float(sys.argv[3]) - float(sys.argv[2])) / 50:.3f} s per task (3 nodes)')" \
    "$name" "$start" "$end"
done
