#include "plugin_host/plugin_loader.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "nvrtc/hash.hpp"
#include "process/worker_process.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kl {

namespace {

// What a sane table stays under. A count beyond these is a table that lies about its arrays
// (reading that far would walk through unrelated memory), so the plugin is refused.
constexpr std::uint32_t max_variants = 1024;
constexpr std::uint32_t max_list = 64;  // block sizes, dtypes or ops of one variant
constexpr std::size_t max_string = 256;
// The largest verdict read back from the cache: a table of max_variants variants is far less.
constexpr std::uint64_t max_verdict_bytes = std::uint64_t{4} << 20;

bool abi_supported(std::uint32_t v) {
  return v >= KERNLAB_PLUGIN_ABI_MIN_VERSION && v <= KERNLAB_PLUGIN_ABI_VERSION;
}

std::string abi_mismatch(std::uint32_t v) {
  return "built for plugin ABI version " + std::to_string(v) + ", this kernlab loads versions " +
         std::to_string(KERNLAB_PLUGIN_ABI_MIN_VERSION) + " to " +
         std::to_string(KERNLAB_PLUGIN_ABI_VERSION) + "; rebuild the plugin";
}

// A string of the table: non-null, NUL-terminated within max_string bytes, printable.
std::string table_string(const char* s, const std::string& what) {
  if (s == nullptr) return "";
  const std::size_t n = strnlen(s, max_string + 1);
  if (n > max_string)
    throw std::runtime_error(what + " is longer than " + std::to_string(max_string) +
                             " bytes (not a string?)");
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(s[i]) < 0x20 || static_cast<unsigned char>(s[i]) == 0x7f)
      throw std::runtime_error(what + " holds a control character (not a string?)");
  return std::string(s, n);
}

void check_count(std::uint32_t n, std::uint32_t limit, const std::string& what) {
  if (n > limit)
    throw std::runtime_error(what + " counts " + std::to_string(n) + " entries; more than " +
                             std::to_string(limit) + " means the count is wrong");
}

// "a FIFO", "a directory": what a path that is not a regular file is.
std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::not_found: return "missing, or a broken link";
    default: return "not a file";
  }
}

// Runs `kernlab --probe-plugin FILE` and turns what it sends, or how it ended, into a verdict.
plugin_verdict probe_in_child(const std::string& path, const probe_options& opt) {
  std::vector<std::string> argv = opt.command;
  argv.push_back(path);
  // The plugin's own output (a constructor that prints) goes nowhere: the verdict says it all.
  worker::worker_process child(argv, "/dev/null");
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(opt.timeout_s * 1000));
  std::string phase = "starting the probe";
  plugin_verdict v;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    std::optional<worker::message> m;
    try {
      m = child.receive(static_cast<int>(std::max<long>(0, left.count())));
    } catch (const worker::protocol_error&) {
      const std::string how = child.wait_for_exit();
      v.reason = "the probe process " + std::string(how.rfind("killed", 0) == 0 ? "was " : "") +
                 how + " while " + phase + ", before reporting";
      return v;
    }
    if (!m) {
      child.stop();
      std::ostringstream s;
      s << "still " << phase << " after " << opt.timeout_s
        << " s (--kernel-timeout); the probe was killed";
      v.reason = s.str();
      v.timed_out_after_s = opt.timeout_s;
      return v;
    }
    if (m->type == worker::message_type::heartbeat) {
      phase = m->payload.value("phase", phase);
      continue;
    }
    if (m->type == worker::message_type::result) {
      child.wait_for_exit();
      try {
        return plugin_verdict_from_json(m->payload);
      } catch (const std::exception& e) {
        v.reason = std::string("the probe's answer is malformed (") + e.what() + ")";
        return v;
      }
    }
  }
}

}  // namespace

loaded_plugin::~loaded_plugin() {
  if (table != nullptr && table->abi_version >= 2 && table->release != nullptr) table->release();
}

// Boost.DLL's error for a failed dlopen is errno's, which says nothing ("Bad file descriptor");
// dlerror() has the loader's own message ("file too short", "undefined symbol: x").
std::string open_shared_library(boost::dll::shared_library& library, const std::string& path) {
  boost::dll::fs::error_code ec;
  ::dlerror();  // clear any earlier message
  // RTLD_LOCAL keeps each plugin's symbols (its own CUDA runtime copy, say) to itself.
  library.load(path, ec, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
  if (!ec) return "";
  const char* why = ::dlerror();
  std::string reason = why ? why : ec.message();
  // dlerror() starts with the path; the caller puts it in front already.
  if (reason.rfind(path + ": ", 0) == 0) reason = reason.substr(path.size() + 2);
  return "cannot be loaded as a shared object (" + reason + ")";
}

std::shared_ptr<loaded_plugin> load_plugin(const std::string& path) {
  auto p = std::make_shared<loaded_plugin>();
  p->path = path;
  if (const std::string why = open_shared_library(p->library, path); !why.empty())
    throw std::runtime_error(path + ": " + why);
  if (!p->library.has(KERNLAB_PLUGIN_ENTRY_NAME))
    throw std::runtime_error(path + ": no '" KERNLAB_PLUGIN_ENTRY_NAME
                                    "' entry point; is it a kernlab plugin?");
  auto entry = p->library.get<const kl_plugin*()>(KERNLAB_PLUGIN_ENTRY_NAME);
  const kl_plugin* table = entry();
  if (table == nullptr) throw std::runtime_error(path + ": its entry point returned no table");
  if (!abi_supported(table->abi_version))
    throw std::runtime_error(path + ": " + abi_mismatch(table->abi_version));
  if (table->num_variants > 0 && table->variants == nullptr)
    throw std::runtime_error(path + ": its table lists variants but gives none");
  p->table = table;
  return p;
}

std::vector<std::string> list_plugin_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> plugin_path_dirs(const char* value) {
  std::vector<std::string> out;
  if (value == nullptr) return out;
  std::string item;
  std::istringstream in(value);
  while (std::getline(in, item, ':'))
    if (!item.empty()) out.push_back(item);
  return out;
}

nlohmann::json to_json(const plugin_verdict& v) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& p : v.variants)
    variants.push_back({{"family", p.family},
                        {"name", p.name},
                        {"summary", p.summary},
                        {"blocks", p.blocks},
                        {"dtypes", p.dtypes},
                        {"ops", p.ops},
                        {"is_baseline", p.is_baseline},
                        {"has_run", p.has_run}});
  return {{"ok", v.ok},
          {"reason", v.reason},
          {"timed_out_after_s", v.timed_out_after_s},
          {"abi_version", v.abi_version},
          {"name", v.name},
          {"variants", variants}};
}

plugin_verdict plugin_verdict_from_json(const nlohmann::json& j) {
  plugin_verdict v;
  v.ok = j.at("ok").get<bool>();
  v.reason = j.at("reason").get<std::string>();
  v.timed_out_after_s = j.at("timed_out_after_s").get<double>();
  v.abi_version = j.at("abi_version").get<std::uint32_t>();
  v.name = j.at("name").get<std::string>();
  for (const auto& p : j.at("variants")) {
    probed_variant d;
    d.family = p.at("family").get<std::string>();
    d.name = p.at("name").get<std::string>();
    d.summary = p.at("summary").get<std::string>();
    d.blocks = p.at("blocks").get<std::vector<unsigned>>();
    d.dtypes = p.at("dtypes").get<std::vector<std::string>>();
    d.ops = p.at("ops").get<std::vector<std::string>>();
    d.is_baseline = p.at("is_baseline").get<bool>();
    d.has_run = p.at("has_run").get<bool>();
    v.variants.push_back(std::move(d));
  }
  if (!v.ok && v.reason.empty()) throw std::runtime_error("a refusal without a reason");
  return v;
}

namespace {

plugin_verdict read_plugin(const std::string& path, const std::function<void(const char*)>& phase) {
  plugin_verdict v;
  auto p = std::make_shared<loaded_plugin>();
  p->path = path;
  phase("loading it (its constructors run here)");
  if (std::string why = open_shared_library(p->library, path); !why.empty()) {
    v.reason = std::move(why);
    return v;
  }
  if (!p->library.has(KERNLAB_PLUGIN_ENTRY_NAME)) {
    v.reason = "no '" KERNLAB_PLUGIN_ENTRY_NAME "' entry point; is it a kernlab plugin?";
    return v;
  }
  phase("calling its entry point '" KERNLAB_PLUGIN_ENTRY_NAME "'");
  const kl_plugin* table = p->library.get<const kl_plugin*()>(KERNLAB_PLUGIN_ENTRY_NAME)();
  if (table == nullptr) {
    v.reason = "its entry point returned no table";
    return v;
  }
  phase("reading its table");
  v.abi_version = table->abi_version;
  if (!abi_supported(table->abi_version)) {
    v.reason = abi_mismatch(table->abi_version);
    return v;
  }
  try {
    v.name = table_string(table->name, "the plugin's name");
    check_count(table->num_variants, max_variants, "the variant list");
    if (table->num_variants > 0 && table->variants == nullptr)
      throw std::runtime_error("its table lists variants but gives none");
    for (std::uint32_t i = 0; i < table->num_variants; ++i) {
      const kl_variant_desc& d = table->variants[i];
      const std::string where = "variant " + std::to_string(i);
      probed_variant out;
      out.family = table_string(d.family, where + "'s family");
      out.name = table_string(d.name, where + "'s name");
      out.summary = table_string(d.summary, where + "'s summary");
      check_count(d.num_block_sizes, max_list, where + "'s block size list");
      check_count(d.num_dtypes, max_list, where + "'s dtype list");
      check_count(d.num_ops, max_list, where + "'s op list");
      for (std::uint32_t b = 0; d.block_sizes && b < d.num_block_sizes; ++b) {
        if (d.block_sizes[b] == 0 || d.block_sizes[b] > 1024)
          throw std::runtime_error(where + " lists block size " + std::to_string(d.block_sizes[b]) +
                                   "; block sizes are 1 to 1024");
        out.blocks.push_back(d.block_sizes[b]);
      }
      for (std::uint32_t t = 0; d.dtypes && t < d.num_dtypes; ++t)
        if (d.dtypes[t])
          out.dtypes.push_back(table_string(d.dtypes[t], where + "'s dtype " + std::to_string(t)));
      for (std::uint32_t o = 0; d.ops && o < d.num_ops; ++o)
        if (d.ops[o])
          out.ops.push_back(table_string(d.ops[o], where + "'s op " + std::to_string(o)));
      out.is_baseline = d.is_baseline != 0;
      out.has_run = d.run != nullptr;
      v.variants.push_back(std::move(out));
    }
  } catch (const std::exception& e) {
    v.variants.clear();
    v.reason = std::string("bad table: ") + e.what();
    return v;
  }
  p->table = table;
  phase("releasing and unloading it");
  p.reset();  // release (version 2), then the library's destructors
  v.ok = true;
  return v;
}

}  // namespace

plugin_verdict read_plugin_in_this_process(const std::string& path) {
  return read_plugin(path, [](const char*) {});
}

plugin_verdict probe_plugin(const std::string& path, const probe_options& opt) {
  plugin_verdict v;
  std::error_code ec;
  const fs::file_type type = fs::status(path, ec).type();
  if (type != fs::file_type::regular) {  // a FIFO would block the read below, and dlopen
    v.reason = "not a regular file (" + kind_of(type) + ")";
    return v;
  }
  const file_read bytes = read_regular_file(path, max_plugin_file_bytes);
  if (!bytes.ok()) {
    v.reason = bytes.why;
    return v;
  }
  fs::path cached;
  if (!opt.cache_dir.empty()) {
    cached = opt.cache_dir / "plugins" /
             (nvrtc::hash128(bytes.bytes).hex() + "-abi" +
              std::to_string(KERNLAB_PLUGIN_ABI_VERSION) + ".json");
    // Never blocking on a FIFO put there, never following a link: a verdict is a file we wrote.
    const file_read known_text =
        read_regular_file(cached.string(), max_verdict_bytes, symlinks::refuse);
    if (known_text.ok()) {
      try {
        plugin_verdict known = plugin_verdict_from_json(nlohmann::json::parse(known_text.bytes));
        // A time-out is no verdict for a probe that may wait longer: it probes again.
        if (known.timed_out_after_s == 0 || opt.timeout_s <= known.timed_out_after_s) return known;
      } catch (const std::exception&) {
        // A damaged entry is probed again and rewritten.
      }
    }
  }
  if (opt.command.empty()) {
    v = read_plugin_in_this_process(path);
  } else {
    try {
      v = probe_in_child(path, opt);
    } catch (const std::exception& e) {  // the probe could not be started: not the plugin's fault
      v.reason = std::string("could not be probed: ") + e.what();
      return v;
    }
  }
  if (!cached.empty()) {  // a cache that cannot be written only costs the next run a probe
    fs::create_directories(cached.parent_path(), ec);
    try {
      replace_file(cached.string(), to_json(v).dump() + "\n");
    } catch (const io_error&) {
    }
  }
  return v;
}

int probe_main(const std::string& path) {
  auto send = [](worker::message_type type, const nlohmann::json& payload) {
    worker::write_message(worker::child_out_fd, {type, payload});
  };
  try {
    const plugin_verdict v = read_plugin(path, [&](const char* phase) {
      send(worker::message_type::heartbeat, {{"phase", phase}});
    });
    send(worker::message_type::result, to_json(v));
    return 0;
  } catch (const std::exception& e) {  // the pipe is gone, or an exception left the plugin
    try {
      plugin_verdict v;
      v.reason = std::string("the probe failed: ") + e.what();
      send(worker::message_type::result, to_json(v));
    } catch (const std::exception&) {
    }
    return 1;
  }
}

}  // namespace kl
