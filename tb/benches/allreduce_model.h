// An analytic alpha-beta model of the all-reduce kernels (kernels/ccl) on
// the mesh model, derived from the configuration's parameters (the bench
// and a test compare the simulation with it). Derivation: README
// "All-reduce: the alpha-beta model".
#pragma once

#include <cstdint>

#include "kernels/ccl/all_reduce.h"
#include "models/config/pe_config.h"

namespace kb {

enum class AllReduceAlgo { kLrab, kRing };

// Predicted time of an all-reduce of `bytes` (fp32) per PE, in ps.
double all_reduce_model_ps(AllReduceAlgo algo, const PeConfig& cfg, uint64_t bytes, const AllReduceOptions& opt);

}  // namespace kb
