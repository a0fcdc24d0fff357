"""pytest set-up for ttinterp's Python tests: ttinterp is the active Triton backend.

The package is imported from the build tree (PYTHONPATH=build/python, as scripts/test.sh sets it) or
from an installed wheel; either way importing it registers the backend. Triton's kernel cache goes to
a fresh folder per session, so every run compiles what it launches.
"""
import os
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="ttinterp-triton-cache-"))

import inspect  # noqa: E402

import pytest  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import ttinterp  # noqa: E402

ttinterp.activate()

#: The installed Triton's (major, minor): the package runs on 3.5 to 3.9, and a few tests use
#: language features or fixes of the newest.
TRITON = tuple(int(part) for part in triton.__version__.split(".")[:2])

#: Skips a test that needs Triton 3.9's atomics (tl.atomic_load, tl.atomic_store, tl.atomic_poll).
needs_tl_atomic_load = pytest.mark.skipif(not hasattr(tl, "atomic_load"),
                                          reason=f"Triton {triton.__version__} has no tl.atomic_load")
#: Skips a test that needs tl.fdiv(approx=True) (Triton 3.9).
needs_approx_fdiv = pytest.mark.skipif("approx" not in inspect.signature(tl.fdiv).parameters,
                                       reason=f"Triton {triton.__version__}'s tl.fdiv has no approx")


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
