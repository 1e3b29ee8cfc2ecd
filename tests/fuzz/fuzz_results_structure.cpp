// libFuzzer target: the readers of results files, fed results files mutated as JSON rather than
// as bytes (a custom mutator), so that the mutations stay deep inside files the reader takes:
// a value replaced by another of the wrong type, by a value nested thousands deep, by a huge,
// overflowing or negative number, or by a string that is not UTF-8; a key removed; a record or a
// pipeline row repeated. The seeds are real results files (tests/fuzz/corpus/results_structure/
// and, through scripts/fuzz.sh, corpus/results/). What is done with each input and the promises
// checked: tests/fuzz/results_harness.hpp.
#include "core/json_text.hpp"
#include "results_harness.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max);

namespace {

using nlohmann::json;
using rng = std::minstd_rand;

// A string that stands for raw text in the document: replaced after it is written out, since
// JSON itself cannot hold an overflowing number or a string that is not UTF-8.
const std::string raw_mark = "\x01kl-raw-";

// Every value of the document, containers included, so that one can be picked at random.
void collect(json& j, std::vector<json*>& out) {
  out.push_back(&j);
  if (j.is_structured())
    for (auto& child : j) collect(child, out);
}

std::size_t pick(rng& r, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(r);
}

// Raw texts a value may become: numbers JSON parsers turn into infinities or refuse, strings
// with Latin-1, cut UTF-8 sequences, surrogates and control bytes.
const char* const raw_texts[] = {"1e999",
                                 "-1e999",
                                 "NaN",
                                 "-0",
                                 "1e-400",
                                 "18446744073709551616",
                                 "-9223372036854775809",
                                 "\"caf\xe9\"",
                                 "\"\xc3\"",
                                 "\"\xed\xa0\x80\"",
                                 "\"\xf4\x90\x80\x80\"",
                                 "\"a\001b\"",
                                 "\"\\ud800\"",
                                 "\"\\u0000\""};

// A value nested `depth` deep: arrays, objects, or both in turn.
std::string deep_text(rng& r) {
  const std::size_t depth = std::size_t{1} << pick(r, 18);
  const int kind = static_cast<int>(pick(r, 3));
  std::string open, close;
  for (std::size_t i = 0; i < depth; ++i) {
    const bool array = kind == 0 || (kind == 2 && i % 2 == 0);
    open += array ? "[" : "{\"k\":";
    close += array ? "]" : "}";
  }
  return open + "1" + std::string(close.rbegin(), close.rend());
}

json replacement(rng& r, std::vector<std::string>& raws) {
  switch (pick(r, 10)) {
    case 0: return nullptr;
    case 1: return pick(r, 2) == 0;
    case 2: return json::array();
    case 3: return json::object();
    case 4: return std::string(pick(r, 3) == 0 ? 100000 : 8, 'x');
    case 5: {
      const double huge[] = {1e308, -1e308, 1.7976931348623157e308, 4.9e-324, -1, 0, 4294967296.0,
                             1e19,  0.5};
      return huge[pick(r, std::size(huge))];
    }
    case 6: return std::numeric_limits<std::int64_t>::min();
    case 7: return std::numeric_limits<std::uint64_t>::max();
    case 8: raws.push_back(deep_text(r)); break;
    default: raws.push_back(raw_texts[pick(r, std::size(raw_texts))]); break;
  }
  return raw_mark + std::to_string(raws.size() - 1);
}

// One structural change to `doc`.
void mutate(json& doc, rng& r, std::vector<std::string>& raws) {
  std::vector<json*> values;
  collect(doc, values);
  json& v = *values[pick(r, values.size())];
  const std::size_t what = pick(r, 4);
  if (what == 0 && v.is_object() && !v.empty()) {
    auto it = v.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(r, v.size())));
    v.erase(it);
  } else if (what == 1 && v.is_array() && !v.empty()) {
    const json copy = v[pick(r, v.size())];
    for (std::size_t n = 1 + pick(r, 64); n > 0; --n) v.push_back(copy);
  } else {
    v = replacement(r, raws);
  }
}

// The document's text with each raw mark replaced by its raw text.
std::string written(const json& doc, const std::vector<std::string>& raws) {
  std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  for (std::size_t i = 0; i < raws.size(); ++i) {
    const std::string mark = json(raw_mark + std::to_string(i)).dump();
    const auto at = text.find(mark);
    if (at != std::string::npos) text.replace(at, mark.size(), raws[i]);
  }
  return text;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  rng r(seed);
  // Bytes that are no JSON document kernlab reads (or two times in ten at random): libFuzzer's
  // own mutations. A document nested deeper than the reader takes is one of those: walking it
  // here would recurse as deep.
  json doc;
  try {
    doc = kl::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception&) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  if (pick(r, 10) < 2) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<std::string> raws;
  for (std::size_t n = 1 + pick(r, 3); n > 0; --n) mutate(doc, r, raws);
  const std::string text = written(doc, raws);
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_results_readers(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
