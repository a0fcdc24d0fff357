//===- Spec.h - The run spec: buffers and launches, parsed and validated -*- C++ -*-===//
//
// A spec (docs/spec.md) names buffers, how they start out, and a sequence of kernel
// launches and synchronisation points. Parsing checks everything that does not need the
// kernels themselves (types, shapes, alias layout, views inside their buffers); checking
// arguments against a kernel's parameters is a separate step, bindArguments, once the
// kernel is loaded. Every error is one line naming the file and the JSON path, e.g.
// "spec.json: launches[1].args[2]: unknown buffer 'q'".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/DType.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ttinterp::driver {

/// A typed scalar: integers sign-extended from their width, floats already rounded to the
/// dtype (and stored as the double of that value).
struct ScalarValue {
  DType dtype = DType::I32;
  int64_t integer = 0;
  double real = 0;
};

enum class InitKind { Zeros, Arange, Fill, Npy, Uniform, Addresses };

/// One entry of an `addresses` init: the address of element `offset` of a buffer.
struct AddressEntry {
  size_t buffer = 0;
  int64_t offset = 0; ///< In elements of that buffer's dtype.
};

struct BufferSpec {
  std::string name;
  std::string path; ///< JSON path, "buffers.x".
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numElements = 0;
  uint64_t byteSize = 0;

  /// Storage of its own, or a window into another buffer's (alias_of).
  std::optional<size_t> aliasOf;
  uint64_t byteOffset = 0; ///< Inside the aliased buffer.
  size_t root = 0;         ///< The buffer that owns the storage (itself when not an alias).
  uint64_t rootOffset = 0; ///< Byte offset inside the root's storage.
  /// "device": "cuda": the storage is on CUDA device 0 (an alias inherits its root's).
  bool device = false;

  InitKind init = InitKind::Zeros;
  ScalarValue fill;         ///< InitKind::Fill.
  std::string npyPath;      ///< InitKind::Npy, resolved against the spec's folder.
  double low = 0, high = 0; ///< InitKind::Uniform: [low, high).
  uint64_t seed = 0;        ///< InitKind::Uniform.
  std::vector<AddressEntry> addresses; ///< InitKind::Addresses: one per element.
};

/// Descriptor: a host-side tensor descriptor over a view (docs/spec.md); it
/// stands for the descriptor parameter and the shape and stride parameters
/// after it until bindArguments expands it.
enum class ArgKind { Buffer, View, Descriptor, Scalar };

struct ArgSpec {
  ArgKind kind = ArgKind::Buffer;
  std::string path; ///< "launches[0].args[2]".
  size_t buffer = 0;
  /// Buffer and View: element offset, shape and strides in the buffer's dtype (a plain
  /// buffer argument is offset 0, the buffer's shape, C-contiguous).
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
  bool padNaN = false; ///< Descriptor: out-of-bounds reads give NaN instead of zero.
  ScalarValue scalar;
};

enum class StepKind { Launch, Sync, Step };

struct LaunchSpec {
  StepKind kind = StepKind::Launch;
  std::string path;       ///< "launches[3]".
  std::string kernel;     ///< As written in the spec.
  std::string kernelPath; ///< Resolved against the spec's folder.
  std::string function;   ///< Empty: the file's only public function.
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::vector<ArgSpec> args;
  std::vector<size_t> donate; ///< Buffer indices, in spec order.
  /// Buffers the kernel may reach without receiving them (interp::LaunchRequest::reachable).
  std::vector<size_t> reachable;
  std::vector<size_t> sync; ///< StepKind::Sync: buffer indices.
  /// "native": run Triton's binary at nativePath on the GPU instead of interpreting `kernel`
  /// (which still gives the parameter types). Empty: interpreted.
  std::string native, nativePath;
  /// The metadata .json: "metadata" when given, else the binary's stem with ".json".
  std::string metadataPath;
  /// The JSON path that named the metadata file ("launches[0].metadata" or ".native").
  std::string metadataKey;
};

struct Spec {
  std::string file;                ///< As given, for messages.
  std::string baseDir;             ///< Folder relative paths are resolved against.
  std::vector<BufferSpec> buffers; ///< In file order.
  std::vector<LaunchSpec> launches;

  /// Whether any buffer lives on a CUDA device or any launch is native.
  bool usesCuda() const;
  /// What asks for CUDA first, as a JSON path ("buffers.x.device"); empty when nothing does.
  std::string firstCudaUse() const;

  /// Index of the buffer called `name`.
  std::optional<size_t> findBuffer(std::string_view name) const;
};

/// Parses and validates spec text. `file` names it in messages; relative paths inside are
/// resolved against `baseDir`. On failure returns nullopt and sets `error` to one line.
std::optional<Spec> parseSpec(std::string_view text, const std::string &file,
                              const std::string &baseDir, std::string &error);

/// Reads and parses the spec file at `path`.
std::optional<Spec> loadSpec(const std::string &path, std::string &error);

/// Checks `launch`'s arguments against its kernel's parameters: their number, scalar
/// types, pointer versus scalar versus descriptor, and pointee dtypes. Then expands each
/// tensor-descriptor argument into the descriptor and the shape (i32) and stride (i64)
/// values Triton passes after it, so that `launch.args` holds one argument per parameter.
/// `function` names the kernel in messages. Returns false with a one-line error naming
/// the JSON path.
bool bindArguments(const Spec &spec, LaunchSpec &launch, const std::string &function,
                   const std::vector<interp::Parameter> &parameters, std::string &error);

/// Why an `addresses` init cannot be filled (a device buffer as the table or a target: the
/// table holds host addresses), as "JSON path: message"; empty when every one can. parseSpec
/// checks it; check --native moves buffers to the device afterwards and checks again.
std::string addressInitError(const Spec &spec);

/// The C-contiguous strides (in elements) of `shape`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape);

} // namespace ttinterp::driver
