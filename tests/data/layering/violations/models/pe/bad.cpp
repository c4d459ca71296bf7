#include "models/pe/stage.h"
int x;  // a;b
// [0, n) must not hide the lines after it
#include "tb/runner.h"
