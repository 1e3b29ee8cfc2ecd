#include "nvrtc/compiler.hpp"

#include <dlfcn.h>
#include <link.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

namespace kl::nvrtc {
namespace {

void check(nvrtcResult rc, const char* call, const std::string& path) {
  if (rc != NVRTC_SUCCESS)
    throw nvrtc_error(std::string(call) + " failed for " + path + ": " + nvrtcGetErrorString(rc));
}
#define KL_NVRTC(call, path) check(call, #call, path)

struct program_deleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using program_ptr = std::unique_ptr<_nvrtcProgram, program_deleter>;

// The path libnvrtc.so was loaded from, or "".
std::string loaded_nvrtc_path() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const char* name = info->dlpi_name;
        const char* base = name ? std::strrchr(name, '/') : nullptr;
        if (!base || std::strncmp(base + 1, "libnvrtc.so", 11) != 0) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &path);
  return path;
}

// NVRTC dlopen()s its builtins library (libnvrtc-builtins.so.13.0) by name when it first
// compiles. The binary's DT_RUNPATH finds libnvrtc.so itself but does not apply to the libraries
// libnvrtc opens, so where the dynamic loader is not told about the toolkit (no ld.so.conf.d
// entry, no LD_LIBRARY_PATH) every compile failed with "failed to open
// libnvrtc-builtins.so.13.0". Loaded first by its path beside libnvrtc, it is found by its soname
// when libnvrtc asks. Returns "" or what is wrong, in one line.
std::string load_builtins() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "nvrtcVersion failed";
  const std::string soname =
      "libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
  const std::string nvrtc = loaded_nvrtc_path();
  const std::string beside = nvrtc.substr(0, nvrtc.rfind('/') + 1) + soname;
  if (!nvrtc.empty() && dlopen(beside.c_str(), RTLD_NOW | RTLD_GLOBAL)) return "";
  if (dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL)) return "";  // where the loader looks
  const char* why = dlerror();
  return "NVRTC's builtins library " + soname + " is not beside " +
         (nvrtc.empty() ? std::string("libnvrtc.so") : nvrtc) +
         " nor where the dynamic loader looks (" + (why ? why : "not found") +
         "): install the toolkit's NVRTC completely, or add the folder that has it to "
         "LD_LIBRARY_PATH";
}

}  // namespace

std::string version() {
  int major = 0, minor = 0;
  KL_NVRTC(nvrtcVersion(&major, &minor), "nvrtc");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> options_for(const compile_request& request) {
  std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "-std=c++17",
                                      "-lineinfo", "-Xptxas", "-v"};
  for (const auto& dir : request.include_dirs) options.push_back("-I" + dir);
  for (const auto& header : request.pre_includes) options.push_back("--pre-include=" + header);
  for (const auto& opt : request.extra_options) options.push_back(opt);
  return options;
}

compile_result compile(const compile_request& request) {
  static const std::string builtins_problem = load_builtins();  // once, before NVRTC needs them
  if (!builtins_problem.empty()) throw nvrtc_error(builtins_problem);
  const auto start = std::chrono::steady_clock::now();
  compile_result result;

  nvrtcProgram raw = nullptr;
  KL_NVRTC(
      nvrtcCreateProgram(&raw, request.source.c_str(), request.path.c_str(), 0, nullptr, nullptr),
      request.path);
  program_ptr program(raw);
  for (const auto& expr : request.name_expressions)
    KL_NVRTC(nvrtcAddNameExpression(program.get(), expr.c_str()), request.path);

  result.options = options_for(request);
  std::vector<const char*> argv;
  for (const auto& o : result.options) argv.push_back(o.c_str());

  const nvrtcResult rc =
      nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

  std::size_t log_size = 0;
  KL_NVRTC(nvrtcGetProgramLogSize(program.get(), &log_size), request.path);
  std::string log(log_size, '\0');
  if (log_size > 0) KL_NVRTC(nvrtcGetProgramLog(program.get(), log.data()), request.path);
  while (!log.empty() && log.back() == '\0') log.pop_back();  // NVRTC counts a NUL, or two
  // ptxas' error line comes after a NUL that ends its resource report: a line of its own.
  std::replace(log.begin(), log.end(), '\0', '\n');
  result.log = std::move(log);
  result.path = request.path;
  result.diagnostics = parse_diagnostics(result.log);

  if (rc == NVRTC_SUCCESS) {
    std::size_t size = 0;
    KL_NVRTC(nvrtcGetCUBINSize(program.get(), &size), request.path);
    result.cubin.resize(size);
    KL_NVRTC(nvrtcGetCUBIN(program.get(), result.cubin.data()), request.path);
    const auto report = parse_ptxas_report(result.log);
    for (const auto& expr : request.name_expressions) {
      const char* lowered = nullptr;
      KL_NVRTC(nvrtcGetLoweredName(program.get(), expr.c_str(), &lowered), request.path);
      result.lowered_names[expr] = lowered;
      if (auto it = report.find(lowered); it != report.end()) result.resources[expr] = it->second;
    }
    result.ok = true;
  } else if (rc != NVRTC_ERROR_COMPILATION) {
    throw nvrtc_error("nvrtcCompileProgram failed for " + request.path + ": " +
                      nvrtcGetErrorString(rc) + "\n" + result.log);
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kl::nvrtc
