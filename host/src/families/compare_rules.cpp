// How a family's outputs are checked against the reference: exact, bytes, ulp, tolerance,
// frobenius and bound (docs/families.md), with the first element outside the rule reported.
#include "families/dtype_dispatch.hpp"
#include "families/family.hpp"
#include "parallel/chunks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace kl {
namespace {

std::string format_number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace

namespace {

enum class compare_kind { exact, bytes, ulp, tolerance, frobenius, bound };

// Chunks a comparison runs in: enough for every core of a large machine, few enough to combine
// for nothing.
constexpr std::size_t compare_chunks = 64;

// Elements [begin, end) under the rule: counts those outside it (the first of them in `first`),
// and keeps the worst error and the Frobenius sums.
template <typename G, typename R>
void compare_range(compare_kind k, const compare_spec& rule, const G* got, const R* ref,
                   const double* magnitude, double bound_scale, std::size_t begin, std::size_t end,
                   std::size_t& wrong, std::size_t& first, double& worst, double& err2,
                   double& ref2) {
  using kind = compare_kind;
  const bool integral = std::is_integral_v<G>;
  const int digits = integral ? 0 : significand_bits<G>();
  const double smallest = integral ? 1.0 : smallest_of<G>();
  const double lowest_normal = integral ? 1.0 : lowest_normal_of<G>();
  // Bit-for-bit rules over a range that matches whole: one memcmp instead of an element loop (a
  // qam256 output of 2^27 symbols is a billion bytes, checked once per pipeline configuration).
  if constexpr (std::is_same_v<G, R>)
    if ((k == compare_kind::bytes || (k == compare_kind::exact && integral)) &&
        std::memcmp(got + begin, ref + begin, (end - begin) * sizeof(G)) == 0)
      return;
  for (std::size_t i = begin; i < end; ++i) {
    const double g = static_cast<double>(got[i]), e = static_cast<double>(ref[i]);
    bool ok = true;
    switch (k) {
      case kind::exact: ok = g == e; break;
      case kind::bytes: ok = std::memcmp(got + i, ref + i, sizeof(G)) == 0; break;
      case kind::ulp: {
        double spacing = 1;  // integers: an ulp is 1
        if (!integral) {
          const double a = std::fabs(e);
          if (!(a >= lowest_normal)) {
            spacing = smallest;
          } else {
            int ex = 0;
            std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1)
            spacing = std::ldexp(1.0, ex - digits);
          }
        }
        const double ulps = std::fabs(g - e) / spacing;
        ok = ulps <= rule.max_ulp;  // NaN never is
        if (!(ulps <= worst)) worst = ulps;
        break;
      }
      case kind::tolerance: {
        const double d = std::fabs(g - e);
        ok = d <= rule.abs + rule.rel * std::fabs(e);
        if (!(d <= worst)) worst = d;
        break;
      }
      case kind::bound: {
        const double d = std::fabs(g - e);
        ok = d <= bound_scale * magnitude[i];  // NaN never is
        if (!(d <= worst)) worst = d;
        break;
      }
      case kind::frobenius:
        err2 += (g - e) * (g - e);
        ref2 += e * e;
        ok = std::isfinite(g);
        break;
    }
    if (!ok && wrong++ == 0) first = i;
  }
}

// The comparison over typed elements: G is the output's type, R the reference's. The rule is
// resolved once, outside the loop (a 8192 x 8192 output is 67 M elements, compared twice a row).
template <typename G, typename R>
check_result compare_typed(const compare_spec& rule, const std::string& name, const G* got,
                           const R* ref, std::size_t n, const double* magnitude, double terms) {
  using kind = compare_kind;
  const kind k = rule.rule == "bytes"       ? kind::bytes
                 : rule.rule == "ulp"       ? kind::ulp
                 : rule.rule == "tolerance" ? kind::tolerance
                 : rule.rule == "frobenius" ? kind::frobenius
                 : rule.rule == "bound"     ? kind::bound
                                            : kind::exact;
  if (k == kind::bound && !magnitude)
    throw std::invalid_argument("rule bound for " + name + " without the reference's magnitudes");
  // bound: terms * eps; integers are exact (eps 0).
  const double eps = epsilon_of<G>();
  const double bound_scale = terms * eps;
  // Per chunk of the elements (on every core, combined in chunk order: the same on any machine).
  struct partial {
    std::size_t wrong = 0, first = 0;
    double worst = 0;  // ulp: the largest error in ulps; tolerance: the largest |got - ref|
    double err2 = 0, ref2 = 0;
  };
  std::vector<partial> parts(compare_chunks);
  for_each_chunk(n, compare_chunks, [&](const chunk_range& ch) {
    partial& p = parts[ch.index];
    compare_range(k, rule, got, ref, magnitude, bound_scale, ch.begin, ch.end, p.wrong, p.first,
                  p.worst, p.err2, p.ref2);
  });
  std::size_t wrong = 0, first = 0;
  double worst = 0, err2 = 0, ref2 = 0;
  for (const partial& p : parts) {
    if (p.wrong && !wrong) first = p.first;
    wrong += p.wrong;
    if (!(p.worst <= worst)) worst = p.worst;  // a NaN stays
    err2 += p.err2;
    ref2 += p.ref2;
  }
  check_result r;
  std::ostringstream detail;
  if (k == kind::frobenius) {
    const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    r.ok = wrong == 0 && rel <= rule.tol;
    detail << name << ": relative Frobenius error " << rel << " (tolerance " << rule.tol << ")";
    if (wrong) detail << ", " << wrong << " element(s) not finite";
  } else {
    r.ok = wrong == 0;
    detail << name << ": " << wrong << " of " << n << " elements outside the rule (" << rule.rule;
    if (k == kind::ulp) detail << ", at most " << rule.max_ulp << " ulp; worst " << worst;
    if (k == kind::tolerance)
      detail << ", |got - ref| <= " << rule.abs << " + " << rule.rel << " |ref|; worst " << worst;
    if (k == kind::bound)
      detail << ", |got - ref| <= " << terms << " eps sum|terms|; worst " << worst;
    detail << ")";
  }
  if (!r.ok) r.detail = detail.str();
  if (r.ok && n == 1) {
    // One value (a reduction): show it.
    r.expected = name + "[0] = " + format_number(static_cast<double>(ref[0]));
    r.got = name + "[0] = " + format_number(static_cast<double>(got[0]));
  } else if (r.ok) {
    r.expected = r.got =
        name + ": all " + std::to_string(n) + " elements match (" + rule.rule + ")";
  } else if (n > 0) {
    const std::size_t show = wrong ? first : 0;
    const std::string at = name + "[" + std::to_string(show) + "] = ";
    r.expected = at + format_number(static_cast<double>(ref[show]));
    r.got = at + format_number(static_cast<double>(got[show]));
    if (k == kind::bound && wrong) {
      r.expected += " +- " + format_number(bound_scale * magnitude[show]);
    }
  }
  return r;
}

template <typename G>
check_result compare_against(const compare_spec& rule, const std::string& name,
                             const std::uint8_t* got, std::size_t got_bytes,
                             const std::string& ref_dtype, const std::vector<std::uint8_t>& ref,
                             const double* magnitude, double terms) {
  const std::size_t n = got_bytes / sizeof(G);
  const auto* g = reinterpret_cast<const G*>(got);
  if (ref_dtype == "float64")
    return compare_typed(rule, name, g, reinterpret_cast<const double*>(ref.data()), n, magnitude,
                         terms);
  return compare_typed(rule, name, g, reinterpret_cast<const G*>(ref.data()), n, magnitude, terms);
}

}  // namespace

check_result compare_buffer(const compare_spec& rule, const std::string& name,
                            const std::string& dtype, const std::uint8_t* got,
                            std::size_t got_bytes, const std::string& ref_dtype,
                            const std::vector<std::uint8_t>& ref,
                            const std::vector<std::uint8_t>* magnitudes, double terms) {
  const std::size_t ref_size = data_dtype_size(ref_dtype);
  if (ref_dtype != "float64" && ref_dtype != dtype)
    throw std::invalid_argument("a reference of " + ref_dtype + " for an output of " + dtype);
  if (ref.size() / std::max<std::size_t>(ref_size, 1) < got_bytes / data_dtype_size(dtype))
    throw std::invalid_argument("the reference of " + name + " has fewer elements than it");
  if (magnitudes && magnitudes->size() / 8 < got_bytes / data_dtype_size(dtype))
    throw std::invalid_argument("the magnitudes of " + name + " have fewer elements than it");
  const double* mag = magnitudes ? reinterpret_cast<const double*>(magnitudes->data()) : nullptr;
  return with_dtype(dtype, [&](auto t) {
    return compare_against<decltype(t)>(rule, name, got, got_bytes, ref_dtype, ref, mag, terms);
  });
}

}  // namespace kl
