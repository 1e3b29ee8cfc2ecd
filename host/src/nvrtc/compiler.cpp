#include "nvrtc/compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <memory>
#include <regex>
#include <sstream>

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

std::string diagnostic::to_string() const {
  return file + ":" + std::to_string(line) + ": " + severity + ": " + message;
}

std::string compile_result::error_summary() const {
  std::ostringstream out;
  for (const auto& d : diagnostics)
    if (d.severity == "error" && d.file == path) out << d.to_string() << "\n";
  for (const auto& d : diagnostics)
    if (d.severity == "error" && d.file != path) out << d.to_string() << "\n";
  if (out.tellp() > 0) return out.str();
  // No parsable diagnostic (a linker-style or ptxas error): show the start of the log.
  std::istringstream in(log);
  std::string line;
  for (int i = 0; i < 10 && std::getline(in, line); ++i) out << line << "\n";
  return out.str();
}

std::vector<diagnostic> parse_diagnostics(const std::string& log) {
  // NVRTC writes "path(12): error: text" (and "error #20-D: text" with error numbers on).
  static const std::regex pattern(
      R"(^(.+)\((\d+)\): (catastrophic error|error|warning)(?: #[0-9A-Za-z-]+)?: (.*)$)");
  std::vector<diagnostic> out;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_match(line, m, pattern)) continue;
    std::string severity = m[3] == "warning" ? "warning" : "error";
    out.push_back({m[1], std::stoi(m[2]), severity, m[4]});
  }
  return out;
}

std::map<std::string, resource_usage> parse_ptxas_report(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, resource_usage> out;
  std::istringstream in(log);
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      auto& r = out[current];
      r.stack_frame_bytes = std::stol(m[1]);
      r.spill_store_bytes = std::stol(m[2]);
      r.spill_load_bytes = std::stol(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      auto& r = out[current];
      r.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) r.static_shared_bytes = std::stol(m[1]);
    }
  }
  return out;
}

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
