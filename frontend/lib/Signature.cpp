//===- Signature.cpp - kernel signatures and their `ttinterp info` text ----===//

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/frontend/Frontend.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

namespace ttinterp::frontend {

namespace {

/// The name of a name location (looking through a call site's callee), if any.
std::optional<std::string> nameOf(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    return nameOf(call.getCallee());
  return std::nullopt;
}

} // namespace

Signature signatureOf(FunctionOpInterface fn) {
  Signature sig;
  sig.name = fn.getName().str();
  sig.isPublic = fn.isPublic();
  ArrayRef<Type> argTypes = fn.getArgumentTypes();
  for (unsigned i = 0; i < argTypes.size(); ++i) {
    ArgInfo arg;
    arg.index = i;
    if (!fn.isExternal()) {
      if (auto name = nameOf(fn.getArgument(i).getLoc())) {
        arg.name = *name;
        arg.nameFromSource = true;
      }
    }
    if (arg.name.empty())
      arg.name = "arg" + std::to_string(i);
    arg.type = printed(argTypes[i]);
    if (auto ptr = llvm::dyn_cast<triton::PointerType>(argTypes[i])) {
      arg.isPointer = true;
      arg.pointeeType = printed(ptr.getPointeeType());
    }
    for (NamedAttribute attr : fn.getArgAttrs(i)) {
      arg.attributes[attr.getName().str()] = printed(attr.getValue());
      if (attr.getName() == "tt.divisibility")
        if (auto value = llvm::dyn_cast<IntegerAttr>(attr.getValue()))
          arg.divisibility = value.getInt();
    }
    sig.args.push_back(std::move(arg));
  }
  for (Type result : fn.getResultTypes())
    sig.results.push_back(printed(result));
  return sig;
}

std::vector<Signature> signatures(ModuleOp module) {
  std::vector<Signature> sigs;
  for (auto fn : module.getOps<FunctionOpInterface>())
    sigs.push_back(signatureOf(fn));
  return sigs;
}

FunctionOpInterface findFunction(ModuleOp module, StringRef name, std::string &error) {
  error.clear();
  if (!name.empty()) {
    for (auto fn : module.getOps<FunctionOpInterface>())
      if (fn.getName() == name)
        return fn;
    std::string available;
    for (auto fn : module.getOps<FunctionOpInterface>())
      available += (available.empty() ? "" : ", ") + fn.getName().str();
    error = "no function named '" + name.str() + "' in the TTIR module" +
            (available.empty() ? std::string(" (it has no functions)")
                               : " (functions: " + available + ")");
    return nullptr;
  }
  SmallVector<FunctionOpInterface> publics;
  for (auto fn : module.getOps<FunctionOpInterface>())
    if (fn.isPublic())
      publics.push_back(fn);
  if (publics.size() == 1)
    return publics.front();
  if (publics.empty()) {
    error = "the TTIR module has no public function (kernel)";
  } else {
    std::string names;
    for (auto fn : publics)
      names += (names.empty() ? "" : ", ") + fn.getName().str();
    error = "the TTIR module has several public functions (" + names + "); name one";
  }
  return nullptr;
}

std::string formatSignature(const Signature &sig) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << sig.name << " (" << (sig.isPublic ? "public" : "private") << ")";
  if (!sig.results.empty()) {
    os << " -> ";
    for (size_t i = 0; i < sig.results.size(); ++i)
      os << (i ? ", " : "") << sig.results[i];
  }
  os << "\n";
  size_t nameWidth = 4, typeWidth = 4;
  for (const ArgInfo &arg : sig.args) {
    nameWidth = std::max(nameWidth, arg.name.size());
    typeWidth = std::max(typeWidth, arg.type.size());
  }
  if (sig.args.empty())
    os << "  (no arguments)\n";
  for (const ArgInfo &arg : sig.args) {
    std::string index = "#" + std::to_string(arg.index);
    os << "  " << index << std::string(4 - std::min<size_t>(index.size(), 3), ' ') << arg.name
       << std::string(nameWidth - arg.name.size() + 2, ' ') << arg.type;
    std::string extras;
    if (arg.divisibility)
      extras += "divisibility=" + std::to_string(*arg.divisibility);
    for (const auto &[name, value] : arg.attributes) {
      if (name == "tt.divisibility")
        continue;
      extras += (extras.empty() ? "" : " ") + name + "=" + value;
    }
    if (!extras.empty())
      os << std::string(typeWidth - arg.type.size() + 2, ' ') << extras;
    os << "\n";
  }
  return out;
}

std::string formatSignatures(const std::vector<Signature> &sigs) {
  std::string out;
  for (size_t i = 0; i < sigs.size(); ++i)
    out += (i ? "\n" : "") + formatSignature(sigs[i]);
  return out;
}

} // namespace ttinterp::frontend
