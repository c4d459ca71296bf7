// The instruction set reaching up into the PE.
#include "models/isa/commands.h"
#include "models/pe/pe.h"
