// The framing between kernlab and its worker process: one message is a 4-byte little-endian
// length, a 1-byte type, and a MessagePack-encoded JSON payload (which carries CUBIN images as
// binary, without base64). Reads take a timeout, which is what the watchdog is made of.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kl::worker {

enum class message_type : std::uint8_t {
  ready = 1,      ///< worker -> main: started, the device is up (payload: device info or error)
  job = 2,        ///< main -> worker: run one row
  heartbeat = 3,  ///< worker -> main: still making progress (sent at most every 100 ms)
  result = 4,     ///< worker -> main: the row's record
  shutdown = 5,   ///< main -> worker: finish
};

struct message {
  message_type type = message_type::heartbeat;
  nlohmann::json payload;
};

/// The other end closed the pipe, or a frame was malformed.
class protocol_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Largest payload accepted: a CUBIN of every instantiation of a big file fits easily.
constexpr std::uint32_t max_payload_bytes = 256u << 20;

/// Writes one frame; throws protocol_error if the pipe is closed.
void write_message(int fd, const message& m);

/// Reads one frame, waiting at most `timeout_ms` (negative: forever) for its first byte.
/// Returns nothing on timeout; throws protocol_error on end of file or a malformed frame.
std::optional<message> read_message(int fd, int timeout_ms);

}  // namespace kl::worker
