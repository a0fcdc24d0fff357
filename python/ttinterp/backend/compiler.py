"""The ttinterp backend's compiler: Triton's own front end and TTIR passes; the binary is the TTIR.

Compiling runs exactly what produces the ``.ttir`` in Triton's cache for an NVIDIA GPU of compute
capability 9.0 (host tensor descriptors stay descriptors, ``tl.dot`` on f32 defaults to tf32), so the
interpreter runs the kernel a GPU would run. No GPU-specific stage follows: the last stage hands the
TTIR text, with its debug locations, to the interpreter.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from triton.backends.compiler import BaseBackend, GPUTarget, Language

#: Triton's TTIR for this compute capability is what the interpreter is tested against.
EMULATED_CAPABILITY = 90
#: The plugin's name: Triton's ``backends`` key, ``TRITON_DEFAULT_BACKEND=ttinterp``, the binary's key
#: in ``compiled.asm``.
PLUGIN_NAME = "ttinterp"
#: ``GPUTarget.backend``, which libraries read as the device type of the tensors a kernel takes
#: (flash-linear-attention looks up ``getattr(torch, backend)``; "cuda" and "hip" map to torch.cuda):
#: the kernels run on CPU tensors.
TARGET_BACKEND = "cpu"


class InvalidOptionError(ValueError, AssertionError):
    """A launch option the NVIDIA backend rejects too: it asserts, so code written for it (Triton's
    own tests among them) expects an AssertionError; a ValueError is what the value is."""


@dataclass(frozen=True)
class TTInterpOptions:
    # Field names follow the NVIDIA backend's options, so kernels and autotune configs written
    # for it (num_warps=8, num_stages=3, ...) are accepted unchanged. Most only matter to code
    # generation for a GPU and are carried for the cache key.
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    warp_size: int = 32
    maxnreg: Optional[int] = None
    ptx_version: Optional[int] = None
    ptx_options: Optional[str] = None
    ir_override: Optional[str] = None
    enable_fp_fusion: bool = False
    sched4reg: bool = False
    enable_reflect_ftz: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    clc: bool = False
    supported_fp8_dtypes: Tuple[str, ...] = ("fp8e4b15", "fp8e4nv", "fp8e5")
    deprecated_fp8_dot_operand_dtypes: Tuple[str, ...] = ("fp8e4b15", )
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: Tuple[str, ...] = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 2**30
    extern_libs: Optional[tuple] = None
    debug: bool = False
    backend_name: str = PLUGIN_NAME
    sanitize_overflow: bool = True
    arch: Optional[str] = None
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False
    min_shared_mem: Optional[int] = None

    def __post_init__(self):
        if self.num_warps <= 0 or self.num_warps & (self.num_warps - 1):
            raise InvalidOptionError(f"num_warps must be a power of 2, not {self.num_warps}")
        if self.extern_libs is not None and not isinstance(self.extern_libs, tuple):
            object.__setattr__(self, "extern_libs", tuple(dict(self.extern_libs).items()))

    def hash(self):
        key = "_".join(f"{name}-{value}" for name, value in sorted(self.__dict__.items()))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()


_FUNC_NAME = re.compile(r"tt\.func\s+public\s+@([\w$.]+)")


class TTInterpBackend(BaseBackend):
    binary_ext = PLUGIN_NAME

    @staticmethod
    def supports_target(target: GPUTarget):
        return target.backend == TARGET_BACKEND

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.binary_ext = PLUGIN_NAME

    @functools.lru_cache()
    def hash(self):
        from .. import __version__
        # The target's backend is in it: Triton's cache key holds this hash, not the target, and a
        # cached kernel's metadata names the target it was compiled for.
        return f"{PLUGIN_NAME}-{__version__}-{self.target.backend}-{self.target.arch}"

    def parse_options(self, opts) -> Any:
        fields = TTInterpOptions.__dataclass_fields__
        args = {k: v for k, v in opts.items() if k in fields and v is not None}
        args["arch"] = f"ttinterp{self.target.arch}"
        return TTInterpOptions(**args)

    def pack_metadata(self, metadata):
        return (metadata.num_warps, metadata.num_ctas, metadata.shared)

    def get_codegen_implementation(self, options):
        # The CUDA front-end hooks (fp8 conversions, the smallest dot) for the emulated capability.
        import triton.language.extra.cuda as cuda
        from triton.backends.nvidia.compiler import min_dot_size
        return {
            "convert_custom_types": cuda.convert_custom_float8_sm80,
            "min_dot_size": min_dot_size(GPUTarget("cuda", EMULATED_CAPABILITY, 32)),
        }

    def get_module_map(self) -> Dict[str, Any]:
        # tl.extra.libdevice calls become tt.extern_elementwise with libdevice's __nv_* names,
        # which the interpreter implements.
        from triton.language.extra.cuda import libdevice
        return {"triton.language.extra.libdevice": libdevice}

    def load_dialects(self, ctx):
        pass

    @staticmethod
    def make_ttir(mod, metadata, options):
        # The installed Triton's own NVIDIA TTIR pipeline for capability 9.0, whatever its version
        # (3.5 still rewrites block pointers here; 3.8 and 3.9 do not), rather than a copy of one.
        from triton.backends.nvidia.compiler import CUDABackend
        return CUDABackend.make_ttir(mod, metadata, options, EMULATED_CAPABILITY)

    @staticmethod
    def make_binary(src, metadata, options):
        text = str(src)
        match = _FUNC_NAME.search(text)
        if match is None:
            raise RuntimeError("ttinterp: the compiled TTIR has no public tt.func")
        metadata["name"] = match.group(1)
        metadata["shared"] = 0
        metadata["tmem_size"] = None
        metadata["global_scratch_size"] = 0
        metadata["global_scratch_align"] = 1
        metadata["profile_scratch_size"] = 0
        metadata["profile_scratch_align"] = 1
        metadata["tensordesc_meta"] = None
        metadata["cluster_dims"] = (1, 1, 1)  # Triton 3.5 reads it back from the cache
        return text.encode("utf-8")

    def add_stages(self, stages, options, language):
        if language != Language.TRITON:
            raise RuntimeError("ttinterp runs Triton kernels; Gluon kernels are GPU-specific")
        stages["ttir"] = lambda src, metadata: self.make_ttir(src, metadata, options)
        stages["ttinterp"] = lambda src, metadata: self.make_binary(src, metadata, options)
