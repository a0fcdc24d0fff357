//===- TestSupport.h - Temporary folders and running the ttinterp binary in tests -*- C++ -*-===//
#pragma once

#include "Npy.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ttinterp::testing {

/// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ttinterp-tools-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  /// The path of `name` inside the folder, as a string.
  std::string operator/(const std::string &name) const { return (path_ / name).string(); }

  /// Writes `text` to `name` inside the folder and returns its path.
  std::string write(const std::string &name, const std::string &text) const {
    std::string p = *this / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

private:
  std::filesystem::path path_;
};

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// What one run of the binary did.
struct CliResult {
  int status = -1; ///< Exit status; -1 when it did not exit normally (a crash).
  std::string out, err;
};

/// Runs the built ttinterp with `args` (already shell-quoted where needed).
inline CliResult runCli(const std::string &args) {
  TempDir dir;
  std::string command = std::string("'") + TTINTERP_BINARY_DIR "/tools/ttinterp' " + args + " >'" +
                        (dir / "out") + "' 2>'" + (dir / "err") + "'";
  int raw = std::system(command.c_str());
  CliResult r;
  r.status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  r.out = readFile(dir / "out");
  r.err = readFile(dir / "err");
  return r;
}

/// Single-quotes `s` for the shell.
inline std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The values of an f32 .npy file (NumPy's or ttinterp's --out).
inline std::vector<float> floats(const std::string &path) {
  NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(readNpy(path, DType::F32, a, error), error);
  std::vector<float> v(a.bytes.size() / 4);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

/// Path of a file in the source tree.
inline std::string sourcePath(const std::string &relative) {
  return std::string(TTINTERP_SOURCE_DIR) + "/" + relative;
}

/// One `ttinterp` run of a spec written to a fresh folder, with --out and --report there.
struct SpecRun {
  TempDir dir;
  CliResult cli;
  nlohmann::json report; ///< Empty when no report was written.
  std::vector<float> buffer(const std::string &name) const {
    return floats(dir / ("out/" + name + ".npy"));
  }
  bool hasOutput(const std::string &name) const {
    return std::filesystem::exists(dir / ("out/" + name + ".npy"));
  }
};

/// Writes `spec` and runs `ttinterp COMMAND` on it with --out, --report and `extra`.
inline std::unique_ptr<SpecRun> runSpec(const nlohmann::json &spec,
                                        const std::string &command = "run",
                                        const std::string &extra = "") {
  auto r = std::make_unique<SpecRun>();
  std::string path = r->dir.write("spec.json", spec.dump(2));
  r->cli = runCli(command + " " + quote(path) + " --out " + quote(r->dir / "out") + " --report " +
                  quote(r->dir / "report.json") + " " + extra);
  std::string text = readFile(r->dir / "report.json");
  if (!text.empty())
    r->report = nlohmann::json::parse(text);
  return r;
}

} // namespace ttinterp::testing
