//===- VectorControls.h - The benchmark's controls written for the vector units -*- C++ -*-===//
//
// The plain C++ controls in Bench.cpp are compiled for baseline x86-64 and sum in one
// sequential chain, so they are compute-bound: their two-thread speedup says how a machine
// scales arithmetic, not how it scales the same bytes moved at full speed. These do the
// same per-row computation with Highway vectors (lane-wise partial sums, SLEEF-free
// Highway math), dispatched at run time like the interpreter's own kernels: the control
// for how much a second thread can give a kernel that runs at memory speed. Their sums
// are in another order than the kernels', so their outputs are not compared.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ttinterp::bench {

/// out[i] = x[i] + y[i] for i in [first, last).
void vectorAdd(const float *x, const float *y, float *out, int64_t first, int64_t last);

/// Row-wise softmax of rows [first, last) of `cols` floats.
void softmaxRows(const float *x, float *y, int64_t cols, int64_t first, int64_t last);

/// The benchmark's layer norm (eps 1e-5) of rows [first, last) of `cols` floats.
void layerNormRows(const float *x, float *y, const float *w, const float *bias, float *mean,
                   float *rstd, int64_t cols, int64_t first, int64_t last);

/// The vector target chosen on this CPU.
const char *vectorControlTarget();

} // namespace ttinterp::bench
