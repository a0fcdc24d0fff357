//===- Overlap.cpp - Do two strided views share bytes? --------------------===//
//
// The exact test. Let view A have lowest byte loA and dimensions (|stride| in bytes, size),
// and likewise B. Flipping negative strides, A's elements start at loA + sum(a_i * x_i) with
// 0 <= x_i <= sizeA_i - 1, and element bytes add p in [0, itemA - 1]. A common byte means
//
//   loA + sum(a_i x_i) + p == loB + sum(b_j y_j) + q.
//
// Substituting y_j' = (sizeB_j - 1) - y_j and q' = (itemB - 1) - q turns every coefficient
// positive:
//
//   sum(a_i x_i) + p + sum(b_j y_j') + q' == (hiB - 1) - loA,
//
// where hiB is one past B's last byte: a bounded knapsack-style equation with positive
// coefficients, solved by depth-first search from the largest coefficient down. Each level
// keeps only the values of its variable that leave a remainder reachable by the remaining
// terms (range bound) and divisible by their gcd (congruence, solved in closed form so the
// search steps straight between candidates). Every visited node costs one unit of work.
//
//===----------------------------------------------------------------------===//
#include "ttinterp/memory/Overlap.h"

#include <algorithm>
#include <vector>

namespace ttinterp {

namespace {

using i128 = __int128;

/// One unknown of the equation: coeff * x with 0 <= x <= bound.
struct Term {
  i128 coeff;
  i128 bound;
};

i128 gcd(i128 a, i128 b) {
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// Inverse of a modulo m, for coprime a and m > 1 (extended Euclid).
i128 inverseMod(i128 a, i128 m) {
  i128 oldR = a % m, r = m;
  i128 oldS = 1, s = 0;
  while (r != 0) {
    i128 q = oldR / r;
    i128 t = oldR - q * r;
    oldR = r;
    r = t;
    t = oldS - q * s;
    oldS = s;
    s = t;
  }
  i128 inv = oldS % m;
  return inv < 0 ? inv + m : inv;
}

/// The dimensions of a valid, non-empty view that can move an element: size > 1 and
/// stride != 0. Broadcast dimensions (stride 0) revisit the same bytes and add nothing.
std::vector<Term> movingTerms(const View &v) {
  std::vector<Term> terms;
  const i128 elemSize = static_cast<i128>(byteSize(v.dtype));
  for (size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] <= 1 || v.strides[k] == 0)
      continue;
    i128 stride = v.strides[k] < 0 ? -static_cast<i128>(v.strides[k]) : v.strides[k];
    terms.push_back({stride * elemSize, v.shape[k] - 1});
  }
  return terms;
}

/// True when the view's bytes fill its whole extent. Adding dimensions in order of stride,
/// the bytes covered so far form one block [0, reach); the next dimension keeps it one block
/// exactly when its stride does not exceed the block, and since every later stride is at
/// least as large, a gap once opened is never closed.
bool isDense(const View &v) {
  std::vector<Term> terms = movingTerms(v);
  std::sort(terms.begin(), terms.end(),
            [](const Term &x, const Term &y) { return x.coeff < y.coeff; });
  i128 reach = static_cast<i128>(byteSize(v.dtype));
  for (const Term &t : terms) {
    if (t.coeff > reach)
      return false;
    reach += t.coeff * t.bound;
  }
  return true;
}

/// Whether any byte of the non-empty range lies in the extent of `dense` (dense view's
/// extent holds only its own bytes, so any endpoint of the other view inside it is shared).
bool endpointInside(const ByteRange &dense, const ByteRange &other) {
  auto inside = [&](uint64_t byte) { return dense.lo <= byte && byte < dense.hi; };
  return inside(other.lo) || inside(other.hi - 1);
}

class Solver {
public:
  Solver(std::vector<Term> terms, int64_t maxWork) : terms(std::move(terms)), maxWork(maxWork) {
    // Largest coefficients first: they have the fewest candidate values, so the search
    // branches least near the root.
    std::sort(this->terms.begin(), this->terms.end(),
              [](const Term &x, const Term &y) { return x.coeff > y.coeff; });
    // Equal coefficients merge: x1 + x2 takes every value in [0, bound1 + bound2].
    std::vector<Term> merged;
    for (const Term &t : this->terms) {
      if (t.bound == 0 || t.coeff == 0)
        continue;
      if (!merged.empty() && merged.back().coeff == t.coeff)
        merged.back().bound += t.bound;
      else
        merged.push_back(t);
    }
    this->terms = std::move(merged);
    size_t m = this->terms.size();
    suffixGcd.assign(m + 1, 0);
    suffixMax.assign(m + 1, 0);
    for (size_t k = m; k-- > 0;) {
      suffixGcd[k] = gcd(this->terms[k].coeff, suffixGcd[k + 1]);
      suffixMax[k] = suffixMax[k + 1] + this->terms[k].coeff * this->terms[k].bound;
    }
    // Only the right-hand side of each level's congruence depends on the remainder; its
    // modulus and the inverse it needs are fixed per level, so they are computed once here.
    step.assign(m, 1);
    inverse.assign(m, 0);
    for (size_t k = 0; k + 1 < m; ++k) {
      step[k] = suffixGcd[k + 1] / suffixGcd[k];
      if (step[k] > 1)
        inverse[k] = inverseMod((this->terms[k].coeff / suffixGcd[k]) % step[k], step[k]);
    }
  }

  SharesMemory solve(i128 rhs) {
    switch (search(0, rhs)) {
    case Outcome::Found:
      return SharesMemory::Yes;
    case Outcome::NotFound:
      return SharesMemory::No;
    case Outcome::OutOfWork:
      break;
    }
    return SharesMemory::TooHard;
  }

private:
  enum class Outcome { Found, NotFound, OutOfWork };

  /// Is there an assignment of terms[k..] summing to `rest`?
  Outcome search(size_t k, i128 rest) {
    if (++work > maxWork)
      return Outcome::OutOfWork;
    if (rest < 0 || rest > suffixMax[k])
      return Outcome::NotFound;
    if (k == terms.size())
      return rest == 0 ? Outcome::Found : Outcome::NotFound;
    if (rest % suffixGcd[k] != 0)
      return Outcome::NotFound;
    // With one term left, divisibility by its coefficient and the range check suffice.
    if (k + 1 == terms.size())
      return Outcome::Found;

    const i128 c = terms[k].coeff;
    const i128 tailMax = suffixMax[k + 1];
    // Values of x that leave a remainder in [0, tailMax].
    i128 lo = rest > tailMax ? (rest - tailMax + c - 1) / c : 0;
    i128 hi = std::min(terms[k].bound, rest / c);
    if (lo > hi)
      return Outcome::NotFound;
    // Values of x that leave a remainder divisible by g = suffixGcd[k + 1]: c*x == rest
    // (mod g). d = gcd(c, g) = suffixGcd[k] divides rest (checked above), so x runs through
    // one residue class modulo g / d, namely (rest / d) * (c / d)^-1.
    const i128 m = step[k];
    i128 x = lo;
    if (m > 1) {
      i128 residue = ((rest / suffixGcd[k]) % m) * inverse[k] % m;
      x = lo + ((residue - lo % m) % m + m) % m;
    }
    for (; x <= hi; x += m) {
      Outcome o = search(k + 1, rest - c * x);
      if (o != Outcome::NotFound)
        return o;
    }
    return Outcome::NotFound;
  }

  std::vector<Term> terms;
  std::vector<i128> suffixGcd; ///< gcd of terms[k..].coeff; 0 past the end.
  std::vector<i128> suffixMax; ///< Largest sum terms[k..] can reach.
  std::vector<i128> step;      ///< Spacing of the candidate values of x_k.
  std::vector<i128> inverse;   ///< (coeff_k / suffixGcd[k])^-1 modulo step[k].
  int64_t maxWork;
  int64_t work = 0;
};

bool sameLayout(const View &a, const View &b) {
  if (a.dtype != b.dtype || a.address != b.address || a.shape != b.shape ||
      a.strides.size() != b.strides.size())
    return false;
  for (size_t k = 0; k < a.shape.size(); ++k)
    if (a.shape[k] != 1 && a.strides[k] != b.strides[k])
      return false;
  return true;
}

} // namespace

SharesMemory sharesMemory(const View &a, const View &b, int64_t maxWork) {
  if (a.validate() || b.validate())
    return SharesMemory::TooHard;
  if (a.numElements() == 0 || b.numElements() == 0)
    return SharesMemory::No;
  const ByteRange extentA = a.extent(), extentB = b.extent();
  if (!extentA.overlaps(extentB))
    return SharesMemory::No;

  // Cheap sufficient tests for Yes: element 0 of each view shares a byte (this covers
  // identical views), or one view is dense and the other has an endpoint in its extent.
  const ByteRange firstA{a.address, a.address + byteSize(a.dtype)};
  const ByteRange firstB{b.address, b.address + byteSize(b.dtype)};
  if (firstA.overlaps(firstB))
    return SharesMemory::Yes;
  if ((isDense(a) && endpointInside(extentA, extentB)) ||
      (isDense(b) && endpointInside(extentB, extentA)))
    return SharesMemory::Yes;
  if (maxWork <= 0)
    return SharesMemory::TooHard;

  std::vector<Term> terms = movingTerms(a);
  for (const Term &t : movingTerms(b))
    terms.push_back(t);
  terms.push_back({1, static_cast<i128>(byteSize(a.dtype)) - 1});
  terms.push_back({1, static_cast<i128>(byteSize(b.dtype)) - 1});
  const i128 rhs = static_cast<i128>(extentB.hi) - 1 - static_cast<i128>(extentA.lo);
  return Solver(std::move(terms), maxWork).solve(rhs);
}

OverlapClass classify(const View &a, const View &b) {
  switch (sharesMemory(a, b)) {
  case SharesMemory::No:
    return OverlapClass::Disjoint;
  case SharesMemory::Yes:
    return sameLayout(a, b) ? OverlapClass::Identical : OverlapClass::Overlapping;
  case SharesMemory::TooHard:
    break;
  }
  return OverlapClass::Overlapping;
}

std::string_view name(OverlapClass c) {
  switch (c) {
  case OverlapClass::Disjoint:
    return "disjoint";
  case OverlapClass::Identical:
    return "identical";
  case OverlapClass::Overlapping:
    return "overlapping";
  }
  return "?";
}

std::string_view name(SharesMemory s) {
  switch (s) {
  case SharesMemory::No:
    return "no";
  case SharesMemory::Yes:
    return "yes";
  case SharesMemory::TooHard:
    return "too-hard";
  }
  return "?";
}

} // namespace ttinterp
