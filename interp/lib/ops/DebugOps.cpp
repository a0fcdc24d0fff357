//===- DebugOps.cpp - tt.print and tt.assert ------------------------------===//
#include "OpSupport.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace ttinterp::interp {
namespace {

struct PrintData {
  std::string prefix;
  bool hex = false;
  std::vector<bool> isSigned; ///< Per operand.
};

/// One element as the GPU's printf renders it. Triton's PrintOp lowering (NVIDIA)
/// formats integers with %i/%u (%lli/%llu for 64 bits; signed per `isSigned`) after
/// promoting narrower ones to 32 bits (sign- or zero-extended), hex with
/// "0x%0<bits/4>x" ("ll" for 64 bits) on the promoted value, floats with %f of the
/// value promoted to double, pointers with %p.
template <DType D> void formatValue(std::string &out, Repr<D> v, bool hex, bool isSigned) {
  char buf[64];
  if constexpr (D == DType::Ptr) {
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)tagged::address(v));
  } else if constexpr (isFloat(D)) {
    if (hex) {
      // The GPU passes the double to %x; the element's own bits are what one means.
      uint8_t bits[8] = {0};
      storeElement<D>(bits, v);
      uint64_t u = 0;
      std::memcpy(&u, bits, byteSize(D));
      std::snprintf(buf, sizeof buf, "0x%0*llx", int(2 * byteSize(D)), (unsigned long long)u);
    } else {
      std::snprintf(buf, sizeof buf, "%f", double(v));
    }
  } else if constexpr (sizeof(Repr<D>) == 8) {
    uint64_t u = unsignedValue<D>(v);
    if (hex)
      std::snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)u);
    else if (isSigned)
      std::snprintf(buf, sizeof buf, "%lli", (long long)int64_t(u));
    else
      std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
  } else {
    constexpr int bits = D == DType::I1 ? 1 : int(sizeof(Repr<D>) * 8);
    uint32_t promoted =
        isSigned ? uint32_t(int32_t(signedValue<D>(v))) : uint32_t(unsignedValue<D>(v));
    if (hex)
      std::snprintf(buf, sizeof buf, "0x%0*x", bits / 4, promoted);
    else if (isSigned)
      std::snprintf(buf, sizeof buf, "%i", int32_t(promoted));
    else
      std::snprintf(buf, sizeof buf, "%u", promoted);
  }
  out += buf;
}

/// Writes what Triton's device print writes, one line per element:
///   pid (<x>, <y>, <z>) idx (<i0>, <i1>, ...)<prefix>[(operand <k>) ]<value>
/// (the prefix already carries its spaces and ": "); pids are %u, each index %<w>u
/// with w = ceil(log10(dim)); "(operand k) " only when several operands are printed.
/// With no operand: "pid (<x>, <y>, <z>)<prefix>". The GPU's threads print in no
/// particular order; here operands come one after another, elements in row-major order.
void printKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const PrintData *>(in.data);
  std::string out;
  char buf[64];
  std::snprintf(buf, sizeof buf, "pid (%u, %u, %u)", uint32_t(f.pid[0]), uint32_t(f.pid[1]),
                uint32_t(f.pid[2]));
  const std::string pid = buf;
  if (in.numOperands == 0)
    out += pid + d.prefix + "\n";
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Slot &s = f.slot(in.operands[k]);
    std::vector<int64_t> strides = rowMajorStrides(s.shape);
    std::vector<int> widths;
    for (int64_t dim : s.shape)
      widths.push_back(dim > 0 ? static_cast<int>(std::ceil(std::log10(double(dim)))) : 0);
    bool isSigned = k < d.isSigned.size() && d.isSigned[k];
    for (int64_t i = 0; i < s.numel; ++i) {
      out += pid;
      out += " idx (";
      for (size_t dim = 0; dim < s.shape.size(); ++dim) {
        std::snprintf(buf, sizeof buf, "%s%*u", dim ? ", " : "", widths[dim],
                      uint32_t((i / strides[dim]) % s.shape[dim]));
        out += buf;
      }
      out += ")";
      out += d.prefix;
      if (in.numOperands > 1)
        out += "(operand " + std::to_string(k) + ") ";
      visitAny(s.dtype, [&](auto tag) {
        constexpr DType D = decltype(tag)::value;
        formatValue<D>(out, f.at<Repr<D>>(in.operands[k])[i], d.hex, isSigned);
        return 0;
      });
      out += "\n";
    }
  }
  std::lock_guard<std::mutex> lock(f.printer->mutex);
  *f.printer->out << out;
  f.printer->out->flush();
}

bool lowerPrint(mlir::Operation *op, Lowerer &L) {
  PrintData d;
  if (auto p = op->getAttrOfType<mlir::StringAttr>("prefix"))
    d.prefix = p.getValue().str();
  if (auto h = op->getAttrOfType<mlir::BoolAttr>("hex"))
    d.hex = h.getValue();
  if (auto s = op->getAttrOfType<mlir::DenseI32ArrayAttr>("isSigned"))
    for (int32_t v : s.asArrayRef())
      d.isSigned.push_back(v != 0);
  std::vector<SlotId> operands;
  for (mlir::Value v : op->getOperands())
    operands.push_back(L.use(v));
  L.emit(op, &printKernel, operands, {}, L.keep(std::move(d)));
  return true;
}

struct AssertData {
  std::string message;
};

void assertKernel(Frame &f, const Instr &in) {
  const uint8_t *c = f.at<uint8_t>(in.operands[0]);
  int64_t n = f.slot(in.operands[0]).numel;
  for (int64_t i = 0; i < n; ++i)
    if (!c[i]) {
      f.fail(in.site, "assert",
             fmt::format("assertion failed: {}",
                         static_cast<const AssertData *>(in.data)->message),
             i);
      return;
    }
}

bool lowerAssert(mlir::Operation *op, Lowerer &L) {
  AssertData d;
  if (auto m = op->getAttrOfType<mlir::StringAttr>("message"))
    d.message = m.getValue().str();
  SlotId c = L.use(op->getOperand(0));
  if (L.slot(c).dtype != DType::I1)
    return L.error(op, "condition must be i1");
  L.emit(op, &assertKernel, {c}, {}, L.keep(std::move(d)));
  return true;
}

} // namespace

void registerDebugOps(OpTable &t) {
  t.add("tt.print", &lowerPrint);
  t.add("tt.assert", &lowerAssert);
}

} // namespace ttinterp::interp
