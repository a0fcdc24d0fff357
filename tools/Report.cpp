//===- Report.cpp - JSON rendering of run reports --------------------------===//
#include "Report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace ttinterp::driver {

using Json = nlohmann::ordered_json;

static Json grid(const std::array<int64_t, 3> &g) { return Json::array({g[0], g[1], g[2]}); }

std::string renderReport(const RunReport &report) {
  Json root = Json::object();
  root["status"] = report.error ? "error" : "ok";
  if (report.error) {
    const ErrorReport &e = *report.error;
    Json err = Json::object();
    err["kind"] = e.kind;
    err["message"] = e.message;
    err["launch"] = e.launch ? Json(*e.launch) : Json(nullptr);
    err["program"] = e.program ? grid(*e.program) : Json(nullptr);
    err["location"] = e.location;
    err["op"] = e.op;
    err["element"] = e.element ? Json(*e.element) : Json(nullptr);
    Json pending = Json::object();
    for (auto &[buffer, bytes] : e.pendingBytes)
      pending[buffer] = bytes;
    err["pending_bytes"] = pending;
    root["error"] = err;
  }
  Json launches = Json::array();
  for (const LaunchReport &l : report.launches) {
    Json j = Json::object();
    j["index"] = l.index;
    j["function"] = l.function;
    j["kernel"] = l.kernel;
    j["kernel_hash"] = l.kernelHash;
    j["kernel_cache"] = l.kernelCached ? "hit" : "miss";
    j["plan_key"] = l.planKey;
    j["cache"] = l.planCached ? "hit" : "miss";
    j["grid"] = grid(l.grid);
    Json regions = Json::array();
    for (const RegionReport &r : l.regions)
      regions.push_back({{"buffers", r.buffers},
                         {"arguments", r.arguments},
                         {"reachable", r.reachable},
                         {"bytes", r.bytes},
                         {"shadow", r.shadow}});
    j["regions"] = regions;
    Json pairs = Json::array();
    for (const PairReport &p : l.pairs)
      pairs.push_back({{"a", p.a}, {"b", p.b}, {"class", p.overlap}});
    j["pairs"] = pairs;
    Json hazards = Json::array();
    for (const HazardReport &h : l.hazards)
      hazards.push_back({{"kind", h.kind},
                         {"programs", {h.first, h.second}},
                         {"arguments", h.arguments},
                         {"reachable", h.reachable},
                         {"buffer", h.buffer},
                         {"byte_offset", h.offset},
                         {"bytes", h.bytes},
                         {"ops", {h.firstOp, h.secondOp}},
                         {"locations", {h.firstLocation, h.secondLocation}}});
    j["hazards"] = hazards;
    j["hazard_bytes"] = l.hazardBytes;
    j["donated"] = l.donated;
    if (!l.native.empty())
      j["native"] = l.native;
    j["bytes_in"] = l.bytesIn;
    j["bytes_out"] = l.bytesOut;
    launches.push_back(j);
  }
  root["launches"] = launches;
  Json syncs = Json::array();
  for (const SyncReport &s : report.syncs) {
    Json j = Json::object();
    j["index"] = s.index ? Json(*s.index) : Json(nullptr);
    j["kind"] = s.kind;
    j["buffers"] = s.buffers;
    j["bytes_out"] = s.bytesOut;
    syncs.push_back(j);
  }
  root["syncs"] = syncs;
  root["session"] = {{"bytes_in", report.bytesIn}, {"bytes_out", report.bytesOut}};
  // Paths and messages may hold bytes that are not UTF-8; replace rather than throw.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool writeReport(const std::string &path, const RunReport &report, std::string &error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out)
    out << renderReport(report);
  if (!out) {
    error = fmt::format("cannot write report '{}': {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

} // namespace ttinterp::driver
