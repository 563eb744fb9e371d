#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <stdexcept>

static int add(int a, int b) { return a + b; }

TEST_CASE("adds numbers") { CHECK(add(2, 3) == 5); }

TEST_CASE("add is wrong") { CHECK(add(2, 2) == 5); }

TEST_CASE("throws unexpectedly") { throw std::runtime_error("boom"); }

TEST_CASE("skipped test" * doctest::skip()) { CHECK(false); }

TEST_CASE("ünïcode [bracket] name") {
    SUBCASE("first subcase") { CHECK(add(1, 1) == 2); }
    SUBCASE("failing subcase") { CHECK(add(1, 1) == 3); }
}

TEST_CASE_TEMPLATE("default is zero", T, int, double) { CHECK(T() == T(0)); }
