"""Process-wide settings: which options launches use, whether ttinterp was chosen, recording.

Options come from ``ttinterp.options(...)`` (innermost context wins) over environment variables over
defaults; they are read once per launch.
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field, fields, replace
from typing import Iterator, Optional

_BOUNDS = ("argument", "region")
_HAZARDS = ("off", "error", "warn")
_AUTOTUNE = ("benchmark", "first")


@dataclass(frozen=True)
class Options:
    threads: int = 0  #: worker threads per launch; 0: every core
    hazards: str = "off"  #: cross-program races: "off", "error" (HazardError), "warn" (HazardWarning)
    bounds: str = "argument"  #: "argument": inside the tensor's storage; "region": its storage region
    max_steps: int = 0  #: ops one program may execute before a step_limit fault; 0: no limit
    in_place: bool = False  #: kernels write tensors directly (no shadow; not transactional)
    #: a write-back may move the pages a launch wrote whole into a tensor instead of copying
    #: them; say False for memory a device reads by physical page that torch does not know is
    #: pinned (cudaHostRegister'd by another library). Pinned torch tensors are never moved.
    exchange_pages: bool = True
    autotune: str = "benchmark"  #: @triton.autotune: "benchmark" every config, or take the "first"
    record: Optional[str] = None  #: a folder: write every launch there as a CLI bundle
    #: tensors launches may reach without receiving them (through a pointer table): a sequence
    #: of tensors/arrays, or a dict name -> tensor (names appear in faults and hazards)
    reachable: tuple = field(default=(), compare=False)

    def check(self) -> "Options":
        if not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"ttinterp: threads must be an int >= 0, not {self.threads!r}")
        if self.hazards not in _HAZARDS:
            raise ValueError(f"ttinterp: hazards must be one of {_HAZARDS}, not {self.hazards!r}")
        if self.bounds not in _BOUNDS:
            raise ValueError(f"ttinterp: bounds must be one of {_BOUNDS}, not {self.bounds!r}")
        if not isinstance(self.max_steps, int) or self.max_steps < 0:
            raise ValueError(f"ttinterp: max_steps must be an int >= 0, not {self.max_steps!r}")
        if not isinstance(self.exchange_pages, bool):
            raise ValueError(f"ttinterp: exchange_pages must be a bool, not {self.exchange_pages!r}")
        if self.autotune not in _AUTOTUNE:
            raise ValueError(f"ttinterp: autotune must be one of {_AUTOTUNE}, not {self.autotune!r}")
        return self

    def normalized(self) -> "Options":
        """With ``reachable`` as a tuple of (name, tensor) pairs."""
        r = self.reachable
        if r is None:
            r = ()
        if isinstance(r, dict):
            pairs = tuple((str(k), v) for k, v in r.items())
        elif isinstance(r, (list, tuple)):
            pairs = tuple(p if _named(p) else (f"reachable[{i}]", p) for i, p in enumerate(r))
        else:
            raise TypeError(f"ttinterp: reachable must be a list or tuple of tensors or a dict "
                            f"name -> tensor, not {type(r).__name__}")
        return replace(self, reachable=pairs)


def _named(p) -> bool:
    # Already normalized (an inner options() re-normalizes its outer one's tuple).
    return isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)


def _env_bool(name: str, value: str) -> bool:
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"ttinterp: {name}={value!r} is not a boolean (1/0, true/false, yes/no, on/off)")


def _env_int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"ttinterp: {name}={value!r} is not an integer") from None


_ENVIRONMENT = ("TTINTERP_THREADS", "TTINTERP_HAZARDS", "TTINTERP_BOUNDS", "TTINTERP_MAX_STEPS",
                "TTINTERP_IN_PLACE", "TTINTERP_EXCHANGE_PAGES", "TTINTERP_AUTOTUNE", "TTINTERP_RECORD")
_RAW_ENVIRONMENT = tuple(map(os.fsencode, _ENVIRONMENT))
_parsed = (None, None)  # (the variables' values, the options they give)


def _from_environment() -> Options:
    # Parsed again only when a variable changed: a cached launch reads eight variables, no more.
    global _parsed
    raw = getattr(os.environ, "_data", None)  # CPython's bytes dict behind os.environ: no encoding
    values = tuple(map(raw.get, _RAW_ENVIRONMENT)) if isinstance(raw, dict) else \
        tuple(map(os.environ.get, _ENVIRONMENT))
    if values != _parsed[0]:
        _parsed = (values, _parse_environment().check())
    return _parsed[1]


def _parse_environment() -> Options:
    env = os.environ
    o = Options()
    if "TTINTERP_THREADS" in env:
        o = replace(o, threads=_env_int("TTINTERP_THREADS", env["TTINTERP_THREADS"]))
    if "TTINTERP_HAZARDS" in env:
        value = env["TTINTERP_HAZARDS"].lower()
        value = {"1": "error", "true": "error", "on": "error", "0": "off", "": "off"}.get(value, value)
        o = replace(o, hazards=value)
    if "TTINTERP_BOUNDS" in env:
        o = replace(o, bounds=env["TTINTERP_BOUNDS"])
    if "TTINTERP_MAX_STEPS" in env:
        o = replace(o, max_steps=_env_int("TTINTERP_MAX_STEPS", env["TTINTERP_MAX_STEPS"]))
    if "TTINTERP_IN_PLACE" in env:
        o = replace(o, in_place=_env_bool("TTINTERP_IN_PLACE", env["TTINTERP_IN_PLACE"]))
    if "TTINTERP_EXCHANGE_PAGES" in env:
        o = replace(o, exchange_pages=_env_bool("TTINTERP_EXCHANGE_PAGES", env["TTINTERP_EXCHANGE_PAGES"]))
    if "TTINTERP_AUTOTUNE" in env:
        o = replace(o, autotune=env["TTINTERP_AUTOTUNE"])
    if env.get("TTINTERP_RECORD"):
        o = replace(o, record=env["TTINTERP_RECORD"])
    return o


_local = threading.local()
_forced = False


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current() -> Options:
    """The options a launch made now uses."""
    stack = _stack()
    return stack[-1] if stack else _from_environment()


@contextlib.contextmanager
def options(**overrides) -> Iterator[Options]:
    names = {f.name for f in fields(Options)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(f"ttinterp.options: unknown option(s) {', '.join(unknown)}; "
                        f"known: {', '.join(sorted(names))}")
    chosen = replace(current(), **overrides).check().normalized()
    _stack().append(chosen)
    try:
        yield chosen
    finally:
        _stack().pop()


def forced() -> bool:
    return _forced or os.environ.get("TRITON_DEFAULT_BACKEND") == "ttinterp"


def set_forced(value: bool) -> None:
    global _forced
    _forced = value
