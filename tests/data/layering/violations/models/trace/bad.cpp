#include "models/trace/op_log.h"
#include "models/pe/commands.h"
  #  include "models/pe/pe.h"
#include <systemc>
