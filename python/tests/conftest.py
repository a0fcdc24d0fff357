"""pytest set-up for ttinterp's Python tests: ttinterp is the active Triton backend.

The package is imported from the build tree (PYTHONPATH=build/python, as scripts/test.sh sets it) or
from an installed wheel; either way importing it registers the backend. Triton's kernel cache goes to
a fresh folder per session, so every run compiles what it launches.
"""
import os
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="ttinterp-triton-cache-"))

import pytest  # noqa: E402
import ttinterp  # noqa: E402

ttinterp.activate()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
