#!/usr/bin/env bash
# What the benchmarks on the sandbox's nodes (bench_site_sandbox.sh, bench_task_costs.sh) share.
#   ROOT=<checkout>; cd "$ROOT"; source benchmarks/sandbox-bench.sh
#   gpc_bench_sandbox_start "$@"   holds /tmp/gpc-docker.lock for the whole run (one docker engine,
#                                  shared with molecule: the script runs again under flock with its
#                                  arguments), prepares the host and the venv, sets the sandbox's
#                                  environment (this checkout's ansible.cfg, no colour, the node image
#                                  of BENCH_OS, default debian12) and inv (-i inventories/sandbox)
#   gpc_bench_logs DIR             sets logs (BENCH_WORK, default DIR) with an empty fact cache of its own,
#                                  and removes the nodes when the script ends
#   down                           removes the sandbox's nodes

gpc_bench_sandbox_start() {
  if [ -z "${GPC_BENCH_LOCKED:-}" ]; then
    GPC_BENCH_LOCKED=1 exec flock /tmp/gpc-docker.lock "$0" "$@"
  fi
  bash tests/harness/bootstrap-host.sh >/dev/null && bash tests/harness/setup-venv.sh >/dev/null || exit 1
  # shellcheck disable=SC1091
  source .venv/bin/activate
  export ANSIBLE_CONFIG="$ROOT/ansible.cfg" NO_COLOR=1 ANSIBLE_FORCE_COLOR=0
  export GPC_NODE_IMAGE="gpucluster/node-${BENCH_OS:-debian12}:latest"
  inv=(-i inventories/sandbox)
}

down() { ansible-playbook "${inv[@]}" tests/sandbox/nodes.yml -e sandbox_action=down >/dev/null 2>&1; }

# gpc_bench_logs DIR: the run's logs in BENCH_WORK (default DIR), a fact cache of its own there, empty
# at the start (the checkout's .cache/facts is left alone), and the nodes removed when the script ends.
gpc_bench_logs() {
  logs=${BENCH_WORK:-$1}
  mkdir -p "$logs"
  export ANSIBLE_CACHE_PLUGIN_CONNECTION="$logs/facts"
  rm -rf "$logs/facts"
  trap down EXIT
}
