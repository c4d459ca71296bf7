// A kernel that reaches past tl.h.

#include "models/pe/pe_cpu.h"
#include "models/tl/tl.h"
#include "kernels/other.h"
