#!/usr/bin/env bash
# Side-by-side benchmark: gpucluster.core.slurm against galaxyproject.slurm, the method of
# the shared bench README: the same systemd containers (the project's node image) on one
# private docker network, one controller and N compute nodes, fresh before every first
# converge; one ansible.cfg (community.docker.docker, pipelining, forks 20); the same
# cluster (munge with one key, Debian's Slurm, no accounting, one partition, no GPUs);
# `srun -N2 hostname` checked after every round; rounds alternate ours, peer, ours, ...
#
#   benchmarks/bench_slurm_peer.sh [COMPUTE_NODES] [ROUNDS]      (defaults 2 and 3)
#   PEER_ROLE_DIR=/path/to/galaxyproject.slurm   the peer role (not part of this repository)
#   BENCH_WORK=/var/tmp/gpc-bench-slurm          scratch folder (logs, results.tsv)
#   BENCH_PROFILE=1                               per-task times in the logs (ansible.posix.profile_tasks)
#   BENCH_RECOMMENDS=1                            ours installs the packages' Recommends too, as the
#                                                 peer does (default: the role's default, without)
#   BENCH_PRELOAD=0                               without the gpucluster.core.preload callback, as
#                                                 in a repository that imports the role and does not
#                                                 enable it (default 1: as the collection's ansible.cfg)
#
# Holds /tmp/gpc-docker.lock for the whole run (one docker engine, shared with molecule).
# Prints min / median / max per role and phase, and the ratios ours / peer.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-2}
rounds=${2:-3}
PEER=${PEER_ROLE_DIR:?set PEER_ROLE_DIR to the galaxyproject.slurm role directory}
W=${BENCH_WORK:-/var/tmp/gpc-bench-slurm}
IMAGE=${BENCH_IMAGE:-gpucluster/node-debian12:latest}
NET=gpc-bench-net
LABEL=gpc.bench=slurm-peer

if [ -z "${GPC_BENCH_LOCKED:-}" ]; then
  GPC_BENCH_LOCKED=1 exec flock /tmp/gpc-docker.lock "$0" "$@"
fi

rm -rf "$W"
mkdir -p "$W/roles" "$W/logs"
ln -s "$(cd "$PEER" && pwd)" "$W/roles/galaxyproject.slurm"
R=$W/results.tsv
: >"$R"
dd if=/dev/urandom of="$W/munge.key" bs=1024 count=1 status=none
base64 -w0 "$W/munge.key" >"$W/munge.key.b64"

CALLBACKS=gpucluster.core.preload
[ "${BENCH_PRELOAD:-1}" = 1 ] || CALLBACKS=
cat >"$W/ansible.cfg" <<CFG
[defaults]
collections_path = $ROOT/.venv/collections
roles_path = $W/roles
transport = community.docker.docker
forks = 20
pipelining = true
interpreter_python = auto_silent
host_key_checking = false
retry_files_enabled = false
stdout_callback = default
callback_result_format = yaml
nocolor = true
# As the collection's own ansible.cfg: its filter and action plugins loaded once per run (the
# peer uses none of them; the same file serves both). BENCH_PRELOAD=0: as an importer's.
${CALLBACKS:+callbacks_enabled = $CALLBACKS}

[connection]
pipelining = true
CFG

cat >"$W/ours.yml" <<PLAY
---
- name: Slurm with gpucluster.core.slurm
  hosts: slurm_controller:slurm_compute
  gather_facts: false
  vars:
    slurm_cluster_name: perf
    slurm_munge_key: "{{ lookup('ansible.builtin.file', '$W/munge.key.b64') }}"
    slurm_install_recommends: $([ -n "${BENCH_RECOMMENDS:-}" ] && echo true || echo false)
  roles:
    - role: gpucluster.core.slurm
PLAY

cat >"$W/peer.yml" <<PLAY
---
- name: Slurm with galaxyproject.slurm
  hosts: slurmservers:slurmexechosts
  gather_facts: true
  gather_subset: [min]
  vars:
    slurm_munge_key: $W/munge.key
    slurm_config:
      SlurmctldHost: perf-ctl
    slurm_nodes:
      - name: "{{ perf_compute_hostlist }}"
        CPUs: "{{ perf_cpus }}"
    slurm_partitions:
      - name: debug
        Nodes: "{{ perf_compute_hostlist }}"
        Default: true
        MaxTime: INFINITE
        State: UP
  roles:
    - role: galaxyproject.slurm
PLAY

names=(perf-ctl)
for i in $(seq 1 "$n"); do names+=("$(printf 'perf-c%02d' "$i")"); done

nodes_down() {
  docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null
  docker network ls -q --filter "label=$LABEL" | xargs -r docker network rm >/dev/null
  return 0
}

# Started as tests/harness/nodes/create.yml starts molecule's nodes.
nodes_up() {
  local hl hn ml c s
  docker network create --driver bridge --label "$LABEL" "$NET" >/dev/null
  hl=$(ulimit -Hl); hn=$(ulimit -Hn)
  [ "$hl" = unlimited ] && ml=-1 || ml=$((hl * 1024))
  for c in "${names[@]}"; do
    docker run -d --pull never --name "$c" --hostname "$c" --network "$NET" --label "$LABEL" \
      --cap-add ALL --cap-drop SYS_RESOURCE \
      --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
      --cgroupns host -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
      --tmpfs /run --tmpfs /run/lock --tmpfs /tmp --stop-signal SIGRTMIN+3 \
      --ulimit "memlock=65536:$ml" --ulimit "nofile=1024:$hn" -e container=docker \
      "$IMAGE" /lib/systemd/systemd >/dev/null || return 1
  done
  for c in "${names[@]}"; do
    s=$(docker exec "$c" systemctl is-system-running --wait || true)
    case "$s" in running|degraded) ;; *) echo "$c: systemd $s" >&2; return 1 ;; esac
    docker exec "$c" mount -o remount,rw,bind /proc/sys
  done
}

inventory() {
  local last cpus i
  last=$(printf '%02d' "$n")
  cpus=$(docker exec perf-ctl nproc)
  echo "all:"
  echo "  vars: {perf_compute_hostlist: 'perf-c[01-$last]', perf_cpus: $cpus}"
  echo "  children:"
  echo "    slurm_controller: {hosts: {perf-ctl: }}"
  echo "    slurm_dbd: {hosts: {}}"
  echo "    slurm_compute:"
  echo "      hosts:"
  for i in $(seq 1 "$n"); do printf '        perf-c%02d:\n' "$i"; done
  echo "    slurmservers: {hosts: {perf-ctl: }}"
  echo "    slurmexechosts:"
  echo "      hosts:"
  for i in $(seq 1 "$n"); do printf '        perf-c%02d:\n' "$i"; done
}

# Every compute node idle, then srun over two (and all) nodes. Prints OK or FAIL.
check() {
  local ok=0 idle out rc k
  for _ in $(seq 1 60); do
    idle=$(docker exec perf-ctl sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" -ge "$n" ] && { ok=1; break; }
    sleep 2
  done
  for k in 2 "$n"; do
    out=$(docker exec perf-ctl timeout 90 srun -N"$k" hostname 2>&1); rc=$?
    echo "srun -N$k hostname rc=$rc: $(echo "$out" | sort | tr '\n' ' ')"
    [ "$rc" -eq 0 ] && [ "$(echo "$out" | sort -u | wc -l)" -eq "$k" ] || ok=0
  done
  [ "$ok" = 1 ] && echo OK || echo FAIL
}

round() {  # round ROLE LABEL
  local role=$1 label=$2 L phase rc
  L=$W/logs/$label
  mkdir -p "$L"
  nodes_down
  nodes_up >"$L/nodes.log" 2>&1 || { echo "nodes up failed"; cat "$L/nodes.log"; return 1; }
  inventory >"$W/inventory.yml"
  for phase in converge rerun; do
    /usr/bin/time -f %e -o "$L/$phase.time" env ANSIBLE_CONFIG="$W/ansible.cfg" ANSIBLE_NOCOLOR=1 \
      ${BENCH_PROFILE:+ANSIBLE_CALLBACKS_ENABLED=${CALLBACKS:+$CALLBACKS,}ansible.posix.profile_tasks PROFILE_TASKS_TASK_OUTPUT_LIMIT=40} \
      ansible-playbook -i "$W/inventory.yml" "$W/$role.yml" >"$L/$phase.log" 2>&1
    rc=$?
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$role" "$((n + 1))" "$phase" "$(tail -1 "$L/$phase.time")" "$rc" | tee -a "$R"
  done
  check >"$L/check.log" 2>&1
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$role" "$((n + 1))" check "$(tail -1 "$L/check.log")" - | tee -a "$R"
}

# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
trap nodes_down EXIT
{
  date -u +%FT%TZ
  echo "ours: $(git -C "$ROOT" log -1 --format='%h' 2>/dev/null) + working tree"
  echo "peer: $PEER"
  ansible --version | head -1
  echo "image: $IMAGE $(docker image inspect "$IMAGE" --format '{{.Id}}' | cut -c1-19)"
  echo "docker: $(docker version --format '{{.Server.Version}}')  cpus: $(nproc)  mem: $(free -g | awk '/Mem/{print $2}') GiB"
} | tee "$W/environment.txt"
for r in $(seq 1 "$rounds"); do
  round ours "r$r-ours"
  round peer "r$r-peer"
done
python3 "$ROOT/benchmarks/bench_slurm_peer_summary.py" "$R" "$W/logs"
