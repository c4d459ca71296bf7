// The roofline of the long-context GQA decode cases: a
// lower bound on a case's latency from the configuration alone, the HBM
// time of the KV cache plus the alpha-beta time of its merge collective.
// Derivation: README "Long-context decode: the roofline".
#pragma once

#include "kernels/attention/long_ctx/long_ctx.h"
#include "models/config/pe_config.h"

namespace kb {

struct LongCtxBound {
  double hbm_ps = 0;         // KV bytes / the mesh's aggregate HBM bandwidth
  double collective_ps = 0;  // what the merge adds on the critical chain
  double total_ps() const { return hbm_ps + collective_ps; }
};

// Every PE of cfg.topology runs case c on shape s (timing as in the
// configuration); no run of the case is faster than total_ps().
LongCtxBound long_ctx_bound(LongCtxCase c, const GqaShape& s, const PeConfig& cfg);

// KV bytes the case reads: 2 (K and V) x kv_heads x context x head_dim x
// dtype bytes x requests.
double long_ctx_kv_bytes(LongCtxCase c, const GqaShape& s, const PeConfig& cfg);

}  // namespace kb
