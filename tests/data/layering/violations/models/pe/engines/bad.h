#include "models/pe/stage/stage.h"
#include "models/pe/scheduler/bad.h"
