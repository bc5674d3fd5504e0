# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input rules the roles that write a package source share (controller side, pure, no Ansible imports).

- ``text``: a value as the roles' templates write it.
- ``repository_errors``: a package repository's URL (http(s):// or file://, ending in /) and its key's URL.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ansible_collections.gpucluster.core.plugins.plugin_utils.common._rules import Errors, url

REPO_URL_RE = re.compile(r"(https?|file)://\S+/")


def text(value: Any) -> str:
    """The value as the role's templates write it (an unquoted 12.4 from YAML is the float, read as 12.4)."""
    return value if isinstance(value, str) else str(value)


def repository_errors(errors: Errors, values: Mapping[str, Any], url_name: str, key_url_name: str) -> None:
    """The repository URL ``values[url_name]`` and its key's URL ``values[key_url_name]``."""
    repo_url = values.get(url_name)
    if not isinstance(repo_url, str) or not REPO_URL_RE.fullmatch(repo_url):
        errors.add(url_name, "must be an http(s):// or file:// URL ending in / (got %r)" % (repo_url,))
    errors.check(key_url_name, url(values.get(key_url_name)))
