#pragma once

#include "models/pe/tl_target.h"
#include "models/pe/pe_cpu.h"
