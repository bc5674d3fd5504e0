# Copyright: gpucluster.core contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preload callback imports every filter, test and action plugin of the collection."""

from __future__ import annotations

import os
import sys

from ansible_collections.gpucluster.core.plugins.callback import preload as callback

PLUGINS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins")


def _modules(package):
    folder = os.path.join(PLUGINS, package)
    return sorted("ansible_collections.gpucluster.core.plugins.%s.%s" % (package, name[:-3])
                  for name in os.listdir(folder) if name.endswith(".py") and name != "__init__.py")


def test_preload_imports_every_filter_and_action_plugin():
    done = callback.preload()
    want = _modules("filter") + _modules("action")
    assert sorted(done) == sorted(want)
    assert all(name in sys.modules for name in want)


def test_a_package_that_is_not_there_is_skipped():
    assert callback.preload(("no_such_package",)) == []


def test_callback_needs_enabling():
    assert callback.CallbackModule.CALLBACK_NEEDS_ENABLED is True
    assert callback.CallbackModule.CALLBACK_NAME == "gpucluster.core.preload"
