// Command-line parsing, the config file, and their errors.
#include "cli/options.hpp"
#include "core/errors.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace kl {
namespace {

cli_options parse(std::vector<const char*> args, const default_paths& d = {}) {
  args.insert(args.begin(), "kernlab");
  return parse_command_line(static_cast<int>(args.size()), args.data(), d);
}

TEST(Cli, Sizes) {
  EXPECT_EQ(parse_size("268435456"), 268435456u);
  EXPECT_EQ(parse_size("2^28"), 1u << 28);
  EXPECT_EQ(parse_size("2^20+3"), (1u << 20) + 3);
  EXPECT_EQ(parse_size("2^10-1"), 1023u);
  EXPECT_EQ(parse_size("16M"), 16u << 20);
  EXPECT_EQ(parse_size("1"), 1u);
  for (const char* bad : {"", "0", "-5", "2^", "abc", "2^99", "12x", "1-2"})
    EXPECT_THROW(parse_size(bad), usage_error) << bad;
}

// Found by tests/fuzz: a power or a K/M/G multiple that passed 2^64 wrapped around and was
// taken for a small size. Everything up to 2^60 is still a size.
TEST(Cli, SizesThatWouldWrap) {
  EXPECT_EQ(parse_size("2^60"), std::uint64_t{1} << 60);
  EXPECT_EQ(parse_size("1073741824G"), std::uint64_t{1} << 60);
  EXPECT_EQ(parse_size("1024^6"), std::uint64_t{1} << 60);
  EXPECT_EQ(parse_size("0^0"), 1u);
  for (const char* bad : {"21474836481^9", "4294967296^2", "2^61", "17179869185G", "1073741825G",
                          "1125899906842625K", "1099511627777M"})
    EXPECT_THROW(parse_size(bad), usage_error) << bad;
}

// Ranges FIRST:LAST[:STEP] in --size, --shape dimensions and --axis, LAST included when a step
// lands on it; each bad one names its option and item.
TEST(Cli, SizeRanges) {
  using sizes = std::vector<std::uint64_t>;
  EXPECT_EQ(parse_sizes("2^20:2^23:*2", "--size"), (sizes{1u << 20, 1u << 21, 1u << 22, 1u << 23}));
  EXPECT_EQ(parse_sizes("2^20:2^23", "--size"), parse_sizes("2^20:2^23:*2", "--size"));
  EXPECT_EQ(parse_sizes("1024:4000:+1024,7", "--size"), (sizes{1024, 2048, 3072, 7}));
  EXPECT_EQ(parse_sizes("1:100:*10", "--size"), (sizes{1, 10, 100}));
  EXPECT_EQ(parse_sizes("5:5", "--size"), sizes{5});
  EXPECT_EQ(parse_sizes("1:1024:*3", "--size"), (sizes{1, 3, 9, 27, 81, 243, 729}));
  // The last step stops short of 2^64 instead of wrapping around it.
  EXPECT_EQ(parse_sizes("2^59:2^60:*3", "--size"), sizes{std::uint64_t{1} << 59});
  EXPECT_EQ(parse_sizes("2^60-1:2^60:+2", "--size"), sizes{(std::uint64_t{1} << 60) - 1});
  EXPECT_EQ(parse_sizes("1:4096:+1", "--size").size(), max_range_values);
  for (const char* bad : {"2^28:2^20", "1:8:*1", "1:8:+0", "1:8:/2", "1:8:*", "1:8:*2:4",
                          "1:2^20:+1", "0:8", "1:x", ":8", "1:8:*2x", "1::*2"}) {
    try {
      parse_sizes(bad, "--axis K");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("--axis K"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_shapes("1024:4096:*2x512"),
            (std::vector<sizes>{{1024, 512}, {2048, 512}, {4096, 512}}));
  EXPECT_EQ(parse_shapes("2:3:+1x5x1:2:+1"),
            (std::vector<sizes>{{2, 5, 1}, {2, 5, 2}, {3, 5, 1}, {3, 5, 2}}));
  EXPECT_EQ(parse_shapes("17x33"), (std::vector<sizes>{{17, 33}}));
  for (const char* bad : {"1:8x0", "0:8x2", "1:2^31:*2x2", "1:64:+1x1:64:+1x1:2:+1", "8:1x2"}) {
    try {
      parse_shapes(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("--shape"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_real_range("0:1:+0.25", "--axis A"),
            (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(parse_real_range("0:1:+0.1", "--axis A")->size(), 11u);
  EXPECT_EQ(parse_real_range("-10:10:+10", "--axis A"), (std::vector<double>{-10, 0, 10}));
  EXPECT_EQ(parse_real_range("1e-3:1:*10", "--axis A")->size(), 4u);
  EXPECT_FALSE(parse_real_range("2.5", "--axis A"));
  for (const char* bad : {"0:1", "1:0:+1", "0:1:+0", "0:1:*10", "1:2:*1", "0:x:+1", "0:1:+nan"})
    EXPECT_THROW(parse_real_range(bad, "--axis A"), usage_error) << bad;

  // On the command line: a --size range, a --shape of ranges, and --axis ranges of each kind.
  EXPECT_EQ(parse({"--size", "2^10:2^12"}).axes.at(0).points.size(), 3u);
  EXPECT_EQ(parse({"--shape", "64:256:*2x32"}).axes.at(0).points.size(), 3u);
  const auto snr = parse({"--axis", "SNR_DB=5:20:+5"}).axes.at(0);
  ASSERT_EQ(snr.points.size(), 4u);
  EXPECT_EQ(std::get<std::uint64_t>(snr.points[1].at(0)), 10u);  // whole: a size range
  EXPECT_EQ(parse({"--axis", "SNR_DB=0:20:+5"}).axes.at(0).points.size(), 5u);  // 0: reals
  const auto real = parse({"--axis", "SNR_DB=-5:5:+2.5"}).axes.at(0);
  ASSERT_EQ(real.points.size(), 5u);
  EXPECT_EQ(std::get<double>(real.points[0].at(0)), -5.0);
  for (const auto& [arg, said] : std::vector<std::pair<const char*, const char*>>{
           {"K=2^10:2^5", "its first value is above its last"},
           {"SNR_DB=0.5:0.1:+0.1", "its first value is above its last"},
           {"SNR_DB=0:1.5", "needs a step"}}) {
    try {
      parse({"--axis", arg});
      ADD_FAILURE() << arg << " was accepted";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  }
}

// A config file's size is the one-axis families' (a family of several axes keeps its default
// shape); the command line's --size replaces it.
TEST(Cli, TheConfigFilesSizeIsTheOneAxisFamilies) {
  test::temp_dir dir("cli");
  default_paths d;
  d.config = dir.write("k.cfg", "size = 1000,2^10:2^11\n");
  const auto o = parse({}, d);
  ASSERT_EQ(o.axes.size(), 1u);
  EXPECT_TRUE(o.axes[0].one_axis_families_only);
  EXPECT_EQ(o.axes[0].points.size(), 3u);
  const auto cli = parse({"--size", "7"}, d);
  ASSERT_EQ(cli.axes.size(), 1u);
  EXPECT_FALSE(cli.axes[0].one_axis_families_only);
  EXPECT_EQ(std::get<std::uint64_t>(cli.axes[0].points.at(0).at(0)), 7u);
}

TEST(Cli, Blocks) {
  EXPECT_EQ(parse_blocks("all"), (std::vector<unsigned>{128, 256, 512, 1024}));
  EXPECT_EQ(parse_blocks("512"), std::vector<unsigned>{512});
  EXPECT_EQ(parse_blocks("128,256"), (std::vector<unsigned>{128, 256}));
  EXPECT_THROW(parse_blocks("0"), usage_error);
  EXPECT_THROW(parse_blocks("2048"), usage_error);
  EXPECT_THROW(parse_blocks("big"), usage_error);
}

TEST(Cli, TheReadmeCommand) {
  const auto o = parse({"--variant", "reduce5", "--block", "512"});
  EXPECT_EQ(o.variants, std::vector<std::string>{"reduce5"});
  EXPECT_EQ(o.blocks, std::vector<unsigned>{512});
  EXPECT_TRUE(o.blocks_explicit);
  EXPECT_EQ(o.dtypes, (std::vector<std::string>{"int32", "float32"}));
  EXPECT_TRUE(o.axes.empty());  // each family's default axes
}

TEST(Cli, ListsAndAliases) {
  const auto o = parse({"--variant", "reduce5,reduce6", "-v", "reduce*", "--problem", "reduce",
                        "--size", "1,2^20+3", "--dtype", "float32", "--op", "sum,max", "--seed",
                        "99", "--hot", "--max-noise", "1"});
  EXPECT_EQ(o.variants, (std::vector<std::string>{"reduce5", "reduce6", "reduce*"}));
  EXPECT_EQ(o.family, "reduce");
  ASSERT_EQ(o.axes.size(), 1u);
  EXPECT_EQ(o.axes[0].option, "--size");
  EXPECT_EQ(o.axes[0].points, (std::vector<std::vector<axis_number>>{
                                  {std::uint64_t{1}}, {(std::uint64_t{1} << 20) + 3}}));
  EXPECT_EQ(o.ops, (std::vector<std::string>{"sum", "max"}));
  EXPECT_EQ(o.seed, 99u);
  EXPECT_EQ(o.timing.flush, flush_mode::none);
  EXPECT_DOUBLE_EQ(o.timing.max_noise, 0.01);
}

TEST(Cli, FlushModes) {
  EXPECT_EQ(parse({}).timing.flush, flush_mode::read);
  EXPECT_EQ(parse({"--flush", "write"}).timing.flush, flush_mode::write);
  EXPECT_EQ(parse({"--flush", "none"}).timing.flush, flush_mode::none);
  EXPECT_THROW(parse({"--flush", "sideways"}), usage_error);
  EXPECT_THROW(parse({"--hot", "--flush", "read"}), usage_error);
}

TEST(Cli, Errors) {
  EXPECT_THROW(parse({"--nope"}), usage_error);
  EXPECT_THROW(parse({"--size", "lots"}), usage_error);
  EXPECT_THROW(parse({"--seed", "minus"}), usage_error);
  EXPECT_THROW(parse({"--input", "fuzzy"}), usage_error);
  EXPECT_THROW(parse({"--arch", "90"}), usage_error);
  EXPECT_THROW(parse({"--arch", "sm_77"}), usage_error);  // no occupancy data: refused, not sm_90's
  EXPECT_NO_THROW(parse({"--arch", "sm_75"}));
  EXPECT_NO_THROW(parse({"--arch", "sm_120"}));
  EXPECT_THROW(parse({"--family", "reduce", "--problem", "matmul"}), usage_error);
  EXPECT_THROW(parse({"--min-samples", "0"}), usage_error);
  EXPECT_THROW(parse({"--config", "/no/such/file.cfg"}), io_error);
}

// A list option given nothing (`--variant "$V"` with V unset) names itself, as --block and --size
// do: before, --variant '', --dtype '' and --op '' planned no row at all and exited 0.
TEST(Cli, AListOptionGivenNothingIsAnError) {
  for (const char* option : {"--variant", "--dtype", "--op", "--block", "--size", "--shape"}) {
    for (const char* value : {"", " , "}) {
      try {
        parse({option, value});
        ADD_FAILURE() << option << " '" << value << "' was taken";
      } catch (const usage_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(std::string(option) + " needs at least one", 0), 0u)
            << e.what();
      }
    }
  }
  EXPECT_EQ(parse({"--variant", "reduce5,"}).variants, std::vector<std::string>{"reduce5"});
}

// Under --sanitize a kernel runs tens of times slower: the watchdog's default follows, and an
// explicit --kernel-timeout still wins. A planted out-of-bounds kernel under memcheck was stopped
// as a hang at the plain 10 s default, with no verdict.
TEST(Cli, SanitizeGivesKernelsALongerDefaultTimeOut) {
  EXPECT_DOUBLE_EQ(parse({}).kernel_timeout_s, 10);
  EXPECT_DOUBLE_EQ(parse({"--sanitize"}).kernel_timeout_s, cli_options::sanitized_kernel_timeout_s);
  EXPECT_DOUBLE_EQ(parse({"--sanitize", "memcheck", "--kernel-timeout", "5"}).kernel_timeout_s, 5);
}

// --profile belongs to a sweep run in workers, once: every combination that cannot be kept is
// an error naming both options, before anything runs.
TEST(Cli, ProfileAndItsConflicts) {
  EXPECT_FALSE(parse({}).profile);
  const auto o = parse({"--profile", "--ncu", "/opt/nsight/ncu"});
  EXPECT_TRUE(o.profile);
  EXPECT_EQ(o.ncu_path, "/opt/nsight/ncu");
  EXPECT_EQ(parse({"--profile"}).ncu_path, "");
  auto error_of = [](std::vector<const char*> args) -> std::string {
    try {
      parse(std::move(args));
    } catch (const usage_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({"--ncu", "/opt/nsight/ncu"}).find("give --profile too"), std::string::npos);
  EXPECT_NE(error_of({"--profile", "--ncu", ""}).find("--ncu needs"), std::string::npos);
  EXPECT_NE(error_of({"--profile", "--in-process"}).find("cannot be --in-process"),
            std::string::npos);
  EXPECT_NE(error_of({"--profile", "--sanitize"}).find("--profile and --sanitize"),
            std::string::npos);
  EXPECT_NE(error_of({"--profile", "--watch"}).find("--watch"), std::string::npos);
  for (const char* mode : {"--compile-only", "--resources", "--list", "--pipeline"})
    EXPECT_NE(error_of({"--profile", mode}).find("--profile does not apply to"), std::string::npos)
        << mode;
  EXPECT_NE(error_of({"tune", "--profile"}).find("--profile does not apply to kernlab tune"),
            std::string::npos);
}

// Every number option is checked the same way: finite, in its range, whole where it counts.
// `--kernel-timeout 1e300` used to be accepted and then overflow, killing every row as a hang.
TEST(Cli, NumberOptionsAreFiniteAndInRange) {
  const std::vector<std::pair<const char*, std::vector<const char*>>> bad = {
      {"--kernel-timeout", {"nan", "inf", "-inf", "1e300", "2147484", "0", "-1"}},
      {"--timeout", {"nan", "-inf", "0", "-3", "1e300"}},
      {"--min-time", {"nan", "inf", "-1", "1e300"}},
      {"--max-noise", {"nan", "inf", "-1", "101"}},
      {"--min-interval", {"nan", "inf", "-0.1", "101"}},
      {"--warmup", {"-1", "1000000000", "99999999999999999999", "2.5"}},
      {"--min-samples", {"0", "-5", "99999999999999999999"}},
      {"--compile-jobs", {"0", "-1", "100000"}},
      {"--seed", {"-1", "18446744073709551616", "1e3", ""}},
  };
  for (const auto& [option, values] : bad)
    for (const char* value : values) {
      try {
        parse({option, value});
        ADD_FAILURE() << option << " " << value << " was accepted";
      } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find(option + 2), std::string::npos) << e.what();
      }
    }
  EXPECT_DOUBLE_EQ(parse({"--kernel-timeout", "86400"}).kernel_timeout_s, 86400);
  EXPECT_DOUBLE_EQ(parse({"--kernel-timeout", "0.25"}).kernel_timeout_s, 0.25);
  EXPECT_EQ(parse({"--seed", "18446744073709551615"}).seed, 18446744073709551615ull);
  const std::vector<const char*> pipeline = {"--pipeline", "--pipeline-runs", "0"};
  EXPECT_THROW(parse(pipeline), usage_error);
}

// The command line wins over the config file for every option and its aliases, and a config
// file's family never narrows a selection the command line made itself.
TEST(Cli, TheCommandLineOverridesTheConfigFileAndItsAliases) {
  test::temp_dir dir("cli");
  default_paths d;
  d.config = dir.write("k.cfg", "family = reduce\nflush = read\nseed = 5\n");
  EXPECT_EQ(parse({}, d).family, "reduce");  // the default job keeps the file's family
  EXPECT_EQ(parse({"--problem", "matmul"}, d).family, "matmul");
  EXPECT_EQ(parse({"--family", "qam256"}, d).family, "qam256");
  EXPECT_EQ(parse({"--hot"}, d).timing.flush, flush_mode::none);
  EXPECT_EQ(parse({"--variant", "all"}, d).family, "");  // `all` means every family's variants
  EXPECT_EQ(parse({"--variant", "tiled", "--compile-only"}, d).family, "");
  EXPECT_EQ(parse({"--variant", "tiled", "--family", "matmul"}, d).family, "matmul");
  // Both aliases on the command line itself still have to agree.
  EXPECT_THROW(parse({"--family", "reduce", "--problem", "matmul"}, d), usage_error);
  EXPECT_EQ(parse({"--family", "matmul", "--problem", "matmul"}, d).family, "matmul");
}

// A config file must be a small regular file: a folder was ignored without a word, and
// `--config /dev/zero` read 16.8 GB. Each is an io_error (exit 4) naming the file.
TEST(Cli, TheConfigFileIsASmallRegularFile) {
  test::temp_dir dir("cli");
  const std::string big = dir.write("big.cfg", "# " + std::string(2u << 20, 'x') + "\n");
  for (const std::string& path :
       {std::string("/dev/zero"), dir.str(), big, dir.str() + "/none.cfg"}) {
    try {
      parse({"--config", path.c_str()});
      ADD_FAILURE() << path << " was read as a config file";
    } catch (const io_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

// An option that does not apply to the command is an error naming the option and the mode; it
// used to be ignored without a word (--list --json, --markdown --compile-only, -o on a sweep).
TEST(Cli, AnOptionThatDoesNotApplyIsAnError) {
  const std::vector<std::vector<const char*>> bad = {{"--list", "--json", "x.json"},
                                                     {"--compile-only", "--markdown"},
                                                     {"-o", "x.svg"},
                                                     {"--resources", "--min-time", "1"},
                                                     {"compare", "a.json", "b.json", "--size", "4"},
                                                     {"cache", "info", "--variant", "reduce5"},
                                                     {"--streams", "2"},
                                                     {"--list", "--watch"},
                                                     {"plot", "r.json", "--markdown"},
                                                     {"--compile-only", "--baseline", "cub"}};
  for (const auto& args : bad) {
    std::string line;
    for (const char* a : args) line += std::string(a) + " ";
    try {
      parse(args);
      ADD_FAILURE() << line << "was accepted";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("does not apply to"), std::string::npos) << e.what();
    }
  }
  // What applies is accepted, and the config file's settings never count as named.
  EXPECT_NO_THROW(parse({"--compile-only", "--json", "x.json", "--csv", "x.csv"}));
  EXPECT_NO_THROW(parse({"--resources", "--markdown", "--arch", "sm_80"}));
  EXPECT_NO_THROW(parse({"--list", "--family", "matmul"}));
  EXPECT_NO_THROW(parse({"plot", "r.json", "-o", "x.svg"}));
  EXPECT_NO_THROW(parse({"--pipeline", "--streams", "2", "--variant", "qam256.vec2_stream"}));
  default_paths d;
  d.config = test::source_dir() + "/config/kernlab.cfg";
  EXPECT_NO_THROW(parse({"--list"}, d));
  EXPECT_NO_THROW(parse({"compare", "a.json", "b.json"}, d));
}

// Found by tests/fuzz: "nan" is a double to Boost, and passed every "must be positive" check
// (a comparison with NaN is false), so "timeout = nan" meant sampling that never timed out.
TEST(Cli, TimingOptionsAreNumbers) {
  for (const char* option : {"--timeout", "--min-time", "--max-noise"})
    for (const char* value : {"nan", "-nan", "NaN"})
      EXPECT_THROW(parse({option, value}), usage_error) << option << " " << value;
  test::temp_dir dir("cli");
  const std::string cfg = dir.write("nan.cfg", "timeout=nan\n");
  EXPECT_THROW(parse({"--config", cfg.c_str()}), usage_error);
  EXPECT_DOUBLE_EQ(parse({"--timeout", "inf"}).timing.timeout_s, HUGE_VAL);  // "no timeout" stays
}

// The interval's floor: 0.3% unless given, 0 turns it off, and under the ci rule a --max-ci
// narrower than it is an error naming both (no row could ever stop).
TEST(Cli, TheIntervalFloorAndTheCiRule) {
  EXPECT_DOUBLE_EQ(parse({}).timing.min_interval, 0.003);
  EXPECT_DOUBLE_EQ(parse({"--min-interval", "0"}).timing.min_interval, 0);
  EXPECT_DOUBLE_EQ(parse({"--min-interval", "0.5"}).timing.min_interval, 0.005);
  try {
    parse({"--stop-rule", "ci", "--max-ci", "0.2"});
    ADD_FAILURE() << "--max-ci 0.2 under a 0.3% floor was accepted";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("--max-ci 0.2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--min-interval 0.3"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse({"--stop-rule", "ci", "--max-ci", "0.2", "--min-interval", "0.1"}));
  EXPECT_NO_THROW(parse({"--max-ci", "0.2"}));  // stdrel: --max-ci is not used
}

TEST(Cli, ConfigFileDefaultsAndPrecedence) {
  test::temp_dir dir("cli");
  const std::string cfg = dir.write("config/k.cfg",
                                    "# comment\nkernels-dir = ../kernels\nsize = 2^10\nseed = 5\n"
                                    "dtype = int32\n");
  const auto o = parse({"--config", cfg.c_str(), "--seed", "6"});
  ASSERT_EQ(o.kernels_dirs.size(), 1u);
  EXPECT_EQ(o.kernels_dirs[0], (dir.path() / "kernels").string());  // relative to the file
  // The file's size is the one-axis families' (TheConfigFilesSizeIsTheOneAxisFamilies).
  ASSERT_EQ(o.axes.size(), 1u);
  EXPECT_TRUE(o.axes[0].one_axis_families_only);
  EXPECT_EQ(o.seed, 6u);  // the command line wins
  EXPECT_EQ(o.dtypes, std::vector<std::string>{"int32"});
  EXPECT_EQ(o.config_path, cfg);

  // The default config is read when present and ignored when absent.
  default_paths d;
  d.config = cfg;
  EXPECT_EQ(parse({}, d).seed, 5u);
  d.config = dir.str() + "/absent.cfg";
  EXPECT_EQ(parse({}, d).seed, 12345u);
}

TEST(Cli, ConfigErrorsNameTheFile) {
  test::temp_dir dir("cli");
  const std::string cfg = dir.write("bad.cfg", "sise = 4\n");
  try {
    parse({"--config", cfg.c_str()});
    FAIL();
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(cfg), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sise"), std::string::npos) << e.what();
  }
}

// Found by tests/fuzz: Boost.Program_options replaces "%value%" and its other placeholders in an
// error message until none is left, so a value holding its own placeholder made what() loop for
// ever. These end, with the text as given.
TEST(Cli, ErrorsQuotingBoostPlaceholdersEnd) {
  test::temp_dir dir("cli");
  const auto expect_error_with = [](const std::vector<const char*>& args, const std::string& text) {
    try {
      parse(args);
      FAIL() << "expected a usage_error quoting " << text;
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  const std::string value = dir.write("value.cfg", "min-samples = %value%\n");
  expect_error_with({"--config", value.c_str()},
                    "the argument ('%value%') for option 'min-samples' is invalid");
  const std::string option = dir.write("option.cfg", "x%original_token% = 1\n");
  expect_error_with({"--config", option.c_str()}, "'x%original_token%'");
  const std::string bool_value = dir.write("bool.cfg", "hot = %value%\n");
  expect_error_with({"--config", bool_value.c_str()}, "('%value%')");
  expect_error_with({"--warmup", "%value%"}, "('%value%') for option '--warmup'");
  expect_error_with({"--seed", "%value%"}, "--seed '%value%' is not a seed");
  expect_error_with({"--x%canonical_option%"}, "unrecognised option '--x%canonical_option%'");
  expect_error_with({"--min=%prefix%"},
                    "'--min=%prefix%' is ambiguous and matches '--min-interval', '--min-samples'");
  expect_error_with({"-%"}, "'-%'");
  // Other errors keep Boost's own text, and a '%' where it is valid is just a character.
  expect_error_with({"--warmup", "minus"},
                    "the argument ('minus') for option '--warmup' is invalid");
  EXPECT_EQ(parse({"--json", "%value%.json"}).json_path, "%value%.json");
}

TEST(Cli, ShippedConfigParses) {
  default_paths d;
  d.config = test::source_dir() + "/config/kernlab.cfg";
  const auto o = parse({}, d);
  EXPECT_EQ(o.family, "reduce");
  ASSERT_EQ(o.kernels_dirs.size(), 1u);
  EXPECT_EQ(o.kernels_dirs[0], test::source_dir() + "/kernels_src");
  EXPECT_EQ(o.blocks.size(), 4u);
}

// --kernels-dir adds a folder to the config's (the command line's first); --kernels-dir-only
// leaves the config's out. A folder named twice, under two spellings, counts once.
TEST(Cli, KernelsDirAddsToTheConfigsFolders) {
  test::temp_dir dir("cli");
  default_paths d;
  d.config = dir.write("config/k.cfg", "kernels-dir = ../shipped\n");
  const std::string shipped = (dir.path() / "shipped").string();
  std::filesystem::create_directories(shipped);
  const std::string mine = (dir.path() / "mine").string();
  EXPECT_EQ(parse({}, d).kernels_dirs, std::vector<std::string>{shipped});
  EXPECT_EQ(parse({"--kernels-dir", mine.c_str()}, d).kernels_dirs,
            (std::vector<std::string>{mine, shipped}));
  EXPECT_EQ(parse({"--kernels-dir", mine.c_str(), "--kernels-dir-only"}, d).kernels_dirs,
            std::vector<std::string>{mine});
  const std::string again = dir.str() + "/config/../shipped/";
  EXPECT_EQ(parse({"--kernels-dir", again.c_str()}, d).kernels_dirs,
            std::vector<std::string>{again});
  try {
    parse({"--kernels-dir-only"}, d);
    FAIL() << "--kernels-dir-only without a folder";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("give --kernels-dir DIR"), std::string::npos) << e.what();
  }
  // In a config file it would drop the file's own folders: it belongs on the command line.
  d.config = dir.write("config/only.cfg", "kernels-dir = ../shipped\nkernels-dir-only = true\n");
  EXPECT_THROW(parse({}, d), usage_error);
}

// --list lists every family: the config file's family shapes the default job only.
TEST(Cli, ListIgnoresTheConfigFilesFamily) {
  test::temp_dir dir("cli");
  default_paths d;
  d.config = dir.write("k.cfg", "family = reduce\n");
  EXPECT_EQ(parse({"--list"}, d).family, "");
  EXPECT_EQ(parse({"--list-names"}, d).family, "");
  EXPECT_TRUE(parse({"--list-names"}, d).list);
  EXPECT_EQ(parse({"--list", "--family", "scan"}, d).family, "scan");
}

// Standard output takes one output: two there would be neither JSON nor CSV.
TEST(Cli, OneOutputOnStandardOutput) {
  EXPECT_EQ(parse({"--compile-only", "--json", "-"}).json_path, "-");
  try {
    parse({"--compile-only", "--json", "-", "--csv", "/dev/stdout"});
    FAIL();
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("both write to standard output"), std::string::npos)
        << e.what();
  }
}

// --help's defaults are those in effect: what the config file sets, in its order.
TEST(Cli, HelpShowsTheConfigFilesDefaults) {
  default_paths d;
  d.config = test::source_dir() + "/config/kernlab.cfg";
  const cli_options o = parse({"--help"}, d);
  const std::string help = help_text(o);
  EXPECT_NE(help.find("defaults in effect, from " + d.config), std::string::npos) << help;
  EXPECT_NE(help.find("\n  --min-time 0.05\n"), std::string::npos) << help;
  EXPECT_NE(help.find("\n  --kernels-dir " + test::source_dir() + "/kernels_src\n"),
            std::string::npos)
      << help;
  EXPECT_LT(help.find("--family reduce"), help.find("--min-time 0.05"));  // the file's order
  // Every dtype of the one table.
  for (const char* dtype : {"uint8", "float16", "bfloat16", "int64", "float64"})
    EXPECT_NE(help.find(dtype), std::string::npos) << dtype;
  EXPECT_NE(help_text(parse({"--help"})).find("defaults: no config file"), std::string::npos);
}

TEST(Cli, CommandsAndCompileOptions) {
  auto o = parse({"cache", "info", "--cache-dir", "/tmp/c"});
  EXPECT_EQ(o.command, (std::vector<std::string>{"cache", "info"}));
  EXPECT_EQ(o.cache_dir, "/tmp/c");
  EXPECT_EQ(parse({"--cache-dir", "/tmp/c", "cache", "clear"}).command.at(1), "clear");

  o = parse({"--watch", "--no-cache", "-j", "3"});
  EXPECT_TRUE(o.command.empty());
  EXPECT_TRUE(o.watch);
  EXPECT_TRUE(o.no_cache);
  EXPECT_EQ(o.compile_jobs, 3u);
  EXPECT_EQ(parse({}).compile_jobs, 0u);  // one per core
  EXPECT_FALSE(parse({}).watch);

  EXPECT_THROW(parse({"cache"}), usage_error);
  EXPECT_THROW(parse({"cache", "wipe"}), usage_error);
  EXPECT_THROW(parse({"wipe"}), usage_error);
  EXPECT_THROW(parse({"cache", "info", "now"}), usage_error);
  EXPECT_THROW(parse({"cache", "clear", "--no-cache"}), usage_error);
  EXPECT_THROW(parse({"--compile-jobs", "0"}), usage_error);
  EXPECT_THROW(parse({"--cache-dir", ""}), usage_error);
}

TEST(Cli, CompileTimeoutIsAFinitePositiveTime) {
  EXPECT_EQ(parse({}).compile_timeout_s, 300);
  EXPECT_EQ(parse({"--compile-timeout", "0.5"}).compile_timeout_s, 0.5);
  test::temp_dir dir("cli");
  const std::string cfg = dir.write("k.cfg", "compile-timeout = 60\n");
  EXPECT_EQ(parse({"--config", cfg.c_str()}).compile_timeout_s, 60);
  EXPECT_EQ(parse({"--config", cfg.c_str(), "--compile-timeout", "7"}).compile_timeout_s, 7);
  for (const char* bad : {"0", "-1", "nan", "inf", "1e9", "10s", "", "0x"}) {
    try {
      parse({"--compile-timeout", bad});
      ADD_FAILURE() << "accepted --compile-timeout '" << bad << "'";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("--compile-timeout '" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
  const std::string bad_cfg = dir.write("bad.cfg", "compile-timeout = nan\n");
  EXPECT_THROW(parse({"--config", bad_cfg.c_str()}), usage_error);
}

TEST(Cli, CacheDirInTheConfigIsRelativeToIt) {
  test::temp_dir dir("cli");
  const std::string cfg = dir.write("config/k.cfg", "cache-dir = ../cache\ncompile-jobs = 2\n");
  const auto o = parse({"--config", cfg.c_str()});
  EXPECT_EQ(o.cache_dir, (dir.path() / "cache").string());
  EXPECT_EQ(o.compile_jobs, 2u);
  // The positional words belong to the command line only.
  const std::string bad = dir.write("bad.cfg", "command = cache\n");
  EXPECT_THROW(parse({"--config", bad.c_str()}), usage_error);
}

}  // namespace
}  // namespace kl
