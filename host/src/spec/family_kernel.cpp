// A family.toml's [kernel] (spec/family_toml.hpp): the variants' signature (args) and default
// launch, the plan (single or passes) and what it asks of the family; and [pipeline], the size
// axis kernlab --pipeline cuts into chunks.
#include "spec/family_toml.hpp"

namespace kl::family_toml {
namespace {

// The pipeline (kernlab --pipeline): the problem cut along one size axis into chunks, each
// chunk a problem of its own whose buffers are slices of the whole ones. So every in and out
// buffer must be that axis times a constant (at the other axes' defaults), and no workspace.
void read_pipeline(const reader& r, const toml::node& p,
                   const std::map<std::string, std::int64_t>& vars, family_spec& s) {
  const toml::table& pt = r.table(p, "pipeline ({ axis = \"N\" })");
  r.only_keys(pt, {"axis"}, "[pipeline]");
  const toml::node* a = pt.get("axis");
  if (!a) r.fail(reader::line_of(p), "[pipeline] needs 'axis' (the size axis it cuts)");
  s.pipeline_axis = r.string(*a, "axis");
  s.pipeline_line = reader::line_of(*a);
  const auto axis = std::find_if(s.axes.begin(), s.axes.end(),
                                 [&](const axis_spec& x) { return x.name == s.pipeline_axis; });
  if (axis == s.axes.end())
    r.fail(s.pipeline_line, "[pipeline] axis '" + s.pipeline_axis + "' is not a size axis");
  if (s.plan != launch_plan::single)
    r.fail(s.pipeline_line, "[pipeline] needs the plan single (one launch per chunk)");
  for (const auto& b : s.buffers) {
    if (b.role == buffer_role::workspace)
      r.fail(b.line, "[pipeline]: buffer " + b.name + " is a workspace, which a chunk cannot cut");
    if (b.has_start())
      r.fail(b.line, "[pipeline]: buffer " + b.name +
                         " has a start (inout, or init = \"zero\"), which the pipeline does not "
                         "restore per chunk");
    const std::string linear = "[pipeline]: buffer " + b.name + "'s count '" + b.count +
                               "' is not a multiple of " + s.pipeline_axis +
                               " (a chunk of the axis must be a slice of the buffer)";
    // The count at chunks of 1, 2 and many units, all within the axis' limits: a count that does
    // not evaluate there (an overflow) is the buffer's error, not kernlab's.
    std::int64_t unit = 0;
    for (const std::int64_t units : {std::int64_t{1}, std::int64_t{2}, std::int64_t{1000003}}) {
      auto x = vars;
      x[s.pipeline_axis] = std::min(units, axis->max);
      std::int64_t count = 0;
      try {
        count = evaluate(b.count, x);
      } catch (const expression_error& e) {
        r.fail(b.line, "[pipeline]: buffer " + b.name + "'s count at " + s.pipeline_axis + " = " +
                           std::to_string(x[s.pipeline_axis]) + ": " + e.what());
      }
      if (units == 1) unit = count;
      std::int64_t expected = 0;
      if (unit < 1 || __builtin_mul_overflow(unit, x[s.pipeline_axis], &expected) ||
          count != expected)
        r.fail(b.line, linear);
    }
  }
}

}  // namespace

// What plan passes asks of the family's ops and buffers; then PASS_N, the elements one pass
// reads, is a variable of its expressions.
void spec_reader::check_plan_passes() {
  for (const auto& o : s.ops)
    if (o.identity.empty())
      r.fail(o.line, "op " + o.name + " needs an 'identity': plan passes pads its input with it");
  // One input reduced to one value: the engine relaunches the kernel on its partial results.
  const auto count = [&](buffer_role role) {
    return std::count_if(s.buffers.begin(), s.buffers.end(),
                         [&](const buffer_spec& b) { return b.role == role; });
  };
  if (count(buffer_role::in) != 1 || count(buffer_role::out) != 1 ||
      count(buffer_role::inout) != 0 || count(buffer_role::workspace) != 0)
    r.fail(s.kernel_line,
           "plan passes needs one in buffer, one out buffer and no inout or workspace buffer (a "
           "variant's header declares its own workspace)");
  for (const auto& b : s.buffers)
    if (b.zero)
      r.fail(b.line, "plan passes: the out buffer " + b.name +
                         " is each pass's own output, not a start at zero (no init)");
  for (const auto& b : s.buffers)
    if (b.role == buffer_role::out && evaluate(b.count, vars) != 1)
      r.fail(b.line, "plan passes: the out buffer " + b.name + " holds one element (count 1)");
  if (s.ops.empty())
    r.fail(s.kernel_line, "plan passes needs [ops]: their identities pad the input");
  vars["PASS_N"] = vars.at(s.axes.front().name);  // the elements one pass reads
}

// [kernel] args, the variants' parameters in order: a buffer's name (its pointer), an expression
// over the axes, or { value = expression, type = "int64" }. Every buffer must be among them.
void spec_reader::read_args(const toml::table& kt) {
  const toml::node* args = kt.get("args");
  if (!args || !args->is_array()) r.fail(s.kernel_line, "[kernel] needs 'args' (an array)");
  for (const auto& a : *args->as_array()) {
    arg_spec arg;
    arg.line = reader::line_of(a);
    if (a.is_table()) {
      const toml::table& t = *a.as_table();
      r.only_keys(t, {"value", "type"}, "an argument");
      const toml::node* v = t.get("value");
      if (!v) r.fail(arg.line, "an argument table needs 'value'");
      arg.expression = r.expression(*v, "value");
      if (const toml::node* ty = t.get("type")) arg.type = r.string(*ty, "type");
      if (arg.type != "int32" && arg.type != "int64" && arg.type != "uint32" &&
          arg.type != "uint64")
        r.fail(arg.line,
               "argument type '" + arg.type + "': expected int32, int64, uint32 or uint64");
    } else {
      const std::string text = r.expression(a, "an argument");
      if (s.buffer(text))
        arg.buffer = text;
      else
        arg.expression = text;
    }
    if (!arg.expression.empty())
      check_expr(arg.expression, arg.line,
                 "argument (neither a buffer nor an expression over the axes)", vars);
    s.args.push_back(arg);
  }
  for (const auto& b : s.buffers)
    if (std::none_of(s.args.begin(), s.args.end(),
                     [&](const arg_spec& a) { return a.buffer == b.name; }))
      r.fail(b.line, "buffer " + b.name + " is not among [kernel] args");
}

void spec_reader::kernel() {
  // The kernel's signature and default launch.
  const toml::node* kernel = root.get("kernel");
  if (!kernel) r.fail(1, "'[kernel]' is missing (its 'args' are the variants' parameters)");
  const toml::table& kt = r.table(*kernel, "kernel");
  s.kernel_line = reader::line_of(*kernel);
  r.only_keys(kt, {"args", "block_dims", "grid_dims", "plan", "includes", "pad", "plugin_sizes"},
              "[kernel]");
  if (const toml::node* n = kt.get("plan")) {
    const std::string plan = r.string(*n, "plan");
    if (plan == "passes")
      s.plan = launch_plan::passes;
    else if (plan != "single")
      r.fail(reader::line_of(*n), "plan '" + plan + "': expected single or passes");
  }
  if (const toml::node* n = kt.get("includes")) s.includes = r.strings(*n, "includes");
  if (const toml::node* n = kt.get("pad")) {
    const std::int64_t pad = r.integer(*n, "pad");
    if (pad < 1) r.fail(reader::line_of(*n), "pad must be at least 1");
    if (s.plan != launch_plan::passes) r.fail(reader::line_of(*n), "pad belongs to plan passes");
    s.pad = static_cast<std::uint64_t>(pad);
  }
  if (s.plan == launch_plan::passes) check_plan_passes();
  if (const toml::node* n = kt.get("plugin_sizes")) {
    auto sizes_vars = vars;
    if (s.plan == launch_plan::passes) sizes_vars["PADDED_N"] = 1;
    if (!n->is_array()) r.fail(reader::line_of(*n), "plugin_sizes must be an array");
    for (const auto& e : *n->as_array()) {
      s.plugin_sizes.push_back(r.expression(e, "plugin_sizes' elements"));
      check_expr(s.plugin_sizes.back(), reader::line_of(e), "plugin_sizes", sizes_vars);
    }
  }
  read_args(kt);
  grid_vars = vars;
  grid_vars["RESIDENT_BLOCKS"] = 1024;
  grid_vars["SM_COUNT"] = 132;
  if (const toml::node* n = kt.get("block_dims")) {
    s.block_dims = r.expressions(*n, "block_dims");
    for (const auto& e : s.block_dims) check_expr(e, reader::line_of(*n), "block_dims", vars);
  }
  const toml::node* grid = kt.get("grid_dims");
  if (grid) {
    if (s.plan == launch_plan::passes)
      r.fail(reader::line_of(*grid),
             "plan passes takes its grids from the variants' headers "
             "(tile, grid), not grid_dims");
    s.grid_dims = r.expressions(*grid, "grid_dims");
    for (const auto& e : s.grid_dims) check_expr(e, reader::line_of(*grid), "grid_dims", grid_vars);
  } else if (s.plan == launch_plan::single) {
    r.fail(s.kernel_line, "[kernel] needs 'grid_dims' (the default launch)");
  }
}

void spec_reader::pipeline() {
  if (const toml::node* p = root.get("pipeline")) read_pipeline(r, *p, vars, s);
}

}  // namespace kl::family_toml
