#include "models/pe/bad.h"
// Cost per docs/cost-model.md D2 and TR7; an issued command, a tissue 3.
// per ADR-0064 D2
