#include "spec/dtypes.hpp"

#include <stdexcept>

namespace kl {

std::size_t data_dtype_size(const std::string& dtype) {
  if (dtype == "uint8") return 1;
  if (dtype == "int32" || dtype == "float32") return 4;
  if (dtype == "int64" || dtype == "float64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  return 0;
}

const std::vector<std::string>& data_dtypes() {
  static const std::vector<std::string> all = {"uint8",    "int32",   "int64",  "float16",
                                               "bfloat16", "float32", "float64"};
  return all;
}

void add_dtype_variables(std::map<std::string, std::int64_t>& vars, const std::string& dtype) {
  const auto& all = data_dtypes();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto code = static_cast<std::int64_t>(i + 1);
    vars[all[i]] = code;
    if (all[i] == dtype) vars["DTYPE"] = code;
  }
  vars["TSIZE"] = static_cast<std::int64_t>(data_dtype_size(dtype));
}

std::uint64_t data_bytes(std::uint64_t count, const std::string& dtype) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, data_dtype_size(dtype), &bytes))
    throw std::invalid_argument(std::to_string(count) + " elements of " + dtype +
                                " are more bytes than 64 bits count");
  return bytes;
}

}  // namespace kl
