#include <gtest/gtest.h>
#include "compiler/placement.hpp"
TEST(Placement, Stub) {}
