# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' argument specs as the tests read them: the option names the common input check gives
each role's rules come from there."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import yaml

ROOT = Path(__file__).resolve().parents[4]


def options(role: str) -> Dict[str, Any]:
    """The options of ``role``'s main entry point (roles/<role>/meta/argument_specs.yml)."""
    path = ROOT / "roles" / role / "meta" / "argument_specs.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["argument_specs"]["main"]["options"]
