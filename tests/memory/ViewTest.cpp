//===- ViewTest.cpp - Element counts, extents, contiguity and validation of views ---===//
#include "ttinterp/memory/View.h"
#include "ViewSupport.h"

#include <doctest/doctest.h>

#include <limits>

using namespace ttinterp;
using ttinterp::test::makeView;


TEST_CASE("ByteRange: emptiness and overlap") {
  CHECK(ByteRange{5, 5}.empty());
  CHECK(ByteRange{6, 5}.empty());
  CHECK_FALSE(ByteRange{5, 6}.empty());
  CHECK(ByteRange{0, 10}.overlaps({9, 12}));
  CHECK_FALSE(ByteRange{0, 10}.overlaps({10, 12})); // half-open: byte 10 is not in the first
  CHECK_FALSE(ByteRange{0, 10}.overlaps({4, 4}));   // an empty range overlaps nothing
  CHECK(ByteRange{3, 4}.overlaps({0, 10}));
  CHECK(ByteRange{3, 7}.size() == 4);
  CHECK(ByteRange{7, 3}.size() == 0);
}

TEST_CASE("View: a C-ordered f32 matrix") {
  View v = makeView(0x1000, DType::F32, {2, 3}, {3, 1});
  CHECK_FALSE(v.validate());
  CHECK(v.numElements() == 6);
  // 6 elements of 4 bytes from 0x1000.
  CHECK(v.extent().lo == 0x1000);
  CHECK(v.extent().hi == 0x1018);
  CHECK(v.isContiguous());
  CHECK(v.describe() == "f32[2x3] strides [3, 1] at 0x1000 (bytes [0x1000, 0x1018))");
}

TEST_CASE("View: negative, zero and mixed strides") {
  // Reversed: element 0 is the highest, element 3 sits at 0x100C - 12 = 0x1000.
  View rev = makeView(0x100C, DType::F32, {4}, {-1});
  CHECK(rev.extent().lo == 0x1000);
  CHECK(rev.extent().hi == 0x1010);
  CHECK_FALSE(rev.isContiguous());

  // Broadcast: five names for one f16 element.
  View bcast = makeView(0x20, DType::F16, {5}, {0});
  CHECK(bcast.numElements() == 5);
  CHECK(bcast.extent().lo == 0x20);
  CHECK(bcast.extent().hi == 0x22);
  CHECK_FALSE(bcast.isContiguous());

  // i64 offsets (elements): {0, 3, -2, 1} -> bytes {0, 24, -16, 8} from 0x100.
  View mixed = makeView(0x100, DType::I64, {2, 2}, {-2, 3});
  CHECK(mixed.extent().lo == 0x100 - 16);
  CHECK(mixed.extent().hi == 0x100 + 24 + 8);

  View transposed = makeView(0, DType::F32, {3, 2}, {1, 3});
  CHECK_FALSE(transposed.isContiguous());
}

TEST_CASE("View: size-1 dimensions, rank 0 and empty views") {
  CHECK(makeView(0, DType::I8, {1, 3}, {99, 1}).isContiguous());
  CHECK(makeView(0, DType::I8, {3, 1}, {1, -7}).isContiguous());
  CHECK_FALSE(makeView(0, DType::I8, {3, 2}, {3, 1}).isContiguous()); // gap after each row

  View scalar = makeView(0x40, DType::F64, {}, {});
  CHECK(scalar.numElements() == 1);
  CHECK(scalar.extent().lo == 0x40);
  CHECK(scalar.extent().hi == 0x48);
  CHECK(scalar.isContiguous());
  CHECK(scalar.describe() == "f64[] strides [] at 0x40 (bytes [0x40, 0x48))");

  View empty = makeView(0x40, DType::F32, {0, 3}, {5, -100});
  CHECK_FALSE(empty.validate());
  CHECK(empty.numElements() == 0);
  CHECK(empty.extent().empty());
  CHECK(empty.isContiguous());
  CHECK(empty.describe() == "f32[0x3] strides [5, -100] at 0x40 (no bytes)");
}

TEST_CASE("View: validation says why a view is malformed") {
  auto why = [](const View &v) { return v.validate().value_or(""); };

  CHECK(why(makeView(0, DType::I8, {2, 3}, {1})).find("rank mismatch") != std::string::npos);
  CHECK(why(makeView(0, DType::I8, {2, -3}, {3, 1})).find("negative size -3") != std::string::npos);

  const int64_t big = int64_t(1) << 40;
  View tooMany = makeView(0, DType::I8, {big, big}, {0, 0});
  CHECK(why(tooMany).find("element count") != std::string::npos);
  CHECK(tooMany.numElements() == std::numeric_limits<int64_t>::max()); // saturates

  const int64_t maxStride = std::numeric_limits<int64_t>::max();
  CHECK(why(makeView(0, DType::I8, {3}, {maxStride})).find("spans more than int64") !=
        std::string::npos);
  CHECK(why(makeView(0, DType::I8, {2}, {std::numeric_limits<int64_t>::min()}))
            .find("spans more than int64") != std::string::npos);
  // (2^62) elements of 4 bytes apart: 2^64 bytes, more than int64 can hold.
  CHECK(why(makeView(0, DType::F32, {2}, {int64_t(1) << 62})).find("byte span") !=
        std::string::npos);

  // Element 1 of a reversed view at address 0 would sit below address 0.
  CHECK(why(makeView(0, DType::F32, {2}, {-1})).find("outside the 64-bit address space") !=
        std::string::npos);
  // The last byte of an f32 at 2^64 - 3 would be byte 2^64.
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  CHECK(why(makeView(top - 2, DType::F32, {1}, {1})).find("outside the 64-bit") !=
        std::string::npos);
  // ... but an f32 ending at byte 2^64 - 2 fits.
  CHECK_FALSE(makeView(top - 4, DType::F32, {1}, {1}).validate());

  // Empty views name no bytes, so their strides and address are not checked.
  CHECK_FALSE(makeView(0, DType::F32, {0, 2}, {1, -1}).validate());

  View bad = makeView(0, DType::I8, {2}, {1, 1});
  CHECK(bad.describe().find("invalid: rank mismatch") != std::string::npos);
}
