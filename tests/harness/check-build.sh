#!/usr/bin/env bash
# The collection as a user installs it: build the tarball, check what it carries, install it
# with its declared dependencies (offline, from collection artifacts of the `ansible` package's
# bundled collections: tests/harness/setup-venv.sh) into a fresh repository that has its own
# minimal ansible.cfg and none of this checkout's, then from there: every playbook and every
# role by FQCN passes a syntax check, modules, filters and roles render with ansible-doc, and
# code from the installed copy runs.
#   tests/harness/check-build.sh                      # on .venv (the oldest ansible-core)
#   GPC_VENV=.venv-newest tests/harness/check-build.sh  # on the newest
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=$(cd "${GPC_VENV:-$ROOT/.venv}" && pwd)
[ -d "$VENV/collection-artifacts" ] || { echo "run tests/harness/setup-venv.sh first" >&2; exit 2; }
export PATH="$VENV/bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-build: $*" >&2; exit 1; }

cd "$ROOT"
ansible-galaxy collection build --force --output-path "$tmp/dist" >/dev/null
tarball=$(ls "$tmp"/dist/gpucluster-core-*.tar.gz)
tar -tzf "$tarball" | sort >"$tmp/contents"
echo "built $(basename "$tarball"): $(grep -vc '/$' "$tmp/contents") entries, $(du -k "$tarball" | cut -f1) KiB"

# What a user does not need stays out; what a user and ansible-test need is in.
unwanted='^(\.venv|\.venv-newest|\.git|\.cache|\.ansible|molecule|benchmarks|inventories/sandbox(-kubernetes)?|tests/(harness|sandbox|pytest|promtool|output))(/|$)|^(ansible\.cfg|site\.yml|tests/run-all\.sh|tests/requirements[^/]*\.txt|\.ansible-lint|\.yamllint)$'
if grep -E "$unwanted" "$tmp/contents" >"$tmp/unwanted"; then
  head -20 "$tmp/unwanted" >&2
  fail "the tarball carries $(wc -l <"$tmp/unwanted") files a user does not need (galaxy.yml build_ignore)"
fi
for needed in MANIFEST.json FILES.json README.md LICENSE CHANGELOG.rst meta/runtime.yml meta/execution-environment.yml \
              requirements.txt playbooks/site.yml playbooks/validate.yml roles/base_os/meta/argument_specs.yml \
              tests/unit/plugins inventories/lab/hosts.yml; do
  grep -qxE "$needed/?" "$tmp/contents" || fail "the tarball lacks $needed"
done

# The declared dependencies (galaxy.yml) and theirs, from the artifacts; nothing else, so a
# module of an undeclared collection cannot resolve.
mapfile -t artifacts < <(python - "$ROOT/galaxy.yml" "$VENV/collection-artifacts" <<'PY'
import glob, json, os, sys, tarfile
import yaml
with open(sys.argv[1], encoding="utf-8") as handle:
    wanted = list((yaml.safe_load(handle).get("dependencies") or {}))
by_name = {}
for path in glob.glob(os.path.join(sys.argv[2], "*.tar.gz")):
    with tarfile.open(path) as tar:
        info = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
    by_name["%s.%s" % (info["namespace"], info["name"])] = (path, list(info.get("dependencies") or {}))
chosen = []
while wanted:
    name = wanted.pop()
    if name in chosen:
        continue
    if name not in by_name:
        sys.exit("no artifact of %s, a declared dependency: add it to tests/harness/setup-venv.sh" % name)
    chosen.append(name)
    wanted.extend(by_name[name][1])
for name in sorted(chosen):
    print(by_name[name][0])
PY
)

# Someone else's repository: its own ansible.cfg, collections and inventory.
repo="$tmp/site-repo"
mkdir -p "$repo/collections" "$repo/inventory"
cat >"$repo/ansible.cfg" <<'EOF'
[defaults]
collections_path = ./collections
inventory = ./inventory/hosts.yml
EOF
cp "$ROOT/inventories/lab/hosts.yml" "$repo/inventory/hosts.yml"
cp -r "$ROOT/inventories/lab/group_vars" "$repo/inventory/"
cd "$repo"
unset ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS
export ANSIBLE_CONFIG="$repo/ansible.cfg"
ansible-galaxy collection install --offline -p ./collections "$tarball" "${artifacts[@]}" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; fail "the tarball does not install with its declared dependencies"; }
ansible-galaxy collection list >"$tmp/list" 2>/dev/null
installed=$(awk '$1 == "gpucluster.core" {print $2}' "$tmp/list")
[ -n "$installed" ] || fail "gpucluster.core is not listed after install"
coll="$repo/collections/ansible_collections/gpucluster/core"
[ ! -e "$repo/collections/ansible_collections/gpucluster/core/ansible.cfg" ] || fail "ansible.cfg was installed"

# Every playbook of the collection, and every role in a playbook of the site's.
playbooks=()
for path in "$coll"/playbooks/*.yml; do
  playbooks+=("gpucluster.core.$(basename "$path" .yml)")
done
{
  for path in "$coll"/roles/*/; do
    role=$(basename "$path")
    [ "$role" = common ] && continue  # internal: the roles include it
    printf -- '- name: Apply %s\n  hosts: all\n  roles:\n    - role: gpucluster.core.%s\n' "$role" "$role"
  done
} >"$repo/roles.yml"
for playbook in "${playbooks[@]}" roles.yml; do
  ansible-playbook "$playbook" --syntax-check >"$tmp/syntax.log" 2>&1 \
    || { cat "$tmp/syntax.log" >&2; fail "$playbook does not pass a syntax check from the installed copy"; }
  # A warning other than the groups the site playbook makes at run time (a deprecated or
  # redirected module of a dependency, a plugin that does not load) fails.
  ! grep -E "WARNING|DEPRECATION" "$tmp/syntax.log" | grep -vq "Could not match supplied host pattern" \
    || { cat "$tmp/syntax.log" >&2; fail "$playbook warns from the installed copy"; }
done

for path in "$coll"/plugins/modules/*.py; do
  ansible-doc -t module "gpucluster.core.$(basename "$path" .py)" >/dev/null
done
ansible-doc -t filter -l gpucluster.core >"$tmp/filters" 2>"$tmp/filters.err" || { cat "$tmp/filters.err" >&2; fail "ansible-doc cannot list the filters"; }
filters=$(awk '$1 ~ /^gpucluster\.core\./ {print $1}' "$tmp/filters")
[ "$(wc -w <<<"$filters")" -ge 70 ] || { cat "$tmp/filters" >&2; fail "ansible-doc lists only $(wc -w <<<"$filters") filters"; }
# shellcheck disable=SC2086
ansible-doc -t filter $filters >/dev/null
for path in "$coll"/roles/*/; do
  ansible-doc -t role "gpucluster.core.$(basename "$path")" >/dev/null
done
# The controller's requirements, as ansible-builder finds them for an execution environment.
ansible-builder introspect --sanitize "$repo/collections" >"$tmp/introspect" 2>&1 \
  || { cat "$tmp/introspect" >&2; fail "ansible-builder introspect failed"; }
for requirement in "netaddr.*from collection gpucluster.core" "openssh-client .platform:dpkg.*from collection gpucluster.core"; do
  grep -q "$requirement" "$tmp/introspect" || { cat "$tmp/introspect" >&2; fail "ansible-builder does not find $requirement"; }
done
for callback in failed_hosts preload; do
  ansible-doc -t callback "gpucluster.core.$callback" >/dev/null
done

# Code from the installed copy: a read-only facts module on this machine (no nvidia-smi here:
# it must report no driver, without failing) and a filter that needs netaddr.
out=$(ansible localhost -c local -m gpucluster.core.nvidia_smi_facts 2>&1) \
  || { echo "$out" >&2; fail "nvidia_smi_facts failed from the installed copy"; }
grep -q '"driver_available": false' <<<"$out" || { echo "$out" >&2; fail "nvidia_smi_facts did not report the missing driver"; }
out=$(ansible localhost -c local -m ansible.builtin.debug \
  -a '{"msg": "{{ {\"n1\": {\"mgmt\": \"10.0.0.5\"}} | gpucluster.core.cluster_hosts_entries(networks=[{\"name\": \"mgmt\", \"cidr\": \"10.0.0.0/24\", \"suffix\": \"-m\"}]) }}"}' 2>&1) \
  || { echo "$out" >&2; fail "cluster_hosts_entries failed"; }
grep -q '"n1-m"' <<<"$out" || { echo "$out" >&2; fail "cluster_hosts_entries gave a wrong result"; }
core=$(ansible --version)
echo "${core%%$'\n'*}: installed gpucluster.core $installed with $(printf '%s\n' "${artifacts[@]##*/}" | sed 's/\.tar\.gz$//' | paste -sd, -);" \
  "${#playbooks[@]} playbooks and every role pass a syntax check from a foreign ansible.cfg; modules, $(wc -w <<<"$filters") filters," \
  "roles and callbacks documented; nvidia_smi_facts and cluster_hosts_entries run"
