//===- Launch.cpp - One launch end to end: prepare, plan, run, report ------===//
#include "ttinterp/interp/Launch.h"

#include "ttinterp/memory/Hazards.h"
#include "ttinterp/memory/Overlap.h"

#include <fmt/format.h>

#include <algorithm>

namespace ttinterp::interp {

namespace {

std::array<int64_t, 3> programId(int64_t linear, const std::array<int64_t, 3> &grid) {
  return {linear % grid[0], (linear / grid[0]) % grid[1], linear / (grid[0] * grid[1])};
}

/// Regions numbered in the order the pointer arguments first reach them, with the named
/// buffers and parameters each holds.
void describeRegions(const LaunchMemory &memory, LaunchResult &result) {
  const auto &regions = memory.regions();
  const std::vector<PointerArgument> &pointers = memory.arguments();
  // An argument with no bytes (a zero-size view) is in no region.
  constexpr size_t kNone = LaunchResult::kNoRegion;
  std::vector<size_t> regionOf(pointers.size(), kNone);
  for (size_t r = 0; r < regions.size(); ++r)
    for (uint32_t a : regions[r].arguments)
      regionOf[a] = r;
  std::vector<size_t> number(regions.size(), kNone);
  std::vector<size_t> order;
  result.regionOfPointer.assign(pointers.size(), kNone);
  for (size_t a = 0; a < pointers.size(); ++a) {
    if (regionOf[a] == kNone)
      continue;
    if (number[regionOf[a]] == kNone) {
      number[regionOf[a]] = order.size();
      order.push_back(regionOf[a]);
    }
    result.regionOfPointer[a] = number[regionOf[a]];
  }
  for (size_t r : order) {
    RegionReport rr;
    const Region &region = *regions[r].region;
    auto addBuffer = [&](const std::string &name) {
      if (!name.empty() && std::find(rr.buffers.begin(), rr.buffers.end(), name) == rr.buffers.end())
        rr.buffers.push_back(name);
    };
    for (size_t a = 0; a < pointers.size(); ++a)
      if (regionOf[a] == r) {
        addBuffer(pointers[a].buffer);
        (pointers[a].reachable ? rr.reachable : rr.arguments)
            .push_back(pointers[a].reachable ? pointers[a].buffer : pointers[a].name);
      }
    for (const std::string &name : region.buffers)
      addBuffer(name);
    rr.bytes = region.range.size();
    rr.shadow = shadowStateName(region.state());
    result.regions.push_back(std::move(rr));
  }
}

void collectHazards(const HazardTracker &tracker, const LaunchRequest &request,
                    LaunchResult &result) {
  result.hazardBytes = tracker.totalConflictBytes();
  for (const Hazard &h : tracker.hazards()) {
    HazardReport r;
    r.kind = std::string(name(h.kind));
    r.first = programId(h.firstProgram, request.run.grid);
    r.second = programId(h.secondProgram, request.run.grid);
    for (const PointerArgument &p : request.pointers)
      if (p.view.extent().overlaps({h.lo, h.hi}))
        r.arguments.push_back(p.name);
    for (const PointerArgument &p : request.reachable)
      if (p.view.extent().overlaps({h.lo, h.hi}))
        r.reachable.push_back(p.buffer);
    for (const NamedBuffer &b : request.buffers)
      if (!b.inner && h.lo >= b.range.lo && h.lo < b.range.hi) {
        r.buffer = b.name;
        r.offset = h.lo - b.range.lo;
      }
    r.bytes = h.hi - h.lo;
    r.firstOp = request.kernel->siteOp(h.firstSite);
    r.firstLocation = request.kernel->siteLocation(h.firstSite);
    r.secondOp = request.kernel->siteOp(h.secondSite);
    r.secondLocation = request.kernel->siteLocation(h.secondSite);
    result.hazards.push_back(std::move(r));
  }
}

} // namespace

LaunchResult Launcher::fail(Fault fault, const std::vector<NamedBuffer> &buffers) {
  LaunchResult result;
  result.status = LaunchResult::Status::Faulted;
  // What the fault keeps from reaching caller memory, counted before it is dropped.
  for (const NamedBuffer &b : buffers)
    result.droppedBytes.push_back({b.name, session_.pendingBytes(*b.memory, b.range)});
  session_.abandon();
  result.fault = std::move(fault);
  return result;
}

LaunchResult Launcher::launch(const LaunchRequest &request,
                              const std::function<void(const LaunchResult &)> &beforeRun) {
  std::vector<PointerArgument> pointers = request.pointers;
  request.kernel->applyAccess(request.values, pointers);
  // Reachable buffers follow the arguments: their tags come after the parameters' and
  // ArgumentValue::pointerIndex never names them. Only untraced pointers reach them.
  for (PointerArgument p : request.reachable) {
    p.name.clear();
    p.reachable = true;
    p.access = request.kernel->reachableAccess();
    pointers.push_back(std::move(p));
  }

  // A buffer released by an earlier donation must not be touched again.
  for (const PointerArgument &p : pointers)
    if (const Session::Donation *d = session_.released(*p.memory, p.view.extent())) {
      Fault f;
      f.kind = "donated_buffer";
      f.message =
          fmt::format("{} uses memory of buffer '{}', which {} donated and a step "
                      "released",
                      p.reachable ? fmt::format("reachable buffer '{}'", p.buffer)
                                  : fmt::format("argument '{}' (buffer '{}')", p.name, p.buffer),
                      d->buffer, d->donor);
      return fail(std::move(f), request.buffers);
    }

  LaunchResult result;
  uint64_t inBefore = session_.stats().bytesIn;
  LaunchMemory memory;
  if (!session_.prepare(pointers, memory, result.error)) {
    result.status = LaunchResult::Status::BadInput;
    return result;
  }
  result.bytesIn = session_.stats().bytesIn - inBefore; // so far: beforeRun sees this
  for (const PointerArgument &p : pointers)
    result.access.push_back(p.access);

  // The plan: everything decided from the alias pattern, cached by it (docs/sessions.md).
  std::vector<View> views;
  for (const PointerArgument &p : pointers)
    views.push_back(p.view);
  PlanCache::Result plan = plans_.get(request.kernelHash, views, request.donors, request.plan);
  result.planKey = plan.plan->key;
  result.planCached = plan.hit;
  if (request.describe) {
    describeRegions(memory, result);
    for (size_t a = 0; a < request.pointers.size(); ++a)
      for (size_t b = a + 1; b < request.pointers.size(); ++b)
        result.pairs.push_back({pointers[a].name, pointers[b].name,
                                std::string(name(plan.plan->aliasing.pair(a, b)))});
  }
  if (beforeRun)
    beforeRun(result);

  LaunchOptions run = request.run;
  run.threads = plan.plan->serial ? 1 : request.plan.threads;
  HazardTracker tracker;
  if (request.plan.hazards)
    memory.setHazardTracker(&tracker);
  std::optional<Fault> f = request.kernel->run(request.values, memory, run);
  if (request.plan.hazards)
    collectHazards(tracker, request, result);
  // Large read-write regions are copied in as the programs touch them (ShadowState::OnTouch).
  result.bytesIn = session_.stats().bytesIn - inBefore;
  if (f) {
    LaunchResult failed = fail(std::move(*f), request.buffers);
    result.status = failed.status;
    result.fault = std::move(failed.fault);
    result.droppedBytes = std::move(failed.droppedBytes);
    return result;
  }
  for (const Session::Donation &d : request.donations)
    session_.donate(d);
  return result;
}

} // namespace ttinterp::interp
