//===- HostPages.cpp - Pages of host memory: size, faulting in, mapping kinds ----===//
#include "HostPages.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ttinterp {

uint64_t hostPageSize() {
#if defined(__linux__)
  static const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  return page;
#else
  return 4096;
#endif
}

// Into a fresh 64 MiB allocation, a plain copy took 51-53 ms here and this call with a
// streaming copy 37-40.
bool populateForWrite(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  const uintptr_t page = uintptr_t(hostPageSize());
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + size + page - 1) & ~(page - 1);
  return madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_POPULATE_WRITE) == 0;
#else
  (void)p;
  (void)size;
  return false;
#endif
}

Fd::~Fd() {
#if defined(__linux__)
  if (fd >= 0)
    close(fd);
#endif
}

#if defined(__linux__)
namespace {

/// One mapping as the process's map describes it.
struct Mapping {
  uint64_t lo = 0, hi = 0;
  /// Readable, writable, private, and neither a file nor a special mapping.
  bool privateAnonymous = false;
};

/// Whether a mapping's name (empty for plain anonymous memory) is one private anonymous memory
/// may carry: the heap, or a name a program gave with PR_SET_VMA_ANON_NAME.
bool anonymousName(const std::string &name) {
  return name.empty() || name == "[heap]" || name.rfind("[anon:", 0) == 0;
}

// PROCMAP_QUERY (Linux 6.11, uapi/linux/fs.h) spelled out: Debian 12's headers predate it.
// The layout is the kernel's ABI, fixed by its `size` field.
struct ProcmapQuery {
  uint64_t size, queryFlags, queryAddr;
  uint64_t vmaStart, vmaEnd, vmaFlags, vmaPageSize, vmaOffset, inode;
  uint32_t devMajor, devMinor, vmaNameSize, buildIdSize;
  uint64_t vmaNameAddr, buildIdAddr;
};
static_assert(sizeof(ProcmapQuery) == 104, "struct procmap_query is 104 bytes");
constexpr unsigned long kProcmapQuery = 0xC0686611; // _IOWR('f', 17, struct procmap_query)
constexpr uint64_t kVmaReadable = 0x1, kVmaWritable = 0x2, kVmaShared = 0x8;

enum class Answer { Yes, No, Unsupported };

/// The mapping holding `address` through PROCMAP_QUERY: Unsupported on kernels without it, No
/// when no mapping holds the address.
Answer queryMapping(int fd, uint64_t address, Mapping &out) {
  char name[4096]; // PATH_MAX: every name fits
  ProcmapQuery q{};
  q.size = sizeof q;
  q.queryAddr = address;
  q.vmaNameAddr = reinterpret_cast<uint64_t>(name);
  q.vmaNameSize = sizeof name;
  if (ioctl(fd, kProcmapQuery, &q) != 0) {
    if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
      return Answer::Unsupported;
    return Answer::No;
  }
  std::string vmaName = q.vmaNameSize ? std::string(name, strnlen(name, sizeof name)) : "";
  out.lo = q.vmaStart;
  out.hi = q.vmaEnd;
  out.privateAnonymous = (q.vmaFlags & kVmaReadable) && (q.vmaFlags & kVmaWritable) &&
                         !(q.vmaFlags & kVmaShared) && q.inode == 0 && q.devMajor == 0 &&
                         q.devMinor == 0 && anonymousName(vmaName);
  return Answer::Yes;
}

/// Every mapping of the process, from /proc/self/maps; empty when it cannot be read.
std::vector<Mapping> readMaps() {
  std::vector<Mapping> out;
  Fd f{open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0)
    return out;
  std::string maps;
  char chunk[16384];
  for (ssize_t got; (got = read(f.fd, chunk, sizeof chunk)) > 0;)
    maps.append(chunk, size_t(got));
  for (size_t at = 0; at < maps.size();) {
    size_t end = maps.find('\n', at);
    if (end == std::string::npos)
      end = maps.size();
    std::string line = maps.substr(at, end - at);
    at = end + 1;
    unsigned long long start = 0, stop = 0, offset = 0, inode = 0;
    unsigned major = 0, minor = 0;
    char perms[5] = {};
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx %x:%x %llu %n", &start, &stop, perms, &offset,
                    &major, &minor, &inode, &pathAt) < 7)
      return {};
    Mapping m;
    m.lo = start;
    m.hi = stop;
    m.privateAnonymous = inode == 0 && major == 0 && minor == 0 &&
                         anonymousName(line.substr(size_t(pathAt))) && perms[0] == 'r' &&
                         perms[1] == 'w' && perms[3] == 'p';
    out.push_back(m);
  }
  return out;
}

/// Whether PROCMAP_QUERY may answer: asked first until the kernel says it does not know it.
std::atomic<bool> &queriesWork() {
  static std::atomic<bool> works{true};
  return works;
}

} // namespace

bool mappingQueriesCheap() {
  static const bool cheap = [] {
    Fd f{open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
    Mapping m;
    int anything = 0;
    return f.fd >= 0 &&
           queryMapping(f.fd, reinterpret_cast<uint64_t>(&anything), m) != Answer::Unsupported;
  }();
  return cheap && queriesWork();
}

std::optional<std::vector<MappingSpan>> privateAnonymousMappings(uint64_t lo, uint64_t hi) {
  if (hi <= lo)
    return std::nullopt;
  std::vector<MappingSpan> spans;
  if (queriesWork()) {
    Fd f{open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0)
      return std::nullopt;
    // One question per mapping the range crosses, each from where the last one ended.
    for (uint64_t at = lo; at < hi;) {
      Mapping m;
      Answer a = queryMapping(f.fd, at, m);
      if (a == Answer::Unsupported) {
        queriesWork() = false;
        break;
      }
      if (a == Answer::No || !m.privateAnonymous || m.lo > at || m.hi <= at)
        return std::nullopt;
      spans.push_back({m.lo, m.hi});
      at = m.hi;
    }
    if (queriesWork())
      return spans;
    spans.clear();
  }
  uint64_t covered = lo;
  for (const Mapping &m : readMaps()) {
    if (m.hi <= covered)
      continue;
    if (m.lo > covered || !m.privateAnonymous)
      return std::nullopt; // a hole (unmapped bytes), or a mapping of another kind
    spans.push_back({m.lo, m.hi});
    covered = m.hi;
    if (covered >= hi)
      return spans;
  }
  return std::nullopt;
}

size_t mappingBoundaries(const std::vector<uint64_t> &points) {
  size_t count = 0;
  if (queriesWork()) {
    Fd f{open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
    bool answered = f.fd >= 0;
    for (size_t i = 0; answered && i < points.size(); ++i) {
      Mapping m;
      Answer a = queryMapping(f.fd, points[i], m);
      answered = a != Answer::Unsupported;
      count += a == Answer::No || (a == Answer::Yes && m.lo == points[i]);
    }
    if (answered)
      return count;
    count = 0;
  }
  std::vector<Mapping> maps = readMaps(); // in address order
  for (uint64_t p : points) {
    auto it = std::upper_bound(maps.begin(), maps.end(), p,
                               [](uint64_t x, const Mapping &m) { return x < m.hi; });
    count += it == maps.end() || it->lo >= p;
  }
  return count;
}

bool hugePagesOnRequest() {
  static const bool onRequest = [] {
    Fd f{open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC)};
    char text[128] = {};
    return f.fd >= 0 && read(f.fd, text, sizeof text - 1) > 0 &&
           std::strstr(text, "[madvise]") != nullptr;
  }();
  return onRequest;
}

#else

std::optional<std::vector<MappingSpan>> privateAnonymousMappings(uint64_t, uint64_t) {
  return std::nullopt;
}
size_t mappingBoundaries(const std::vector<uint64_t> &points) { return points.size(); }
bool mappingQueriesCheap() { return false; }
bool hugePagesOnRequest() { return false; }

#endif

} // namespace ttinterp
