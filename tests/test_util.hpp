// Helpers shared by the tests: temporary kernel folders and the project's paths.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace kl::test {

inline std::string source_dir() { return KERNLAB_SOURCE_DIR; }
inline std::string kernels_dir() { return source_dir() + "/kernels_src"; }
inline std::string cuda_include() { return KERNLAB_CUDA_INCLUDE_DIR; }

/// A fresh folder under the system temp dir, removed when the object goes.
class temp_dir {
 public:
  explicit temp_dir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("kernlab_test_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
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

}  // namespace kl::test
