#include "models/pe/engines/bad.h"
