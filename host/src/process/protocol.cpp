#include "process/protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kl::worker {
namespace {

void write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw protocol_error(std::string("write to the other process failed: ") +
                           std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Reads exactly n bytes (the frame has begun, so its rest is waited for without a timeout).
void read_all(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) throw protocol_error("the other process closed the pipe");
    if (r < 0)
      throw protocol_error(std::string("read from the other process failed: ") +
                           std::strerror(errno));
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace

void write_message(int fd, const message& m) {
  const std::vector<std::uint8_t> payload = nlohmann::json::to_msgpack(m.payload);
  if (payload.size() > max_payload_bytes) throw protocol_error("message too large");
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::uint8_t head[5] = {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
                          static_cast<std::uint8_t>(n >> 16), static_cast<std::uint8_t>(n >> 24),
                          static_cast<std::uint8_t>(m.type)};
  write_all(fd, head, sizeof head);
  write_all(fd, payload.data(), payload.size());
}

std::optional<message> read_message(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) throw protocol_error(std::string("poll failed: ") + std::strerror(errno));
  if (rc == 0) return std::nullopt;
  std::uint8_t head[5];
  read_all(fd, head, sizeof head);
  const std::uint32_t n =
      head[0] | head[1] << 8 | head[2] << 16 | static_cast<std::uint32_t>(head[3]) << 24;
  if (n > max_payload_bytes) throw protocol_error("malformed frame: length " + std::to_string(n));
  if (head[4] < 1 || head[4] > 5)
    throw protocol_error("malformed frame: type " + std::to_string(head[4]));
  std::vector<std::uint8_t> payload(n);
  read_all(fd, payload.data(), n);
  message m;
  m.type = static_cast<message_type>(head[4]);
  try {
    m.payload = nlohmann::json::from_msgpack(payload);
  } catch (const nlohmann::json::exception& e) {
    throw protocol_error(std::string("malformed frame payload: ") + e.what());
  }
  return m;
}

}  // namespace kl::worker
