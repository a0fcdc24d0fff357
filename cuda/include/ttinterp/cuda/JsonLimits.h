//===- JsonLimits.h - A nesting limit for the JSON files users hand us -*- C++ -*-===//
//
// nlohmann::json parses and destroys iteratively, but copying a value and dump() recurse once
// per level, so a spec nesting 90,000 arrays parses fine and then overflows the stack in the
// first copy or message that shows it. Specs and kernel metadata nest a few levels; text that
// nests deeper than kMaxJsonDepth is refused by a SAX pass that builds nothing, so no deep
// value ever exists.
//
// Header-only, in ttinterp_cuda's include folder: the kernel metadata reader there is the
// lowest library that reads JSON, and tools/ (the spec loader) links ttinterp_cuda too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ttinterp {

/// The deepest nesting of arrays and objects accepted in a spec or a metadata file.
inline constexpr size_t kMaxJsonDepth = 256;

/// Whether `text` opens more than `limit` arrays and objects inside each other before its
/// first syntax error. Syntax errors themselves count as within the limit: the parse that
/// follows reports them, with their position.
inline bool jsonNestsDeeperThan(std::string_view text, size_t limit = kMaxJsonDepth) {
  using Json = nlohmann::json;
  class DepthCounter final : public nlohmann::json_sax<Json> {
  public:
    explicit DepthCounter(size_t limit) : limit_(limit) {}
    bool tooDeep = false;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t &) override { return true; }
    bool string(string_t &) override { return true; }
    bool binary(binary_t &) override { return true; }
    bool key(string_t &) override { return true; }
    bool start_object(std::size_t) override { return open(); }
    bool start_array(std::size_t) override { return open(); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string &, const Json::exception &) override {
      return false;
    }

  private:
    bool open() {
      tooDeep = ++depth_ > limit_;
      return !tooDeep;
    }
    bool close() {
      --depth_;
      return true;
    }
    size_t limit_;
    size_t depth_ = 0;
  };
  DepthCounter counter(limit);
  Json::sax_parse(text.begin(), text.end(), &counter);
  return counter.tooDeep;
}

} // namespace ttinterp
