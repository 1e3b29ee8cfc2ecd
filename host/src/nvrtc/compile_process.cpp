#include "nvrtc/compile_process.hpp"

#include "core/child_process.hpp"
#include "core/unique_fd.hpp"
#include "nvrtc/compile_result_json.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

namespace kl::nvrtc {
namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

std::string errno_text() { return std::strerror(errno); }

std::string to_bytes(const json& j) {
  const std::vector<std::uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

json from_bytes(std::string_view bytes, const char* what) {
  try {
    return json::from_cbor(bytes);
  } catch (const json::exception& e) {
    throw nvrtc_error(std::string("unreadable ") + what + " (" + std::to_string(bytes.size()) +
                      " bytes): " + e.what());
  }
}

// Writes `bytes` to the child's stdin and reads its stdout until it closes, both at once (the
// request and the reply can each be larger than a pipe holds). False when `deadline` passed or
// `stop` said so (it is asked at least every 100 ms).
bool exchange(int to_child, int from_child, std::string_view bytes, std::string& reply,
              clock_type::time_point deadline, const std::function<bool()>& stop,
              const std::string& path) {
  unique_fd in(to_child);  // closed once written, so the child sees the end of its request
  std::size_t written = 0;
  char buffer[65536];
  for (;;) {
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0 || stop()) return false;
    pollfd fds[2] = {{from_child, POLLIN, 0}, {in.get(), POLLOUT, 0}};
    const int n = ::poll(fds, in.get() >= 0 ? 2 : 1,
                         static_cast<int>(std::min<long long>(left.count() + 1, 100)));
    if (n < 0 && errno != EINTR) throw nvrtc_error("poll failed for " + path + ": " + errno_text());
    if (n <= 0) continue;
    if (in.get() >= 0 && fds[1].revents) {
      const ssize_t w = ::write(in.get(), bytes.data() + written, bytes.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      // EPIPE: the child is gone before reading it all; its exit status will say how.
      if (written == bytes.size() || (w < 0 && errno != EAGAIN && errno != EINTR)) in.reset();
    }
    if (fds[0].revents) {
      const ssize_t r = ::read(from_child, buffer, sizeof buffer);
      if (r == 0) return true;
      if (r > 0) reply.append(buffer, static_cast<std::size_t>(r));
      if (r < 0 && errno != EAGAIN && errno != EINTR)
        throw nvrtc_error("cannot read the compile of " + path +
                          " from its child: " + errno_text());
    }
  }
}

}  // namespace

compile_timeout_error::compile_timeout_error(const std::string& path, double seconds)
    : nvrtc_error([&] {
        std::ostringstream s;
        s << "compile of " << path << " did not finish in " << seconds << " s";
        return s.str();
      }()),
      path_(path),
      seconds_(seconds) {}

std::string encode_request(const compile_request& r) {
  return to_bytes({{"source", r.source},
                   {"path", r.path},
                   {"name_expressions", r.name_expressions},
                   {"arch", r.arch},
                   {"include_dirs", r.include_dirs},
                   {"pre_includes", r.pre_includes},
                   {"extra_options", r.extra_options}});
}

compile_request decode_request(std::string_view bytes) {
  const json j = from_bytes(bytes, "compile request");
  compile_request r;
  try {
    r.source = j.at("source").get<std::string>();
    r.path = j.at("path").get<std::string>();
    r.name_expressions = j.at("name_expressions").get<std::vector<std::string>>();
    r.arch = j.at("arch").get<std::string>();
    r.include_dirs = j.at("include_dirs").get<std::vector<std::string>>();
    r.pre_includes = j.at("pre_includes").get<std::vector<std::string>>();
    r.extra_options = j.at("extra_options").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw nvrtc_error(std::string("malformed compile request: ") + e.what());
  }
  return r;
}

std::string encode_reply(const compile_result& r, const std::string& error) {
  if (!error.empty()) return to_bytes({{"error", error}});
  json reply = to_json(r);
  reply["ok"] = r.ok;
  return to_bytes(reply);
}

compile_result decode_reply(std::string_view bytes) {
  const json j = from_bytes(bytes, "compile reply");
  if (!j.is_object())
    throw nvrtc_error("unreadable compile reply (" + std::to_string(bytes.size()) +
                      " bytes): not a CBOR map");
  if (j.contains("error") && j["error"].is_string())
    throw nvrtc_error(j["error"].get<std::string>());
  compile_result r;
  try {
    r = compile_result_from_json(j);
    r.ok = j.at("ok").get<bool>();
  } catch (const json::exception& e) {
    throw nvrtc_error(std::string("malformed compile reply: ") + e.what());
  }
  return r;
}

compile_stopped_error::compile_stopped_error(const std::string& path)
    : nvrtc_error("compile of " + path + " stopped before it finished") {}

compile_result compile_in_child(const compile_request& request,
                                const std::vector<std::string>& command, double timeout_s,
                                const std::function<bool()>& stop_when) {
  const std::string& path = request.path;
  if (command.empty()) throw nvrtc_error("no command to compile " + path + " in a child process");
  const std::string bytes = encode_request(request);

  // Both pipes close on exec: only the copies on the child's fds 0 and 1 survive, so the
  // children other compile threads start at the same time hold none of this one's ends.
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) throw nvrtc_error("pipe failed: " + errno_text());
  unique_fd to_read(to_child[0]), to_write(to_child[1]);
  if (::pipe2(from_child, O_CLOEXEC) != 0) throw nvrtc_error("pipe failed: " + errno_text());
  unique_fd from_read(from_child[0]), from_write(from_child[1]);
  ::fcntl(to_write.get(), F_SETFL, O_NONBLOCK);

  const auto start = clock_type::now();
  child_process child;
  try {
    child = child_process(command, {{to_read.get(), 0}, {from_write.get(), 1}});
  } catch (const std::runtime_error& e) {
    // "cannot start X: why" from the launcher, as "cannot start X to compile F: why".
    const std::string prefix = "cannot start " + command[0] + ": ", why = e.what();
    throw nvrtc_error("cannot start " + command[0] + " to compile " + path + ": " +
                      (why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why));
  }
  to_read.reset();  // the child's ends: only the child holds them now
  from_write.reset();

  const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(
                                    std::chrono::duration<double>(timeout_s));
  const std::function<bool()> stop = [&] { return stop_when && stop_when(); };
  std::string reply;
  std::optional<int> status;
  if (!exchange(to_write.release(), from_read.get(), bytes, reply, deadline, stop, path) ||
      !(status = child.wait_until(deadline, stop))) {
    child.kill_and_wait();
    if (stop()) throw compile_stopped_error(path);
    throw compile_timeout_error(path, timeout_s);
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0 || reply.empty())
    throw nvrtc_error("the compile of " + path + " ended without a result: its process (" +
                      command[0] + ") " + describe_exit(*status));
  return decode_reply(reply);
}

int compile_child_main() {
  // The reply owns stdout: anything a library prints goes to stderr instead.
  const int reply_fd = ::dup(1);
  ::dup2(2, 1);
  std::string request(std::istreambuf_iterator<char>(std::cin), {});
  std::string reply;
  try {
    reply = encode_reply(compile(decode_request(request)));
  } catch (const std::exception& e) {
    reply = encode_reply({}, e.what());
  }
  for (std::size_t done = 0; done < reply.size();) {
    const ssize_t w = ::write(reply_fd, reply.data() + done, reply.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 1;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace kl::nvrtc
