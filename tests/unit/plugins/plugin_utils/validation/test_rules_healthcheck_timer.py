# -*- coding: utf-8 -*-
# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation role's rules over the health check timer on Kubernetes nodes (issue 32): a run is
stopped before the next one is due, the random delay is at most the interval."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils import role_specs
from ansible_collections.gpucluster.core.tests.unit.plugins.plugin_utils.validation.test_rules_validation import errors

# The role's defaults (roles/validation/defaults/main.yml).
TIMER = {
    "validation_healthcheck_timer": True,
    "validation_healthcheck_timer_interval": 60,
    "validation_healthcheck_timer_random_delay": 30,
    "validation_healthcheck_timer_timeout": 45,
    "validation_healthcheck_kubelet_kubeconfig": "/etc/kubernetes/kubelet.conf",
    "validation_healthcheck_kubernetes_reader": True,
}


def test_names_and_defaults():
    options = role_specs.options("validation")
    assert {name: options[name].get("default") for name in TIMER} == TIMER


@pytest.mark.parametrize("play, want", [
    ({}, []),
    (TIMER, []),
    ({"validation_healthcheck_timer": False, "validation_healthcheck_kubernetes_reader": False}, []),
    ({"validation_healthcheck_timer_interval": 30, "validation_healthcheck_timer_random_delay": 10,
      "validation_healthcheck_timer_timeout": 29}, []),
    ({"validation_healthcheck_timer_interval": 86400, "validation_healthcheck_timer_random_delay": 0,
      "validation_healthcheck_timer_timeout": 25}, []),
    ({"validation_healthcheck_timer": "yes"}, ["validation_healthcheck_timer: must be true or false (got 'yes')"]),
    ({"validation_healthcheck_kubernetes_reader": 1},
     ["validation_healthcheck_kubernetes_reader: must be true or false (got 1)"]),
    ({"validation_healthcheck_kubelet_kubeconfig": "kubelet.conf"},
     ["validation_healthcheck_kubelet_kubeconfig: must be an absolute path (got 'kubelet.conf')"]),
    ({"validation_healthcheck_timer_interval": 9},
     ["validation_healthcheck_timer_interval: must be within 10-86400 (got 9)"]),
    ({"validation_healthcheck_timer_interval": "60s"},
     ["validation_healthcheck_timer_interval: must be an integer (got '60s')"]),
    ({"validation_healthcheck_timer_random_delay": 61},
     ["validation_healthcheck_timer_random_delay: must be at most validation_healthcheck_timer_interval (60) (got 61)"]),
    ({"validation_healthcheck_timer_random_delay": -1},
     ["validation_healthcheck_timer_random_delay: must be within 0-86400 (got -1)"]),
    ({"validation_healthcheck_timer_timeout": 60},
     ["validation_healthcheck_timer_timeout: must be less than validation_healthcheck_timer_interval (60): "
      "a run ends before the next is due (got 60)"]),
    ({"validation_healthcheck_timer_timeout": 24},
     ["validation_healthcheck_timer_timeout: must be within 25-86400 (got 24)"]),
    # A bad interval: the others are judged on their own.
    ({"validation_healthcheck_timer_interval": 0, "validation_healthcheck_timer_timeout": 100},
     ["validation_healthcheck_timer_interval: must be within 10-86400 (got 0)"]),
], ids=["defaults-absent", "defaults", "off", "smallest", "largest", "timer-text", "reader-int", "kubeconfig-relative",
        "interval-short", "interval-text", "delay-over-interval", "delay-negative", "timeout-at-interval",
        "timeout-short", "interval-bad"])
def test_healthcheck_timer_rules(play, want):
    assert errors(play=play) == want
