#include "models/trace/op_log.h"
#include "models/isa/commands.h"
  #  include "models/pe/pe.h"
#include <systemc>
#include "models/isa/command_table.h"
