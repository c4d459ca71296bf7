#include "models/pe/stage.h"
int x;  // a;b

#include "tb/runner.h"
