//===- Elements.h - Encoding element values of every dtype to bytes and back -*- C++ -*-===//
//
// The driver fills buffers from JSON numbers (fill, arange, uniform) and prints their
// contents, so it needs every dtype's encoding. The narrow floats (f16, bf16, the four fp8
// formats) are encoded directly from double with round to nearest even, so a value is
// rounded once (going through float first would round twice). Values beyond the largest
// finite number become infinity where the format has one, else NaN (no saturation), as
// numpy/ml_dtypes convert. FNUZ formats have no negative zero: -0 encodes as +0.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cstdint>
#include <string>

namespace ttinterp::driver {

/// The bit pattern of `v` in float dtype `d` (f16 ... f64), rounded to nearest even.
uint64_t encodeFloat(DType d, double v);
/// The value of bit pattern `bits` of float dtype `d`, exactly.
double decodeFloat(DType d, uint64_t bits);
/// Largest finite value of float dtype `d`.
double largestFinite(DType d);

/// Smallest and largest integers an N-bit integer dtype holds in either reading (signed
/// minimum to unsigned maximum): TTIR integers are signless, so both are representable.
/// i1 holds 0 and 1.
int64_t integerMin(DType d);
uint64_t integerMax(DType d);

/// `v` truncated to the width of integer dtype `d` and sign-extended back to 64 bits
/// (i1: 0 or 1, keeping the low bit).
int64_t wrapInteger(DType d, int64_t v);

/// Writes integer `v` (wrapped to the width) into one element of integer dtype `d`.
void storeInteger(DType d, uint8_t *p, int64_t v);
/// Writes `v` into one element of float dtype `d` (rounded to nearest even).
void storeFloat(DType d, uint8_t *p, double v);
/// Reads one element as a double (integers read as signed; i1 as 0 or 1).
double loadAsDouble(DType d, const uint8_t *p);
/// One element as text: integers exactly, floats with 6 significant digits.
std::string formatElement(DType d, const uint8_t *p);

} // namespace ttinterp::driver
