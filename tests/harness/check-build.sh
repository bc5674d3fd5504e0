#!/usr/bin/env bash
# Build the collection tarball, install it into an empty collections path (with the
# dependencies from the venv, not Galaxy) and check the installed copy works:
# modules and filters render with ansible-doc, the site playbook resolves by FQCN,
# and the role runs its controller-side validation from the installed copy.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV="${GPC_VENV:-$ROOT/.venv}"
export PATH="$VENV/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$ROOT"
ansible-galaxy collection build --force --output-path "$tmp/dist" >/dev/null
tarball=$(ls "$tmp"/dist/gpucluster-core-*.tar.gz)
echo "built $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"
if tar -tzf "$tarball" | grep -E '(^|/)(\.venv|tests/output|molecule|\.git)/' >/dev/null; then
  echo "the tarball carries files build_ignore should keep out:" >&2
  tar -tzf "$tarball" | grep -E '(^|/)(\.venv|tests/output|molecule|\.git)/' | head >&2
  exit 1
fi

# Only the installed copy and the dependency collections: not this checkout, and
# away from its ansible.cfg (which links the checkout in as gpucluster.core).
deps="$tmp/deps/ansible_collections"
mkdir -p "$tmp/installed" "$deps"
for ns in "$VENV"/collections/ansible_collections/*; do
  [ "$(basename "$ns")" = gpucluster ] || ln -s "$ns" "$deps/"
done
export ANSIBLE_COLLECTIONS_PATH="$tmp/installed:$tmp/deps"
cd "$tmp"
ansible-galaxy collection install --offline --no-deps --force -p "$tmp/installed" "$tarball" >/dev/null

installed=$(ansible-galaxy collection list gpucluster.core 2>/dev/null | awk '$1 == "gpucluster.core" {print $2}')
[ -n "$installed" ] || { echo "gpucluster.core is not listed after install" >&2; exit 1; }
for path in "$tmp"/installed/ansible_collections/gpucluster/core/plugins/modules/*.py; do
  ansible-doc -t module "gpucluster.core.$(basename "$path" .py)" >/dev/null
done
for plugin in cluster_hosts_entries slurm_hostlist_expand slurm_hostlist_compress nvidia_gpu_architecture nvidia_kernel_modules \
              artifacts_host_plan artifacts_document artifacts_table; do
  ansible-doc -t filter "gpucluster.core.$plugin" >/dev/null
done
ansible-doc -t role gpucluster.core.base_os >/dev/null
ansible-playbook -i "$ROOT/inventories/lab" gpucluster.core.site --syntax-check >/dev/null
ansible-playbook -i "$ROOT/inventories/lab" gpucluster.core.artifacts --syntax-check >/dev/null
# Run code from the installed copy: a read-only facts module on this machine (no
# nvidia-smi here: it must report no driver, without failing) and a filter.
out=$(ansible localhost -c local -m gpucluster.core.nvidia_smi_facts 2>&1) \
  || { echo "$out" >&2; echo "nvidia_smi_facts failed from the installed copy" >&2; exit 1; }
grep -q '"driver_available": false' <<<"$out" \
  || { echo "$out" >&2; echo "nvidia_smi_facts did not report the missing driver" >&2; exit 1; }
out=$(ansible localhost -c local -m ansible.builtin.debug \
  -a '{"msg": "{{ {\"n1\": {\"mgmt\": \"10.0.0.5\"}} | gpucluster.core.cluster_hosts_entries(networks=[{\"name\": \"mgmt\", \"cidr\": \"10.0.0.0/24\", \"suffix\": \"-m\"}]) }}"}' 2>&1) \
  || { echo "$out" >&2; exit 1; }
grep -q '"n1-m"' <<<"$out" || { echo "$out" >&2; echo "cluster_hosts_entries gave a wrong result" >&2; exit 1; }
echo "installed gpucluster.core $installed: modules, filters and role documented, gpucluster.core.site and artifacts resolve, nvidia_smi_facts and cluster_hosts_entries run"
