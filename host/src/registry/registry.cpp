#include "registry/registry.hpp"

#include "core/file_read.hpp"
#include "families/family.hpp"
#include "nvrtc/cache_key.hpp"
#include "spec/expression.hpp"
#include "spec/metadata.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace kl {

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const auto na = std::stoull(a.substr(i, std::min<std::size_t>(i2 - i, 18)));
      const auto nb = std::stoull(b.substr(j, std::min<std::size_t>(j2 - j, 18)));
      if (na != nb) return na < nb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

registry::registry(const family_registry& families) : families_(families) {
  for (const auto& name : families.names()) {
    const family_spec& spec = families.find(name)->spec();
    const reference_spec& ref = spec.reference;
    if (!ref.plugin_function.empty()) continue;
    registry_entry e;
    e.descriptor.family = name;
    e.descriptor.name = "reference";
    e.descriptor.origin = origin_kind::source;
    e.descriptor.origin_path = ref.file;
    e.descriptor.entry = ref.entry;
    e.descriptor.summary = "the reference of " + spec.path;
    e.source = ref.source;
    references_.push_back(std::move(e));
  }
}

const registry_entry* registry::reference(const std::string& family) const {
  for (const auto& e : references_)
    if (e.descriptor.family == family) return &e;
  return nullptr;
}

void registry::add(registry_entry e) {
  // Names are how users select variants, so the first one registered keeps a name and any later
  // one, from a source folder or a plugin, is refused with a warning naming both.
  if (const registry_entry* prev = find(e.descriptor.qualified_name())) {
    // Two folders' files of one name (my_kernels/reduce/reduce5.cu beside the shipped one): the
    // user may mean either, so it is an error rather than a guess. A clash within one folder (a
    // tunable file's named point and a file) or with a plugin keeps the first, with a warning.
    const auto folder = [](const variant_descriptor& d) {
      return fs::path(d.origin_path).parent_path().parent_path();
    };
    if (prev->descriptor.origin == origin_kind::source &&
        e.descriptor.origin == origin_kind::source &&
        folder(prev->descriptor) != folder(e.descriptor))
      throw duplicate_variant_error("variant '" + e.descriptor.qualified_name() +
                                    "' is in two kernel folders: " + prev->descriptor.origin_path +
                                    " and " + e.descriptor.origin_path);
    warnings_.push_back(e.descriptor.origin_path + ": variant name '" +
                        e.descriptor.qualified_name() + "' is already taken by " +
                        prev->descriptor.origin_text() + "; this one is ignored");
    return;
  }
  entries_.push_back(std::move(e));
}

namespace {

// The entries of `dir` for which `keep` holds, sorted. An entry whose type cannot be read (a
// symlink loop, a folder it may not enter) costs itself alone: it
// becomes a warning naming its path, and every other entry is still listed.
template <typename Keep>
std::vector<fs::path> list_folder(const fs::path& dir, Keep keep,
                                  std::vector<std::string>& warnings) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    const fs::file_status st = it->status(type_ec);  // follows symlinks, as reading the file will
    if (st.type() == fs::file_type::not_found) continue;  // a dangling link: nothing to read
    if (type_ec) {
      warnings.push_back(it->path().string() + ": skipped: " + type_ec.message());
      continue;
    }
    if (keep(it->path(), st)) out.push_back(it->path());
  }
  if (ec) warnings.push_back(dir.string() + ": cannot be listed: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Some Windows editors start a UTF-8 file with a byte-order mark, which NVRTC reads as an
// unrecognised token: it goes, and the file's lines keep their numbers.
std::string without_bom(std::string text) {
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  return text;
}

}  // namespace

void registry::add_source_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    warnings_.push_back(dir + (ec && ec != std::errc::no_such_file_or_directory
                                   ? ": kernels directory cannot be read: " + ec.message()
                                   : ": kernels directory does not exist"));
    return;
  }
  const std::vector<fs::path> family_dirs = list_folder(
      dir,
      [](const fs::path& p, const fs::file_status& st) {
        return fs::is_directory(st) && p.filename() != "include";
      },
      warnings_);

  for (const auto& fdir : family_dirs) {
    const std::string family_name = fdir.filename().string();
    const std::vector<fs::path> files = list_folder(
        fdir,
        [](const fs::path& p, const fs::file_status& st) {
          return fs::is_regular_file(st) && p.extension() == ".cu";
        },
        warnings_);
    const family* fam = families_.find(family_name);
    if (const std::string broken = families_.broken(family_name); !fam && !broken.empty()) {
      // A family whose description has a mistake: its variants are listed with the mistake,
      // and none of them runs.
      for (const auto& file : files) {
        registry_entry e;
        e.descriptor.family = family_name;
        e.descriptor.name = file_stem(file.string());
        e.descriptor.origin_path = file.string();
        e.error = broken;
        add(std::move(e));
      }
      continue;
    }
    if (!fam) {
      if (!files.empty())
        warnings_.push_back(fdir.string() + ": no family named '" + family_name + "'; its " +
                            std::to_string(files.size()) + " kernel file(s) are ignored");
      continue;
    }
    std::vector<registry_entry> found;
    for (const auto& file : files) {
      // A family's reference kernel is not a variant.
      std::error_code same_ec;
      if (fs::equivalent(file, fam->spec().reference.file, same_ec)) continue;
      registry_entry e;
      const std::string path = file.string();
      e.descriptor.family = family_name;
      e.descriptor.name = file_stem(path);
      e.descriptor.origin = origin_kind::source;
      e.descriptor.origin_path = path;
      try {
        // Listed as a regular file, but it may be something else by now: read as every file
        // kernlab did not write, never blocking, at most a header's size.
        const file_read text = read_regular_file(path, nvrtc::kMaxHeaderBytes);
        if (!text.ok()) throw metadata_error(path, 1, text.why);
        e.source = without_bom(text.bytes);
        parsed_header h = parse_header(e.source, path, fam->shape_variables());
        if (h.descriptor.family != family_name)
          throw metadata_error(path, h.key_lines.at("family"),
                               "family '" + h.descriptor.family + "' but the file is in the '" +
                                   family_name + "' folder");
        // A file with tunables is one variant per point of its space, expanded (and checked)
        // when its header was read.
        // (The points are taken out of h first: each copy of h holding them all made the
        // expansion quadratic, seconds for a file of 700 points.)
        std::vector<variant_descriptor> point_descriptors = std::move(h.points);
        h.points.clear();
        std::vector<parsed_header> headers;
        if (point_descriptors.empty()) headers.push_back(h);
        for (variant_descriptor& d : point_descriptors) {
          headers.push_back(h);
          headers.back().descriptor = std::move(d);
        }
        std::vector<registry_entry> points;
        for (const parsed_header& p : headers) {
          fam->check(p);
          registry_entry point = e;
          point.descriptor = p.descriptor;
          point.key_lines = p.key_lines;
          points.push_back(std::move(point));
        }
        for (auto& point : points) found.push_back(std::move(point));
        continue;
      } catch (const metadata_error& err) {
        e.error = err.what();
      }
      found.push_back(std::move(e));
    }
    // The family's sequence: files with an `order` first, by order, then the rest by name. A
    // tunable file's points stay together, at the file's place: the named ones first, in the
    // order its `points:` gives them (expand_tunables' order, kept by the stable sort), then the
    // rest by name.
    std::stable_sort(found.begin(), found.end(),
                     [](const registry_entry& a, const registry_entry& b) {
                       const variant_descriptor& x = a.descriptor;
                       const variant_descriptor& y = b.descriptor;
                       const auto key = [](const variant_descriptor& d) {
                         return d.order < 0 ? 1000001 : d.order;
                       };
                       if (key(x) != key(y)) return key(x) < key(y);
                       const std::string& fx = x.is_point() ? x.tunable_file : x.name;
                       const std::string& fy = y.is_point() ? y.tunable_file : y.name;
                       if (fx != fy) return natural_less(fx, fy);
                       if (x.named_point != y.named_point) return x.named_point;
                       return !x.named_point && natural_less(x.name, y.name);
                     });
    for (auto& e : found) add(std::move(e));
    add_builtin_baseline(*fam);
  }
}

void registry::add_builtin_baseline(const family& fam) {
  const baseline_spec& b = fam.spec().baseline;
  if (b.copy_from.empty() || find(fam.name() + ".d2d_copy")) return;
  registry_entry e;
  auto& d = e.descriptor;
  d.family = fam.name();
  d.name = "d2d_copy";
  d.origin = origin_kind::builtin;
  d.origin_path = fam.spec().path;
  d.is_baseline = true;
  d.summary = "device-to-device copy of " + b.copy_from + " into " + b.copy_to +
              " (cuMemcpyDtoDAsync): the family's bandwidth bound";
  add(std::move(e));
}

void registry::add_plugin_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    warnings_.push_back(dir + ": plugin folder does not exist");
    return;
  }
  for (const auto& path : list_plugin_files(dir)) add_plugin_file(path);
}

void registry::add_plugin_file(const std::string& path) {
  const plugin_verdict plugin = probe_plugin(path, probe_);
  if (!plugin.ok) {
    warnings_.push_back("plugin " + path + ": " + plugin.reason + "; ignored");
    return;
  }
  // Descriptors are checked one by one: one malformed variant does not hide its neighbours.
  for (std::size_t i = 0; i < plugin.variants.size(); ++i) {
    const probed_variant& v = plugin.variants[i];
    const std::string where = "plugin " + path + ": variant " + std::to_string(i);
    if (v.family.empty() || v.name.empty() || !v.has_run) {
      warnings_.push_back(where + " lacks a family, a name or a run function; ignored");
      continue;
    }
    if (!families_.find(v.family)) {
      warnings_.push_back(where + " ('" + v.name + "') has unknown family '" + v.family +
                          "'; ignored");
      continue;
    }
    registry_entry e;
    auto& d = e.descriptor;
    d.family = v.family;
    d.name = v.name;
    d.origin = origin_kind::plugin;
    d.origin_path = path;
    d.summary = v.summary;
    d.is_baseline = v.is_baseline;
    d.blocks = v.blocks;
    d.dtypes = v.dtypes;
    d.ops = v.ops;
    add(std::move(e));
  }
}

const registry_entry* registry::find(const std::string& qualified) const {
  for (const auto& e : entries_)
    if (e.descriptor.qualified_name() == qualified) return &e;
  return nullptr;
}

std::vector<const registry_entry*> registry::select(const std::vector<std::string>& patterns,
                                                    const std::string& family_filter) const {
  std::vector<const registry_entry*> out;
  std::vector<std::string> names;
  for (const auto& e : entries_)
    if (family_filter.empty() || e.descriptor.family == family_filter) {
      names.push_back(e.descriptor.name);
      names.push_back(e.descriptor.qualified_name());
      if (e.descriptor.is_point()) {  // a tunable file's name selects its points
        names.push_back(e.descriptor.tunable_file);
        names.push_back(e.descriptor.family + "." + e.descriptor.tunable_file);
      }
    }
  // Each pattern's matches, and the families named by the patterns that matched in one family.
  std::vector<std::vector<const registry_entry*>> matches(patterns.size());
  std::set<std::string> anchors;
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    const std::string& raw = patterns[k];
    const std::string pattern = raw == "all" ? "*" : raw;
    // Everything ("all", "*", "reduce.*", a --family alone) leaves the unnamed points of
    // tunable files out: a space of hundreds of points is for `kernlab tune`, or for a pattern
    // that names it. The points `points:` names are variants of the sequence like any other.
    const bool everything = pattern == "*" || (pattern.size() > 2 && pattern.back() == '*' &&
                                               pattern[pattern.size() - 2] == '.' &&
                                               pattern.find('.') == pattern.size() - 2);
    bool matched = false;
    for (const auto& e : entries_) {
      const variant_descriptor& d = e.descriptor;
      if (!family_filter.empty() && d.family != family_filter) continue;
      if (everything && !d.in_default_selection()) {
        matched = true;  // the pattern is not a mistake for leaving them out
        continue;
      }
      // "reduce*" means names that start with reduce; "reduce.*" means the family's variants.
      // A tunable file's name ("my_kernel") selects every point of it, named or not.
      const bool qualified = pattern.find('.') != std::string::npos;
      const std::string name = qualified ? d.qualified_name() : d.name;
      const bool file_matches =
          d.is_point() && pattern.find('[') == std::string::npos &&
          wildcard_match(pattern, qualified ? d.family + "." + d.tunable_file : d.tunable_file);
      if (!wildcard_match(pattern, name) && !file_matches) continue;
      matched = true;
      matches[k].push_back(&e);
    }
    if (!matched) {
      std::string msg = "unknown variant '" + raw + "'" +
                        (family_filter.empty() ? "" : " in family '" + family_filter + "'");
      const auto near = nearest_names(raw, names);
      if (!near.empty()) {
        msg += "; did you mean ";
        for (std::size_t i = 0; i < near.size(); ++i)
          msg += (i ? ", " : "") + std::string("'") + near[i] + "'";
        msg += "?";
      }
      throw selection_error(msg + " (kernlab --list shows every variant)");
    }
    std::set<std::string> families;
    for (const auto* e : matches[k]) families.insert(e->descriptor.family);
    if (families.size() == 1) anchors.insert(*families.begin());
  }
  // A plain name that several families have ("cub": reduce's and scan's baseline) keeps only
  // the families that the single-family names beside it name (`--variant my_idea,reduce5,cub`
  // is reduce's cub: scan's rows would be a table of nothing but a baseline); where they name
  // none of its families, or there are none (`--variant cub`), it keeps them all. Wildcards and
  // qualified names are taken as written.
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    const std::string& p = patterns[k];
    const bool plain = p != "all" && p.find_first_of(".*?[") == std::string::npos;
    std::vector<const registry_entry*> kept;
    if (plain && !anchors.empty())
      for (const auto* e : matches[k])
        if (anchors.count(e->descriptor.family)) kept.push_back(e);
    for (const auto* e : kept.empty() ? matches[k] : kept)
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  // Keep registry order, whatever order the patterns came in.
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kl
