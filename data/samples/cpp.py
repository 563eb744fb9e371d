"""C++ samples: CMake + GoogleTest (TEST, TEST_P, GTEST_SKIP, DISABLED_), and a plain
Makefile + doctest (test cases with subcases, a skipped case)."""

from __future__ import annotations

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED



# --------------------------------------------------------------------------- cpp-geom

def _geom_cmake(sources: str) -> str:
    return _d("""
        cmake_minimum_required(VERSION 3.14)
        project(geom CXX)
        set(CMAKE_CXX_STANDARD 17)
        set(CMAKE_CXX_STANDARD_REQUIRED ON)

        find_package(GTest REQUIRED)

        add_library(geom @SOURCES@)
        target_include_directories(geom PUBLIC include)

        enable_testing()
        file(GLOB test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/*_test.cpp)
        add_executable(geom_tests ${test_sources})
        target_link_libraries(geom_tests geom GTest::gtest_main)
        add_test(NAME geom_tests COMMAND geom_tests)
    """).replace("@SOURCES@", sources)


_GEOM_H = _d("""
    #pragma once

    namespace geom {

    struct Vec2 {
        double x = 0, y = 0;
    };

    Vec2 add(Vec2 a, Vec2 b);
    double dot(Vec2 a, Vec2 b);
    double length(Vec2 v);
    Vec2 normalize(Vec2 v);

    // Clamp v into [lo, hi].
    double clamp(double v, double lo, double hi);

    struct Rect {
        double x0, y0, x1, y1;  // x0 <= x1, y0 <= y1
    };

    // Whether two rectangles share interior area (touching edges do not overlap).
    bool overlaps(const Rect& a, const Rect& b);

    }  // namespace geom
""")

_VEC_IMPL = _d("""
    Vec2 add(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }

    double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }

    double length(Vec2 v) { return std::sqrt(dot(v, v)); }

    Vec2 normalize(Vec2 v) {
        double n = length(v);
        return {v.x / n, v.y / n};
    }

    double clamp(double v, double lo, double hi) {
        if (v < lo) return lo;
        if (v > hi) return hi;
        return v;
    }
""")

_CLAMP_V1 = _d("""
    double clamp(double v, double lo, double hi) {
        if (!(v >= lo)) return lo;  // also maps NaN to lo
        if (v > hi) return hi;
        return v;
    }
""")


def _overlaps(fixed: bool) -> str:
    op = "<" if fixed else "<="
    return _d(f"""
        bool overlaps(const Rect& a, const Rect& b) {{
            return a.x0 {op} b.x1 && b.x0 {op} a.x1 && a.y0 {op} b.y1 && b.y0 {op} a.y1;
        }}
    """)


def _cpp(body: str) -> str:
    return '#include "geom.h"\n\n#include <cmath>\n\nnamespace geom {\n\n' + body \
        + "\n}  // namespace geom\n"


_VEC_TEST = _d("""
    #include <gtest/gtest.h>

    #include "geom.h"

    using geom::Vec2;

    TEST(Vec2Test, Add) {
        Vec2 r = geom::add({1, 2}, {3, 4});
        EXPECT_DOUBLE_EQ(r.x, 4);
        EXPECT_DOUBLE_EQ(r.y, 6);
    }

    TEST(Vec2Test, Dot) { EXPECT_DOUBLE_EQ(geom::dot({1, 2}, {3, 4}), 11); }

    TEST(Vec2Test, Length) { EXPECT_DOUBLE_EQ(geom::length({3, 4}), 5); }
""")

_VEC_TEST_HEAD = _VEC_TEST + _d("""

    TEST(Vec2Test, NormalizeUnitLength) {
        Vec2 n = geom::normalize({3, 4});
        EXPECT_NEAR(geom::length(n), 1.0, 1e-12);
    }

    // Known issue #14: the zero vector normalizes to NaNs instead of staying zero.
    TEST(Vec2Test, NormalizeZeroVector) {
        Vec2 n = geom::normalize({0, 0});
        EXPECT_DOUBLE_EQ(n.x, 0);
        EXPECT_DOUBLE_EQ(n.y, 0);
    }

    TEST(Vec2Test, LongDoublePrecision) {
        GTEST_SKIP() << "long double variants are not implemented";
    }

    TEST(Vec2Test, DISABLED_Rotate) { FAIL() << "rotation is not implemented"; }
""")


def _clamp_test(cases: list[str]) -> str:
    values = ",\n".join(f"                         std::make_tuple({c})" for c in cases)
    return _d("""
        #include <gtest/gtest.h>

        #include <tuple>

        #include "geom.h"

        // (value, lo, hi, expected)
        class ClampTest : public ::testing::TestWithParam<std::tuple<double, double, double, double>> {};

        TEST_P(ClampTest, ReturnsExpected) {
            auto [v, lo, hi, want] = GetParam();
            EXPECT_DOUBLE_EQ(geom::clamp(v, lo, hi), want);
        }

    """) + "INSTANTIATE_TEST_SUITE_P(Ranges, ClampTest,\n" \
        + "        ::testing::Values(\n" + values + "));\n"


_CLAMP_CASES = ["5.0, 0.0, 10.0, 5.0", "-1.0, 0.0, 10.0, 0.0", "11.0, 0.0, 10.0, 10.0"]
_CLAMP_CASES_V1 = [*_CLAMP_CASES, "10.0, 0.0, 10.0, 10.0"]

_RECT_TEST = _d("""
    #include <gtest/gtest.h>

    #include "geom.h"

    using geom::Rect;

    TEST(RectTest, Overlapping) { EXPECT_TRUE(geom::overlaps({0, 0, 2, 2}, {1, 1, 3, 3})); }

    TEST(RectTest, Disjoint) { EXPECT_FALSE(geom::overlaps({0, 0, 1, 1}, {2, 2, 3, 3})); }
""")

_RECT_TEST_V1 = _RECT_TEST + _d("""

    TEST(RectTest, TouchingEdgesDoNotOverlap) {
        EXPECT_FALSE(geom::overlaps({0, 0, 1, 1}, {1, 0, 2, 1}));
        EXPECT_FALSE(geom::overlaps({0, 0, 1, 1}, {0, 1, 1, 2}));
    }
""")

_GEOM_README = "# geom\n\n2-D vectors, clamping and rectangles.\n\n" \
               "    cmake -S . -B build && cmake --build build && ctest --test-dir build\n"


@sample
def sample_cpp_geom() -> SampleRepo:
    vec_and_rect = _VEC_IMPL + "\n"
    commits = (
        Commit(
            "Initial geometry library with GoogleTest suite",
            {
                "CMakeLists.txt": _geom_cmake("src/geom.cpp"),
                ".gitignore": "build/\n",
                "README.md": _GEOM_README,
                "include/geom.h": _GEOM_H,
                "src/geom.cpp": _cpp(vec_and_rect + _overlaps(False)),
                "tests/vec_test.cpp": _VEC_TEST,
                "tests/clamp_test.cpp": _clamp_test(_CLAMP_CASES),
                "tests/rect_test.cpp": _RECT_TEST,
            },
            date="2017-05-20T14:00:00+00:00",
            tag="v0.1.0",
        ),
        Commit(
            "Fix overlaps() for rectangles that only touch (#8)\n\nFixes #7",
            {
                "src/geom.cpp": _cpp(vec_and_rect + _overlaps(True)),
                "tests/rect_test.cpp": _RECT_TEST_V1,
            },
            date="2018-02-11T10:20:00+00:00",
        ),
        Commit(
            "Split geom.cpp into vec.cpp and rect.cpp (#10)\n\nCloses #9",
            {
                "CMakeLists.txt": _geom_cmake("src/vec.cpp src/rect.cpp"),
                "src/geom.cpp": None,
                "src/vec.cpp": _cpp(_VEC_IMPL),
                "src/rect.cpp": _cpp(_overlaps(True)),
            },
            date="2019-07-04T09:00:00+00:00",
        ),
        Commit(
            "Fix clamp() at the upper bound (#12)\n\nFixes #11",
            {
                "src/vec.cpp": _cpp(_VEC_IMPL.replace(_d("""
                    double clamp(double v, double lo, double hi) {
                        if (v < lo) return lo;
                        if (v > hi) return hi;
                        return v;
                    }
                """), _CLAMP_V1)),
                "tests/clamp_test.cpp": _clamp_test(_CLAMP_CASES_V1),
            },
            date="2020-10-30T17:45:00+00:00",
        ),
        Commit(
            "Add normalize() tests and record known issues",
            {"tests/vec_test.cpp": _VEC_TEST_HEAD},
            date="2021-12-12T12:12:00+00:00",
            tag="v0.2.0",
        ),
    )
    clamp = [f"Ranges/ClampTest.ReturnsExpected/{i}" for i in range(3)]
    base = ("Vec2Test.Add", "Vec2Test.Dot", "Vec2Test.Length", *clamp, "RectTest.Overlapping",
            "RectTest.Disjoint")
    expected = {t: P for t in base}
    expected.update({
        "Ranges/ClampTest.ReturnsExpected/3": P,
        "RectTest.TouchingEdgesDoNotOverlap": P,
        "Vec2Test.NormalizeUnitLength": P,
        "Vec2Test.NormalizeZeroVector": F,
        "Vec2Test.LongDoublePrecision": S,
        "Vec2Test.DISABLED_Rotate": S,
    })
    return SampleRepo(
        name="cpp-geom",
        language=Language.CPP,
        build_system="cmake",
        test_framework="gtest",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(7,), fail_to_pass=("RectTest.TouchingEdgesDoNotOverlap",),
                    pass_to_pass=base),
            Planted(commit=2, kind=TaskKind.REFACTOR, issues=(9,), decoy="refactor"),
            Planted(commit=3, issues=(11,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(7, "overlaps() is true for rectangles that only share an edge",
                  "overlaps({0,0,1,1}, {1,0,2,1}) returns true; they share no area.",
                  ("The comparisons should be strict.",),
                  created_at="2018-02-01T10:00:00+00:00"),
            Issue(9, "geom.cpp mixes vectors and rectangles",
                  "Split it into one file per type before it grows further.",
                  created_at="2019-06-20T10:00:00+00:00"),
            Issue(11, "clamp() at the upper bound",
                  "Is clamp(10, 0, 10) guaranteed to be 10? And what about NaN?",
                  ("It is 10 already; NaN is worth handling though.",),
                  created_at="2020-10-15T10:00:00+00:00"),
            Issue(14, "normalize() of the zero vector gives NaN",
                  "normalize({0, 0}) divides by zero.",
                  created_at="2021-12-01T10:00:00+00:00"),
        ),
        description="C++17 geometry; CMake + GoogleTest with a parametrized suite",
    )


# --------------------------------------------------------------------------- cpp-ringbuf

_RB_MAKEFILE = _d("""
    CXX ?= g++
    CXXFLAGS ?= -std=c++17 -Wall -Wextra -O0 -g
    CPPFLAGS += -Iinclude

    TEST_SRCS := $(wildcard tests/*.cpp)
    TEST_OBJS := $(TEST_SRCS:.cpp=.o)

    all: libringbuf.a tests/run_tests

    libringbuf.a: src/ringbuf.o
    \tar rcs $@ $^

    tests/run_tests: $(TEST_OBJS) libringbuf.a
    \t$(CXX) $(CXXFLAGS) -o $@ $(TEST_OBJS) libringbuf.a

    %.o: %.cpp include/ringbuf.h
    \t$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

    test: tests/run_tests
    \t./tests/run_tests

    clean:
    \trm -f src/*.o tests/*.o libringbuf.a tests/run_tests

    .PHONY: all test clean
""")

_RB_H = _d("""
    #pragma once
    #include <cstddef>
    #include <vector>

    // A fixed-capacity FIFO of ints that overwrites the oldest element when full.
    class RingBuffer {
    public:
        explicit RingBuffer(std::size_t capacity);
        void push(int v);
        int pop();  // precondition: !empty()
        int peek() const;  // precondition: !empty()
        std::size_t size() const;
        std::size_t capacity() const { return buf_.size(); }
        bool empty() const { return size() == 0; }
        void clear();

    private:
        std::vector<int> buf_;
        std::size_t head_ = 0;  // next element to pop
        std::size_t count_ = 0;
    };
""")


def _rb_cpp(fixed: bool) -> str:
    push = (
        "    buf_[(head_ + count_) % buf_.size()] = v;\n"
        "    if (count_ < buf_.size())\n        ++count_;\n"
        "    else\n        head_ = (head_ + 1) % buf_.size();\n"
        if fixed else
        "    buf_[(head_ + count_) % buf_.size()] = v;\n"
        "    ++count_;\n"
        "    if (count_ > buf_.size())\n        head_ = (head_ + 1) % buf_.size();\n"
    )
    size = "    return count_;\n" if fixed else \
        "    return count_ > buf_.size() ? buf_.size() : count_;\n"
    return (
        '#include "ringbuf.h"\n\n'
        "RingBuffer::RingBuffer(std::size_t capacity) : buf_(capacity ? capacity : 1) {}\n\n"
        "void RingBuffer::push(int v) {\n" + push + "}\n\n"
        "int RingBuffer::pop() {\n    int v = buf_[head_];\n"
        "    head_ = (head_ + 1) % buf_.size();\n    --count_;\n    return v;\n}\n\n"
        "int RingBuffer::peek() const { return buf_[head_]; }\n\n"
        "std::size_t RingBuffer::size() const {\n" + size + "}\n\n"
        "void RingBuffer::clear() {\n    head_ = 0;\n    count_ = 0;\n}\n"
    )


_RB_MAIN = "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n"

_RB_TESTS = _d("""
    #include <doctest/doctest.h>

    #include "ringbuf.h"

    TEST_CASE("push and pop") {
        RingBuffer rb(3);
        SUBCASE("single element") {
            rb.push(7);
            CHECK(rb.size() == 1);
            CHECK(rb.pop() == 7);
            CHECK(rb.empty());
        }
        SUBCASE("fifo order") {
            rb.push(1);
            rb.push(2);
            CHECK(rb.pop() == 1);
            CHECK(rb.pop() == 2);
        }
    }

    TEST_CASE("overwrites the oldest when full") {
        RingBuffer rb(2);
        rb.push(1);
        rb.push(2);
        rb.push(3);
        CHECK(rb.peek() == 2);
    }
""")

_RB_TESTS_V1 = _RB_TESTS + _d("""

    TEST_CASE("size after wrap-around") {
        RingBuffer rb(2);
        rb.push(1);
        rb.push(2);
        rb.push(3);
        CHECK(rb.size() == 2);
        CHECK(rb.pop() == 2);
        CHECK(rb.size() == 1);
        CHECK(rb.pop() == 3);
        CHECK(rb.empty());
    }
""")

_RB_CLEAR_TESTS = _d("""
    #include <doctest/doctest.h>

    #include "ringbuf.h"

    TEST_CASE("clear empties the buffer") {
        RingBuffer rb(4);
        rb.push(1);
        rb.push(2);
        rb.clear();
        CHECK(rb.empty());
        SUBCASE("and it can be refilled") {
            rb.push(5);
            CHECK(rb.peek() == 5);
        }
    }
""")

_RB_KNOWN = _d("""
    #include <doctest/doctest.h>

    #include "ringbuf.h"

    // Known issue #6: a zero capacity is silently turned into one.
    TEST_CASE("zero capacity is kept") {
        RingBuffer rb(0);
        CHECK(rb.capacity() == 0);
    }

    TEST_CASE("concurrent producers" * doctest::skip()) {
        CHECK(false);  // needs a thread-safe buffer
    }
""")

_RB_README = "# ringbuf\n\nA fixed-capacity ring buffer of ints.\n\n    make && make test\n"


@sample
def sample_cpp_ringbuf() -> SampleRepo:
    commits = (
        Commit(
            "Initial ring buffer with doctest tests",
            {
                "Makefile": _RB_MAKEFILE,
                ".gitignore": "*.o\n*.a\n/tests/run_tests\n",
                "README.md": _RB_README,
                "include/ringbuf.h": _RB_H,
                "src/ringbuf.cpp": _rb_cpp(False),
                "tests/main.cpp": _RB_MAIN,
                "tests/ringbuf_test.cpp": _RB_TESTS,
            },
            date="2016-09-09T09:09:00+00:00",
        ),
        Commit(
            "Fix size() after the buffer wraps around (#4)\n\nFixes #3",
            {"src/ringbuf.cpp": _rb_cpp(True), "tests/ringbuf_test.cpp": _RB_TESTS_V1},
            date="2018-03-21T15:00:00+00:00",
        ),
        Commit(
            "Add tests for clear() (#5)",
            {"tests/clear_test.cpp": _RB_CLEAR_TESTS},
            date="2019-05-02T08:15:00+00:00",
        ),
        Commit(
            "Record known issues as tests",
            {"tests/known_issues_test.cpp": _RB_KNOWN},
            date="2020-01-17T18:30:00+00:00",
            tag="v1.0",
        ),
    )
    base = ("push and pop", "push and pop > single element", "push and pop > fifo order",
            "overwrites the oldest when full")
    expected = {t: P for t in base}
    expected.update({
        "size after wrap-around": P,
        "clear empties the buffer": P,
        "clear empties the buffer > and it can be refilled": P,
        "zero capacity is kept": F,
        "concurrent producers": S,
    })
    return SampleRepo(
        name="cpp-ringbuf",
        language=Language.CPP,
        build_system="make",
        test_framework="doctest",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(3,), fail_to_pass=("size after wrap-around",),
                    pass_to_pass=base),
            Planted(commit=2, kind=TaskKind.OTHER, decoy="tests_only"),
        ),
        issues=(
            Issue(3, "size() is wrong after the buffer wrapped",
                  "Push 3 into a buffer of 2, pop once: size() says 2, not 1.",
                  ("count_ keeps growing past the capacity.",),
                  created_at="2018-03-01T12:00:00+00:00"),
            Issue(6, "RingBuffer(0) has capacity 1",
                  "A zero capacity should either be kept or rejected.",
                  created_at="2020-01-10T12:00:00+00:00"),
        ),
        description="C++17 ring buffer; plain Makefile + doctest with subcases",
    )
