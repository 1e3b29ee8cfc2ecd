#include "nvrtc/compiler.hpp"

#include <nvrtc.h>

#include <chrono>
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
  const auto start = std::chrono::steady_clock::now();
  compile_result result;

  nvrtcProgram raw = nullptr;
  KL_NVRTC(nvrtcCreateProgram(&raw, request.source.c_str(), request.path.c_str(), 0, nullptr,
                              nullptr),
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
  if (!log.empty() && log.back() == '\0') log.pop_back();
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
