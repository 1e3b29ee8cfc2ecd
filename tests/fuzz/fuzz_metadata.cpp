// libFuzzer target: the kernel metadata header (docs/kernel_contract.md) and its expressions.
//
// The bytes are a kernel source file. A header that parses is then used the way the registry and
// the reduce family use it: tile, shared_bytes and workspace are evaluated for every block size,
// for element sizes and grids beyond the ones parse_header tries. metadata_error and
// expression_error are the only exceptions these may throw; anything else (std::out_of_range,
// std::regex_error, ...) escapes and libFuzzer reports it, as it does a sanitizer's finding. A
// header that parses must also keep parse_header's promises (checked below).
#include "spec/expression.hpp"
#include "spec/metadata.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {

[[noreturn]] void broken_promise(const std::string& what) {
  std::fprintf(stderr, "fuzz_metadata: %s\n", what.c_str());
  std::abort();
}

// Evaluates `text` like the registry does; an expression_error is a fine answer, a value is
// returned through `out`.
bool try_evaluate(const std::string& text, const std::map<std::string, std::int64_t>& vars,
                  std::int64_t& out) {
  try {
    out = kl::evaluate(text, vars);
    return true;
  } catch (const kl::expression_error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  kl::parsed_header h;
  try {
    h = kl::parse_header(source, "fuzz.cu");
  } catch (const kl::metadata_error& e) {
    if (e.file() != "fuzz.cu" || e.line() < 1)
      broken_promise(std::string("bad location: ") + e.what());
    return 0;
  }

  const kl::variant_descriptor& d = h.descriptor;
  if (d.name != "fuzz") broken_promise("name '" + d.name + "' is not the file's stem");
  if (d.family.empty() || d.entry.empty() || d.blocks.empty())
    broken_promise("a required key is empty");
  for (unsigned b : d.blocks)
    if (b < 1 || b > 1024) broken_promise("block size " + std::to_string(b) + " out of 1..1024");
  for (const auto& [key, line] : h.key_lines)
    if (line <= h.header_line) broken_promise("key '" + key + "' placed before the header");

  // What parse_header checked: every expression evaluates, with TSIZE=4 (every dtype kernlab has
  // today), GRID=1 and GRID=65536, to at least its minimum; the params are variables of the
  // expressions after them. A header with tunables is checked point by point (each point's
  // values are its first params), as the registry uses it.
  const std::int64_t grids[] = {1, 2, 3, 255, 65536, 1 << 20, 2147483647};  // up to CUDA's grid.x
  auto check = [&](const kl::variant_descriptor& d) {
    for (unsigned b : d.blocks) {
      const std::int64_t block = b;
      for (std::int64_t tsize : {1, 2, 4, 8, 16}) {
        const bool promised = tsize == 4;
        std::map<std::string, std::int64_t> vars = {{"BLOCK", block}, {"TSIZE", tsize}};
        bool params_ok = true;
        for (const auto& [name, text] : d.params) {
          std::int64_t p = 0;
          params_ok = params_ok && try_evaluate(text, vars, p);
          vars[name] = p;
        }
        if (!params_ok) {
          if (promised) broken_promise("params accepted but unusable");
          continue;
        }
        std::int64_t v = 0;
        if (!d.tile.empty()) {
          const bool ok = try_evaluate(d.tile, vars, v);
          if (promised && (!ok || v < 1))
            broken_promise("tile '" + d.tile + "' accepted but unusable");
        }
        const bool ok = try_evaluate(d.shared_bytes, vars, v);
        if (promised && (!ok || v < 0))
          broken_promise("shared_bytes '" + d.shared_bytes + "' accepted but unusable");
        if (!d.workspace.empty())
          for (std::int64_t grid : grids) {
            auto with_grid = vars;
            with_grid["GRID"] = grid;
            const bool ws_ok = try_evaluate(d.workspace, with_grid, v);
            if (promised && (grid == 1 || grid == 65536) && (!ws_ok || v < 0))
              broken_promise("workspace '" + d.workspace + "' accepted but unusable");
          }
      }
    }
  };
  if (h.points.empty()) {
    check(d);
  } else {
    for (const auto& point : h.points) check(point);
  }
  return 0;
}
