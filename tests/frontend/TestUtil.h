//===- TestUtil.h - helpers shared by the frontend tests ------------------===//

#ifndef TTINTERP_TESTS_FRONTEND_TESTUTIL_H
#define TTINTERP_TESTS_FRONTEND_TESTUTIL_H

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/frontend/Frontend.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fe_test {

namespace fs = std::filesystem;

/// tests/data/ttir in the source tree.
inline fs::path ttirDir() { return fs::path(TTINTERP_SOURCE_DIR) / "tests" / "data" / "ttir"; }

/// tests/data/ttir/<version>/<file>.
inline std::string samplePath(const std::string &version, const std::string &file) {
  return (ttirDir() / version / file).string();
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Every committed .ttir sample, sorted.
inline std::vector<std::string> allSamples() {
  std::vector<std::string> files;
  for (const auto &entry : fs::recursive_directory_iterator(ttirDir()))
    if (entry.is_regular_file() && entry.path().extension() == ".ttir")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// Parses `text` in a fresh context; fails the test with the error otherwise. The context
/// must outlive the module, so both are returned.
struct Parsed {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string error;
};

inline Parsed parse(const std::string &text, const std::string &name = "test.ttir") {
  Parsed p;
  p.ctx = ttinterp::frontend::makeContext();
  p.module = ttinterp::frontend::parseTTIR(*p.ctx, text, name, p.error);
  return p;
}

inline Parsed load(const std::string &path) {
  Parsed p;
  p.ctx = ttinterp::frontend::makeContext();
  p.module = ttinterp::frontend::loadTTIRFile(*p.ctx, path, p.error);
  return p;
}

/// Structural hash of the only public function of `text` (the test fails if it does not
/// parse).
inline std::string hashOf(const std::string &text) {
  Parsed p = parse(text);
  REQUIRE_MESSAGE(p.module, p.error);
  std::string error;
  auto fn = ttinterp::frontend::findFunction(*p.module, "", error);
  REQUIRE_MESSAGE(fn, error);
  return ttinterp::frontend::structuralHash(fn);
}

/// Replaces the first occurrence of `from` (which must occur) by `to`.
inline std::string replaceOnce(std::string text, const std::string &from, const std::string &to) {
  size_t pos = text.find(from);
  REQUIRE_MESSAGE(pos != std::string::npos, "'" << from << "' not found");
  return text.replace(pos, from.size(), to);
}

} // namespace fe_test

#endif // TTINTERP_TESTS_FRONTEND_TESTUTIL_H
