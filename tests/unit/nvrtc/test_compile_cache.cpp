// The compile cache without a GPU: its key (source, headers, pre-includes, options, blocks),
// its entries (format, checksum, damage), and the runner's hits and misses through it.
#include "families/family.hpp"
#include "nvrtc/cache_key.hpp"
#include "nvrtc/compile_cache.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>

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
    dir.write("include/kernlab/helper.cuh",
              "#pragma once\n#include \"detail.cuh\"\n#define HELP 1\n");
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
    nvrtc::include_scanner scanner(
        {test::cuda_include()});  // a new one sees the files as they are now
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
  EXPECT_TRUE(changed(
      [](nvrtc::compile_request& r) { r.include_dirs.insert(r.include_dirs.begin(), "/tmp"); }));
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
      EXPECT_EQ(d.path, fs::canonical(fs::path(test::cuda_include()) / "cuda_fp16.h").string());
    }
    if (d.spelled == "no_such_header.h") {
      missing = true;
      EXPECT_EQ(d.path, "");  // recorded as not found: creating it later changes the key
    }
    if (d.spelled == "kernlab/helper.cuh") {
      helper = true;
      EXPECT_FALSE(d.toolkit);
      EXPECT_EQ(d.content,
                nvrtc::hash128(test::read_file(dir.str() + "/include/kernlab/helper.cuh")));
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

// A symlink loop in an include folder costs the computed-include listing nothing but itself.
TEST_F(Key, AComputedIncludeListsPastASymlinkLoop) {
  req.source = "#define H <kernlab/helper.cuh>\n#include H\n" + req.source;
  fs::create_symlink("loop.cuh", dir.path() / "include/loop.cuh");
  for (const char* name : {"a", "b", "c", "d", "e", "f"})
    dir.write(std::string("include/more/") + name + ".cuh", "// 1\n");
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    const auto before = key();
    dir.write(std::string("include/more/") + name + ".cuh", "// 2\n");
    EXPECT_NE(key(), before) << name;
  }
}

// A chain of headers each including the next: the scanner once recursed per level and crashed
// at about 19,400 levels; now any chain past kMaxIncludeDepth is an error naming the file.
TEST_F(Key, ADeepIncludeChainIsAnErrorNamingTheFile) {
  const std::size_t levels = nvrtc::kMaxIncludeDepth + 50;
  for (std::size_t i = 0; i < levels; ++i)
    dir.write("include/chain/h" + std::to_string(i) + ".cuh",
              "#include \"h" + std::to_string(i + 1) + ".cuh\"\n");
  req.source = "#include <chain/h0.cuh>\n" + req.source;
  try {
    key();
    FAIL() << "expected a scan_error";
  } catch (const nvrtc::scan_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nested more than " + std::to_string(nvrtc::kMaxIncludeDepth) + " levels"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("/include/chain/h"), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;  // where the chain starts
  }
  // A chain inside the limit is followed to its end.
  dir.write("include/chain/h100.cuh", "#define END 1\n");
  EXPECT_NO_THROW(key());
}

// A header larger than any real one (here a sparse 1 GiB file outside the kernels folders) is
// refused by its size, never read whole into memory.
TEST_F(Key, AHugeHeaderIsRefusedUnread) {
  test::temp_dir outside{"key-outside"};
  const fs::path huge = outside.path() / "huge.h";
  std::ofstream(huge).put('x');
  fs::resize_file(huge, std::uintmax_t{1} << 30);
  req.source = "#include \"" + huge.string() + "\"\n" + req.source;
  try {
    key();
    FAIL() << "expected a scan_error";
  } catch (const nvrtc::scan_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(huge.string() + ": 1073741824 bytes"), std::string::npos) << what;
  }
}

// A FIFO where a header is named is not a header: the scan never blocks on it, and names it.
// (It was "not found", so NVRTC opened it and waited until --compile-timeout, naming nothing.)
TEST_F(Key, AFifoAsAHeaderIsAnErrorNamingIt) {
  const fs::path fifo = dir.path() / "include" / "fifo.cuh";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  req.source = "#include <fifo.cuh>\n" + req.source;
  nvrtc::include_scanner scanner({test::cuda_include()});
  try {
    scanner.scan(req);
    FAIL() << "expected a scan_error";
  } catch (const nvrtc::scan_error& e) {
    EXPECT_EQ(std::string(e.what()), fifo.string() + ": a FIFO, not a regular file, so no header");
  }
  // A folder at a header's name is passed over, as NVRTC passes it over.
  fs::remove(fifo);
  fs::create_directory(fifo);
  nvrtc::include_scanner again({test::cuda_include()});
  for (const auto& d : again.scan(req)) {
    if (d.spelled == "fifo.cuh") {
      EXPECT_EQ(d.path, "");
    }
  }
}

// NVRTC resolves "link/.." physically, to the parent of the link's target; so must the key.
TEST_F(Key, DotDotAfterASymlinkedFolderIsResolvedPhysically) {
  dir.write("include/real/sub/x.cuh", "// the link's target\n");
  fs::create_symlink("real/sub", dir.path() / "include/link");
  dir.write("include/which.cuh", "#define WHICH 1\n");       // lexically include/link/..
  dir.write("include/real/which.cuh", "#define WHICH 2\n");  // physically include/link/..
  req.source = "#include <link/../which.cuh>\n" + req.source;
  const auto before = key();
  dir.write("include/which.cuh", "#define WHICH 3\n");
  EXPECT_EQ(key(), before);
  dir.write("include/real/which.cuh", "#define WHICH 4\n");
  EXPECT_NE(key(), before);
}

// ---------------------------------------------------------------------------------------------
// Entries

nvrtc::compile_result sample_result() {
  nvrtc::compile_result r;
  r.ok = true;
  r.path = "kernels/reduce/k.cu";
  r.cubin = std::string(
      "\x7f"
      "ELF\0\1\2 binary \xff bytes",
      22);
  r.lowered_names = {{"k<128>", "_Z1kILj128EEvv"}, {"k<256>", "_Z1kILj256EEvv"}};
  r.resources["k<128>"] = {12, 512, 8, 4, 4};
  r.log = "ptxas info : Used 12 registers\n";
  r.options = {"--gpu-architecture=sm_90", "-std=c++17"};
  r.diagnostics = {{"kernels/reduce/k.cu", 3, "warning", "unused", "    int x;\n        ^"}};
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
  EXPECT_EQ(back.diagnostics[0].context, r.diagnostics[0].context);
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

// A folder, a FIFO or a device at an entry's name is a miss (never a blocking read of the FIFO,
// never an error), `cache info` counts it without opening it, and a store replaces it.
TEST(CacheStore, WhatIsNotAFileIsAMissThatAStoreReplaces) {
  test::temp_dir dir("store");
  const nvrtc::compile_cache cache(dir.path() / "c");
  cache.store(nvrtc::digest128{1, 1}, sample_result());  // one valid entry beside them
  const nvrtc::digest128 folder{2, 2}, fifo{3, 3}, device{4, 4};
  fs::create_directories(cache.entry_path(folder) / "inside");
  ASSERT_EQ(::mkfifo(cache.entry_path(fifo).c_str(), 0600), 0);
  fs::create_symlink("/dev/null", cache.entry_path(device));
  for (const auto& key : {folder, fifo, device}) {
    const auto found = cache.lookup(key);
    EXPECT_EQ(found.status, nvrtc::lookup_status::miss) << key.hex() << ": " << found.problem;
  }
  const auto info = cache.info();
  EXPECT_EQ(info.entries, 1u);
  EXPECT_EQ(info.not_files, 3u);
  EXPECT_EQ(info.damaged, 0u);
  {
    const nvrtc::compile_cache copy(dir.path() / "c2");  // `cache clear` removes them too
    fs::create_directories(copy.entry_path(folder) / "inside");
    EXPECT_EQ(copy.clear(), 1u);
    EXPECT_FALSE(fs::exists(copy.entry_path(folder)));
  }
  for (const auto& key : {folder, fifo, device}) {
    cache.store(key, sample_result());
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(cache.entry_path(key)))) << key.hex();
    EXPECT_EQ(cache.lookup(key).status, nvrtc::lookup_status::hit) << key.hex();
  }
  EXPECT_EQ(cache.info().not_files, 0u);
}

// Entries whose last use (mtime) is set one minute apart, oldest first.
std::vector<nvrtc::digest128> aged_entries(const nvrtc::compile_cache& cache, int n) {
  std::vector<nvrtc::digest128> keys;
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < n; ++i) {
    keys.push_back({static_cast<std::uint64_t>(i + 1), 42});
    cache.store(keys.back(), sample_result());
    fs::last_write_time(cache.entry_path(keys.back()), now - std::chrono::minutes(60 - i));
  }
  return keys;
}

TEST(CachePrune, TheLeastRecentlyUsedGoFirstAndAHitCountsAsAUse) {
  test::temp_dir dir("prune");
  const nvrtc::compile_cache cache(dir.path() / "c");
  const auto keys = aged_entries(cache, 5);
  const std::uint64_t each = fs::file_size(cache.entry_path(keys[0]));
  ASSERT_EQ(cache.lookup(keys[0]).status, nvrtc::lookup_status::hit);  // the oldest, used now

  const nvrtc::prune_result r = cache.prune(3 * each);
  EXPECT_EQ(r.removed, 2u);
  EXPECT_EQ(r.removed_bytes, 2 * each);
  EXPECT_EQ(r.kept, 3u);
  EXPECT_EQ(r.kept_bytes, 3 * each);
  EXPECT_FALSE(r.skipped);
  for (int i : {1, 2}) EXPECT_FALSE(fs::exists(cache.entry_path(keys[i]))) << i;
  for (int i : {0, 3, 4}) EXPECT_EQ(cache.lookup(keys[i]).status, nvrtc::lookup_status::hit) << i;

  EXPECT_EQ(cache.prune(3 * each).removed, 0u);  // under the cap: nothing to do
  EXPECT_EQ(cache.prune(0).kept, 0u);
  EXPECT_EQ(cache.info().entries, 0u);
  EXPECT_TRUE(fs::exists(dir.path() / "c" / "entries"));  // the folder and the lock stay
}

TEST(CachePrune, InfoShowsTheCapAndPruneRemovesWhatIsNotAFile) {
  test::temp_dir dir("prune");
  const nvrtc::compile_cache cache(dir.path() / "c", 12345);
  EXPECT_EQ(cache.max_bytes(), 12345u);
  aged_entries(cache, 2);
  fs::create_directories(cache.entry_path({9, 9}));
  EXPECT_EQ(cache.info().max_bytes, 12345u);
  EXPECT_EQ(cache.info().not_files, 1u);
  const auto r = cache.prune(cache.max_bytes());
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.kept, 2u);
  EXPECT_EQ(cache.info().not_files, 0u);
}

// A process that looks entries up while another prunes them all sees each one whole or not at
// all: a miss, never a damaged entry.
TEST(CachePrune, ALookupDuringAPruneIsAHitOrAMiss) {
  test::temp_dir dir("prune");
  const nvrtc::compile_cache cache(dir.path() / "c");
  for (int round = 0; round < 5; ++round) {
    const auto keys = aged_entries(cache, 40);
    std::atomic<bool> done{false};
    std::size_t corrupt = 0;
    std::thread reader([&] {
      while (!done)
        for (const auto& k : keys)
          corrupt += cache.lookup(k).status == nvrtc::lookup_status::corrupt;
    });
    cache.prune(0);
    done = true;
    reader.join();
    EXPECT_EQ(corrupt, 0u);
  }
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
    test::register_shipped_families(fams);
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
    return std::make_shared<const nvrtc::compile_cache>(dir.path() / "cache", cap);
  }
  // Compiles the copies through the cache. Each call sees the files as they are on disk now, in
  // a new registry: the records of an earlier call must not be asked for their entry.
  sweep_result compile(std::vector<unsigned> blocks = {128, 256}, const std::string& arch = "sm_90",
                       unsigned jobs = 2, bool cached = true, bool want_keys = false) {
    reg = std::make_unique<registry>(fams);
    reg->add_source_dir(kernels());
    run_request r;
    r.variants = reg->select({"all"});
    r.blocks = std::move(blocks);
    r.dtypes = {"int32"};
    r.ops = {"sum"};
    r.axes = {axis_choice::sizes({1})};
    r.include_dirs = {kernels() + "/include", test::cuda_include()};
    r.toolkit_include_dirs = {test::cuda_include()};
    r.fallback_arch = arch;
    r.compile_only = true;
    r.compile_jobs = jobs;
    r.cache = cached ? cache() : nullptr;
    r.want_keys = want_keys;
    r.compile_command = compile_command;
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
  std::uint64_t cap = nvrtc::kDefaultCacheMaxBytes;
  std::vector<std::string> compile_command;  ///< empty: NVRTC in the test process
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
    for (const auto& [expr, res] : a.resources)
      EXPECT_EQ(b.resources.at(expr).registers, res.registers);
  }
  const auto info = nvrtc::compile_cache(dir.path() / "cache").info();
  EXPECT_EQ(info.entries, 3u);
  EXPECT_EQ(info.counters.runs, 2u);
  EXPECT_EQ(info.counters.hits, 3u);
  EXPECT_EQ(info.counters.misses, 3u);
}

// Misses compile in a child process, as the kernlab binary has them, and are stored like those
// compiled in process; a hit starts no process at all (the command below would fail any file).
TEST_F(CachedRuns, MissesCompileInAChildAndHitsStartNothing) {
  compile_command = {KERNLAB_BINARY, "--compile-child"};
  EXPECT_EQ(uses(compile()), all(cache_use::miss));
  compile_command = {"/bin/false"};
  EXPECT_EQ(uses(compile()), all(cache_use::hit));
  edit("reduce/reduce2.cu", "__syncthreads();", "__syncthreads();  // edited");
  const auto sweep = compile();
  for (const auto& c : sweep.compiles)
    if (c.entry->descriptor.name == "reduce2")
      EXPECT_NE(c.error.find("its process (/bin/false) exited with code 1"), std::string::npos)
          << c.error;
    else
      EXPECT_EQ(c.cache, cache_use::hit);
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
  edit("reduce/reduce5.cu", "#include <kernlab/reduce.cuh>",
       "#include <kernlab/reduce.cuh>\n#include <kernlab/only5.cuh>");
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
  EXPECT_EQ(uses(other_arch), all(cache_use::miss));                         // the architecture
  EXPECT_EQ(uses(compile({128, 256, 512}, "sm_90")), all(cache_use::miss));  // a block list
  EXPECT_EQ(uses(compile({128, 256}, "sm_90")), all(cache_use::hit));        // the first again
  EXPECT_EQ(uses(compile({128, 256}, "sm_90", 1)), all(cache_use::hit));     // jobs: not in the key
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

// The stale hit of the issue: a header reached as "link/../h" where `link` is a symlinked folder.
// NVRTC opens the link target's sibling; a key that resolved ".." lexically hashed another file,
// so editing the one NVRTC reads gave a hit while a fresh compile failed.
TEST_F(CachedRuns, ASymlinkedFolderAndDotDotNeverGiveAStaleHit) {
  dir.write("kernels/include/kernlab/real/sub/keep.cuh", "\n");
  fs::create_symlink("real/sub", dir.path() / "kernels/include/kernlab/link");
  dir.write("kernels/include/kernlab/extra.cuh", "#define EXTRA 1\n");
  dir.write("kernels/include/kernlab/real/extra.cuh", "#define EXTRA 2\n");
  edit("reduce/reduce0.cu", "#include <kernlab/reduce.cuh>",
       "#include <kernlab/reduce.cuh>\n#include <kernlab/link/../extra.cuh>");
  EXPECT_EQ(uses(compile()), all(cache_use::miss));
  dir.write("kernels/include/kernlab/real/extra.cuh", "#error the header NVRTC reads\n");
  const auto s = compile();
  for (const auto& c : s.compiles) {
    if (c.entry->descriptor.name != "reduce0") continue;
    EXPECT_EQ(c.cache, cache_use::miss);
    EXPECT_NE(c.error.find("the header NVRTC reads"), std::string::npos) << c.error;
  }
}

// Without a cache nothing needs a key, so no header is scanned: a header the scanner would refuse
// (nested too deep) costs nothing but NVRTC's own verdict. --watch asks for keys (want_keys).
TEST_F(CachedRuns, WithoutACacheNoHeaderIsScanned) {
  const std::size_t levels = nvrtc::kMaxIncludeDepth + 20;
  for (std::size_t i = 0; i < levels; ++i)
    dir.write("kernels/include/kernlab/deep" + std::to_string(i) + ".cuh",
              i + 1 < levels ? "#include \"deep" + std::to_string(i + 1) + ".cuh\"\n" : "\n");
  edit("reduce/reduce0.cu", "#include <kernlab/reduce.cuh>",
       "#include <kernlab/reduce.cuh>\n#ifdef NEVER\n#include <kernlab/deep0.cuh>\n#endif");
  const auto cached = compile();
  for (const auto& c : cached.compiles) {
    if (c.entry->descriptor.name == "reduce0") {
      EXPECT_NE(c.error.find("nested more than"), std::string::npos) << c.error;
    }
  }
  const auto uncached = compile({128, 256}, "sm_90", 2, false);
  EXPECT_EQ(uses(uncached), all(cache_use::off));
  for (const auto& c : uncached.compiles) EXPECT_EQ(c.key, "");
  const auto watched = compile({128, 256}, "sm_90", 2, false, true);
  for (const auto& c : watched.compiles) {
    if (c.entry->descriptor.name == "reduce0") {
      EXPECT_NE(c.error.find("nested more than"), std::string::npos) << c.error;
    } else {
      EXPECT_EQ(c.key.size(), 32u);
    }
  }
}

// A run that stored entries prunes the cache down to its cap; a run of hits stores nothing and
// does not even list the folder.
TEST_F(CachedRuns, ARunThatStoresKeepsTheCap) {
  EXPECT_EQ(uses(compile()), all(cache_use::miss));
  const fs::path entries = dir.path() / "cache" / "entries";
  ASSERT_TRUE(fs::remove(dir.path() / "cache" / "prune.lock"));  // the first run pruned
  cap = 0;
  EXPECT_EQ(uses(compile()), all(cache_use::hit));
  EXPECT_EQ(nvrtc::compile_cache(dir.path() / "cache").info().entries, 3u);
  EXPECT_FALSE(fs::exists(dir.path() / "cache" / "prune.lock"));  // no prune was tried
  edit("reduce/reduce0.cu", "#include <kernlab/reduce.cuh>",
       "#include <kernlab/reduce.cuh>\n// edited");
  const auto s = compile();
  EXPECT_EQ(s.compile_stats.misses, 1u);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(nvrtc::compile_cache(dir.path() / "cache").info().entries, 0u);  // all above a 0 cap
  EXPECT_TRUE(fs::is_directory(entries));
}

TEST_F(CachedRuns, CompileErrorsAreNeverStored) {
  dir.write(
      "kernels/reduce/broken.cu",
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
