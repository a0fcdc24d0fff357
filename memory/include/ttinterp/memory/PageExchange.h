//===- PageExchange.h - Writing back whole pages by moving them, not copying -*- C++ -*-===//
//
// A step writes every dirty byte of a shadow back into the caller's memory. For a 16 MiB output
// that copy is 0.6-0.75 ms here, a quarter of a layer norm launch, and it cannot start before
// the last program has run (a fault must leave the caller's memory as it was), so a second core
// barely speeds it up. Where the launch wrote every byte of a page, the shadow's page can
// become the caller's page instead: mremap moves page-table entries, not bytes (16 MiB in about
// 0.05 ms), and the caller's old page becomes the shadow block's, in memory for its next use.
//
// Only at a step, when the shadow is dropped right after (a partial sync keeps it, and must
// not leave the caller's old bytes in it); only whole pages every byte of which the launch wrote
// (bytes around them and partly written pages are copied as before); only where the caller's
// range is private anonymous memory (checked per exchange: never a shared or file mapping,
// whose other users would not see the new pages); and only for memory its caller says may move
// (PointerArgument::exchangePages): pages registered with a device (cudaHostRegister, RDMA)
// would go on being read and written by the device at their old physical place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace ttinterp {

/// Exchanges of fewer bytes than this are not tried: the checks and the three moves cost about
/// what copying them does.
constexpr uint64_t kPageExchangeMinimum = uint64_t(2) << 20;

/// Makes the caller's pages [caller, caller + size) hold what the shadow's pages [shadow,
/// shadow + size) hold by moving the pages, and gives the shadow's range the caller's old pages
/// (their bytes, dead by then, are unspecified). Both ranges are page-aligned and whole pages;
/// the caller's must be writable private anonymous memory (checked here: anything else is left
/// alone). Use it only for a final write-back: every byte of the caller's range is overwritten
/// and the shadow is about to be dropped.
///
/// True when the caller's range holds the shadow's bytes; false when nothing changed (not
/// Linux, a range too small or of another kind, or the budget below spent): copy instead.
///
/// The caller's range takes the shadow's mapping, and so its settings: shadow blocks have an
/// ordinary mapping's (HostBlocks.h: no huge-page advice). Moving pages can split mappings, and a process may have only so many
/// (vm.max_map_count, 65,530 by default), so each exchange draws the new mapping boundaries it
/// may make from a process-wide budget of 4,096; once that is spent, write-backs copy. A
/// write-back into the same range as the last one (a loop of launches) makes none.
bool exchangePages(uint64_t caller, uint8_t *shadow, size_t size);

/// Sets the budget of new mapping boundaries left to exchanges (tests); returns the old one.
uint64_t setPageExchangeBudget(uint64_t boundaries);

} // namespace ttinterp
