#include <gtest/gtest.h>
// Two layers (STYLE.md 4).
