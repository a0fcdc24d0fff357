"""The memory model through Python: aliasing arguments, views of one storage, transactional faults."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import ttinterp
from conftest import needs_tl_atomic_load


@triton.jit
def aliasing_test(a_ptr, b_ptr):
    # Triton issue #5791: a store through one argument must be seen through the other.
    tl.store(a_ptr, 1.0)
    tl.store(b_ptr, tl.load(a_ptr))


def test_issue_5791_same_tensor_twice():
    buffer = torch.zeros(1)
    aliasing_test[(1, )](buffer, buffer)
    assert buffer.item() == 1.0


@triton.jit
def shift_copy(src, dst, n, BLOCK: tl.constexpr):
    # One program reads the whole block, then writes it: a sequential in-block memmove.
    i = tl.arange(0, BLOCK)
    v = tl.load(src + i, mask=i < n)
    tl.store(dst + i, v, mask=i < n)


def test_overlapping_views_of_one_storage():
    base = torch.arange(16, dtype=torch.float32)
    expected = base.clone()
    expected[2:14] = base[0:12].clone()  # the block is loaded before it is stored
    shift_copy[(1, )](base[0:12], base[2:14], 12, BLOCK=16)
    assert torch.equal(base, expected)


def test_distinct_arrays_overlapping_in_memory():
    # Two numpy arrays made from one buffer by frombuffer (no common ndarray base): their bytes
    # overlap, so they form one region with one shadow.
    raw = bytearray(np.arange(16, dtype=np.int32).tobytes())
    a = np.frombuffer(raw, dtype=np.int32, count=12, offset=0)
    b = np.frombuffer(raw, dtype=np.int32, count=12, offset=8)
    expected = np.arange(16, dtype=np.int32)
    expected[2:14] = np.arange(12)
    shift_copy[(1, )](a, b, 12, BLOCK=16)
    np.testing.assert_array_equal(np.frombuffer(raw, dtype=np.int32), expected)


@triton.jit
def scale_in_place(x_ptr, n, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) * factor, mask=i < n)


def test_in_place_kernel_on_a_strided_view():
    x = torch.arange(40, dtype=torch.float32).reshape(4, 10)
    column = x[:, 3].contiguous()  # a copy: the kernel must not touch x
    scale_in_place[(1, )](column, 4, 2.5, BLOCK=8)
    assert torch.equal(column, torch.tensor([3.0, 13.0, 23.0, 33.0]) * 2.5)
    assert torch.equal(x, torch.arange(40, dtype=torch.float32).reshape(4, 10))


def test_tensor_at_a_storage_offset():
    storage = torch.arange(10, dtype=torch.float32)
    tail = storage[6:]
    scale_in_place[(1, )](tail, 4, -1.0, BLOCK=4)
    assert torch.equal(storage, torch.tensor([0, 1, 2, 3, 4, 5, -6, -7, -8, -9], dtype=torch.float32))


@triton.jit
def gather_write(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, pid + 0.0, mask=i < n)
    j = tl.load(idx_ptr + i, mask=i < n)
    tl.store(out_ptr + i, tl.load(x_ptr + j, mask=i < n), mask=i < n)


def test_out_of_bounds_is_a_kernel_fault_and_changes_nothing():
    x = torch.arange(64, dtype=torch.float32)
    idx = torch.arange(64, dtype=torch.int32)
    idx[37] = 1000  # program 2 (BLOCK 16), lane 5, reads past x's storage
    out = torch.full((64, ), -1.0)
    with pytest.raises(ttinterp.KernelFault) as info:
        gather_write[(4, )](x, idx, out, 64, BLOCK=16)
    fault = info.value
    assert isinstance(fault, RuntimeError)
    assert fault.kind == "out_of_bounds"
    assert fault.program == (2, 0, 0)
    assert fault.element == 5
    assert fault.op == "tt.load"
    # The load of x[j] is on the last line of gather_write.
    lines, first = __import__("inspect").getsourcelines(gather_write.fn)
    load_line = first + next(k for k, text in enumerate(lines) if "x_ptr + j" in text)
    assert fault.location.startswith(f"{__file__}:{load_line}:")
    # Programs 0 and 1 finished and program 2 stored its pid first: none of it reached `out`.
    assert torch.equal(out, torch.full((64, ), -1.0))


def test_bounds_are_the_whole_storage():
    # Reading past a view's end but inside its storage is what a GPU allows: no fault.
    storage = torch.arange(8, dtype=torch.float32)
    head = storage[:4]
    out = torch.zeros(8)
    shift_copy[(1, )](head, out, 8, BLOCK=8)
    assert torch.equal(out, storage)


def test_gpu_tensor_is_a_type_error_naming_the_parameter():
    x = torch.empty(4, device="meta")
    out = torch.zeros(4)
    with pytest.raises(TypeError, match="'src'.*meta"):
        shift_copy[(1, )](x, out, 4, BLOCK=4)


def test_wrong_argument_count_is_a_type_error():
    with pytest.raises(TypeError):
        shift_copy[(1, )](torch.zeros(4), 4, BLOCK=4)


def test_non_tensor_for_a_pointer_is_a_type_error():
    # Triton's own binder refuses it, before anything runs.
    out = torch.zeros(4)
    with pytest.raises(TypeError):
        shift_copy[(1, )]([1.0, 2.0], out, 2, BLOCK=4)
    assert torch.equal(out, torch.zeros(4))


@triton.jit
def racy_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # Every program read-modify-writes out[0] with a plain load and store: a race on a GPU.
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    total = tl.load(out_ptr) + tl.sum(tl.load(x_ptr + i))
    tl.store(out_ptr, total)


def test_race_found_by_hazard_checking():
    x = torch.ones(32)
    out = torch.zeros(1)
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            racy_sum[(4, )](x, out, BLOCK=8)
    hazards = info.value.hazards
    assert hazards
    h = hazards[0]
    assert h.first_program != h.second_program
    assert "out_ptr" in h.arguments
    assert h.kind in ("read-after-write", "write-after-read", "write-after-write")
    assert "test_memory.py" in h.first_location and "test_memory.py" in h.second_location
    # Programs run in order, so the result is the sequential sum; the race is what is reported.
    assert out.item() == 32.0


def test_race_as_a_warning():
    x = torch.ones(32)
    out = torch.zeros(1)
    with ttinterp.options(hazards="warn"):
        with pytest.warns(ttinterp.HazardWarning):
            racy_sum[(4, )](x, out, BLOCK=8)


@triton.jit
def message_through_a_flag(data_ptr, flag_ptr, out_ptr, VOLATILE: tl.constexpr):
    # Program 0 writes the data and raises the flag; program 1 waits for the flag, then reads.
    if tl.program_id(0) == 0:
        tl.store(data_ptr, 42.0)
        tl.atomic_xchg(flag_ptr, 1)
    else:
        if VOLATILE:
            while tl.load(flag_ptr, volatile=True) == 0:
                pass
        else:
            while tl.atomic_load(flag_ptr, sem="acquire") == 0:
                pass
        tl.store(out_ptr, tl.load(data_ptr))


@needs_tl_atomic_load
def test_a_flag_read_with_acquire_orders_the_data_a_volatile_load_does_not():
    data, out = torch.zeros(1), torch.zeros(1)
    flag = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        message_through_a_flag[(2, )](data, flag, out, VOLATILE=False)
    assert out.item() == 42.0
    flag.zero_()
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            message_through_a_flag[(2, )](data, flag, out, VOLATILE=True)
    # The flag itself (a plain load of an atomic's write) and the data behind it both race.
    found = {(h.arguments[0], h.kind, h.first_op, h.second_op) for h in info.value.hazards}
    assert found == {("flag_ptr", "read-after-write", "tt.atomic_rmw", "tt.load"),
                     ("data_ptr", "read-after-write", "tt.store", "tt.load")}


@triton.jit
def plain_flag_then_cas(flag_ptr, out_ptr, FLAG: tl.constexpr):
    # Program 0 sets the flag with a plain store; program 1 compare-and-swaps it.
    if tl.program_id(0) == 0:
        tl.store(flag_ptr, FLAG)
    else:
        tl.store(out_ptr, tl.atomic_cas(flag_ptr, 0, 1))


@pytest.mark.parametrize("flag", [0, 5])
def test_a_compare_and_swap_races_with_a_plain_store_whether_it_swaps_or_not(flag):
    # Swapping, it writes the flag (write-after-write); failing, it only reads it, as an atomic
    # load does (read-after-write). Either way nothing orders it after the plain store.
    out = torch.full((1, ), -1, dtype=torch.int32)
    flags = torch.full((1, ), 9, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            plain_flag_then_cas[(2, )](flags, out, FLAG=flag)
    h = info.value.hazards[0]
    kind = "write-after-write" if flag == 0 else "read-after-write"
    assert (h.kind, h.first_op, h.second_op) == (kind, "tt.store", "tt.atomic_cas")
    assert out.item() == flag  # the old contents, swapped or not
    assert flags.item() == (1 if flag == 0 else flag)


@triton.jit
def locked_total(x_ptr, out_ptr, lock_ptr, BLOCK: tl.constexpr, UNLOCK: tl.constexpr):
    # racy_sum's read-modify-write of out[0], behind a spin lock.
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + i))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr, tl.load(out_ptr) + partial)
    tl.atomic_xchg(lock_ptr, 0, sem=UNLOCK)


def test_a_lock_orders_the_accesses_it_guards():
    # Each unlock releases what its program did; the next program's compare-and-swap reads the
    # unlocked value and acquires it: every access to out[0] is ordered, no hazard.
    x = torch.ones(32)
    out = torch.zeros(1)
    lock = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        locked_total[(4, )](x, out, lock, BLOCK=8, UNLOCK="release")
    assert out.item() == 32.0
    assert lock.item() == 0


def test_a_lock_unlocked_relaxed_orders_nothing():
    x = torch.ones(32)
    out = torch.zeros(1)
    lock = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            locked_total[(4, )](x, out, lock, BLOCK=8, UNLOCK="relaxed")
    h = info.value.hazards[0]
    assert (h.kind, h.first_program, h.second_program) == ("read-after-write", (0, 0, 0), (1, 0, 0))
    assert "out_ptr" in h.arguments
    assert out.item() == 32.0  # programs ran in order; the race is what is reported


@triton.jit
def count_then_read(data_ptr, counter_ptr, out_ptr, LOOK: tl.constexpr):
    # Program 0 stores data, then counts itself (acq_rel); program 1 counts itself, then
    # reads the data, with or without looking at the count.
    if tl.program_id(0) == 0:
        tl.store(data_ptr, 7.0)
        tl.atomic_add(counter_ptr, 1)
    else:
        seen = tl.atomic_add(counter_ptr, 1)
        if LOOK:
            if seen == 1:
                tl.store(out_ptr, tl.load(data_ptr))
        else:
            tl.store(out_ptr, tl.load(data_ptr))


def test_an_acquire_orders_only_where_the_kernel_looks_at_its_value():
    # Looking: program 1 reads the data only if program 0 had counted, so only after its
    # release. Not looking: the two read-modify-writes could come in either order on a GPU,
    # and program 1 could read the data before it is written: a hazard.
    data, out = torch.zeros(1), torch.zeros(1)
    counter = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        count_then_read[(2, )](data, counter, out, LOOK=True)
    assert (data.item(), out.item(), counter.item()) == (7.0, 7.0, 2)
    counter.zero_()
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            count_then_read[(2, )](data, counter, out, LOOK=False)
    h = info.value.hazards[0]
    assert (h.kind, h.first_op, h.second_op) == ("read-after-write", "tt.store", "tt.load")
    assert "data_ptr" in h.arguments


@triton.jit
def sum_by_the_last_program(x_ptr, partial_ptr, counter_ptr, total_ptr, programs,
                            BLOCK: tl.constexpr):
    # Each program leaves its block's sum, then counts itself; the program that counts last
    # adds every partial sum (a "last block" reduction, as split-K kernels finish).
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + i)))
    if tl.atomic_add(counter_ptr, 1) == programs - 1:
        total = 0.0
        for k in range(0, programs):
            total += tl.load(partial_ptr + k)
        tl.store(total_ptr, total)


def test_the_last_program_reads_every_partial_in_order_after_the_count():
    # The counter's read-modify-writes (acq_rel) pass every program's release on to the next,
    # so the last one's reads come after every partial's store: no hazard, in any order.
    programs = 64
    x = torch.arange(programs * 16, dtype=torch.float32) % 7  # small integers: exact sums
    partial = torch.empty(programs)
    counter = torch.zeros(1, dtype=torch.int32)
    total = torch.empty(1)
    with ttinterp.options(hazards="error"):
        sum_by_the_last_program[(programs, )](x, partial, counter, total, programs, BLOCK=16)
    assert total.item() == x.sum().item()
    assert torch.equal(partial, x.reshape(programs, 16).sum(1))
    assert counter.item() == programs


def test_step_limit_stops_a_runaway_loop():
    @triton.jit
    def count_until(flag_ptr, out_ptr):
        # The count changes every iteration, so this is no wait for another program.
        i = 0
        while tl.load(flag_ptr, volatile=True) == 0:
            i += 1
        tl.store(out_ptr, i)

    flag = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(max_steps=10_000):
        with pytest.raises(ttinterp.KernelFault) as info:
            count_until[(1, )](flag, out)
    assert info.value.kind == "step_limit"


@triton.jit
def spin_on_flag(flag_ptr):
    while tl.load(flag_ptr, volatile=True) == 0:
        pass


def test_a_wait_no_program_ends_is_a_spin_wait_fault_not_a_hang():
    flag = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(threads=1):
        with pytest.raises(ttinterp.KernelFault) as info:
            spin_on_flag[(3, )](flag)
    assert info.value.kind == "spin_wait"
    assert "3 program(s) wait" in str(info.value)
    assert "test_memory.py" in info.value.location


@triton.jit
def wait_for_the_last_program(flag_ptr, out_ptr, LAST: tl.constexpr):
    # Programs before the last one wait for a flag that the last one sets: on a GPU they
    # are co-resident; here they wait while the launch runs the others.
    pid = tl.program_id(0)
    if pid == LAST:
        tl.atomic_xchg(flag_ptr, 1)
    else:
        while tl.atomic_load(flag_ptr) == 0:
            pass
    tl.store(out_ptr + pid, pid + 10 * tl.atomic_load(flag_ptr))


@needs_tl_atomic_load
@pytest.mark.parametrize("threads", [1, 2])
def test_programs_waiting_for_a_later_program_complete(threads):
    flag = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(5, dtype=torch.int32)
    with ttinterp.options(threads=threads):
        wait_for_the_last_program[(5, )](flag, out, LAST=4)
    assert out.tolist() == [10, 11, 12, 13, 14]


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="unknown option"):
        with ttinterp.options(thread=2):
            pass
    with pytest.raises(ValueError):
        with ttinterp.options(bounds="nowhere"):
            pass


@triton.jit
def atomic_total(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + i)))


@triton.jit
def atomic_then_plain_store(out_ptr):
    if tl.program_id(0) == 0:
        tl.atomic_add(out_ptr, 1.0)
    else:
        tl.store(out_ptr, 5.0)


def test_atomics_on_one_address_are_not_hazards_among_themselves():
    x = torch.ones(48)
    out = torch.zeros(1)
    with ttinterp.options(hazards="error"):
        atomic_total[(3, )](x, out, BLOCK=16)
    assert out.item() == 48.0


def test_an_atomic_and_a_plain_store_of_another_program_race():
    out = torch.zeros(1)
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            atomic_then_plain_store[(2, )](out)
    h = info.value.hazards[0]
    assert h.kind == "write-after-write"
    assert (h.first_op, h.second_op) == ("tt.atomic_rmw", "tt.store")


@pytest.mark.parametrize("sharing", ["private", "shared"])
def test_output_in_memory_never_touched_is_right_and_a_fault_leaves_it_zero(sharing):
    # A wrapper's fresh output (torch.empty, np.empty of megabytes) is pages nothing has touched;
    # private ones are written in place and discarded on a fault, shared ones get a shadow.
    # Either way the results, and the bytes after a fault, are the same.
    import mmap
    n, offset = (1 << 20) + 5, 100
    flags = mmap.MAP_ANONYMOUS | (mmap.MAP_PRIVATE if sharing == "private" else mmap.MAP_SHARED)
    x = np.arange(n, dtype=np.float32)
    for faulting in (False, True):
        memory = mmap.mmap(-1, offset + 4 * n + 4096, flags=flags)
        out = np.frombuffer(memory, dtype=np.float32, count=n, offset=offset)
        idx = np.arange(n, dtype=np.int32)
        if faulting:
            idx[n - 2] = 1 << 30  # the last program reads far past x, after every other stored
            with pytest.raises(ttinterp.KernelFault) as info:
                gather_write[(triton.cdiv(n, 4096), )](x, idx, out, n, BLOCK=4096)
            assert info.value.program == (n // 4096, 0, 0)
            np.testing.assert_array_equal(out, np.zeros(n, dtype=np.float32))
        else:
            gather_write[(triton.cdiv(n, 4096), )](x, idx, out, n, BLOCK=4096)
            np.testing.assert_array_equal(out, x)
        assert memory[:offset] == bytes(offset)  # the bytes around it were not touched
        assert memory[offset + 4 * n:] == bytes(len(memory) - offset - 4 * n)


def _mapping_starts(address: int) -> bool:
    """Whether a mapping of this process starts at `address` (/proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        return any(int(line.split("-", 1)[0], 16) == address for line in maps)


@pytest.mark.parametrize("exchange", [True, False])
def test_an_output_written_whole_is_right_whether_its_pages_are_exchanged_or_copied(exchange):
    # At write-back the pages a launch wrote whole may become the tensor's own pages instead of
    # being copied into it (exchange_pages, the default); the bytes around them are copied.
    import platform
    n = (1 << 20) + 5  # 4 MiB and 20 bytes: more than the 2 MiB an exchange needs
    x = torch.arange(n, dtype=torch.float32)
    idx = torch.arange(n, dtype=torch.int32)
    out = torch.full((n, ), -1.0)  # in memory already: written back through a shadow
    with ttinterp.options(exchange_pages=exchange):
        gather_write[(triton.cdiv(n, 4096), )](x, idx, out, n, BLOCK=4096)
    assert torch.equal(out, x)
    release = tuple(int(p) for p in platform.release().split(".")[:2])
    if exchange and release >= (6, 11):  # below 16 MiB it needs PROCMAP_QUERY to check the memory
        # The tensor's first whole page now begins a mapping: the pages moved in.
        assert _mapping_starts((out.data_ptr() + 4095) // 4096 * 4096)


def test_memory_another_mapping_shares_sees_every_written_byte():
    # Shared memory is never exchanged: the other mapping would keep the old pages.
    import mmap
    import os
    n = (1 << 20) + 5
    fd = os.memfd_create("ttinterp-test")
    try:
        os.ftruncate(fd, 4 * n)
        mine, theirs = (mmap.mmap(fd, 4 * n, flags=mmap.MAP_SHARED) for _ in range(2))
        out = np.frombuffer(mine, dtype=np.float32)
        out[:] = -1.0
        x = np.arange(n, dtype=np.float32)
        gather_write[(triton.cdiv(n, 4096), )](x, np.arange(n, dtype=np.int32), out, n, BLOCK=4096)
        np.testing.assert_array_equal(np.frombuffer(theirs, dtype=np.float32), x)
        del out
        mine.close()
        theirs.close()
    finally:
        os.close(fd)


def test_exchange_pages_must_be_a_bool():
    with pytest.raises(ValueError, match="exchange_pages"):
        with ttinterp.options(exchange_pages="yes"):
            pass


@triton.jit
def add_one_to_rows(x_ptr, rows_ptr, row_len, BLOCK: tl.constexpr):
    row = tl.load(rows_ptr + tl.program_id(0))
    i = tl.arange(0, BLOCK)
    p = x_ptr + row * row_len + i
    tl.store(p, tl.load(p, mask=i < row_len) + 1.0, mask=i < row_len)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_few_rows_of_a_large_tensor_updated_and_a_fault_leaves_it_as_it_was(threads):
    # 16 MB read and written: copied into its shadow only where the programs touch it.
    x = torch.randn(4096, 1000)
    rows = torch.tensor([5, 4000, 17, 2048, 4095, 0], dtype=torch.int32)
    expected = x.clone()
    expected[rows.long()] += 1.0
    with ttinterp.options(threads=threads):
        add_one_to_rows[(len(rows), )](x, rows, 1000, BLOCK=1024)
    assert torch.equal(x, expected)
    before = x.clone()
    rows[-1] = 1 << 20  # the last program reads far past x, after the others stored
    with ttinterp.options(threads=threads), pytest.raises(ttinterp.KernelFault):
        add_one_to_rows[(len(rows), )](x, rows, 1000, BLOCK=1024)
    assert torch.equal(x, before)


@triton.jit
def store_through_one_view_read_through_the_other(a_ptr, b_ptr, row_len, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < row_len
    tl.store(b_ptr + i, tl.full((BLOCK, ), 7.0, tl.float32), mask=m)  # row 0 of b: row 2048 of a
    tl.store(a_ptr + 10 * row_len + i, tl.load(a_ptr + 2048 * row_len + i, mask=m), mask=m)


def test_views_of_a_large_tensor_see_each_others_stores():
    x = torch.randn(4096, 1000)
    expected = x.clone()
    expected[2048] = 7.0
    expected[10] = 7.0
    store_through_one_view_read_through_the_other[(1, )](x, x[2048:], 1000, BLOCK=1024)
    assert torch.equal(x, expected)


@triton.jit
def scatter_add_rows(grad_ptr, index_ptr, src_ptr, row_len, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.load(index_ptr + pid)
    i = tl.arange(0, BLOCK)
    m = i < row_len
    tl.atomic_add(grad_ptr + row * row_len + i, tl.load(src_ptr + pid * row_len + i, mask=m), mask=m)


@pytest.mark.parametrize("threads", [1, 2])
def test_atomic_adds_into_a_few_rows_of_a_large_tensor(threads):
    # An embedding gradient's shape: atomics into rows of a 16 MB tensor, some rows twice.
    grad = torch.randint(-50, 50, (4096, 1000)).float()
    index = torch.tensor([3, 4000, 3, 77, 4000, 3], dtype=torch.int32)
    src = torch.randint(-50, 50, (len(index), 1000)).float()  # sums of small integers: exact
    expected = grad.index_add(0, index.long(), src)
    with ttinterp.options(threads=threads):
        scatter_add_rows[(len(index), )](grad, index, src, 1000, BLOCK=1024)
    assert torch.equal(grad, expected)


class _StridedWrapper:
    """What FlagGems' StridedBuffer is to Triton: a dtype, a data_ptr() inside a tensor, and the
    tensor's untyped_storage(); Triton's launcher takes any object with data_ptr()."""

    def __init__(self, base, offset):
        self._base = base
        self.dtype = base.dtype
        self._data_ptr = base.data_ptr() + offset * base.element_size()

    def data_ptr(self):
        return self._data_ptr

    def untyped_storage(self):
        return self._base.untyped_storage()


class _AddressOnly:
    """FlagGems' TypedPtr: an address and a dtype, nothing to bound it."""

    def __init__(self, ptr, dtype):
        self.ptr, self.dtype = ptr, dtype

    def data_ptr(self):
        return self.ptr

    def untyped_storage(self):
        return self


def test_a_wrapper_with_a_storage_is_bound_as_that_storage():
    base = torch.arange(16, dtype=torch.float32)
    expected = base.clone()
    expected[2:14] = base[0:12].clone()
    # The wrapper is a view of base's storage at element 2: the two arguments overlap, form one
    # region, and the copy is the same in-block memmove as with two tensor views.
    shift_copy[(1, )](base, _StridedWrapper(base, 2), 12, BLOCK=16)
    assert torch.equal(base, expected)
    # Its bounds are the storage's: reading past the storage's end is a fault, not a crash.
    out = torch.zeros(8)
    with pytest.raises(ttinterp.KernelFault) as info:
        shift_copy[(1, )](_StridedWrapper(base, 12), out, 8, BLOCK=8)
    assert info.value.kind == "out_of_bounds"
    assert torch.equal(out, torch.zeros(8))


def test_an_address_with_no_storage_is_a_type_error_saying_what_is_missing():
    x, out = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    with pytest.raises(TypeError, match=r"untyped_storage\(\).*nbytes\(\)"):
        shift_copy[(1, )](_AddressOnly(x.data_ptr(), x.dtype), out, 8, BLOCK=8)
    assert torch.equal(out, torch.zeros(8))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("exchange", [True, False])
def test_a_large_tensor_scaled_in_place_whole_and_in_part(threads, exchange):
    # Read and written: copied in as the programs touch it, then written back whole pages by
    # exchange (or copied), and the part of a view's storage outside the view left as it was.
    x = torch.randn(4 << 20)
    expected = x * 3.0
    y = torch.randn(3 << 20)
    expected_y = y.clone()
    expected_y[12345:12345 + 1000000] *= 2.0
    with ttinterp.options(threads=threads, exchange_pages=exchange):
        scale_in_place[(triton.cdiv(x.numel(), 4096), )](x, x.numel(), 3.0, BLOCK=4096)
        scale_in_place[(triton.cdiv(1000000, 4096), )](y[12345:], 1000000, 2.0, BLOCK=4096)
    assert torch.equal(x, expected)
    assert torch.equal(y, expected_y)
