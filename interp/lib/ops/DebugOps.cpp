//===- DebugOps.cpp - tt.print and tt.assert ------------------------------===//
#include "OpSupport.h"

#include <fmt/format.h>

#include <sstream>

namespace ttinterp::interp {
namespace {

struct PrintData {
  std::string prefix;
  bool hex = false;
  std::vector<bool> isSigned; ///< Per operand.
};

/// Triton's formatting of one element: integers in decimal (signed or not) or
/// hex, floats with printf's %f-like default (%.6g would lose Triton's look).
template <DType D> std::string formatValue(Repr<D> v, bool hex, bool isSigned) {
  if constexpr (isFloat(D)) {
    if (hex) {
      uint8_t bits[8] = {0};
      storeElement<D>(bits, v);
      uint64_t u = 0;
      std::memcpy(&u, bits, byteSize(D));
      return fmt::format("0x{:0{}x}", u, 2 * byteSize(D));
    }
    return fmt::format("{:f}", double(v));
  } else if constexpr (D == DType::Ptr) {
    return fmt::format("0x{:x}", tagged::address(v));
  } else {
    if (hex)
      return fmt::format("0x{:0{}x}", unsignedValue<D>(v), 2 * byteSize(D));
    return isSigned ? std::to_string(signedValue<D>(v)) : std::to_string(unsignedValue<D>(v));
  }
}

void printKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const PrintData *>(in.data);
  std::ostringstream out;
  std::string pid = fmt::format("pid ({}, {}, {})", f.pid[0], f.pid[1], f.pid[2]);
  if (in.numOperands == 0)
    out << pid << " " << d.prefix << "\n";
  for (uint32_t k = 0; k < in.numOperands; ++k) {
    const Slot &s = f.slot(in.operands[k]);
    std::vector<int64_t> strides = rowMajorStrides(s.shape);
    for (int64_t i = 0; i < s.numel; ++i) {
      std::string idx;
      for (size_t dim = 0; dim < s.shape.size(); ++dim)
        idx += fmt::format("{}{}", dim ? ", " : "", (i / strides[dim]) % s.shape[dim]);
      std::string value = visitAny(s.dtype, [&](auto tag) {
        constexpr DType D = decltype(tag)::value;
        return formatValue<D>(f.at<Repr<D>>(in.operands[k])[i], d.hex,
                              k < d.isSigned.size() ? bool(d.isSigned[k]) : true);
      });
      out << pid << " idx (" << idx << ")" << d.prefix << value << "\n";
    }
  }
  std::lock_guard<std::mutex> lock(f.printer->mutex);
  *f.printer->out << out.str();
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
