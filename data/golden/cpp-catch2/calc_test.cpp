#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <stdexcept>

static int add(int a, int b) { return a + b; }

TEST_CASE("adds numbers", "[math]") { REQUIRE(add(2, 3) == 5); }

TEST_CASE("add is wrong", "[math]") { CHECK(add(2, 2) == 5); }

TEST_CASE("throws unexpectedly") { throw std::runtime_error("boom"); }

TEST_CASE("ünïcode [bracket] name") {
    SECTION("first section") { CHECK(add(1, 1) == 2); }
    SECTION("second section") { CHECK(add(0, 0) == 0); }
}

TEMPLATE_TEST_CASE("default is zero", "[template]", int, double) {
    CHECK(TestType() == TestType(0));
}

TEST_CASE("generated values") {
    int n = GENERATE(1, 2, 3);
    CHECK(n > 0);
}

TEST_CASE("hidden test", "[.]") { FAIL("hidden tests do not run"); }
