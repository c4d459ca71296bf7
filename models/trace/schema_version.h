// The version of the machine-readable outputs' layout:
// the statistics JSON (--stats), the run summary (--json) and the Chrome
// trace's metadata ("otherData") carry it as "schema_version". One number
// for all three: it is bumped when a field of any of them is renamed or
// removed, or changes meaning; adding a field does not bump it.
#pragma once

namespace kb {

constexpr int kSchemaVersion = 1;

}  // namespace kb
