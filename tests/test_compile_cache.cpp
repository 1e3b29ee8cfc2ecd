// The compile cache without a GPU: its key (source, headers, pre-includes, options, blocks),
// its entries (format, checksum, damage), and the runner's hits and misses through it.
#include "families/family.hpp"
#include "nvrtc/cache_key.hpp"
#include "nvrtc/compile_cache.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace kl {
namespace {

// ---------------------------------------------------------------------------------------------
// Hashing and keys

TEST(CacheKey, FieldsAreLengthPrefixed) {
  nvrtc::hasher a, b;
  a.field("ab").field("c");
  b.field("a").field("bc");
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_EQ(a.digest().hex().size(), 32u);
  nvrtc::hasher c;
  c.field("ab").field("c");
  EXPECT_EQ(a.digest(), c.digest());
}

class Key : public ::testing::Test {
 protected:
  Key() {
    dir.write("include/kernlab/helper.cuh", "#pragma once\n#include \"detail.cuh\"\n#define HELP 1\n");
    dir.write("include/kernlab/detail.cuh", "#define DETAIL 1\n");
    dir.write("include/kernlab/pre.cuh", "#define PRE 1\n");
    dir.write("include/unused.cuh", "#define UNUSED 1\n");
    path = dir.write("reduce/k.cu", "#include <kernlab/helper.cuh>\n__global__ void k() {}\n");
    req.source = test::read_file(path);
    req.path = path;
    req.name_expressions = {"k"};
    req.include_dirs = {dir.str() + "/include", test::cuda_include()};
    req.pre_includes = {"kernlab/pre.cuh"};
  }
  nvrtc::digest128 key() {
    nvrtc::include_scanner scanner({test::cuda_include()});  // a new one sees the files as they are now
    return nvrtc::make_key(req, scanner);
  }
  test::temp_dir dir{"key"};
  std::string path;
  nvrtc::compile_request req;
};

TEST_F(Key, SameInputsSameKey) { EXPECT_EQ(key(), key()); }

TEST_F(Key, SourceTextChangesIt) {
  const auto before = key();
  req.source += "// one more line\n";
  EXPECT_NE(key(), before);
}

TEST_F(Key, IncludedHeadersChangeIt) {
  const auto before = key();
  dir.write("include/kernlab/detail.cuh", "#define DETAIL 2\n");  // reached through helper.cuh
  const auto after_detail = key();
  EXPECT_NE(after_detail, before);
  dir.write("include/unused.cuh", "#define UNUSED 2\n");  // included by nothing
  EXPECT_EQ(key(), after_detail);
}

TEST_F(Key, ThePreIncludeChangesIt) {
  const auto before = key();
  dir.write("include/kernlab/pre.cuh", "#define PRE 2\n");
  EXPECT_NE(key(), before);
  const auto with = key();
  req.pre_includes.clear();
  EXPECT_NE(key(), with);
}

TEST_F(Key, OptionsArchAndInstantiationsChangeIt) {
  const auto before = key();
  auto changed = [&](auto edit) {
    nvrtc::compile_request saved = req;
    edit(req);
    const bool differs = key() != before;
    req = saved;
    return differs;
  };
  EXPECT_TRUE(changed([](nvrtc::compile_request& r) { r.arch = "sm_80"; }));
  EXPECT_TRUE(changed([](nvrtc::compile_request& r) { r.extra_options.push_back("-DX=1"); }));
  EXPECT_TRUE(changed([](nvrtc::compile_request& r) { r.include_dirs.insert(r.include_dirs.begin(), "/tmp"); }));
  EXPECT_TRUE(changed([](nvrtc::compile_request& r) { r.name_expressions.push_back("k2"); }));
  EXPECT_TRUE(changed([](nvrtc::compile_request& r) { r.path += ".copy"; }));
  EXPECT_FALSE(changed([](nvrtc::compile_request&) {}));
}

TEST_F(Key, QuotedIncludesAreFoundBesideTheFileFirst) {
  req.source = "#include \"local.cuh\"\n" + req.source;
  dir.write("reduce/local.cuh", "#define LOCAL 1\n");
  const auto before = key();
  dir.write("reduce/local.cuh", "#define LOCAL 2\n");
  EXPECT_NE(key(), before);
}

TEST_F(Key, ToolkitHeadersAreLocatedNotRead) {
  req.source = "#include <cuda_fp16.h>\n#include <no_such_header.h>\n" + req.source;
  nvrtc::include_scanner scanner({test::cuda_include()});
  const auto deps = scanner.scan(req);
  bool fp16 = false, missing = false, helper = false;
  for (const auto& d : deps) {
    if (d.spelled == "cuda_fp16.h") {
      fp16 = true;
      EXPECT_TRUE(d.toolkit);
      EXPECT_EQ(d.path, (fs::path(test::cuda_include()) / "cuda_fp16.h").lexically_normal().string());
    }
    if (d.spelled == "no_such_header.h") {
      missing = true;
      EXPECT_EQ(d.path, "");  // recorded as not found: creating it later changes the key
    }
    if (d.spelled == "kernlab/helper.cuh") {
      helper = true;
      EXPECT_FALSE(d.toolkit);
      EXPECT_EQ(d.content, nvrtc::hash128(test::read_file(dir.str() + "/include/kernlab/helper.cuh")));
    }
  }
  EXPECT_TRUE(fp16 && missing && helper);
  // A header that appears where none was found before changes the key.
  const auto before = key();
  dir.write("include/no_such_header.h", "#define NOW 1\n");
  EXPECT_NE(key(), before);
}

TEST_F(Key, AComputedIncludeKeysOnEveryKernelsHeader) {
  req.source = "#define H <kernlab/helper.cuh>\n#include H\n" + req.source;
  const auto before = key();
  dir.write("include/unused.cuh", "#define UNUSED 3\n");  // it might be the one H names
  EXPECT_NE(key(), before);
}

// ---------------------------------------------------------------------------------------------
// Entries

nvrtc::compile_result sample_result() {
  nvrtc::compile_result r;
  r.ok = true;
  r.path = "kernels/reduce/k.cu";
  r.cubin = std::string("\x7f" "ELF\0\1\2 binary \xff bytes", 22);
  r.lowered_names = {{"k<128>", "_Z1kILj128EEvv"}, {"k<256>", "_Z1kILj256EEvv"}};
  r.resources["k<128>"] = {12, 512, 8, 4, 4};
  r.log = "ptxas info : Used 12 registers\n";
  r.options = {"--gpu-architecture=sm_90", "-std=c++17"};
  r.diagnostics = {{"kernels/reduce/k.cu", 3, "warning", "unused"}};
  r.milliseconds = 81.5;
  return r;
}

TEST(CacheEntry, RoundTrips) {
  const nvrtc::digest128 key{1, 2};
  const auto r = sample_result();
  const auto back = nvrtc::decode_entry(key, nvrtc::encode_entry(key, r));
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.path, r.path);
  EXPECT_EQ(back.cubin, r.cubin);
  EXPECT_EQ(back.lowered_names, r.lowered_names);
  ASSERT_EQ(back.resources.size(), 1u);
  EXPECT_EQ(back.resources.at("k<128>").registers, 12);
  EXPECT_EQ(back.resources.at("k<128>").static_shared_bytes, 512);
  EXPECT_EQ(back.resources.at("k<128>").spill_load_bytes, 4);
  EXPECT_EQ(back.log, r.log);
  EXPECT_EQ(back.options, r.options);
  ASSERT_EQ(back.diagnostics.size(), 1u);
  EXPECT_EQ(back.diagnostics[0].to_string(), r.diagnostics[0].to_string());
  EXPECT_DOUBLE_EQ(back.milliseconds, 81.5);
}

TEST(CacheEntry, EveryKindOfDamageIsDetected) {
  const nvrtc::digest128 key{1, 2};
  const std::string good = nvrtc::encode_entry(key, sample_result());
  auto problem = [&](const std::string& bytes, const nvrtc::digest128& k) -> std::string {
    try {
      nvrtc::decode_entry(k, bytes);
      return "";
    } catch (const nvrtc::cache_error& e) {
      return e.what();
    }
  };
  EXPECT_EQ(problem(good, key), "");
  EXPECT_NE(problem(good.substr(0, good.size() - 1), key).find("truncated"), std::string::npos);
  EXPECT_NE(problem(good.substr(0, 20), key).find("truncated"), std::string::npos);
  EXPECT_NE(problem("", key).find("truncated"), std::string::npos);
  std::string flipped = good;
  flipped[good.size() - 5] ^= 0x01;
  EXPECT_NE(problem(flipped, key).find("checksum"), std::string::npos);
  EXPECT_NE(problem(good, {1, 3}).find("another key"), std::string::npos);
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_NE(problem(magic, key).find("not a kernlab cache entry"), std::string::npos);
  std::string version = good;
  version[8] = 9;
  EXPECT_NE(problem(version, key).find("format version"), std::string::npos);
}

TEST(CacheStore, StoresAtomicallyAndFindsIt) {
  test::temp_dir dir("store");
  const nvrtc::compile_cache cache(dir.path() / "c");
  const nvrtc::digest128 key{7, 8};
  EXPECT_EQ(cache.lookup(key).status, nvrtc::lookup_status::miss);
  cache.store(key, sample_result());
  const auto found = cache.lookup(key);
  ASSERT_EQ(found.status, nvrtc::lookup_status::hit) << found.problem;
  EXPECT_EQ(found.result.cubin, sample_result().cubin);
  cache.store(key, sample_result());  // replacing an entry is fine
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "c" / "entries")) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".klc") << e.path();  // no temporary file is left
  }
  EXPECT_EQ(files, 1u);
  nvrtc::compile_result failed;
  EXPECT_THROW(cache.store(key, failed), nvrtc::cache_error);  // compile errors are not stored
}

TEST(CacheStore, DefaultFolderFollowsXdg) {
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string keep = saved ? saved : "";
  setenv("XDG_CACHE_HOME", "/some/where", 1);
  EXPECT_EQ(nvrtc::default_cache_dir(), fs::path("/some/where/kernlab"));
  setenv("XDG_CACHE_HOME", "relative/is/ignored", 1);
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(nvrtc::default_cache_dir(), fs::path(home) / ".cache" / "kernlab");
  }
  setenv("XDG_CACHE_HOME", keep.c_str(), 1);
}

TEST(CacheStore, InfoCountsAndClearRemovesOnlyItsOwnFiles) {
  test::temp_dir dir("info");
  const nvrtc::compile_cache cache(dir.path());
  EXPECT_EQ(cache.clear(), 0u);  // nothing there yet: fine
  cache.store({1, 1}, sample_result());
  cache.store({2, 2}, sample_result());
  dir.write("entries/" + nvrtc::digest128{3, 3}.hex() + ".klc", "garbage");
  dir.write("entries/.tmp-left-behind", "half an entry");
  dir.write("entries/notes.txt", "the user's file");
  dir.write("mine.txt", "the user's other file");
  nvrtc::cache_counters run;
  run.runs = 1;
  run.hits = 5;
  run.misses = 2;
  cache.add_counters(run);
  cache.add_counters(run);

  const auto info = cache.info();
  EXPECT_TRUE(info.exists);
  EXPECT_EQ(info.entries, 3u);
  EXPECT_EQ(info.damaged, 1u);
  EXPECT_EQ(info.temporary_files, 1u);
  EXPECT_DOUBLE_EQ(info.compile_ms, 2 * 81.5);
  EXPECT_EQ(info.counters.runs, 2u);
  EXPECT_EQ(info.counters.hits, 10u);
  EXPECT_EQ(info.counters.misses, 4u);

  EXPECT_EQ(cache.clear(), 3u);
  EXPECT_TRUE(fs::exists(dir.path() / "entries" / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir.path() / "mine.txt"));
  EXPECT_FALSE(fs::exists(dir.path() / "entries" / ".tmp-left-behind"));
  const auto after = cache.info();
  EXPECT_EQ(after.entries, 0u);
  EXPECT_EQ(after.counters.runs, 0u);
}

// ---------------------------------------------------------------------------------------------
// The runner through the cache

// A copy of three shipped kernels and the kernels' headers, a cache folder beside them.
class CachedRuns : public ::testing::Test {
 protected:
  CachedRuns() {
    register_builtin_families(fams);
    fs::create_directories(dir.path() / "kernels");
    fs::copy(test::kernels_dir() + "/include", dir.path() / "kernels" / "include",
             fs::copy_options::recursive);
    fs::create_directories(dir.path() / "kernels" / "reduce");
    for (const char* v : {"reduce0", "reduce2", "reduce5"})
      fs::copy(test::kernels_dir() + "/reduce/" + v + ".cu",
               dir.path() / "kernels" / "reduce" / (std::string(v) + ".cu"));
  }
  std::string kernels() const { return dir.str() + "/kernels"; }
  std::shared_ptr<const nvrtc::compile_cache> cache() const {
    return std::make_shared<const nvrtc::compile_cache>(dir.path() / "cache");
  }
  // Compiles the copies through the cache. Each call sees the files as they are on disk now, in
  // a new registry: the records of an earlier call must not be asked for their entry.
  sweep_result compile(std::vector<unsigned> blocks = {128, 256}, const std::string& arch = "sm_90",
                       unsigned jobs = 2) {
    reg = std::make_unique<registry>(fams);
    reg->add_source_dir(kernels());
    run_request r;
    r.variants = reg->select({"all"});
    r.blocks = std::move(blocks);
    r.dtypes = {"int32"};
    r.ops = {"sum"};
    r.sizes = {1};
    r.include_dirs = {kernels() + "/include", test::cuda_include()};
    r.toolkit_include_dirs = {test::cuda_include()};
    r.fallback_arch = arch;
    r.compile_only = true;
    r.compile_jobs = jobs;
    r.cache = cache();
    return runner(fams, r).run();
  }
  static std::map<std::string, cache_use> uses(const sweep_result& s) {
    std::map<std::string, cache_use> out;
    for (const auto& c : s.compiles) {
      EXPECT_EQ(c.error, "") << c.entry->descriptor.name;
      out[c.entry->descriptor.name] = c.cache;
    }
    return out;
  }
  static std::map<std::string, cache_use> all(cache_use u) {
    return {{"reduce0", u}, {"reduce2", u}, {"reduce5", u}};
  }
  void edit(const std::string& relative, const std::string& from, const std::string& to) {
    ASSERT_TRUE(test::replace_in_file(kernels() + "/" + relative, from, to)) << from;
  }

  family_registry fams;
  std::unique_ptr<registry> reg;
  test::temp_dir dir{"cached"};
};

TEST_F(CachedRuns, HitAfterMissWithTheSameImage) {
  const auto first = compile();
  EXPECT_EQ(uses(first), all(cache_use::miss));
  EXPECT_EQ(first.compile_stats.misses, 3u);
  EXPECT_TRUE(first.warnings.empty());
  const auto second = compile();
  EXPECT_EQ(uses(second), all(cache_use::hit));
  EXPECT_EQ(second.compile_stats.hits, 3u);
  ASSERT_EQ(second.compiles.size(), first.compiles.size());
  for (std::size_t i = 0; i < first.compiles.size(); ++i) {
    const auto& a = first.compiles[i].result;
    const auto& b = second.compiles[i].result;
    EXPECT_EQ(first.compiles[i].key, second.compiles[i].key);
    EXPECT_EQ(a.cubin, b.cubin);
    EXPECT_EQ(a.lowered_names, b.lowered_names);
    EXPECT_EQ(a.log, b.log);
    ASSERT_EQ(a.resources.size(), b.resources.size());
    for (const auto& [expr, res] : a.resources) EXPECT_EQ(b.resources.at(expr).registers, res.registers);
  }
  const auto info = nvrtc::compile_cache(dir.path() / "cache").info();
  EXPECT_EQ(info.entries, 3u);
  EXPECT_EQ(info.counters.runs, 2u);
  EXPECT_EQ(info.counters.hits, 3u);
  EXPECT_EQ(info.counters.misses, 3u);
}

TEST_F(CachedRuns, EditingOneLineMissesThatFileOnly) {
  compile();
  edit("reduce/reduce2.cu", "__syncthreads();", "__syncthreads();  // edited");
  auto expected = all(cache_use::hit);
  expected["reduce2"] = cache_use::miss;
  EXPECT_EQ(uses(compile()), expected);
  EXPECT_EQ(uses(compile()), all(cache_use::hit));
}

TEST_F(CachedRuns, EditingAnIncludedHeaderMissesItsIncluders) {
  compile();
  edit("include/kernlab/reduce.cuh", "#pragma once", "#pragma once\n// edited");
  EXPECT_EQ(uses(compile()), all(cache_use::miss));
  // A header only reduce5 includes: only reduce5 misses when it changes.
  dir.write("kernels/include/kernlab/only5.cuh", "#define ONLY5 1\n");
  edit("reduce/reduce5.cu", "#include <kernlab/reduce.cuh>", "#include <kernlab/reduce.cuh>\n#include <kernlab/only5.cuh>");
  compile();
  dir.write("kernels/include/kernlab/only5.cuh", "#define ONLY5 2\n");
  auto expected = all(cache_use::hit);
  expected["reduce5"] = cache_use::miss;
  EXPECT_EQ(uses(compile()), expected);
}

TEST_F(CachedRuns, AnOptionOrABlockListChangeMisses) {
  compile({128, 256}, "sm_90");
  // kernlab_tests sees no GPU, so the fallback architecture is the one compiled for (with a GPU
  // the device's own is: GpuCompile.TheDevicesArchitectureReplacesTheFallback).
  const auto other_arch = compile({128, 256}, "sm_80");
  ASSERT_EQ(other_arch.arch, "sm_80") << other_arch.no_device_reason;
  EXPECT_EQ(uses(other_arch), all(cache_use::miss));  // the architecture
  EXPECT_EQ(uses(compile({128, 256, 512}, "sm_90")), all(cache_use::miss));      // a block list
  EXPECT_EQ(uses(compile({128, 256}, "sm_90")), all(cache_use::hit));            // the first again
  EXPECT_EQ(uses(compile({128, 256}, "sm_90", 1)), all(cache_use::hit));         // jobs: not in the key
}

TEST_F(CachedRuns, ADamagedEntryIsReportedOnceAndRebuilt) {
  const auto first = compile();
  const fs::path entry = dir.path() / "cache" / "entries" / (first.compiles[1].key + ".klc");
  ASSERT_TRUE(fs::exists(entry)) << entry;
  fs::resize_file(entry, fs::file_size(entry) / 2);  // a crash half-way through a copy, say

  const auto second = compile();
  auto expected = all(cache_use::hit);
  expected[second.compiles[1].entry->descriptor.name] = cache_use::miss;
  EXPECT_EQ(uses(second), expected);
  ASSERT_EQ(second.warnings.size(), 1u);
  EXPECT_NE(second.warnings[0].find("damaged"), std::string::npos) << second.warnings[0];
  EXPECT_NE(second.warnings[0].find("truncated"), std::string::npos) << second.warnings[0];

  const auto third = compile();  // rebuilt: no warning, all hits
  EXPECT_EQ(uses(third), all(cache_use::hit));
  EXPECT_TRUE(third.warnings.empty());
  EXPECT_EQ(nvrtc::compile_cache(dir.path() / "cache").info().counters.corrupt, 1u);
}

TEST_F(CachedRuns, CompileErrorsAreNeverStored) {
  dir.write("kernels/reduce/broken.cu",
            "/* kernlab\nfamily: reduce\nentry: broken<BLOCK, T, OP>\nblocks: 128\ntile: BLOCK\n*/\n"
            "template <unsigned BLOCK, typename T, typename OP>\n"
            "__global__ void broken(const T* in, T* out, unsigned n) { out[0] = nope; }\n");
  for (int round = 0; round < 2; ++round) {
    const auto s = compile();
    for (const auto& c : s.compiles) {
      if (c.entry->descriptor.name != "broken") continue;
      EXPECT_EQ(c.cache, cache_use::miss);  // compiled again, so its log is shown again
      EXPECT_NE(c.error.find("\"nope\" is undefined"), std::string::npos) << c.error;
    }
    EXPECT_EQ(s.compile_stats.failed, 1u);
  }
  EXPECT_EQ(nvrtc::compile_cache(dir.path() / "cache").info().entries, 3u);
}

TEST_F(CachedRuns, AnUnwritableCacheWarnsOnceAndCompilesAnyway) {
  dir.write("cache", "a file where the cache folder should be");
  const auto s = compile();
  EXPECT_EQ(uses(s), all(cache_use::miss));
  ASSERT_GE(s.warnings.size(), 1u);
  EXPECT_EQ(test::count_of(s.warnings[0], "cannot store in the compile cache"), 1u);
  std::size_t store_warnings = 0;
  for (const auto& w : s.warnings) store_warnings += test::count_of(w, "cannot store");
  EXPECT_EQ(store_warnings, 1u);
}

TEST_F(CachedRuns, ParallelAndSerialCompilesAgree) {
  const auto serial = compile({128, 256}, "sm_90", 1);
  std::vector<std::string> serial_names;  // the next compile() replaces the registry
  for (const auto& c : serial.compiles) serial_names.push_back(c.entry->descriptor.name);
  fs::remove_all(dir.path() / "cache");
  const auto parallel = compile({128, 256}, "sm_90", 3);
  EXPECT_EQ(serial.compile_stats.jobs, 1u);
  EXPECT_EQ(parallel.compile_stats.jobs, 3u);
  ASSERT_EQ(serial.compiles.size(), parallel.compiles.size());
  for (std::size_t i = 0; i < serial.compiles.size(); ++i) {  // same order, same images
    EXPECT_EQ(serial_names[i], parallel.compiles[i].entry->descriptor.name);
    EXPECT_EQ(serial.compiles[i].result.cubin, parallel.compiles[i].result.cubin);
  }
}

}  // namespace
}  // namespace kl
