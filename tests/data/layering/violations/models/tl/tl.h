#pragma once

#include "models/tl/tl_target.h"
#include "models/pe/pe_cpu.h"
