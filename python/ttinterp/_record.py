"""Record and replay: every launch made under ``ttinterp.record(DIR)`` or ``TTINTERP_RECORD=DIR``
is written, just before it runs, as a bundle that the command line replays bit for bit:

    DIR/<kernel>-<NNNN>/kernel.ttir      the kernel as ttinterp ran it
    DIR/<kernel>-<NNNN>/<buffer>.npy     each root buffer's bytes before the launch
    DIR/<kernel>-<NNNN>/spec.json        buffers, grid and arguments (docs/spec.md)

    ttinterp run DIR/<kernel>-<NNNN>/spec.json --out OUT

NNNN counts up across the folder, whatever the kernel, so the bundles sort in launch order.

How a launch becomes a spec:

* Buffers: one root buffer per storage (a torch storage, a numpy array's base allocation);
  storages whose bytes overlap share one root spanning their union, so the replay forms the same
  storage regions as the launch did. A root takes the pointee dtype of the arguments pointing into
  it when they all agree on one and it tiles the root evenly from each argument's first element;
  otherwise the root is ``i8`` and each (dtype, byte phase) used gets an ``alias_of`` buffer.
  Roots are named after the first parameter that points into them; aliases are
  ``<root>.<dtype>`` (``<root>.<dtype>.<phase>`` when the elements start ``phase`` bytes in).
* Pointer arguments: a view from the tensor's first element to the end of its storage,
  ``{"view": buffer, "offset": ..., "shape": [elements to the storage's end], "strides": [1]}``.
* Reachable tensors (``ttinterp.options(reachable=...)``): roots like the arguments' (named after
  the tensor's name when no argument reaches them), listed in the launch's ``reachable``.
* Pointer tables: a root that is i64 (or reached by no argument) and holds nothing but addresses
  inside the launch's roots is written as an ``addresses`` init naming the buffer and element of
  each, so that the replay's table holds the replay's addresses. A root holding addresses of
  reachable tensors among other values cannot be a spec's table: recording it is an error.
* Tensor descriptors: ``{"tensordesc": buffer, "offset", "shape", "strides"}`` from the shape and
  stride values the launch passed; the spec's one argument stands for the descriptor parameter
  and the 2 x rank shape and stride parameters after it.
* Scalars: ``{"<parameter dtype>": value}`` holding the value the interpreter used: integers
  wrapped to the parameter's width, floats rounded as the interpreter rounds parameters (through
  f32 for the narrow formats), out-of-range floats as ``"inf"``.

Where a replay differs from the launch:

* Bounds start at the tensor's first element. A Python launch lets a pointer reach its whole
  storage, also the bytes *before* the tensor's first element (a view's storage offset); the CLI
  bounds a view argument by the view's extent, so a kernel that reads or writes before the
  tensor's first element (x_ptr - 1 on a slice) runs in Python but is an out_of_bounds fault in
  the replay.
* Launch options are not part of a spec: replay a launch recorded under ``bounds="region"``,
  ``hazards`` or ``in_place`` with the matching ``--bounds region``, ``--hazards`` or
  ``--in-place``; ``threads`` only changes the order programs run in.
* A NaN float scalar is replayed as the quiet NaN ``"nan"`` (its sign and payload are lost).
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import re

import numpy as np

#: Bytes per element of each dtype a buffer may have.
_SIZE = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8,
         "f8E4M3FN": 1, "f8E4M3FNUZ": 1, "f8E5M2": 1, "f8E5M2FNUZ": 1}
#: How a root of each dtype is saved: as ``--out`` writes it and the spec's npy init reads it
#: (bf16 and fp8 as raw bits). No root is ever i1: i1 arguments get an alias of an i8 root, so
#: the saved bytes are never reinterpreted as booleans.
_NPY = {"i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8", "f16": "<f2", "bf16": "<u2",
        "f32": "<f4", "f64": "<f8", "f8E4M3FN": "|u1", "f8E4M3FNUZ": "|u1", "f8E5M2": "|u1",
        "f8E5M2FNUZ": "|u1"}
_INT_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
#: The smallest magnitude each narrow format rounds to infinity (or NaN), rounding to nearest
#: even: its largest finite value plus half an ulp. The spec refuses such finite values, while
#: the interpreter rounds them, so the recorder writes them as "inf".
_OVERFLOW = {"f16": 65520.0, "bf16": (2 - 2**-8) * 2.0**127, "f8E5M2": 61440.0,
             "f8E5M2FNUZ": 61440.0, "f8E4M3FN": 464.0, "f8E4M3FNUZ": 248.0}


def _file_name(name: str) -> str:
    """`name` as a buffer or folder name: letters, digits, '_', '-', '.', not starting with '.',
    short enough to leave room for suffixes under the spec's 128 characters."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".")[:100]
    return cleaned or "arg"


def _new_bundle(folder: str, kernel_name: str) -> str:
    """Creates folder/<kernel>-<NNNN> with NNNN one past the highest number in the folder.

    mkdir is atomic, so processes recording into one folder never share a bundle: a loser of
    the race takes the next number."""
    os.makedirs(folder, exist_ok=True)
    numbered = re.compile(r"-(\d+)$")
    taken = [int(m.group(1)) for entry in os.listdir(folder) for m in [numbered.search(entry)] if m]
    number = max(taken, default=-1) + 1
    while True:
        bundle = os.path.join(folder, f"{_file_name(kernel_name)}-{number:04d}")
        try:
            os.mkdir(bundle)
            return bundle
        except FileExistsError:
            number += 1


def _read_bytes(address: int, nbytes: int) -> np.ndarray:
    """The bytes at `address` as a uint8 array over the memory itself (torch and numpy alike)."""
    if nbytes == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer((ctypes.c_char * nbytes).from_address(address), dtype=np.uint8)


def _scalar(value, dtype: str):
    """The JSON value of a scalar argument: what the interpreter makes of the Python value."""
    bits = _INT_BITS.get(dtype)
    if bits is not None:
        if bits == 1:
            return int(value) & 1
        wrapped = int(value) & ((1 << bits) - 1)
        return wrapped - (1 << bits) if wrapped >> (bits - 1) else wrapped
    x = float(value)
    if dtype != "f64":
        # The interpreter converts a float parameter to f32 first, then to a narrower format.
        with np.errstate(over="ignore"):
            x = float(np.float32(x))
    if math.isnan(x):
        return "nan"
    if math.isinf(x) or abs(x) >= _OVERFLOW.get(dtype, math.inf):
        return "inf" if x > 0 else "-inf"
    return x


class _Root:
    """A root buffer: a run of bytes covering one or more overlapping storages."""

    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi
        self.name = ""
        self.dtype = "i8"


def _merge_storages(storages):
    """One _Root per set of storages whose bytes overlap; returns {storage: root}.

    An empty storage overlaps nothing and gets its own (empty) root."""
    root_of = {}
    nonempty = sorted(s for s in storages if s[1] > 0)
    current = None
    for start, nbytes in nonempty:
        if current is None or start >= current.hi:
            current = _Root(start, start + nbytes)
        current.hi = max(current.hi, start + nbytes)
        root_of[(start, nbytes)] = current
    for s in storages:
        if s[1] == 0:
            root_of[s] = _Root(s[0], s[0])
    return root_of


def record_launch(folder: str, kernel_name: str, ttir: str, parameters, grid, binding,
                  reachable=()) -> str:
    """Writes the launch about to run as a bundle in `folder`; returns the bundle's folder.

    `parameters`: the kernel's (name, "pointer"|"scalar", dtype, descriptor rank, access) in TTIR
    order; `binding`: the launch's _launch._Binding (pointers, scalars, pad_nan per pointer);
    `reachable`: (storage address, storage bytes, name) of each reachable tensor."""
    pointer_params = [p for p in parameters if p[1] == "pointer"]
    if len(pointer_params) != len(binding.pointers):
        raise ValueError(f"ttinterp: cannot record kernel '{kernel_name}': it has "
                         f"{len(pointer_params)} pointer parameters, the launch binds "
                         f"{len(binding.pointers)}")
    for name, _, dtype, _, _ in pointer_params:
        if dtype not in _SIZE:
            raise ValueError(f"ttinterp: cannot record kernel '{kernel_name}': parameter '{name}' "
                             f"points to {dtype}, which a spec buffer cannot hold")

    # Each pointer argument: (parameter dtype, kernel address, its storage).
    uses = [(dtype, address, (storage, nbytes))
            for (_, _, dtype, _, _), (address, storage, nbytes, _) in zip(pointer_params,
                                                                           binding.pointers)]
    reached = [((start, nbytes), name) for start, nbytes, name in reachable]
    storages = list(dict.fromkeys([storage for _, _, storage in uses] +
                                  [storage for storage, _ in reached]))
    root_of = _merge_storages(storages)

    # Roots in the order arguments first reach them, named after that argument.
    roots, taken_names = [], set()
    named = [(storage, arg_name) for (_, _, storage), (_, _, _, arg_name) in zip(uses, binding.pointers)]
    for storage, given in named + reached:
        root = root_of[storage]
        if root in roots:
            continue
        base = _file_name(given).replace(".", "_")  # '.' is left for alias names
        name, n = base, 2
        while name in taken_names:
            name, n = f"{base}-{n}", n + 1
        taken_names.add(name)
        root.name = name
        roots.append(root)
    reachable_roots = list(dict.fromkeys(root_of[storage] for storage, _ in reached))
    for root in roots:
        dtypes = {dtype for dtype, _, storage in uses if root_of[storage] is root}
        only = next(iter(dtypes)) if len(dtypes) == 1 else None
        if only is not None and only != "i1" and (root.hi - root.lo) % _SIZE[only] == 0 and all(
                (address - root.lo) % _SIZE[only] == 0
                for _, address, storage in uses if root_of[storage] is root):
            root.dtype = only

    tables = _pointer_tables(kernel_name, roots, root_of, uses, reachable_roots)
    buffers = {}
    for root in roots:
        buffers[root.name] = {"dtype": root.dtype,
                              "shape": [(root.hi - root.lo) // _SIZE[root.dtype]],
                              "init": {"npy": f"{root.name}.npy"}}

    def buffer_for(dtype: str, address: int, root: _Root):
        """(buffer name, its first byte) holding `dtype` elements at `address` in `root`."""
        if dtype == root.dtype:
            return root.name, root.lo
        size = _SIZE[dtype]
        phase = (address - root.lo) % size
        name = f"{root.name}.{dtype}" + (f".{phase}" if phase else "")
        buffers.setdefault(name, {"alias_of": root.name, "byte_offset": phase, "dtype": dtype,
                                  "shape": [(root.hi - root.lo - phase) // size]})
        return name, root.lo + phase

    args = []
    scalars = iter(binding.scalars)
    pointers = iter(zip(uses, binding.pad_nan))
    p = 0
    while p < len(parameters):
        name, kind, dtype, rank, _ = parameters[p]
        if kind == "scalar":
            args.append({dtype: _scalar(next(scalars), dtype)})
            p += 1
            continue
        (_, address, storage), pad_nan = next(pointers)
        start, nbytes = storage
        if not start <= address <= start + nbytes:
            raise ValueError(f"ttinterp: cannot record kernel '{kernel_name}': argument '{name}' "
                             f"points outside its storage")
        root = root_of[storage]
        buffer, first = buffer_for(dtype, address, root)
        size = _SIZE[dtype]
        offset = (address - first) // size
        if rank == 0:
            # The view ends where the storage does. Python bounds the argument by its whole
            # storage, the replay by the view: bytes before `address` fault only in the replay.
            args.append({"view": buffer, "offset": offset,
                         "shape": [(start + nbytes - address) // size], "strides": [1]})
            p += 1
            continue
        # Triton passes the descriptor's shape (i32 each) then strides (i64 each) after it.
        values = [int(next(scalars)) for _ in range(2 * rank)]
        desc = {"tensordesc": buffer, "offset": offset, "shape": values[:rank],
                "strides": values[rank:]}
        if pad_nan and dtype.startswith(("f", "bf")):
            desc["padding"] = "nan"
        args.append(desc)
        p += 1 + 2 * rank

    # Each table entry names its target's buffer: the root itself where the address falls on
    # one of its elements, else an i8 view of it.
    for table, targets in tables.items():
        entries = []
        for address, target in targets:
            dtype = target.dtype if (address - target.lo) % _SIZE[target.dtype] == 0 else "i8"
            buffer, first = buffer_for(dtype, address, target)
            offset = (address - first) // _SIZE[dtype]
            entries.append({"buffer": buffer, "offset": offset} if offset else {"buffer": buffer})
        buffers[table.name]["init"] = {"addresses": entries}

    bundle = _new_bundle(folder, kernel_name)
    with open(os.path.join(bundle, "kernel.ttir"), "w", encoding="utf-8") as f:
        f.write(ttir)
    for root in roots:
        if root in tables:
            continue  # filled with the replay's own addresses
        data = _read_bytes(root.lo, root.hi - root.lo).view(np.dtype(_NPY[root.dtype]))
        np.save(os.path.join(bundle, f"{root.name}.npy"), data)
    with open(os.path.join(bundle, "spec.json"), "w", encoding="utf-8") as f:
        f.write(_spec_text(buffers, kernel_name, [int(g) for g in grid], args,
                           [root.name for root in reachable_roots]))
    return bundle


def _pointer_tables(kernel_name: str, roots, root_of, uses, reachable_roots) -> dict:
    """{table root: [(address, target root) per element]} for the roots that are pointer tables.

    A table is a root of i64 elements (or of raw bytes no argument reaches: a reachable table
    of tables) whose every element is an address inside some root; its dtype becomes i64. Such a
    root that is no table but holds an address inside a reachable root cannot be replayed: the
    replay would load this process's address, in memory it does not have. (Roots of other types
    are not read as addresses: float data can look like one.)"""
    by_start = sorted((r for r in roots if r.hi > r.lo), key=lambda r: r.lo)
    starts = np.array([r.lo for r in by_start], dtype=np.uint64)
    ends = np.array([r.hi for r in by_start], dtype=np.uint64)
    reachable_at = np.array([r in reachable_roots for r in by_start], dtype=bool)
    argument_roots = {root_of[storage] for _, _, storage in uses}
    tables = {}
    for root in roots:
        size = root.hi - root.lo
        eligible = root.dtype == "i64" or (root.dtype == "i8" and root not in argument_roots)
        if not eligible or size == 0 or size % 8 or root.lo % 8:
            continue
        words = _read_bytes(root.lo, size).view("<u8")
        # Index of the root each word falls in, -1 for none (a vector pass: tables can be large).
        at = np.searchsorted(starts, words, side="right").astype(np.int64) - 1
        inside = (at >= 0) & (words < ends[np.maximum(at, 0)])
        at[~inside] = -1
        if bool(inside.all()):
            tables[root] = [(int(w), by_start[i]) for w, i in zip(words, at)]
            continue
        stray = at[inside & reachable_at[np.maximum(at, 0)]]
        if stray.size:
            raise ValueError(f"ttinterp: cannot record kernel '{kernel_name}': buffer '{root.name}' "
                             f"holds the address of reachable buffer '{by_start[stray[0]].name}' "
                             f"among values that are no addresses; a spec's pointer table holds "
                             f"addresses only")
    for table in tables:
        table.dtype = "i64"
    return tables


def _spec_text(buffers: dict, kernel_name: str, grid: list, args: list, reachable: list) -> str:
    """The spec as JSON with one buffer and one argument per line, for people to read."""
    dump = json.dumps
    lines = ",\n".join(f"    {dump(name)}: {dump(b)}" for name, b in buffers.items())
    arg_lines = ",\n".join(f"       {dump(a)}" for a in args)
    extra = f',\n     "reachable": {dump(reachable)}' if reachable else ""
    return (f'{{\n  "buffers": {{\n{lines}\n  }},\n'
            f'  "launches": [\n    {{"kernel": "kernel.ttir", "function": {dump(kernel_name)}, '
            f'"grid": {dump(grid)},\n     "args": [\n{arg_lines}\n     ]{extra}}}\n  ]\n}}\n')
