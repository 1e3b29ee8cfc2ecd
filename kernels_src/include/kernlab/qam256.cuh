// Device-side constants for the `qam256` family (docs/qam256.md), included before
// every kernels_src/qam256/*.cu file. The demapping itself is left to each variant: how it is
// written (branches, arithmetic, stores) is what the variants compare.
#pragma once

namespace kl {
namespace qam256 {

/// sqrt(170) rounded to float32: the one scale factor of the definition, x = I * scale.
constexpr float scale = 13.0384048f;

}  // namespace qam256
}  // namespace kl
