"""Deprecated path, kept for one release: the module is :mod:`lingdiag.io.itemcounts`."""

import sys
import warnings
from importlib import import_module

warnings.warn("lingdiag.itemcounts moved to lingdiag.io.itemcounts; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
# The same module object under both names, so attribute lookups and monkeypatching see one module.
sys.modules[__name__] = import_module("lingdiag.io.itemcounts")
