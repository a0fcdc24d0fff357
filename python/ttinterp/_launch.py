"""Triton's launcher for ttinterp: binds a launch's Python arguments and runs it in C++.

Each pointer argument is bound as its whole storage (the bounds a GPU allocation gives it) with the
kernel's pointer at the tensor's first element, so the memory model sees what the GPU would: the same
tensor twice, views of one storage, and distinct arrays whose memory overlaps each form one region
with one shadow. Nothing here interprets anything: the C++ library does the launch.
"""
from __future__ import annotations

import atexit
import os
import sys
import warnings

from . import _state
from ._errors import Hazard, HazardError, HazardWarning, KernelFault
from ._ttinterp import Kernel, wait_for_chain_compilations

# A chain compiling in the background when the interpreter exits would still be running in LLVM
# while the process tears LLVM down: let it finish first (at most the one compilation under way).
atexit.register(wait_for_chain_compilations)

_kernels: dict = {}

# os.cpu_count() reads sysfs each call (about 13 us here, a quarter of a small launch); the
# machine's core count does not change under a running process.
_CORES = os.cpu_count() or 1
#: TTIR text per kernel hash (recordings write it next to the spec).
ttir_of: dict = {}


def load_kernel(binary: bytes, name: str) -> Kernel:
    """The lowered kernel of a compile's TTIR, parsed and lowered once per process."""
    text = binary.decode("utf-8") if isinstance(binary, (bytes, bytearray)) else binary
    kernel = _kernels.get(text)
    if kernel is None:
        try:
            kernel = Kernel(text, f"<{name}.ttir>", name)
        except ValueError as e:
            kind, _, message = str(e).partition("\n")
            raise ValueError(f"ttinterp cannot run kernel '{name}' ({kind}): {message}") from None
        _kernels[text] = kernel
        ttir_of[kernel.hash] = text
    return kernel


class _ArrayForSpecialization:
    """What Triton's specializer reads of a tensor (data_ptr, dtype), for a NumPy array."""
    __slots__ = ("data_ptr", "dtype")

    def __init__(self, array):
        address = array.__array_interface__["data"][0]
        self.data_ptr = lambda: address
        self.dtype = array.dtype


def allow_numpy_arguments() -> None:
    """Lets ``kernel[grid](...)`` take NumPy arrays for pointer parameters.

    Triton's binder specializes each argument with a function (native from Triton 3.8, made in
    Python per backend before) that knows torch tensors and objects with ``data_ptr()``; an ndarray
    has neither, so it is shown to the specializer as such an object. The launch itself still
    receives the ndarray."""
    import triton.runtime.jit as jit
    import numpy as np
    ndarray = np.ndarray

    def shown(arg):
        return _ArrayForSpecialization(arg) if type(arg) is ndarray else arg

    if not hasattr(jit, "native_specialize_impl"):
        # Triton before 3.8: the binder's specializer is made in Python, per backend.
        make = jit.create_specialize_impl
        if getattr(make, "_ttinterp", False):
            return

        def create_specialize_impl(*args, **kwargs):
            impl = make(*args, **kwargs)

            def specialize_impl(arg, *rest, **options):
                return impl(shown(arg), *rest, **options)

            return specialize_impl

        create_specialize_impl._ttinterp = True
        jit.create_specialize_impl = create_specialize_impl
        return
    native = jit.native_specialize_impl
    if getattr(native, "_ttinterp", False):
        return

    def specialize(backend, arg, *rest):
        return native(backend, shown(arg), *rest)

    specialize._ttinterp = True
    jit.native_specialize_impl = specialize


def _describe(arg) -> str:
    return f"{type(arg).__module__}.{type(arg).__qualname__}"


_torch_tensor = None  # torch.Tensor once torch is imported (ttinterp itself never imports it)


def _storage(arg, param: str):
    """(kernel address, storage address, storage bytes) of a pointer argument on the host."""
    global _torch_tensor
    if _torch_tensor is None and "torch" in sys.modules:
        _torch_tensor = sys.modules["torch"].Tensor
    if _torch_tensor is not None and isinstance(arg, _torch_tensor):
        if not arg.is_cpu:  # is_cpu: a fifth of the cost of building arg.device
            raise TypeError(f"ttinterp: argument '{param}' is a tensor on {arg.device}; ttinterp runs "
                            f"kernels on CPU tensors (move it with .cpu())")
        storage = arg.untyped_storage()
        return arg.data_ptr(), storage.data_ptr(), storage.nbytes()
    if type(arg).__module__ == "numpy" and type(arg).__name__ == "ndarray":
        import numpy as np
        root = arg
        while isinstance(root.base, np.ndarray):
            root = root.base
        lo, hi = np.lib.array_utils.byte_bounds(root) if hasattr(np.lib, "array_utils") \
            else np.byte_bounds(root)
        return arg.__array_interface__["data"][0], lo, hi - lo
    if hasattr(arg, "base") and hasattr(arg, "data_ptr"):  # triton.reinterpret's TensorWrapper
        _, lo, size = _storage(arg.base, param)
        return arg.data_ptr(), lo, size
    storage = _wrapped_storage(arg)
    if storage is not None:
        device = getattr(storage, "device", None)
        if device is not None and getattr(device, "type", "cpu") != "cpu":
            raise TypeError(f"ttinterp: argument '{param}' is a {_describe(arg)} over memory on "
                            f"{device}; ttinterp runs kernels on CPU memory")
        return arg.data_ptr(), storage.data_ptr(), storage.nbytes()
    if hasattr(arg, "data_ptr"):
        raise TypeError(f"ttinterp: argument '{param}' is a {_describe(arg)}, an address with no "
                        f"bounds: ttinterp checks every access against the storage it points into, "
                        f"so pass the tensor itself, or an object whose untyped_storage() gives "
                        f"the storage's data_ptr() and nbytes()")
    raise TypeError(f"ttinterp: argument '{param}' is a {_describe(arg)}; a pointer parameter takes a "
                    f"CPU torch.Tensor or a numpy.ndarray")


def _wrapped_storage(arg):
    """The storage behind a tensor-like wrapper that Triton's launcher takes for its data_ptr()
    (FlagGems' StridedBuffer, say): its untyped_storage(), when that has data_ptr() and nbytes()."""
    storage_of = getattr(arg, "untyped_storage", None)
    if not callable(storage_of) or not hasattr(arg, "data_ptr"):
        return None
    storage = storage_of()
    if callable(getattr(storage, "data_ptr", None)) and callable(getattr(storage, "nbytes", None)):
        return storage
    return None


# PageExchange.h's kPageExchangeMinimum: a smaller tensor is always copied back, so whether it
# is pinned need not be asked.
_EXCHANGE_MINIMUM = 2 << 20


def _movable(arg, nbytes: int) -> bool:
    """Whether the pages under a pointer argument's storage may be exchanged at write-back: not
    for pinned memory, which a device reads and writes by its physical pages."""
    if nbytes < _EXCHANGE_MINIMUM:
        return False
    if _torch_tensor is not None and isinstance(arg, _torch_tensor):
        return not arg.is_pinned()
    if hasattr(arg, "base") and hasattr(arg, "data_ptr"):  # triton.reinterpret's TensorWrapper
        return _movable(arg.base, nbytes)
    storage = _wrapped_storage(arg)
    if storage is not None:  # a wrapper: moved only when its storage says it is not pinned
        is_pinned = getattr(storage, "is_pinned", None)
        return callable(is_pinned) and not is_pinned()
    return True  # an ndarray: NumPy allocates no pinned memory


def _scalar(arg, param: str, ty: str):
    if ty in ("fp16", "bf16", "fp32", "f32", "fp64"):
        try:
            return float(arg)
        except (TypeError, ValueError):
            raise TypeError(f"ttinterp: argument '{param}' ({ty}) must be a number, not "
                            f"{_describe(arg)}") from None
    try:
        value = int(arg)
    except (TypeError, ValueError):
        raise TypeError(f"ttinterp: argument '{param}' ({ty}) must be an integer, not "
                        f"{_describe(arg)}") from None
    # Triton types an integer from 2**63 up as u64; TTIR holds its bits in an i64.
    if 2**63 <= value < 2**64:
        return value - 2**64
    if not -2**63 <= value < 2**63:
        raise OverflowError(f"ttinterp: argument '{param}' ({ty}) = {value} does not fit in 64 bits")
    return value


class _Binding:
    """A launch's arguments in the C++ layer's terms, in kernel parameter order."""

    def __init__(self, exchange_pages: bool):
        self.pointers = []  # (kernel address, storage address, storage bytes, name)
        self.scalars = []
        self.pad_nan = []
        self.movable = []  # per pointer: may its pages be exchanged at write-back
        self.tensors = []  # (name, object): what a recording writes
        self.exchange_pages = exchange_pages

    def pointer(self, arg, name, pad_nan=False):
        address, storage, nbytes = _storage(arg, name)
        self.pointers.append((address, storage, nbytes, name))
        self.pad_nan.append(pad_nan)
        self.movable.append(nbytes >= _EXCHANGE_MINIMUM and self.exchange_pages
                            and _movable(arg, nbytes))
        self.tensors.append((name, arg))

    def bind(self, arg, name, ty):
        if isinstance(ty, tuple):
            if not isinstance(arg, (tuple, list)) or len(arg) != len(ty):
                raise TypeError(f"ttinterp: argument '{name}' must be a tuple of {len(ty)}")
            for i, (a, t) in enumerate(zip(arg, ty)):
                self.bind(a, f"{name}[{i}]", t)
        elif ty == "constexpr":
            return
        elif ty.startswith("*"):
            if arg is None:
                raise TypeError(f"ttinterp: argument '{name}' ({ty}) is None")
            self.pointer(arg, name)
        elif ty.startswith("tensordesc"):
            # A host TensorDescriptor: its base as the pointer, then the shape (i32) and strides
            # (i64) Triton passes after the descriptor parameter.
            self.pointer(arg.base, name, pad_nan=getattr(arg, "padding", "zero") == "nan")
            self.scalars.extend(int(s) for s in arg.shape)
            self.scalars.extend(int(s) for s in arg.strides)
        else:
            self.scalars.append(_scalar(arg, name, ty))


# How Launcher._bind takes a parameter: a pointer straight to _Binding.pointer, a constexpr not
# at all, anything else (scalars, tuples, descriptors, a None pointer's error) through bind().
_PLAIN_POINTER, _SKIPPED, _GENERAL = object(), object(), object()


class Launcher:
    """``driver.active.launcher_cls``: one per compiled kernel."""

    def __init__(self, src, metadata):
        self.name = metadata.name
        self.arg_names = list(src.fn.arg_names) if hasattr(src, "fn") else None
        self.signature = dict(src.signature)
        self.src = src
        # Per parameter, worked out once: every launch binds the same signature, and a tiny
        # launch's Python share is mostly this loop.
        self._parameters = [(name, ty, _PLAIN_POINTER if isinstance(ty, str) and ty.startswith("*")
                             else _SKIPPED if ty == "constexpr" else _GENERAL)
                            for name, ty in self.signature.items()]

    def _bind(self, args, exchange_pages: bool) -> _Binding:
        binding = _Binding(exchange_pages)
        if len(args) != len(self._parameters):
            raise TypeError(f"ttinterp: kernel '{self.name}' takes {len(self._parameters)} "
                            f"arguments, got {len(args)}")
        for (name, ty, how), arg in zip(self._parameters, args):
            if how is _PLAIN_POINTER and arg is not None:
                binding.pointer(arg, name)
            elif how is not _SKIPPED:
                binding.bind(arg, name, ty)
        return binding

    def __call__(self, gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        grid = (int(gridX), int(gridY), int(gridZ))
        if min(grid) < 0:
            raise ValueError(f"ttinterp: grid {grid} of kernel '{self.name}' has a negative size")
        options = _state.current()
        binding = self._bind(args, options.exchange_pages)
        if launch_enter_hook is not None:
            launch_enter_hook(launch_metadata)
        # (storage address, storage bytes, name) of each reachable tensor.
        reachable = [(*_storage(t, name)[1:], name) for name, t in options.reachable]
        movable = binding.movable
        if reachable:
            movable = movable + [options.exchange_pages and _movable(t, nbytes)
                                 for (_, t), (_, nbytes, _) in zip(options.reachable, reachable)]
        if options.record:
            from ._record import record_launch
            record_launch(options.record, self.name, ttir_of[function.hash], function.parameters,
                          grid, binding, reachable)
        sys.stdout.flush()  # tl.device_print writes to the process's stdout from C++
        result = function.launch(grid, binding.pointers, binding.scalars, binding.pad_nan,
                                 options.threads or _CORES, options.hazards != "off",
                                 options.bounds, options.max_steps, options.in_place, reachable,
                                 movable)
        if launch_exit_hook is not None:
            launch_exit_hook(launch_metadata)
        self._check(result, options)

    def _check(self, result, options):
        if result is None:
            return  # ran, wrote back, nothing to report
        status = result["status"]
        if status == "fault":
            f = result["fault"]
            raise KernelFault(self.name, f["kind"], f["message"], f["location"], f["op"], f["program"],
                              f["element"])
        if status == "bad_input":
            raise ValueError(f"ttinterp: kernel '{self.name}': {result['error']}")
        if status == "write_back":
            raise RuntimeError(f"ttinterp: kernel '{self.name}': write-back failed: {result['error']}")
        if result["hazards"]:
            hazards = [Hazard(h) for h in result["hazards"]]
            if options.hazards == "error":
                raise HazardError(self.name, hazards, result["hazard_bytes"])
            warnings.warn(HazardWarning(HazardError(self.name, hazards, result["hazard_bytes"]).args[0]),
                          stacklevel=3)
