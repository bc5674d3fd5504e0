#!/usr/bin/env bash
# The controller's cost at N hosts, without any host (issue 35, item 3): see
# benchmarks/bench_controller_scale.py for what is generated and run.
#
#   benchmarks/bench_controller_scale.sh [-n "3 100 300 1000"] [-r REPEATS] [-f FORKS] [-s STRATEGY]
#       [-c FACT_CACHE_DIR] [-p FACT_CACHE_PREFIX] [-o OUT_DIR] [-P "site_errors,role base_os"] [-A]
#       [-x 'slurm_configless=false']
#
# -P: only these plays of the controller-side run (comma-separated names); -A: no artifact list;
# -x: extra variables for both runs (one ansible-playbook -e argument).
#
# Each size: a generated inventory and fact cache, then two runs (the controller-side steps of
# site.yml, the artifact list), each repeated; one TSV line per play and run in OUT_DIR/times.tsv,
# and a summary (least time of the repeats, per host, growth from the second size to the last).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
sizes="3 100 300 1000"
repeats=2
forks=20
strategy=linear
facts=${GPC_BENCH_FACTS:-$root/.cache/facts}
prefix=s1_
out=/var/tmp/gpc-bench-controller
plays=""
books="controller.yml artifacts.yml"
extra=""
while getopts "n:r:f:s:c:p:o:P:Ax:" opt; do
    case $opt in
        n) sizes=$OPTARG ;;
        r) repeats=$OPTARG ;;
        f) forks=$OPTARG ;;
        s) strategy=$OPTARG ;;
        c) facts=$OPTARG ;;
        p) prefix=$OPTARG ;;
        o) out=$OPTARG ;;
        P) plays=$OPTARG ;;
        A) books=controller.yml ;;
        x) extra=$OPTARG ;;
        *) sed -n 2,11p "$0"; exit 2 ;;
    esac
done
# shellcheck disable=SC1091
source "$root/.venv/bin/activate"
mkdir -p "$out"
playlist=()
[ -z "$plays" ] || IFS=, read -ra playlist <<< "$plays"
times=$out/times.tsv
[ -f "$times" ] || printf 'step\thosts\tseconds\tforks\tstrategy\n' > "$times"
{
    echo "date: $(date -Is)"
    echo "commit: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . || echo ' (modified)')"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
    echo "ansible: $(ansible --version | head -1)"
    echo "facts: $facts (prefix '$prefix'); forks $forks, strategy $strategy${plays:+; plays: $plays}${extra:+; -e $extra}"
} | tee "$out/environment.txt"
for n in $sizes; do
    work=$out/n$n
    rm -rf "$work"
    python3 "$here/bench_controller_scale.py" generate --hosts "$n" --work "$work" --facts "$facts" \
        --facts-prefix "$prefix" --forks "$forks" --plays "${playlist[@]}"
    for i in $(seq "$repeats"); do
        for book in $books; do
            tmp=$work/times.$book.$i
            start=$(date +%s.%N)
            (cd "$work" && ANSIBLE_CONFIG=$work/ansible.cfg ANSIBLE_STRATEGY=$strategy BENCH_TIMES_FILE=$tmp \
                BENCH_HOSTS=$n GPUCLUSTER_ARTIFACTS_FILE=$work/out/artifacts.json \
                ansible-playbook -i inventory "$book" -e gpucluster_artifacts_file="$work/out/artifacts.json" ${extra:+-e "$extra"} \
                > "$work/log.$book.$i" 2>&1) || { echo "bench: $book failed at $n hosts, see $work/log.$book.$i" >&2; tail -30 "$work/log.$book.$i" >&2; exit 1; }
            end=$(date +%s.%N)
            played=$(awk -F'\t' '{s += $3} END {printf "%.3f", s}' "$tmp")
            printf 'startup %s (inventory, cache)\t%s\t%.3f\n' "$book" "$n" "$(echo "$end - $start - $played" | bc)" >> "$tmp"
            awk -v f="$forks" -v s="$strategy" -F'\t' '{print $0 "\t" f "\t" s}' "$tmp" >> "$times"
        done
        echo "bench: $n hosts, run $i: $(awk -F'\t' '{s += $3} END {printf "%.1f s", s}' "$work"/times.*."$i")"
    done
done
python3 "$here/bench_controller_scale.py" summary "$times" --forks "$forks" --strategy "$strategy" | tee "$out/summary.md"
