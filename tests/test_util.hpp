// Helpers shared by the tests: temporary kernel folders and the project's paths.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>

namespace kl::test {

inline std::string source_dir() { return KERNLAB_SOURCE_DIR; }
inline std::string kernels_dir() { return source_dir() + "/kernels_src"; }
inline std::string cuda_include() { return KERNLAB_CUDA_INCLUDE_DIR; }

/// A fresh folder under the system temp dir, removed when the object goes.
class temp_dir {
 public:
  explicit temp_dir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("kernlab_test_" + tag + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  /// Writes `text` to a file below the folder, creating sub-folders.
  std::string write(const std::string& relative, const std::string& text) const {
    const auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Replaces the first `from` in the file at `path` with `to`; false when `from` is not there.
inline bool replace_in_file(const std::string& path, const std::string& from,
                            const std::string& to) {
  std::string text = read_file(path);
  const auto at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  std::ofstream(path, std::ios::binary) << text;
  return true;
}

struct command_result {
  int code = -1;       ///< the exit code; -1 when it did not exit normally
  std::string output;  ///< stdout and stderr together
};

/// Runs a shell command, collecting its output.
inline command_result run_command(const std::string& cmd) {
  command_result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs the kernlab binary with `args` and no config file (so only `args` count).
inline command_result run_kernlab(const std::string& args) {
  return run_command(std::string(KERNLAB_BINARY) + " --config /dev/null " + args);
}

/// The frozen kernlab results files the tests read (tests/data/results/, copied from the results
/// branch's session folders; tests/data/results/README.md says which and why).
inline std::string results_data_dir() { return source_dir() + "/tests/data/results"; }

/// The text of a results file under tests/data/results/, `relative` as the results history names it
/// ("2026-11-22-h100-final/default_job.json"): the file itself, or its gzip-compressed copy
/// (`relative` + ".gz") unpacked. "" when neither is there.
inline std::string results_data(const std::string& relative) {
  const std::string path = results_data_dir() + "/" + relative;
  if (std::filesystem::exists(path)) return read_file(path);
  if (!std::filesystem::exists(path + ".gz")) return "";
  const command_result r = run_command("gzip -dc '" + path + ".gz'");
  return r.code == 0 ? r.output : "";
}

/// A reduce kernel file whose compile takes minutes: a binary tree of 2^14 inlined template
/// functions (over a minute in NVRTC 13 on a 2-core machine), for the --compile-timeout tests.
inline std::string slow_compiling_kernel(const std::string& name) {
  return "/* kernlab\nfamily: reduce\nentry:  " + name +
         "<BLOCK, T, OP>\nblocks: 128 256\n"
         "tile:   BLOCK\n*/\n" +
         R"(
template <int N> __device__ __forceinline__ unsigned leaf(unsigned x) {
  return x * (2654435761u + N) ^ (x >> (N % 13));
}
template <int L, int H> struct tree {
  __device__ __forceinline__ static unsigned f(unsigned x) {
    return tree<L, (L + H) / 2>::f(x) + tree<(L + H) / 2, H>::f(x ^ H);
  }
};
template <int L> struct tree<L, L + 1> {
  __device__ __forceinline__ static unsigned f(unsigned x) { return leaf<L>(x); }
};
template <unsigned BLOCK, typename T, typename OP>
__global__ void )" +
         name + R"((const T* in, T* out, unsigned n) {
  out[blockIdx.x] = in[threadIdx.x] + static_cast<T>(tree<0, 16384>::f(threadIdx.x));
}
)";
}

/// How often `needle` occurs in `text`.
inline std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace kl::test
