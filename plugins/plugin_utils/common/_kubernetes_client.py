# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Python Kubernetes client that kubernetes.core's modules (k8s, k8s_info, k8s_taint, k8s_log)
need on the host where they run (controller side, pure, no Ansible imports).

kubernetes.core 6 needs the ``kubernetes`` client 24.2.0 or newer (and jsonpatch for JSON patches).
Where the distribution ships one that new, it comes from the distribution; elsewhere pip installs
it from the site's index. Either way it is reached through one interpreter, the same path on every
host (``PYTHON``): a virtual environment that sees the system's packages where the distribution
has the client, and holds its own copy installed by pip elsewhere. A task that runs a
kubernetes.core module names that interpreter in its ``ansible_python_interpreter``, so the path
needs no facts of the host (which may be outside the play, as with ``--limit``)."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

VENV = "/opt/gpucluster/kubernetes-client"
PYTHON = VENV + "/bin/python"
# The client pip installs where the distribution's is too old or missing: the release Debian 13
# ships, so that every control plane node of a cluster runs the same client whichever way it came.
PIP_REQUIREMENTS = ("kubernetes==30.1.0", "jsonpatch==1.33")
# The distributions whose own client is new enough (kubernetes >= 24.2.0): Debian 13 ships 30.1.0.
# Debian 12 ships 22.6.0, Ubuntu 22.04 12.0.1 and 24.04 22.6.0 (too old); EL has none in its base.
DISTRIBUTION_CLIENT = {
    ("Debian", "13"): ("python3-kubernetes", "python3-jsonpatch"),
}
# What python3 -m venv needs from the distribution (Debian splits venv out of python3), and what
# Ansible's pip module needs where pip installs the client (it imports packaging).
VENV_MODULE = {"Debian": ("python3-venv",)}
PIP_MODULE = ("python3-packaging",)


def client_plan(facts: Mapping[str, Any]) -> Dict[str, Any]:
    """How a host with ``facts`` (its ansible_facts: distribution, distribution_major_version,
    os_family) gets the client.

    Returns {venv, python, packages (the distribution's packages to install), system_site_packages
    (the venv sees the system's packages: the distribution's client), venv_argv (the command that
    makes the venv), pip (the requirements pip installs into the venv; none where the distribution
    has the client)}."""
    if not isinstance(facts, Mapping) or not facts.get("distribution") or not facts.get("os_family"):
        raise RuleError("kubernetes_client_plan: expected a host's facts with distribution, distribution_major_version "
                        "and os_family (got %r)" % (facts,))
    distribution = DISTRIBUTION_CLIENT.get((str(facts["distribution"]), str(facts.get("distribution_major_version", ""))))
    venv = list(VENV_MODULE.get(str(facts["os_family"]), ()))
    if distribution:
        return {"venv": VENV, "python": PYTHON, "packages": list(distribution) + venv, "system_site_packages": True,
                "venv_argv": ["python3", "-m", "venv", "--system-site-packages", VENV], "pip": []}
    return {"venv": VENV, "python": PYTHON, "packages": venv + list(PIP_MODULE), "system_site_packages": False,
            "venv_argv": ["python3", "-m", "venv", VENV], "pip": list(PIP_REQUIREMENTS)}
