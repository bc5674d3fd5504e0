# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.core.plugins.filter.common import FilterModule
from ansible_collections.gpucluster.core.plugins.plugin_utils.common import _kubernetes_client as kc

plan = FilterModule().filters()["kubernetes_client_plan"]

VENV = "/opt/gpucluster/kubernetes-client"
PYTHON = "/opt/gpucluster/kubernetes-client/bin/python"
PIP = ["kubernetes==30.1.0", "jsonpatch==1.33"]


SYSTEM = ["python3", "-m", "venv", "--system-site-packages", VENV]
OWN = ["python3", "-m", "venv", VENV]


def facts(distribution, major, family):
    return {"distribution": distribution, "distribution_major_version": major, "os_family": family}


@pytest.mark.parametrize(
    "host, expected",
    [
        # Debian 13 ships python3-kubernetes 30.1.0: the distribution's, seen from the venv
        (facts("Debian", "13", "Debian"),
         {"packages": ["python3-kubernetes", "python3-jsonpatch", "python3-venv"], "system_site_packages": True, "venv_argv": SYSTEM, "pip": []}),
        # Debian 12 ships 22.6.0, Ubuntu 24.04 22.6.0 and 22.04 12.0.1: too old for kubernetes.core 6, pip
        (facts("Debian", "12", "Debian"),
         {"packages": ["python3-venv", "python3-packaging"], "system_site_packages": False, "venv_argv": OWN, "pip": PIP}),
        (facts("Ubuntu", "24", "Debian"),
         {"packages": ["python3-venv", "python3-packaging"], "system_site_packages": False, "venv_argv": OWN, "pip": PIP}),
        (facts("Ubuntu", "22", "Debian"),
         {"packages": ["python3-venv", "python3-packaging"], "system_site_packages": False, "venv_argv": OWN, "pip": PIP}),
        # EL has no client in its base repositories; its python3 has venv
        (facts("Rocky", "9", "RedHat"),
         {"packages": ["python3-packaging"], "system_site_packages": False, "venv_argv": OWN, "pip": PIP}),
        # a number as the major version (facts from a cache or a test) reads the same
        ({"distribution": "Debian", "distribution_major_version": 13, "os_family": "Debian"},
         {"packages": ["python3-kubernetes", "python3-jsonpatch", "python3-venv"], "system_site_packages": True, "venv_argv": SYSTEM, "pip": []}),
    ],
)
def test_kubernetes_client_plan(host, expected):
    assert plan(host) == dict(expected, venv=VENV, python=PYTHON)


@pytest.mark.parametrize("host", [None, {}, {"distribution": "Debian"}, {"os_family": "Debian"}, "Debian"])
def test_kubernetes_client_plan_refuses_what_are_not_facts(host):
    with pytest.raises(AnsibleFilterError, match="^kubernetes_client_plan: expected a host's facts with distribution, "
                       "distribution_major_version and os_family"):
        plan(host)


def test_the_pins_are_the_release_debian_13_ships():
    assert kc.PIP_REQUIREMENTS == ("kubernetes==30.1.0", "jsonpatch==1.33")
    assert kc.PYTHON == kc.VENV + "/bin/python"
