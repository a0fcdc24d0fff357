//===- HostPages.cpp - Pages of host memory: size, faulting in, mapping kinds ----===//
#include "HostPages.h"

#include "ttinterp/memory/Workers.h"

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

std::optional<size_t> pagesInMemory(const void *p, size_t size) {
#if defined(__linux__)
  const uintptr_t page = uintptr_t(hostPageSize());
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + size + page - 1) & ~(page - 1);
  std::vector<unsigned char> resident(size_t((hi - lo) / page));
  if (mincore(reinterpret_cast<void *>(lo), hi - lo, resident.data()) != 0)
    return std::nullopt;
  size_t count = 0;
  for (unsigned char r : resident)
    count += r & 1;
  return count;
#else
  (void)p;
  (void)size;
  return std::nullopt;
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

#if defined(__linux__)
namespace {

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

/// Whether PROCMAP_QUERY may answer: asked first until the kernel says it does not know it.
std::atomic<bool> &queriesWork() {
  static std::atomic<bool> works{true};
  return works;
}

/// Every mapping of the process, from /proc/self/maps (open as `fd`); empty when it cannot be
/// read.
std::vector<Mapping> readMaps(int fd) {
  std::vector<Mapping> out;
  std::string maps;
  char chunk[16384];
  for (ssize_t got; (got = read(fd, chunk, sizeof chunk)) > 0;)
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

} // namespace

MappingQueries::MappingQueries() : fd_(open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) {}

MappingQueries::~MappingQueries() {
  if (fd_ >= 0)
    close(fd_);
}

MappingQueries::Answer MappingQueries::query(uint64_t address, Mapping &out) {
  if (!queriesWork())
    return Answer::Unsupported;
  char name[4096]; // PATH_MAX: every name fits
  ProcmapQuery q{};
  q.size = sizeof q;
  q.queryAddr = address;
  q.vmaNameAddr = reinterpret_cast<uint64_t>(name);
  q.vmaNameSize = sizeof name;
  if (ioctl(fd_, kProcmapQuery, &q) != 0) {
    if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP) {
      queriesWork() = false;
      return Answer::Unsupported;
    }
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

const std::vector<Mapping> &MappingQueries::maps() {
  if (!maps_) {
    if (fd_ >= 0)
      lseek(fd_, 0, SEEK_SET);
    maps_ = fd_ >= 0 ? readMaps(fd_) : std::vector<Mapping>();
  }
  return *maps_;
}

void MappingQueries::refresh() { maps_.reset(); }

bool MappingQueries::cheap() {
  static const bool cheap = [] {
    MappingQueries q;
    Mapping m;
    int anything = 0;
    return q.fd_ >= 0 && q.query(reinterpret_cast<uint64_t>(&anything), m) != Answer::Unsupported;
  }();
  return cheap && queriesWork();
}

std::optional<std::vector<MappingSpan>> MappingQueries::privateAnonymous(uint64_t lo, uint64_t hi) {
  if (hi <= lo || fd_ < 0)
    return std::nullopt;
  std::vector<MappingSpan> spans;
  // One question per mapping the range crosses, each from where the last one ended.
  for (uint64_t at = lo; at < hi;) {
    Mapping m;
    Answer a = query(at, m);
    if (a == Answer::Unsupported) {
      spans.clear();
      break;
    }
    if (a == Answer::No || !m.privateAnonymous || m.lo > at || m.hi <= at)
      return std::nullopt;
    spans.push_back({m.lo, m.hi});
    at = m.hi;
    if (at >= hi)
      return spans;
  }
  uint64_t covered = lo;
  for (const Mapping &m : maps()) {
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

size_t MappingQueries::boundaries(const std::vector<uint64_t> &points) {
  size_t count = 0;
  size_t asked = 0;
  for (; asked < points.size(); ++asked) {
    Mapping m;
    Answer a = query(points[asked], m);
    if (a == Answer::Unsupported)
      break;
    count += a == Answer::No || m.lo == points[asked];
  }
  if (asked == points.size())
    return count;
  const std::vector<Mapping> &all = maps(); // in address order
  for (; asked < points.size(); ++asked) {
    uint64_t p = points[asked];
    auto it = std::upper_bound(all.begin(), all.end(), p,
                               [](uint64_t x, const Mapping &m) { return x < m.hi; });
    count += it == all.end() || it->lo >= p;
  }
  return count;
}

bool hugePagesOnRequest() {
  static const bool onRequest = [] {
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    char text[128] = {};
    bool answer = fd >= 0 && read(fd, text, sizeof text - 1) > 0 &&
                  std::strstr(text, "[madvise]") != nullptr;
    if (fd >= 0)
      close(fd);
    return answer;
  }();
  return onRequest;
}

namespace {
/// populateForWrite over [lo, hi) on up to `threads` threads, in pieces that end on huge-page
/// boundaries, claimed as threads get to them.
void populateSplit(uint64_t lo, uint64_t hi, unsigned threads) {
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  // Below four huge pages a second thread costs more to wake than it saves.
  if (threads <= 1 || hi - lo < 4 * kHuge) {
    populateForWrite(reinterpret_cast<void *>(lo), hi - lo);
    return;
  }
  const uint64_t piece = ((hi - lo) / (uint64_t(threads) * 4) + kHuge - 1) & ~(kHuge - 1);
  runOnPieces(threads, lo, hi, piece, [](uint64_t from, uint64_t to) {
    populateForWrite(reinterpret_cast<void *>(from), to - from);
  });
}
} // namespace

void populateWithHugePages(uint64_t lo, uint64_t hi, unsigned threads) {
#ifdef MADV_HUGEPAGE
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  uint64_t hugeLo = (lo + kHuge - 1) & ~(kHuge - 1), hugeHi = hi & ~(kHuge - 1);
  bool huge = hugeLo < hugeHi && hugePagesOnRequest() &&
              madvise(reinterpret_cast<void *>(hugeLo), hugeHi - hugeLo, MADV_HUGEPAGE) == 0;
  // Advice only: pages it does not populate fault in when written.
  populateSplit(lo, hi, threads);
  if (huge)
    madvise(reinterpret_cast<void *>(hugeLo), hugeHi - hugeLo, MADV_NOHUGEPAGE);
#else
  populateSplit(lo, hi, threads);
#endif
}

#else

MappingQueries::MappingQueries() = default;
MappingQueries::~MappingQueries() = default;
MappingQueries::Answer MappingQueries::query(uint64_t, Mapping &) { return Answer::Unsupported; }
const std::vector<Mapping> &MappingQueries::maps() {
  if (!maps_)
    maps_.emplace();
  return *maps_;
}
void MappingQueries::refresh() {}
bool MappingQueries::cheap() { return false; }
std::optional<std::vector<MappingSpan>> MappingQueries::privateAnonymous(uint64_t, uint64_t) {
  return std::nullopt;
}
size_t MappingQueries::boundaries(const std::vector<uint64_t> &points) { return points.size(); }
bool hugePagesOnRequest() { return false; }
void populateWithHugePages(uint64_t lo, uint64_t hi, unsigned) {
  populateForWrite(reinterpret_cast<void *>(lo), hi - lo);
}

#endif

} // namespace ttinterp
