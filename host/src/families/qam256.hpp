// The `qam256` family (docs/qam256.md): 256-QAM soft demapping. N received symbols
// (interleaved float32 I/Q, 8 bytes each) in, 8 soft-bit bytes per symbol out, bit-exact.
#pragma once

#include "families/family.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kl {

class qam256_family final : public family {
 public:
  std::string name() const override { return "qam256"; }
  std::vector<std::string> dtypes() const override { return {"float32"}; }
  std::vector<std::string> ops() const override { return {"demap"}; }
  void check(const parsed_header& header) const override;
  double problem_bytes(const problem_config& c) const override;
  std::vector<std::string> pre_includes() const override { return {"kernlab/qam256.cuh"}; }
  std::string name_expression(const variant_descriptor& v, unsigned block,
                              const problem_config& c) const override;
  std::uint64_t max_size() const override;
  std::size_t device_bytes_needed(const problem_config& c) const override;
  std::unique_ptr<problem> make_problem(const problem_config& c,
                                        const cuda::device_info& device) const override;
};

/// The host side of the family, exposed for the tests and the pipeline.
namespace qam256 {

/// sqrt(170) rounded to float32 (the spec's s).
constexpr float scale = 13.0384048f;

/// The TS 38.211 256QAM amplitude of one axis, from the bits (b_a, b_b, b_c, b_d) of that axis
/// (b0, b2, b4, b6 for I; b1, b3, b5, b7 for Q): an odd integer in -15..15.
int pam16(unsigned ba, unsigned bb, unsigned bc, unsigned bd);

/// The noise-free symbol of a byte (bit k of the byte is b_k), as float32 (I, Q) / sqrt(170).
std::array<float, 2> map_byte(std::uint8_t byte);

/// soft = (uint8) min(max(rint(128 - 8 * L), 0), 255), in float32 with rint half to even.
std::uint8_t soft_bit(float llr);

/// The definition for one symbol: 8 soft bits b0..b7.
std::array<std::uint8_t, 8> demap(float i, float q);

/// Inputs: per symbol a random byte mapped to 256-QAM plus complex Gaussian noise at
/// c.snr_db (symbol energy 1), from c.seed. 2n floats (I0, Q0, I1, Q1, ...). The symbols are
/// made in blocks with their own generator, on several threads; the result does not depend on
/// the number of threads.
std::vector<float> make_input(const problem_config& c);

/// The reference output for `iq` (2n floats): 8n bytes.
std::vector<std::uint8_t> compute_reference(const std::vector<float>& iq);

/// Byte-for-byte comparison of `got` with `expected` (8n bytes each). On a mismatch: the first
/// differing symbol, its expected and got bytes, its input, and how many symbols differ.
check_result compare(const std::vector<std::uint8_t>& expected, const std::uint8_t* got,
                     const std::vector<float>& iq);

/// The copy baseline's check: `got` must equal the input's bytes exactly.
check_result compare_copy(const std::vector<float>& iq, const std::uint8_t* got);

/// "76 128 116 64 108 160 132 144"
std::string format_bytes(const std::uint8_t* b);

/// Blocks of one launch over n symbols: one per tile (`grid: tiles`), or at most the resident
/// blocks (`grid: resident`). Throws not_supported past the grid's 2^31-1 blocks.
std::uint64_t grid_for(std::uint64_t n, std::uint64_t tile, grid_kind grid,
                       std::uint64_t resident_blocks);

/// Symbols one block handles per pass of the grid (the header's `tile`, with BLOCK bound).
std::uint64_t tile_of(const variant_descriptor& v, unsigned block);

}  // namespace qam256
}  // namespace kl
