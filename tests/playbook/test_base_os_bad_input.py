# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""base_os: bad input is refused before any host is touched.

One playbook-level test proves the ordering; every rule is a unit test: the hosts table of
plugins/filter/base_os.py (tests/unit/plugins/filter/test_cluster_hosts.py), the rest of
plugins/plugin_utils/base_os/_rules.py (tests/unit/plugins/plugin_utils/base_os/test_rules_base_os.py)."""

from __future__ import annotations

from roleplay import LAB_ADDRESSES as GOOD
from roleplay import LAB_NETWORKS as NETWORKS
from roleplay import assert_passes_validation, assert_refused_untouched, run_role


def run_base_os(tmp_path, addresses, networks=None, **extra_vars):
    return run_role(
        tmp_path, "gpucluster.core.base_os",
        hosts={host: {"base_os_addresses": addrs} for host, addrs in addresses.items()},
        groups={"cluster": list(addresses), "head": ["master"]},
        group_vars={"base_os_networks": networks if networks is not None else NETWORKS, **extra_vars},
    )


def test_good_data_passes_preflight_validation(tmp_path):
    # The control: the same inventory with good data gets past the
    # validation and only then fails, because the hosts do not exist.
    assert_passes_validation(run_base_os(tmp_path, GOOD), GOOD, "base_os_")


def test_bad_data_is_refused_before_any_host_is_contacted(tmp_path):
    result = run_base_os(tmp_path, GOOD, base_os_firewall_extra_ports=["8080/tcp", "70000/tcp"])
    assert_refused_untouched(
        result, "host 'master': base_os_firewall_extra_ports[1]: must be within 1-65535 (got 70000)")
