"""The exceptions and warnings ttinterp raises."""
from __future__ import annotations


class KernelFault(RuntimeError):
    """A launch stopped: out-of-bounds access, failed tl.device_assert, step limit, ...

    Nothing the launch stored reached the caller's tensors (launches are transactional).
    """

    def __init__(self, kernel, kind, message, location, op, program, element):
        self.kernel = kernel  #: the kernel's name
        self.kind = kind  #: "out_of_bounds", "assert", "step_limit", "donated_buffer", ...
        self.message = message  #: one line saying what went wrong
        self.location = location  #: the kernel's Python source location, "file.py:12:8"
        self.op = op  #: the TTIR op, e.g. "tt.load"
        self.program = tuple(program)  #: the faulting program's id (x, y, z)
        self.element = element  #: linear index of the faulting lane in the op's block, or None
        where = f" at {location}" if location else ""
        lane = f", element {element}" if element is not None else ""
        super().__init__(f"{kind} in {kernel}{where}, program {self.program}{lane} ({op}): {message}")


class Hazard:
    """One cross-program conflict: two programs touched the same bytes, one of them writing."""

    def __init__(self, d: dict):
        self.kind = d["kind"]  #: "read-after-write", "write-after-read", "write-after-write"
        self.first_program = tuple(d["first_program"])
        self.second_program = tuple(d["second_program"])
        self.arguments = list(d["arguments"])  #: parameters whose storage holds the bytes
        self.reachable = list(d.get("reachable", ()))  #: reachable tensors holding the bytes
        self.bytes = d["bytes"]
        self.first_op, self.first_location = d["first_op"], d["first_location"]
        self.second_op, self.second_location = d["second_op"], d["second_location"]

    def __str__(self):
        where = self.arguments + [f"reachable {r}" for r in self.reachable]
        return (f"{self.kind} on {self.bytes} bytes of {', '.join(where)}: program "
                f"{self.first_program} at {self.first_location} ({self.first_op}) then program "
                f"{self.second_program} at {self.second_location} ({self.second_op})")

    __repr__ = __str__


def _hazard_text(kernel, hazards, total):
    lines = [f"{len(hazards)} cross-program hazard(s) in {kernel} ({total} conflicting bytes):"]
    lines += [f"  {h}" for h in hazards]
    return "\n".join(lines)


class HazardError(RuntimeError):
    """Programs of one launch raced on memory (hazard checking on, ``hazards="error"``).

    The launch ran to completion and its results were written back, as on a GPU."""

    def __init__(self, kernel, hazards, total_bytes):
        self.kernel = kernel
        self.hazards = hazards  #: list of Hazard
        self.total_bytes = total_bytes
        super().__init__(_hazard_text(kernel, hazards, total_bytes))


class HazardWarning(RuntimeWarning):
    """As HazardError, as a warning (``hazards="warn"``)."""
