"""Atomic read-modify-write ops, many programs racing on few addresses plus one-program sequences.

Launched as atomics_kernel[(cdiv(n, BLOCK),)](keys, ivals, fvals, cnt, isum, fsum, bmax, bmin,
acc, old, xbuf, xold, ctr, tries, n, BLOCK=64) with n = 1000 (grid 16, the last block masked).

Every program (order-independent results, exact):
  * histogram: cnt[k] += 1 and isum[k] += ivals[i] (int32 tl.atomic_add), fsum[k] += fvals[i]
    (float32 tl.atomic_add; the fvals are multiples of 0.25 of magnitude < 64, so every partial
    sum is exact in float32 whatever the order), bmax[k] = max(bmax[k], ivals[i]) and
    bmin[k] = min(...) (signed int32 tl.atomic_max / tl.atomic_min), for k = keys[i] in [0, 8).
    Lanes of one atomic op often hit the same counter: each lane is a separate atomic update.
Program 0 only (deterministic: no other program touches these addresses):
  * old values: old[0, j] = tl.atomic_add(acc + j, 10 * j) (distinct addresses per lane, returns
    the initial acc[j]); old[1, j] = tl.atomic_add(acc + j, 1) returns acc[j] + 10 * j.
  * tl.atomic_xchg: xold[j] = xchg(xbuf + j, -j) returns the old xbuf[j]; xbuf[j] becomes -j.
  * tl.atomic_cas lock-free counter: 5 increments of the scalar ctr by compare-and-swap starting
    from a wrong guess (0) while ctr starts at 40, so the first CAS fails, returns 40, and the retry
    loop (scf.while) succeeds: ctr ends at 45; tries[0] = number of CAS calls = 6.
"""
import triton
import triton.language as tl


@triton.jit
def atomics_kernel(keys_ptr, ivals_ptr, fvals_ptr, cnt_ptr, isum_ptr, fsum_ptr, bmax_ptr, bmin_ptr,
                   acc_ptr, old_ptr, xbuf_ptr, xold_ptr, ctr_ptr, tries_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    k = tl.load(keys_ptr + offs, mask=mask, other=0)
    iv = tl.load(ivals_ptr + offs, mask=mask, other=0)
    fv = tl.load(fvals_ptr + offs, mask=mask, other=0.0)
    ones = tl.full([BLOCK], 1, tl.int32)
    # masked atomics: lanes past n must not update anything
    tl.atomic_add(cnt_ptr + k, ones, mask=mask)
    tl.atomic_add(isum_ptr + k, iv, mask=mask)
    tl.atomic_add(fsum_ptr + k, fv, mask=mask)
    tl.atomic_max(bmax_ptr + k, iv, mask=mask)
    tl.atomic_min(bmin_ptr + k, iv, mask=mask)

    if pid == 0:
        j = tl.arange(0, BLOCK)
        old0 = tl.atomic_add(acc_ptr + j, 10 * j)
        old1 = tl.atomic_add(acc_ptr + j, ones)
        tl.store(old_ptr + j, old0)
        tl.store(old_ptr + BLOCK + j, old1)
        xo = tl.atomic_xchg(xbuf_ptr + j, -j)
        tl.store(xold_ptr + j, xo)
        # lock-free counter: 5 increments by compare-and-swap
        cur = 0  # deliberately wrong first guess
        tries = 0
        for _ in range(5):
            prev = tl.atomic_cas(ctr_ptr, cur, cur + 1)
            tries += 1
            while prev != cur:  # CAS failed: retry with the value it returned
                cur = prev
                prev = tl.atomic_cas(ctr_ptr, cur, cur + 1)
                tries += 1
            cur = cur + 1
        tl.store(tries_ptr, tries)
