//===- Frontend.h - load TTIR, describe kernel signatures, structural hash -===//
//
// Public API of ttinterp's front end (namespace ttinterp::frontend):
//   * registerDialects / makeContext: every dialect real TTIR uses.
//   * checkTTIRText: the lexical pre-check that keeps hostile text away from MLIR's
//     parser (nesting depth, SSA scoping); parseTTIR runs it first.
//   * parseTTIR / loadTTIRFile: parse + verify; on failure a null module and ONE message
//     "FILE:LINE:COL: error: MESSAGE" (plus "FILE:LINE:COL: note: ..." lines) whose
//     position is in the .ttir text itself (chains of tt.call deeper than
//     kMaxTTIRCallDepth are refused too). Nothing is printed to stderr. On success the
//     ops keep their original (Python source) locations, and legacy spellings have been
//     normalised (3.3 tt.experimental_descriptor_* -> tt.descriptor_*, 3.9 `cachePolicy`
//     -> `cache`/`evict`).
//   * Signature / signatureOf / signatures / findFunction / formatSignatures: what
//     `ttinterp info` shows.
//   * structuralHash: a location- and SSA-name-independent SHA-256 of a function.
//   * describeLocation: "file:line:col" of an op's Python source location.
//
//===----------------------------------------------------------------------===//

#ifndef TTINTERP_FRONTEND_FRONTEND_H
#define TTINTERP_FRONTEND_FRONTEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ttinterp::frontend {

//===----------------------------------------------------------------------===//
// Dialects and loading
//===----------------------------------------------------------------------===//

/// Adds tt, ttg (ttg.barrier only), arith, math, scf, cf, ub, gpu and llvm to `registry`.
void registerDialects(mlir::DialectRegistry &registry);

/// A fresh context with registerDialects' dialects loaded. Multithreading is disabled so
/// that diagnostics come in a deterministic order.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses and verifies TTIR `text`; `bufferName` is the file name used in messages.
/// On failure returns null and sets `error` (see the file comment for its form).
mlir::OwningOpRef<mlir::ModuleOp> parseTTIR(mlir::MLIRContext &ctx, llvm::StringRef text,
                                            llvm::StringRef bufferName, std::string &error);

/// Deepest nesting of brackets, braces and regions in the text that checkTTIRText lets
/// through to MLIR: far above real TTIR (under 10), far below what overflows the parser's
/// stack (see docs/reliability.md, "Untrusted TTIR").
constexpr unsigned kMaxTTIRNesting = 256;
/// The same with attribute and type aliases expanded, which the parser does not recurse
/// through but printers and location walks do. Triton chains name locations (one link per
/// field of each block pointer or tensor descriptor argument), so real TTIR reaches ~30.
constexpr unsigned kMaxTTIRExpandedNesting = 1024;
/// Most operators in one affine_map/affine_set (MLIR recurses once per operator).
constexpr unsigned kMaxAffineOperators = 256;
/// Longest chain of tt.call (f calls g calls h ...) parseTTIR accepts: the structural hash
/// and the interpreter's lowering recurse once per level. Real TTIR is mostly inlined.
constexpr unsigned kMaxTTIRCallDepth = 256;

/// A lexical scan of TTIR text that rejects what MLIR 19's parser cannot survive: nesting
/// deeper than kMaxTTIRNesting (kMaxTTIRExpandedNesting through aliases), long affine
/// expressions, and an SSA value used where the
/// definition MLIR would bind it to lies in a region that does not enclose the use (inside
/// the using op's own region, in another function...), which corrupts MLIR's heap. On
/// rejection returns false and sets `error` to one "FILE:LINE:COL: error: ..." line.
/// parseTTIR calls it before MLIR sees the text.
bool checkTTIRText(llvm::StringRef text, llvm::StringRef bufferName, std::string &error);

/// Reads `path` and calls parseTTIR. An unreadable file gives
/// "PATH: error: cannot read TTIR file: REASON".
mlir::OwningOpRef<mlir::ModuleOp> loadTTIRFile(mlir::MLIRContext &ctx, llvm::StringRef path,
                                               std::string &error);

/// "file:line:col" of the file location inside `loc`: name locations are looked through;
/// a call site (inlined code) reads "callee-pos (inlined at caller-pos)". Empty when `loc`
/// holds no file location.
std::string describeLocation(mlir::Location loc);

/// An MLIR type, attribute or value as MLIR prints it ("tensor<64xf32>").
template <typename T> std::string printed(T value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  value.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

/// One argument of a tt.func.
struct ArgInfo {
  unsigned index = 0;
  /// From the argument's name location (`loc("x_ptr"(#loc))`, Triton 3.5+), else "argN".
  std::string name;
  /// True when `name` came from a name location.
  bool nameFromSource = false;
  /// Printed type, e.g. "!tt.ptr<f32>", "i32", "f32".
  std::string type;
  bool isPointer = false;
  /// For pointers: printed pointee type ("f32"); empty otherwise.
  std::string pointeeType;
  /// The `tt.divisibility` hint, when present.
  std::optional<int64_t> divisibility;
  /// Every argument attribute, name -> printed value (e.g. "tt.divisibility" -> "16 : i32").
  std::map<std::string, std::string> attributes;
};

/// The signature of one tt.func.
struct Signature {
  std::string name;
  bool isPublic = false;
  std::vector<ArgInfo> args;
  /// Printed result types (kernels have none).
  std::vector<std::string> results;
};

/// Signature of one function.
Signature signatureOf(mlir::FunctionOpInterface fn);

/// Signatures of every function of `module`, in module order.
std::vector<Signature> signatures(mlir::ModuleOp module);

/// The function named `name`; with an empty `name`, the only public function. Returns null
/// and sets `error` when there is no such function, or no/several public ones.
mlir::FunctionOpInterface findFunction(mlir::ModuleOp module, llvm::StringRef name,
                                       std::string &error);

/// Text for `ttinterp info`: one block per signature, e.g.
///   add_kernel (public)
///     #0  x_ptr       !tt.ptr<f32>  divisibility=16
///     #3  n_elements  i32
std::string formatSignature(const Signature &sig);
std::string formatSignatures(const std::vector<Signature> &sigs);

//===----------------------------------------------------------------------===//
// Structural hash
//===----------------------------------------------------------------------===//

/// Lowercase hex SHA-256 of a canonical serialisation of `fn`: op names, attributes
/// (sorted by name; printed form; location-valued ones skipped), operands as references
/// to (defining op index, result index) or (block index, argument index) in walk order,
/// result types, block argument types, successors, region/block structure. It covers the
/// function's own attributes: its symbol name (included: two kernels that differ only in
/// name hash differently), type, visibility and argument attributes such as
/// tt.divisibility. Functions reached through tt.call contribute their own hash (a
/// recursive call contributes only the callee's name). Every Location (op, block argument,
/// function argument; file, name, call site) and every SSA name is ignored, so re-dumps of
/// the same kernel with other line numbers, files or value names hash equal.
std::string structuralHash(mlir::FunctionOpInterface fn);

} // namespace ttinterp::frontend

#endif // TTINTERP_FRONTEND_FRONTEND_H
