"""The ttinterp backend's driver: the CPU as Triton's active device, launches run in-process.

Triton asks the active driver for its target, device, stream, a launcher and a benchmarker. The
launcher binds each argument (CPU torch tensors, NumPy arrays, scalars, host tensor descriptors) and
hands the launch to the C++ library (``ttinterp._ttinterp``), which does all the work.
"""
from __future__ import annotations

import os
import time

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from .compiler import EMULATED_CAPABILITY, PLUGIN_NAME, TARGET_BACKEND


def _other_driver_active() -> bool:
    from triton.backends import backends
    for name, backend in backends.items():
        if name == PLUGIN_NAME:
            continue
        try:
            if backend.driver.is_active():
                return True
        except Exception:  # a broken GPU stack is an inactive one
            continue
    return False


class _Utils:
    """What Triton's CompiledKernel asks of ``driver.active.utils``."""

    @staticmethod
    def load_binary(name, kernel, shared, device):
        from .._launch import load_kernel
        handle = load_kernel(kernel, name)
        # (module, function, n_regs, n_spills, n_max_threads): the CPU has no thread limit.
        return handle, handle, 0, 0, 2**31 - 1

    @staticmethod
    def unload_module(module):
        pass

    @staticmethod
    def get_device_properties(device):
        cores = os.cpu_count() or 1
        return {
            "max_shared_mem": 2**31 - 1,
            "max_num_regs": 2**31 - 1,
            "multiprocessor_count": cores,
            "warpSize": 32,
            "sm_clock_rate": 0,
            "mem_clock_rate": 0,
            "mem_bus_width": 0,
        }

    @staticmethod
    def set_printf_fifo_size(size):
        pass


class _Event:
    """torch.cuda.Event's timing subset, on the host clock (launches here are synchronous)."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3

    def synchronize(self):
        pass


class _DeviceInterface:
    """The subset of torch.cuda that triton.testing.do_bench uses."""
    Event = _Event

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def current_device():
        return 0


class TTInterpDriver(DriverBase):

    def __init__(self):
        super().__init__()
        self.utils = _Utils()
        from .._launch import Launcher, allow_numpy_arguments
        self.launcher_cls = Launcher
        allow_numpy_arguments()

    @classmethod
    def is_active(cls):
        # Chosen explicitly (ttinterp.activate(), TRITON_DEFAULT_BACKEND=ttinterp), or the only
        # choice: on a machine with an active GPU driver, that driver stays Triton's default.
        from .. import _state
        if _state.forced():
            return True
        return not _other_driver_active()

    def map_python_to_cpp_type(self, ty: str) -> str:
        if ty.startswith("*"):
            return "void*"
        return {
            "i1": "bool", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "u1": "bool", "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
            "fp16": "double", "bf16": "double", "fp32": "double", "f32": "double", "fp64": "double",
        }[ty]

    def get_current_target(self):
        return GPUTarget(TARGET_BACKEND, EMULATED_CAPABILITY, 32)

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_interface(self):
        return _DeviceInterface

    def get_benchmarker(self):
        from .._autotune import benchmarker
        return benchmarker

    def get_empty_cache_for_benchmark(self):
        return None

    def clear_cache(self, cache):
        pass
