//===- Loader.cpp - parse and verify TTIR with errors located in the .ttir -===//
//
// Parsing errors already point into the .ttir text. Verifier errors would point at an
// op's own location, which in TTIR is the Python source line, so before verifying, every
// op is given the location of its name in the .ttir text (recorded by AsmParserState);
// afterwards the original locations are put back. The message then names the .ttir
// position and, as a note, the kernel source position.
//
//===----------------------------------------------------------------------===//

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/frontend/Frontend.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ttinterp::frontend {

void registerDialects(DialectRegistry &registry) {
  registry.insert<triton::TritonDialect, triton::gpu::TritonGPUDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect, cf::ControlFlowDialect, ub::UBDialect,
                  gpu::GPUDialect, LLVM::LLVMDialect>();
}

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerDialects(registry);
  auto ctx = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

namespace {

/// The innermost FileLineColLoc of `loc`, if any.
std::optional<FileLineColLoc> fileLocation(Location loc) {
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return fileLocation(name.getChildLoc());
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    return fileLocation(call.getCallee());
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (auto file = fileLocation(inner))
        return file;
  }
  return std::nullopt;
}

std::string locationPrefix(Location loc, StringRef bufferName) {
  if (auto file = fileLocation(loc))
    return (file->getFilename().getValue() + ":" + llvm::Twine(file->getLine()) + ":" +
            llvm::Twine(file->getColumn()))
        .str();
  return bufferName.str();
}

/// Collects the first error (with its notes) reported while it is alive.
class FirstErrorCollector {
public:
  FirstErrorCollector(MLIRContext &ctx, StringRef bufferName)
      : bufferName(bufferName.str()), handler(&ctx, [this](Diagnostic &diag) { record(diag); }) {}

  bool hasError() const { return !message.empty(); }
  const std::string &text() const { return message; }
  std::optional<Location> errorLocation() const { return location; }

  /// Appends a note line to the collected error.
  void addNote(const std::string &where, const std::string &note) {
    message += "\n" + where + ": note: " + note;
  }

private:
  void record(Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error || hasError())
      return;
    location = diag.getLocation();
    std::string text = diag.str();
    // MLIR's wording refers to a command-line flag of MLIR tools; say what it means here.
    if (StringRef(text).starts_with("operation being parsed with an unregistered dialect"))
      text = "unknown dialect in a generic operation (TTIR may use tt, ttg, arith, math, scf, cf, "
             "ub, gpu and llvm)";
    message = locationPrefix(diag.getLocation(), bufferName) + ": error: " + text;
    for (Diagnostic &note : diag.getNotes()) {
      std::string text = note.str();
      // MLIR attaches a full dump of the failing op; it is not useful to a TTIR user.
      if (StringRef(text).starts_with("see current operation"))
        continue;
      addNote(locationPrefix(note.getLocation(), bufferName), text);
    }
  }

  std::string bufferName;
  std::string message;
  std::optional<Location> location;
  ScopedDiagnosticHandler handler;
};

/// Rewrites spellings of older/newer Triton versions into the one form the rest of
/// ttinterp handles.
void normalize(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Operation *> legacy;
  module.walk([&](Operation *op) {
    if (llvm::isa<triton::ExperimentalDescriptorLoadOp, triton::ExperimentalDescriptorStoreOp>(op))
      legacy.push_back(op);
    // Triton 3.9: {cachePolicy = #tt.cache_policy<cache_modifier = X, eviction_policy = Y>}.
    if (auto policy = op->getAttrOfType<triton::CachePolicyAttr>("cachePolicy")) {
      if (llvm::isa<triton::LoadOp, triton::StoreOp, triton::DescriptorLoadOp>(op)) {
        op->removeAttr("cachePolicy");
        op->setAttr("cache", triton::CacheModifierAttr::get(ctx, policy.getCacheModifier()));
        op->setAttr("evict", triton::EvictionPolicyAttr::get(ctx, policy.getEvictionPolicy()));
      }
    }
  });
  for (Operation *op : legacy) {
    OpBuilder builder(op);
    if (auto load = llvm::dyn_cast<triton::ExperimentalDescriptorLoadOp>(op)) {
      auto replacement = builder.create<triton::DescriptorLoadOp>(
          load.getLoc(), load.getType(), load.getDesc(), load.getIndices(), load.getCacheAttr(),
          load.getEvictAttr());
      load.replaceAllUsesWith(replacement.getResult());
    } else {
      auto store = llvm::cast<triton::ExperimentalDescriptorStoreOp>(op);
      builder.create<triton::DescriptorStoreOp>(store.getLoc(), store.getDesc(), store.getSrc(),
                                                store.getIndices());
    }
    op->erase();
  }
}

/// MLIR 19's llvm.intr.assume has only the generic syntax, while Triton (built on a newer
/// MLIR) prints `llvm.intr.assume %c : i1`. Rewrites such lines into the generic form,
/// keeping line numbers and the op's column.
std::string rewriteAssumes(StringRef text) {
  static const llvm::Regex custom(
      "^([ \t]*)llvm\\.intr\\.assume[ \t]+(%[^ \t:,]+)[ \t]*:[ \t]*i1([^0-9].*)?$");
  std::string out;
  out.reserve(text.size() + 64);
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    bool hadNewline = line.size() < text.size();
    SmallVector<StringRef, 4> m;
    if (line.contains("llvm.intr.assume") && custom.match(line, &m))
      out += (m[1] + "\"llvm.intr.assume\"(" + m[2] + ") : (i1) -> ()" + m[3]).str();
    else
      out += line.str();
    if (hadNewline)
      out += '\n';
    text = rest;
  }
  return out;
}

/// Fails at the tt.call that makes a chain of calls deeper than kMaxTTIRCallDepth: the
/// structural hash and the interpreter's lowering recurse once per call level, and a chain
/// of thousands of functions (each calling the next) overflowed their stack. Recursion
/// (a call back into a function still on the chain) is not followed; they handle it.
LogicalResult checkCallDepth(ModuleOp module) {
  struct Visit {
    Operation *function;
    SmallVector<std::pair<Operation *, Operation *>> calls; // (call, callee)
    size_t next = 0;
    unsigned depth = 1;
  };
  llvm::DenseMap<Operation *, unsigned> depthOf; // finished functions
  llvm::DenseSet<Operation *> onChain;
  auto visit = [&](Operation *function) {
    Visit v{function, {}};
    function->walk([&](triton::CallOp call) {
      v.calls.emplace_back(call, SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
    });
    onChain.insert(function);
    return v;
  };
  auto tooDeep = [](Operation *call) {
    return emitError(call->getLoc()) << "calls nest deeper than " << kMaxTTIRCallDepth
                                     << " functions (through tt.call); TTIR needs far fewer";
  };
  for (Operation &top : module.getBody()->getOperations()) {
    if (!llvm::isa<FunctionOpInterface>(top) || depthOf.count(&top))
      continue;
    std::vector<Visit> chain;
    chain.push_back(visit(&top));
    while (!chain.empty()) {
      Visit &current = chain.back();
      if (current.next < current.calls.size()) {
        auto [call, callee] = current.calls[current.next++];
        if (!callee || onChain.count(callee))
          continue;
        auto known = depthOf.find(callee);
        if (known == depthOf.end()) {
          --current.next; // revisited once the callee is done
          chain.push_back(visit(callee));
          continue;
        }
        current.depth = std::max(current.depth, known->second + 1);
        if (current.depth > kMaxTTIRCallDepth)
          return tooDeep(call);
        continue;
      }
      depthOf[current.function] = current.depth;
      onChain.erase(current.function);
      chain.pop_back();
    }
  }
  return success();
}

OwningOpRef<ModuleOp> parseFromSourceMgr(MLIRContext &ctx, llvm::SourceMgr &sourceMgr,
                                         StringRef bufferName, std::string &error) {
  FirstErrorCollector errors(ctx, bufferName);
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  AsmParserState state;
  Block block;
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state))) {
    error = errors.hasError() ? errors.text() : bufferName.str() + ": error: cannot parse TTIR";
    return nullptr;
  }
  Location fileLoc = FileLineColLoc::get(&ctx, bufferName, 0, 0);
  OwningOpRef<ModuleOp> module =
      detail::constructContainerOpForParserIfNecessary<ModuleOp>(&block, &ctx, fileLoc);
  if (!module) {
    error = errors.hasError() ? errors.text() : bufferName.str() + ": error: cannot parse TTIR";
    return nullptr;
  }

  // Point every op at its own text for the verifier, remembering the real locations.
  std::vector<std::pair<Operation *, Location>> original;
  llvm::DenseMap<Location, Location> textToSource;
  module->walk([&](Operation *op) {
    const AsmParserState::OperationDefinition *def = state.getOpDef(op);
    if (!def)
      return;
    auto [line, col] = sourceMgr.getLineAndColumn(def->loc.Start);
    Location textLoc = FileLineColLoc::get(&ctx, bufferName, line, col);
    original.emplace_back(op, op->getLoc());
    textToSource.try_emplace(textLoc, op->getLoc());
    op->setLoc(textLoc);
  });
  LogicalResult verified = verify(*module);
  if (succeeded(verified))
    verified = checkCallDepth(*module);
  for (auto &[op, loc] : original)
    op->setLoc(loc);

  if (failed(verified) || errors.hasError()) {
    std::string message =
        errors.hasError() ? errors.text() : bufferName.str() + ": error: TTIR verification failed";
    if (auto where = errors.errorLocation()) {
      auto it = textToSource.find(*where);
      if (it != textToSource.end()) {
        std::string source = describeLocation(it->second);
        if (!source.empty())
          message += "\n" + locationPrefix(*where, bufferName) +
                     ": note: kernel source location: " + source;
      }
    }
    error = message;
    return nullptr;
  }
  normalize(*module);
  return module;
}

} // namespace

std::string describeLocation(Location loc) {
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) + ":" +
            llvm::Twine(file.getColumn()))
        .str();
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return describeLocation(name.getChildLoc());
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc)) {
    std::string callee = describeLocation(call.getCallee());
    std::string caller = describeLocation(call.getCaller());
    if (callee.empty() || caller.empty())
      return callee.empty() ? caller : callee;
    return callee + " (inlined at " + caller + ")";
  }
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations()) {
      std::string text = describeLocation(inner);
      if (!text.empty())
        return text;
    }
  }
  return "";
}

OwningOpRef<ModuleOp> parseTTIR(MLIRContext &ctx, StringRef text, StringRef bufferName,
                                std::string &error) {
  error.clear();
  // MLIR 19's parser crashes on some malformed text; see checkTTIRText.
  if (!checkTTIRText(text, bufferName, error))
    return nullptr;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      text.contains("llvm.intr.assume")
          ? llvm::MemoryBuffer::getMemBufferCopy(rewriteAssumes(text), bufferName)
          : llvm::MemoryBuffer::getMemBufferCopy(text, bufferName);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  return parseFromSourceMgr(ctx, sourceMgr, bufferName, error);
}

OwningOpRef<ModuleOp> loadTTIRFile(MLIRContext &ctx, StringRef path, std::string &error) {
  error.clear();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    error = (path + ": error: cannot read TTIR file: " + ec.message()).str();
    return nullptr;
  }
  return parseTTIR(ctx, (*buffer)->getBuffer(), path, error);
}

} // namespace ttinterp::frontend
