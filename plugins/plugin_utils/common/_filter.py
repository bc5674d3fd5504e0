# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One wrapper for the collection's filters over pure functions (the roles' rules and derived
data): a RuleError or input of the wrong shape becomes an AnsibleFilterError, and nothing else
is caught."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, Mapping

from ansible.errors import AnsibleError, AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import RuleError

_SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def as_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as the filter ``name``: a RuleError's message as it is (it names what is wrong);
    a shape error (a missing key, a wrong type) as ``<name>: the input is not of the expected
    shape (<error>)``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RuleError as exc:
            raise AnsibleFilterError(str(exc)) from None
        except _SHAPE_ERRORS as exc:
            raise AnsibleFilterError("%s: the input is not of the expected shape (%s: %s)"
                                     % (name, type(exc).__name__, exc)) from None

    return wrapper


def as_filters(funcs: Mapping[str, Callable[..., Any]]) -> Dict[str, Callable[..., Any]]:
    """A FilterModule's filters: each function of ``funcs`` as the filter of its name (as_filter)."""
    return {name: as_filter(name, func) for name, func in funcs.items()}


def defined_values(values: Mapping[str, Any], names: Iterable[str]) -> Dict[str, Any]:
    """A host's values of ``names`` (from ``hostvars``) that it has and that can be templated: a
    value that needs facts the host never gave (it failed or was unreachable before gathering
    them) is left out."""
    out = {}
    for name in names:
        try:
            if name not in values:
                continue
            value = values[name]
        except AnsibleError:
            continue
        if not isinstance(value, Undefined):
            out[name] = value
    return out
