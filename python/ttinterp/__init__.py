"""ttinterp: run unchanged Triton kernels on the CPU, exactly, with the memory checked.

    import torch, triton, triton.language as tl
    import ttinterp                      # registers the "ttinterp" Triton backend

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

    add[(4,)](x, y, out, 4096, BLOCK=1024)   # x, y, out: CPU tensors

On a machine with no GPU driver ttinterp is Triton's active backend as soon as it is installed;
``ttinterp.activate()`` (or ``TRITON_DEFAULT_BACKEND=ttinterp``) chooses it anywhere. See docs/python.md.
"""
from __future__ import annotations

import contextlib

__version__ = "0.1.0"

from . import _state
from ._errors import Hazard, HazardError, HazardWarning, KernelFault
from ._state import Options, options

__all__ = ["activate", "deactivate", "active", "options", "record", "Options", "KernelFault",
           "HazardError", "HazardWarning", "Hazard", "__version__"]


#: The Triton versions whose backend interface and TTIR this package knows.
SUPPORTED_TRITON = ((3, 5), (3, 9))


def _check_triton() -> None:
    """Refuses an older Triton with a clear error, unless Triton itself is importing the plugin
    (its entry-point discovery, which one failing backend would break for every backend)."""
    import sys
    import triton
    version = tuple(int(part) for part in triton.__version__.split(".")[:2] if part.isdigit())
    discovering = sys.modules.get("triton.backends")
    if version < SUPPORTED_TRITON[0] and not (discovering is not None and
                                                not hasattr(discovering, "backends")):
        raise ImportError(f"ttinterp's Triton backend needs Triton 3.5 to 3.9, not {triton.__version__} "
                          f"(the ttinterp command line runs the TTIR of Triton 3.3 and later)")


def _register() -> None:
    """Makes the backend known to Triton when no entry point did (running from a build tree)."""
    import sys
    discovering = sys.modules.get("triton.backends")
    if discovering is not None and not hasattr(discovering, "backends"):
        return  # this import comes from Triton's own entry-point discovery, which registers us
    import triton.backends as tb
    if "ttinterp" in tb.backends:
        return
    from .backend import compiler, driver
    tb.backends["ttinterp"] = tb.Backend(compiler=compiler.TTInterpBackend, driver=driver.TTInterpDriver)


def activate() -> None:
    """Makes ttinterp Triton's active backend in this process, whatever GPU is present.

    Choose it before the first launch: Triton caches each kernel's target per device, so a kernel
    that already ran on a GPU keeps running there."""
    from triton.runtime import driver as runtime_driver
    from .backend.driver import TTInterpDriver
    _register()
    _state.set_forced(True)
    if not isinstance(runtime_driver._active, TTInterpDriver):
        runtime_driver.set_active(TTInterpDriver())


def deactivate() -> None:
    """Gives Triton back its default driver (the GPU's, where there is one)."""
    from triton.runtime import driver as runtime_driver
    _state.set_forced(False)
    runtime_driver._active = None
    runtime_driver._default = None


@contextlib.contextmanager
def active():
    """``with ttinterp.active():`` runs the block's launches on ttinterp, then restores the driver."""
    from triton.runtime import driver as runtime_driver
    was_forced, previous = _state.forced(), runtime_driver._active
    activate()
    try:
        yield
    finally:
        _state.set_forced(was_forced)
        runtime_driver._active = previous


def record(folder: str):
    """``with ttinterp.record(folder):`` writes every launch as a CLI bundle (see docs/python.md)."""
    return options(record=str(folder))


_check_triton()
_register()
