// The long-context GQA decode bench gqa-long-ctx: the
// four partitioning cases of kernels/attention/long_ctx over contexts, on
// the configuration's mesh (2 x 4 cubes of 8 PEs by default), in timing
// mode. Per case and context, two mesh runs:
//   - the whole case: latency, tokens/s = requests / latency, link bytes;
//   - the critical PE alone (the PE whose plan has the most heads x
//     tokens, the lowest number on a tie) with LongCtxOptions::merge off:
//     attention_us. merge_us = latency - attention_us is what the merge
//     and its collective add on the critical path; dispatch_us is the
//     largest PE_CPU dispatch time of a PE in the whole run (it overlaps
//     the rest).
// HBM fraction = KV bytes / latency / the mesh's peak HBM bandwidth; the
// roofline (tb/benches/long_ctx_model.h) and latency's fraction of it.
// Verdict: when merge_us > attention_us (moving and merging partial
// states costs more than the attention), "link-bound" if the states
// crossed links, else "merge-bound (pe_ipc)" (an in-cube merge: PE_IPC
// and its receive port); otherwise make_verdict on the
// critical PE of the whole run: "CPU-bound" when its PE_CPU busy
// (dispatch + cpu cycles) is at least its busiest engine's, else
// "engine-bound (<engine>)".
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/attention/long_ctx/long_ctx.h"
#include "kernels/ccl/all_reduce.h"
#include "models/trace/stats.h"
#include "models/util/checked.h"
#include "tb/benches/builtin_benches.h"
#include "tb/benches/long_ctx_model.h"
#include "tb/run/mesh_run.h"
#include "tb/run/report.h"

namespace kb {
namespace {

std::string valid_cases() {
  std::string out;
  for (LongCtxCase c : kLongCtxCases) out += std::string(out.empty() ? "" : ", ") + long_ctx_case_name(c);
  return out;
}

std::vector<LongCtxCase> cases_of(const BenchParams& p) {
  std::vector<LongCtxCase> out;
  for (const std::string& name : p.words("cases")) {  // distinct, and at most kMaxListValues
    LongCtxCase c;
    if (!long_ctx_case_from_name(name, &c)) {
      throw BenchError("gqa-long-ctx: cases: unknown case '" + name + "'; expected one or more of " + valid_cases());
    }
    out.push_back(c);
  }
  return out;
}

PePlace place_of(const PeConfig& cfg, uint32_t g) {
  const uint32_t p = uint32_t(cfg.topology.cube.pes);
  return PePlace{g, g / p, g % p, uint32_t(cfg.topology.mesh.h), uint32_t(cfg.topology.mesh.w), p};
}

// The PE with the most attention work (heads x tokens), the lowest on a tie.
uint32_t critical_pe(LongCtxCase c, const GqaShape& s, const PeConfig& cfg) {
  uint32_t best = 0;
  int64_t most = -1;
  for (uint32_t g = 0; g < uint32_t(cfg.topology.pes()); ++g) {
    const LongCtxPlan plan = long_ctx_plan(c, s, place_of(cfg, g));
    if (plan.heads.size * plan.tokens.size > most) {
      most = plan.heads.size * plan.tokens.size;
      best = g;
    }
  }
  return best;
}

// Bad input before any run: a PE with heads but no tokens would be a
// KernelError in the run (long_ctx.h: a token part must not be empty).
void check_case(LongCtxCase c, const GqaShape& s, const PeConfig& cfg) {
  int64_t parts = 0;
  bool empty = false;
  for (uint32_t g = 0; g < uint32_t(cfg.topology.pes()); ++g) {
    const LongCtxPlan plan = long_ctx_plan(c, s, place_of(cfg, g));
    if (plan.heads.size == 0) continue;
    empty = empty || plan.tokens.size == 0;
    if (plan.heads.begin == 0 && plan.request == 0) ++parts;  // one PE per token part of head 0
  }
  if (empty) {
    throw BenchError("gqa-long-ctx: contexts: context " + std::to_string(s.context) + " is below the " +
                     std::to_string(parts) + " token parts of " + long_ctx_case_name(c) +
                     " on this mesh; expected a context of at least " + std::to_string(parts));
  }
}

GqaShape shape_of(const BenchParams& p) {
  GqaShape s;
  s.q_heads = p.integer("q_heads");
  s.kv_heads = p.integer("kv_heads");
  s.head_dim = p.integer("head_dim");
  s.kv_tile = p.integer("kv_tile");
  s.dtype = p.dtype("dtype");
  if (s.q_heads % s.kv_heads != 0) {
    throw BenchError("gqa-long-ctx: q_heads=" + std::to_string(s.q_heads) + ", kv_heads=" +
                     std::to_string(s.kv_heads) + ": expected q_heads a multiple of kv_heads");
  }
  return s;
}

// K and V [kv_heads x context, head_dim] must be addressable (the
// element count and its bytes fit in int64) and the context stepped by
// kv_tile must not wrap; kMaxContext keeps a run to minutes (512K tokens
// take seconds per case on 64 PEs).
constexpr int64_t kMaxContext = int64_t(1) << 24;

void check_sizes(const GqaShape& s) {
  if (s.context > kMaxContext) {
    throw BenchError("gqa-long-ctx: contexts: " + std::to_string(s.context) + " tokens; expected at most " +
                     std::to_string(kMaxContext));
  }
  const std::optional<uint64_t> rows = checked_mul(uint64_t(s.kv_heads), uint64_t(s.context));
  const std::optional<uint64_t> elems = rows ? checked_mul(*rows, uint64_t(s.head_dim)) : std::nullopt;
  const std::optional<uint64_t> bytes = elems ? checked_mul(*elems, 4) : std::nullopt;
  if (!bytes || *bytes > uint64_t(std::numeric_limits<int64_t>::max())) {
    throw BenchError("gqa-long-ctx: kv_heads=" + std::to_string(s.kv_heads) + ", contexts: " +
                     std::to_string(s.context) + ", head_dim=" + std::to_string(s.head_dim) +
                     ": the KV cache would exceed 2^63 - 1 bytes");
  }
  if (s.context > std::numeric_limits<int64_t>::max() - s.kv_tile) {
    throw BenchError("gqa-long-ctx: contexts: " + std::to_string(s.context) + ", kv_tile=" +
                     std::to_string(s.kv_tile) + ": expected context + kv_tile at most 2^63 - 1");
  }
}

nlohmann::json run_long_ctx(const BenchParams& p, const PeConfig& cfg, const SystemOutputs& out) {
  if (cfg.data_mode) {
    throw BenchError("gqa-long-ctx runs in timing mode; drop --data (test_long_ctx checks every case's values)");
  }
  const std::vector<int64_t> contexts = p.integers("contexts");
  const std::vector<LongCtxCase> cases = cases_of(p);
  GqaShape s = shape_of(p);
  for (size_t i = 0; i < contexts.size(); ++i) {
    if (std::find(contexts.begin(), contexts.begin() + std::ptrdiff_t(i), contexts[i]) !=
        contexts.begin() + std::ptrdiff_t(i)) {
      throw BenchError("gqa-long-ctx: contexts: " + std::to_string(contexts[i]) +
                       " is listed twice; expected distinct contexts");
    }
    s.context = contexts[i];
    check_sizes(s);
    for (LongCtxCase c : cases) check_case(c, s, cfg);
  }
  if (out.any() && contexts.size() * cases.size() != 1) {
    throw BenchError("gqa-long-ctx: --oplog, --trace, --vcd and --stats need one case and one context "
                     "(--param cases=cube_sp_pe_sp --param contexts=8192); they record the whole case's run");
  }
  if (out.check_only) return nullptr;
  const uint64_t n = cfg.topology.pes();
  const double peak_Bps = double(n) * cfg.hbm_bytes_per_cycle() * cfg.clock_freq_ghz * 1e9;
  nlohmann::json figures;
  figures["mesh"] = {{"h", cfg.topology.mesh.h},
                     {"w", cfg.topology.mesh.w},
                     {"pes_per_cube", cfg.topology.cube.pes},
                     {"pes", n},
                     {"root_cube", lrab_root(uint32_t(cfg.topology.mesh.h), uint32_t(cfg.topology.mesh.w))},
                     {"peak_hbm_GBps", peak_Bps / 1e9}};
  for (LongCtxCase c : cases) {
    const std::string name = long_ctx_case_name(c);
    for (int64_t context : contexts) {
      s.context = context;
      const std::string what = name + ", context " + std::to_string(context);
      MeshRunSpec spec;
      spec.config = cfg;
      spec.kernel_name = "gqa_long_ctx_" + name;
      spec.kernel = [=](Tl& tl) { gqa_long_ctx(tl, c, s, {}); };
      out.apply(spec);
      const MeshRunResult r = run_mesh_isolated(spec);
      if (!r.ok) throw SystemRunError(what + ": " + r.error);

      const uint32_t crit = critical_pe(c, s, cfg);
      MeshRunSpec alone;
      alone.config = spec.config;
      alone.kernel_name = "gqa_long_ctx_" + name + "_attention";
      LongCtxOptions attention_only;
      attention_only.merge = false;
      alone.kernel = [=](Tl& tl) { gqa_long_ctx(tl, c, s, attention_only); };
      alone.pes = {crit};
      out.apply_limits(alone);
      const MeshRunResult a = run_mesh_isolated(alone);
      if (!a.ok) throw SystemRunError(what + ", attention alone on PE " + std::to_string(crit) + ": " + a.error);

      const uint64_t latency_ps = r.latency_ps();
      const double t = double(latency_ps) * 1e-12;
      const double attention_us = double(a.latency_ps()) * 1e-6;
      const double latency_us = t * 1e6;
      const double merge_us = latency_us - attention_us;
      uint64_t dispatch_ps = 0, link_bytes = 0;
      const MeshPeResult* crit_pe = nullptr;
      for (const MeshPeResult& pe : r.pes) {
        if (pe.launched) dispatch_ps = std::max(dispatch_ps, pe.launch.dispatch_ps);
        if (pe.global == crit) crit_pe = &pe;
      }
      for (const MeshLinkResult& l : r.links) link_bytes += l.bytes;
      if (!crit_pe) throw SystemRunError(what + ": the run has no PE " + std::to_string(crit));
      const double requests = double(long_ctx_requests(c, place_of(cfg, 0)));
      const double kv_bytes = long_ctx_kv_bytes(c, s, cfg);
      const LongCtxBound bound = long_ctx_bound(c, s, cfg);
      const Verdict v = make_verdict(crit_pe->busy_ps, latency_ps);
      // The merge outlasts the attention: link-bound when its states crossed
      // links, else merge-bound on PE_IPC (an in-cube merge).
      const bool merge_dominates = merge_us > attention_us;

      nlohmann::json f;
      f["context"] = context;
      f["requests"] = requests;
      f["critical_pe"] = crit;
      f["latency_us"] = latency_us;
      f["tokens_per_s"] = t > 0 ? requests / t : 0.0;
      f["attention_us"] = attention_us;
      f["merge_us"] = merge_us;
      f["dispatch_us"] = double(dispatch_ps) * 1e-6;
      f["attention_fraction"] = latency_us > 0 ? attention_us / latency_us : 0.0;
      f["merge_fraction"] = latency_us > 0 ? merge_us / latency_us : 0.0;
      f["dispatch_fraction"] = latency_us > 0 ? double(dispatch_ps) * 1e-6 / latency_us : 0.0;
      f["kv_bytes"] = kv_bytes;
      f["hbm_fraction"] = t > 0 ? kv_bytes / t / peak_Bps : 0.0;
      f["link_bytes"] = link_bytes;
      f["commands"] = r.commands;
      f["bound_us"] = bound.total_ps() * 1e-6;
      f["bound_hbm_us"] = bound.hbm_ps * 1e-6;
      f["bound_collective_us"] = bound.collective_ps * 1e-6;
      f["roofline_fraction"] = latency_us > 0 ? bound.total_ps() * 1e-6 / latency_us : 0.0;
      f["verdict"] = !merge_dominates ? v.text() : link_bytes > 0 ? std::string("link-bound")
                                                                 : std::string("merge-bound (pe_ipc)");
      figures[name][std::to_string(context)] = f;  // sweeps flatten it to cube_sp_pe_sp.<context>.latency_us
    }
  }
  return figures;
}

void report_long_ctx(std::ostream& os, const BenchParams& p, const PeConfig& cfg, const nlohmann::json& f) {
  const nlohmann::json& mesh = f.at("mesh");
  os << "gqa-long-ctx: " << p.integer("q_heads") << " query heads, " << p.integer("kv_heads") << " KV heads, d = "
     << p.integer("head_dim") << ", " << p.text("dtype") << ", KV tile " << p.integer("kv_tile") << ", on a "
     << cfg.topology.mesh.h << " x " << cfg.topology.mesh.w << " mesh of " << cfg.topology.cube.pes << "-PE cubes ("
     << mesh.at("pes").get<uint64_t>() << " PEs), LRAB root cube " << mesh.at("root_cube").get<uint32_t>()
     << ", peak HBM " << fmt("%.0f", mesh.at("peak_hbm_GBps").get<double>()) << " GB/s\n";
  os << "  case              context   latency_us    tokens/s   attention_us      merge_us   dispatch_us   HBM%"
        "   bound_us  roofline%  verdict\n";
  for (LongCtxCase c : kLongCtxCases) {
    const std::string name = long_ctx_case_name(c);
    if (!f.contains(name)) continue;
    std::vector<const nlohmann::json*> rows;  // by context (the keys sort as text)
    for (const auto& [context, row] : f.at(name).items()) rows.push_back(&row);
    std::sort(rows.begin(), rows.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
      return a->at("context").get<int64_t>() < b->at("context").get<int64_t>();
    });
    for (const nlohmann::json* row : rows) {
      const nlohmann::json& x = *row;
      auto us_pct = [&](const char* us, const char* frac) {
        return fmt("%8.2f", x.at(us).get<double>()) + fmt(" (%3.0f%%)", 100.0 * x.at(frac).get<double>());
      };
      os << "  " << name << std::string(name.size() < 16 ? 16 - name.size() : 0, ' ')
         << fmt("%9.0f", x.at("context").get<double>()) << fmt("%13.2f", x.at("latency_us").get<double>())
         << fmt("%12.0f", x.at("tokens_per_s").get<double>()) << "  "
         << us_pct("attention_us", "attention_fraction") << us_pct("merge_us", "merge_fraction")
         << us_pct("dispatch_us", "dispatch_fraction") << fmt("%6.1f", 100.0 * x.at("hbm_fraction").get<double>())
         << fmt("%11.2f", x.at("bound_us").get<double>())
         << fmt("%10.1f%%", 100.0 * x.at("roofline_fraction").get<double>()) << "  "
         << x.at("verdict").get<std::string>() << "\n";
    }
  }
}

}  // namespace

Bench long_ctx_bench() {
  Bench b;
  b.name = "gqa-long-ctx";
  b.description =
      "long-context GQA decode over a mesh of cubes: the four partitioning cases over contexts, time split, "
      "HBM use, roofline and verdict";
  b.params = {
      {"contexts", "8192,16384,32768,65536,131072,262144,524288", "KV cache lengths in tokens, comma-separated"},
      {"cases", "cube_sp_pe_tp,cube_tp_pe_sp,cube_repl_pe_sp,cube_sp_pe_sp",
       "partitioning cases (kernels/attention/long_ctx/long_ctx.h), comma-separated"},
      {"q_heads", "32", "query heads"},
      {"kv_heads", "8", "KV heads (q_heads / kv_heads query heads share one)"},
      {"head_dim", "128", "head dimension d"},
      {"kv_tile", "128", "KV tile length"},
      {"dtype", "bf16", "element type of Q, K, V"},
  };
  // The defaults make 56 mesh runs up to 512K tokens: the golden keeps one
  // small context (8 mesh runs) so the golden test takes seconds.
  b.golden_params = {"contexts=4096"};
  b.system = run_long_ctx;
  b.system_report = report_long_ctx;
  b.sweep_columns = {"*latency_us", "*tokens_per_s", "*roofline_fraction"};
  return b;
}

}  // namespace kb
