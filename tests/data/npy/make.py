#!/usr/bin/env python3
"""Writes the .npy files the tools tests read as ground truth (run from this folder).

Each array is small enough that NpyTest.cpp spells its values out; rerunning this script
with any NumPy >= 1.17 gives the same bytes (64-byte aligned headers, version 1.0 unless
stated).
"""
import numpy as np

np.save("i32_2x3.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
# 0, 1, -2.5, largest finite, +inf, smallest normal (2^-14).
np.save("f16.npy", np.array([0.0, 1.0, -2.5, 65504.0, np.inf, 2.0**-14], dtype=np.float16))
np.save("bool.npy", np.array([True, False, True, True]))
# bfloat16 bit patterns of 1.0, -2.0, +inf and 0.0, stored as uint16.
np.save("bf16_bits.npy", np.array([0x3F80, 0xC000, 0x7F80, 0x0000], dtype=np.uint16))
np.save("i8.npy", np.array([-128, -1, 0, 127], dtype=np.int8))
np.save("f32_scalar.npy", np.float32(3.25))
np.save("f32_empty.npy", np.zeros((0, 3), dtype=np.float32))
np.save("i64_3.npy", np.array([-1, 2**40, 7], dtype=np.int64))
# Version 2.0 header (4-byte header length), written on request.
with open("f64_v2.npy", "wb") as f:
    np.lib.format.write_array(f, np.arange(5, dtype=np.float64) * 0.5, version=(2, 0))
# Files the reader must reject.
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
np.save("big_endian.npy", np.arange(3, dtype=">i4"))
np.save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
