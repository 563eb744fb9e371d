#include <gtest/gtest.h>

#include <stdexcept>

static int add(int a, int b) { return a + b; }

TEST(Calc, Adds) { EXPECT_EQ(add(2, 3), 5); }

TEST(Calc, AddIsWrong) { EXPECT_EQ(add(2, 2), 5); }

TEST(Calc, ThrowsUnexpectedly) { throw std::runtime_error("boom"); }

TEST(Calc, SkipsItself) { GTEST_SKIP() << "not today"; }

TEST(Calc, DISABLED_NotReady) { EXPECT_TRUE(false); }

class Positive : public ::testing::TestWithParam<int> {};

TEST_P(Positive, IsPositive) { EXPECT_GT(GetParam(), 0); }

INSTANTIATE_TEST_SUITE_P(Small, Positive, ::testing::Values(1, 2, -3));

template <typename T>
class Typed : public ::testing::Test {};

using MyTypes = ::testing::Types<int, double>;
TYPED_TEST_SUITE(Typed, MyTypes);

TYPED_TEST(Typed, DefaultIsZero) { EXPECT_EQ(TypeParam(), TypeParam(0)); }
