"""Golden report fixtures: real framework output for the report parsers' tests.

For each case below this script writes a small test project (the sources are in this file,
written by this project), runs the real test framework on it inside the language's image
(`envs.images`), in an `envs.sandbox.Sandbox` with no network unless the framework itself
must be downloaded (Jest, Mocha, Vitest from npm; JUnit 5 and the Maven plugins from Maven
Central), and stores under ``tests/envs/reports/golden/<case>/``:

- the report exactly as the framework wrote it (``report.xml``, ``report.json``,
  ``stdout.txt`` for reports read from standard output, ...);
- ``meta.json``: the ``envs.reports`` format string, the report's file name, the test
  command's exit code, the framework, the image family, the command, and ``consistent``
  (whether the exit code agrees with the planted failures);
- ``expected.json``: the results the case planted, ``[{"test_id", "status"}]``, written
  from the case definition here, never from a parser's output. Ids follow the format
  module's convention (see each module's docstring in envs/reports/);
- ``source.txt``: the project's files, for reading without running this script.

Run it with Docker available::

    .venv/bin/python -m data.golden              # every case
    .venv/bin/python -m data.golden --list       # the case names
    .venv/bin/python -m data.golden --only go-test-json --only ruby-rspec-json

Then ``.venv/bin/pytest tests/envs/reports`` checks the parsers against the fixtures
(no Docker needed there). Frameworks print durations and timestamps, so a rerun changes
the report files but not the expectations.

Choices worth knowing:

- Maven Surefire writes one ``TEST-<class>.xml`` per test class (a ``@Nested`` class is a
  class of its own); the case stores them concatenated in file-name order, as
  ``cat target/surefire-reports/TEST-*.xml`` would, which the JUnit parser reads as
  several documents.
- Catch2 v2 (the Debian package) has no way to skip a test at run time and leaves hidden
  (``[.]``) tests out of the report, so its cases have no SKIPPED result.
- ``pytest -rA`` without ``-v`` names skipped tests by file and line only, so that case
  has no SKIPPED result either (the parser warns); the ``-v`` case has them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "envs" / "reports" / "golden"
WORKDIR = "/testbed"
MAX_REPORT_BYTES = 200 * 1024

PASSED, FAILED, ERROR, SKIPPED, XFAIL = "PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"

# Pinned framework versions (all work on the image's Node 18 / Maven 3.8 / Java 17).
JEST = "29.7.0"
MOCHA = "10.8.2"
VITEST = "1.6.1"
JUNIT_JUPITER = "5.10.2"
SUREFIRE = "3.2.5"
MAVEN_COMPILER = "3.13.0"
MAVEN_RESOURCES = "3.3.1"

NPM_INSTALL = "npm install --no-audit --no-fund --loglevel=error"


@dataclass(frozen=True)
class Case:
    name: str  # the directory under golden/
    language: str
    framework: str
    image: str  # envs.images family
    format: str  # envs.reports format string
    files: dict[str, str]  # the project, relative to WORKDIR
    command: str  # the test command; its exit code is recorded
    report: str  # the stored report's file name
    expected: tuple[tuple[str, str], ...]  # (status, test_id), as planted
    report_path: str | None = None  # where the command writes it (None: its stdout)
    setup: tuple[str, ...] = ()  # build steps before the command; each must succeed
    collect: str | None = None  # a shell step after the command that writes report_path
    network: bool = False
    options: dict[str, str] | None = None
    note: str = ""

    @property
    def expected_list(self) -> list[dict[str, str]]:
        return [{"test_id": tid, "status": st} for st, tid in self.expected]


def _ids(status: str, *ids: str) -> list[tuple[str, str]]:
    return [(status, i) for i in ids]


# --------------------------------------------------------------------------- Python

PY_CALC = """\
def add(a, b):
    return a + b


def divide(a, b):
    return a // b
"""

PY_TEST_CALC = """\
import pytest

from calc import add, divide


def test_adds_numbers():
    assert add(2, 3) == 5


def test_add_is_wrong():
    assert add(2, 2) == 5


def test_divides_by_zero():
    # an exception in the test body: pytest reports a failure, not an error
    assert divide(1, 0) == 0


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture setup failed")


def test_uses_broken_fixture(broken_fixture):
    assert True


@pytest.fixture
def breaks_in_teardown():
    yield
    raise RuntimeError("fixture teardown failed")


def test_passes_then_teardown_errors(breaks_in_teardown):
    assert True


@pytest.mark.skip(reason="not today")
def test_skipped_by_marker():
    assert False


def test_skips_itself():
    pytest.skip("skipped at run time")


@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert add(1, 1) == 3


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(1, 2, 3, id="one plus two"),
        pytest.param(1, 1, 2, id="\u00fcn\u00efcode"),
        pytest.param(2, 2, 5, id="[bracket]"),
    ],
)
def test_add_param(a, b, want):
    assert add(a, b) == want


class TestGroup:
    def test_method(self):
        assert add(0, 0) == 0

    @pytest.mark.parametrize("n", [0, 1])
    def test_param_method(self, n):
        assert n < 1
"""

PY_TEST_UNICODE = """\
def test_\u00fcn\u00efcode_function_name():
    assert "\u00fc".upper() == "\u00dc"
"""


def _pytest_escape(param_id: str) -> str:
    """pytest's default: non-ASCII in parametrize ids is written as escapes (\\xfc)."""
    return param_id.encode("unicode_escape").decode("ascii")


def _pytest_expected(*, skipped: bool) -> tuple[tuple[str, str], ...]:
    f = "tests/test_calc.py"
    out = [
        (PASSED, f"{f}::test_adds_numbers"),
        (FAILED, f"{f}::test_add_is_wrong"),
        (FAILED, f"{f}::test_divides_by_zero"),
        (ERROR, f"{f}::test_uses_broken_fixture"),
        (ERROR, f"{f}::test_passes_then_teardown_errors"),  # passed, then errored: ERROR
        (XFAIL, f"{f}::test_known_bug"),
        (PASSED, f"{f}::test_add_param[one plus two]"),
        (PASSED, f"{f}::test_add_param[{_pytest_escape('ünïcode')}]"),
        (FAILED, f"{f}::test_add_param[[bracket]]"),
        (PASSED, f"{f}::TestGroup::test_method"),
        (PASSED, f"{f}::TestGroup::test_param_method[0]"),
        (FAILED, f"{f}::TestGroup::test_param_method[1]"),
        (PASSED, "tests/unit/test_strings.py::test_ünïcode_function_name"),
    ]
    if skipped:
        out += _ids(SKIPPED, f"{f}::test_skipped_by_marker", f"{f}::test_skips_itself")
    return tuple(out)


PY_FILES = {
    "calc.py": PY_CALC,
    "conftest.py": "",
    "tests/test_calc.py": PY_TEST_CALC,
    "tests/unit/test_strings.py": PY_TEST_UNICODE,
}
PYTEST = "python3 -m pytest -p no:cacheprovider"

# --------------------------------------------------------------------------- Java

JAVA_POM = f"""\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example.golden</groupId>
  <artifactId>golden</artifactId>
  <version>1.0</version>
  <packaging>jar</packaging>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>{JUNIT_JUPITER}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>{MAVEN_RESOURCES}</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>{MAVEN_COMPILER}</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>{SUREFIRE}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""

JAVA_CALC = """\
package org.example.golden;

public final class Calc {
    private Calc() {}

    public static int add(int a, int b) {
        return a + b;
    }

    public static int divide(int a, int b) {
        return a / b;
    }
}
"""

JAVA_TEST = """\
package org.example.golden;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CalcTest {
    @Test
    void addsNumbers() {
        assertEquals(5, Calc.add(2, 3));
    }

    @Test
    void addIsWrong() {
        assertEquals(5, Calc.add(2, 2));
    }

    @Test
    void dividesByZero() {
        // an exception that is not an assertion: Surefire writes <error>
        assertEquals(0, Calc.divide(1, 0));
    }

    @Test
    @Disabled("not today")
    void disabledTest() {
        assertTrue(false);
    }

    @Test
    void assumptionFails() {
        Assumptions.assumeTrue(false, "only on Sundays");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, -3})
    void isPositive(int n) {
        assertTrue(n > 0);
    }

    @ParameterizedTest(name = "{0} + {1} = {2}")
    @CsvSource({"1, 1, 2", "2, 2, 5"})
    void addsCsv(int a, int b, int want) {
        assertEquals(want, Calc.add(a, b));
    }

    @Test
    @DisplayName("\u00fcn\u00efcode [display] name")
    void displayNamed() {
        assertEquals(2, Calc.add(1, 1));
    }

    @Nested
    class Inner {
        @Test
        void innerPasses() {
            assertEquals(0, Calc.add(0, 0));
        }
    }
}
"""

_J = "org.example.golden.CalcTest"
JAVA_EXPECTED = (
    (PASSED, f"{_J}#addsNumbers"),
    (FAILED, f"{_J}#addIsWrong"),
    (ERROR, f"{_J}#dividesByZero"),
    (SKIPPED, f"{_J}#disabledTest"),
    (SKIPPED, f"{_J}#assumptionFails"),
    # Surefire names an invocation of a parametrized test method(types)[index]
    (PASSED, f"{_J}#isPositive(int)[1]"),
    (PASSED, f"{_J}#isPositive(int)[2]"),
    (FAILED, f"{_J}#isPositive(int)[3]"),
    (PASSED, f"{_J}#addsCsv(int, int, int)[1]"),
    (FAILED, f"{_J}#addsCsv(int, int, int)[2]"),
    (PASSED, f"{_J}#displayNamed"),  # the method, not the display name
    (PASSED, f"{_J}$Inner#innerPasses"),
)

# --------------------------------------------------------------------------- Go

GO_CALC = """\
package calc

func Add(a, b int) int { return a + b }
"""

GO_CALC_TEST = """\
package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestAddWrong(t *testing.T) {
	if got := Add(2, 2); got != 5 {
		t.Errorf("Add(2, 2) = %d, want 5", got)
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not today")
}

func TestTable(t *testing.T) {
	cases := []struct {
		name    string
		a, b, w int
	}{
		{"one plus two", 1, 2, 3},
		{"\u00fcn\u00efcode", 1, 1, 2},
		{"[bracket]", 2, 2, 5},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.w {
				t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.w)
			}
		})
	}
}

func TestNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
	})
	t.Run("skip me", func(t *testing.T) { t.Skip("later") })
}
"""

GO_PANIC_TEST = """\
package panicky

import "testing"

func TestBeforePanic(t *testing.T) {}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["boom"] = 1 // assignment to a nil map: a panic ends the test binary
}

func TestNeverRuns(t *testing.T) {}
"""

GO_BROKEN_TEST = """\
package broken

import "testing"

func TestDoesNotCompile(t *testing.T) {
	undefinedFunction()
}
"""

GO_FILES = {
    "go.mod": "module example.com/golden\n\ngo 1.19\n",
    "calc/calc.go": GO_CALC,
    "calc/calc_test.go": GO_CALC_TEST,
    "panicky/panicky.go": "package panicky\n",
    "panicky/panicky_test.go": GO_PANIC_TEST,
    "broken/broken.go": "package broken\n",
    "broken/broken_test.go": GO_BROKEN_TEST,
}


def _go_name(name: str) -> str:
    return name.replace(" ", "_")  # go test's rewrite of subtest names


GO_EXPECTED = (
    (PASSED, "TestAdd"),
    (FAILED, "TestAddWrong"),
    (SKIPPED, "TestSkipped"),
    (FAILED, "TestTable"),
    (PASSED, f"TestTable/{_go_name('one plus two')}"),
    (PASSED, f"TestTable/{_go_name('ünïcode')}"),
    (FAILED, f"TestTable/{_go_name('[bracket]')}"),
    (PASSED, "TestNested"),
    (PASSED, "TestNested/outer"),
    (PASSED, "TestNested/outer/inner"),
    (SKIPPED, f"TestNested/{_go_name('skip me')}"),
    (PASSED, "TestBeforePanic"),
    (FAILED, "TestPanics"),  # TestNeverRuns never starts: absent
    (ERROR, "example.com/golden/broken"),  # the package does not build
)

# --------------------------------------------------------------------------- C: ctest

C_CALC = """\
int add(int a, int b) { return a + b; }
"""

C_CTEST_MAIN = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int add(int a, int b);

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "add") == 0) return add(2, 3) == 5 ? 0 : 1;
    if (strcmp(what, "wrong") == 0) {
        int got = add(2, 2);
        if (got != 5) {
            fprintf(stderr, "add(2, 2) = %d, want 5\\n", got);
            return 1;
        }
        return 0;
    }
    if (strcmp(what, "crash") == 0) abort();
    if (strcmp(what, "skip") == 0) return 77;
    if (strcmp(what, "positive") == 0) return atoi(argv[2]) > 0 ? 0 : 1;
    return 2;
}
"""

C_CMAKE = """\
cmake_minimum_required(VERSION 3.21)
project(golden C)
enable_testing()

add_executable(check_calc tests/check_calc.c calc.c)

add_test(NAME "adds numbers" COMMAND check_calc add)
add_test(NAME add_is_wrong COMMAND check_calc wrong)
add_test(NAME crashes COMMAND check_calc crash)
add_test(NAME skips_itself COMMAND check_calc skip)
set_tests_properties(skips_itself PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME "\u00fcn\u00efcode [bracket]" COMMAND check_calc add)
add_test(NAME missing_executable COMMAND no_such_program)
add_test(NAME disabled_test COMMAND check_calc wrong)
set_tests_properties(disabled_test PROPERTIES DISABLED TRUE)
foreach(n 1 2 -3)
  add_test(NAME "positive/${n}" COMMAND check_calc positive ${n})
endforeach()
"""

CTEST_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add_is_wrong"),
    (FAILED, "crashes"),  # ctest counts a crash as a failure
    (SKIPPED, "skips_itself"),
    (PASSED, "ünïcode [bracket]"),
    (ERROR, "missing_executable"),  # could not run: ctest counts it failed
    (SKIPPED, "disabled_test"),
    (PASSED, "positive/1"),
    (PASSED, "positive/2"),
    (FAILED, "positive/-3"),
)

# --------------------------------------------------------------------------- C: automake

AM_CONFIGURE = """\
AC_INIT([golden], [1.0])
AM_INIT_AUTOMAKE([foreign -Wall -Werror subdir-objects])
AC_PROG_CC
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
"""

AM_MAKEFILE = """\
check_PROGRAMS = tests/t_add tests/t_add_wrong tests/t_crash tests/t_known_bug tests/t_fixed_bug
tests_t_add_SOURCES = tests/t_add.c calc.c
tests_t_add_wrong_SOURCES = tests/t_add_wrong.c calc.c
tests_t_crash_SOURCES = tests/t_crash.c
tests_t_known_bug_SOURCES = tests/t_known_bug.c calc.c
tests_t_fixed_bug_SOURCES = tests/t_fixed_bug.c calc.c
dist_check_SCRIPTS = tests/skip_me.sh tests/hard_error.sh
TESTS = $(check_PROGRAMS) $(dist_check_SCRIPTS)
XFAIL_TESTS = tests/t_known_bug tests/t_fixed_bug
"""

_C_T = "int add(int a, int b);\nint main(void) {{ return {expr} ? 0 : 1; }}\n"
AM_FILES = {
    "configure.ac": AM_CONFIGURE,
    "Makefile.am": AM_MAKEFILE,
    "calc.c": C_CALC,
    "tests/t_add.c": _C_T.format(expr="add(2, 3) == 5"),
    "tests/t_add_wrong.c": _C_T.format(expr="add(2, 2) == 5"),
    "tests/t_crash.c": "#include <stdlib.h>\nint main(void) { abort(); }\n",
    "tests/t_known_bug.c": _C_T.format(expr="add(1, 1) == 3"),  # fails, as XFAIL_TESTS says
    "tests/t_fixed_bug.c": _C_T.format(expr="add(1, 1) == 2"),  # passes: XPASS
    "tests/skip_me.sh": "#!/bin/sh\necho 'not today'\nexit 77\n",
    "tests/hard_error.sh": "#!/bin/sh\necho 'the test harness broke'\nexit 99\n",
}
AM_EXPECTED = (
    (PASSED, "tests/t_add"),
    (FAILED, "tests/t_add_wrong"),
    (FAILED, "tests/t_crash"),
    (XFAIL, "tests/t_known_bug"),
    (FAILED, "tests/t_fixed_bug"),  # XPASS: automake counts it a failure
    (SKIPPED, "tests/skip_me.sh"),
    (ERROR, "tests/hard_error.sh"),  # exit status 99 is a hard error
)

# --------------------------------------------------------------------------- C++

GTEST_SRC = """\
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
"""

GTEST_EXPECTED = (
    (PASSED, "Calc.Adds"),
    (FAILED, "Calc.AddIsWrong"),
    (FAILED, "Calc.ThrowsUnexpectedly"),  # GoogleTest reports an exception as a failure
    (SKIPPED, "Calc.SkipsItself"),
    (SKIPPED, "Calc.DISABLED_NotReady"),
    (PASSED, "Small/Positive.IsPositive/0"),
    (PASSED, "Small/Positive.IsPositive/1"),
    (FAILED, "Small/Positive.IsPositive/2"),
    (PASSED, "Typed/0.DefaultIsZero"),
    (PASSED, "Typed/1.DefaultIsZero"),
)

CATCH2_SRC = """\
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <stdexcept>

static int add(int a, int b) { return a + b; }

TEST_CASE("adds numbers", "[math]") { REQUIRE(add(2, 3) == 5); }

TEST_CASE("add is wrong", "[math]") { CHECK(add(2, 2) == 5); }

TEST_CASE("throws unexpectedly") { throw std::runtime_error("boom"); }

TEST_CASE("\u00fcn\u00efcode [bracket] name") {
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
"""

CATCH2_XML_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (ERROR, "throws unexpectedly"),
    (PASSED, "ünïcode [bracket] name"),
    (PASSED, "default is zero - int"),
    (PASSED, "default is zero - double"),
    (PASSED, "generated values"),
)
# The JUnit reporter writes a test case per leaf section, "<test case>/<section>".
CATCH2_JUNIT_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (ERROR, "throws unexpectedly"),
    (PASSED, "ünïcode [bracket] name/first section"),
    (PASSED, "ünïcode [bracket] name/second section"),
    (PASSED, "default is zero - int"),
    (PASSED, "default is zero - double"),
    (PASSED, "generated values"),
)

DOCTEST_SRC = """\
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <stdexcept>

static int add(int a, int b) { return a + b; }

TEST_CASE("adds numbers") { CHECK(add(2, 3) == 5); }

TEST_CASE("add is wrong") { CHECK(add(2, 2) == 5); }

TEST_CASE("throws unexpectedly") { throw std::runtime_error("boom"); }

TEST_CASE("skipped test" * doctest::skip()) { CHECK(false); }

TEST_CASE("\u00fcn\u00efcode [bracket] name") {
    SUBCASE("first subcase") { CHECK(add(1, 1) == 2); }
    SUBCASE("failing subcase") { CHECK(add(1, 1) == 3); }
}

TEST_CASE_TEMPLATE("default is zero", T, int, double) { CHECK(T() == T(0)); }
"""

DOCTEST_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (ERROR, "throws unexpectedly"),
    (SKIPPED, "skipped test"),
    (FAILED, "ünïcode [bracket] name"),
    (PASSED, "ünïcode [bracket] name > first subcase"),
    (FAILED, "ünïcode [bracket] name > failing subcase"),
    (PASSED, "default is zero<int>"),
    (PASSED, "default is zero<double>"),
)

CXX = "g++ -std=c++17 -O0"

# --------------------------------------------------------------------------- JavaScript

JS_CALC = """\
function add(a, b) {
  return a + b;
}

function divide(a, b) {
  if (b === 0) throw new Error('division by zero');
  return a / b;
}

module.exports = { add, divide };
"""

NODE_TAP_TEST = """\
const test = require('node:test');
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { add, divide } = require('../calc');

test('adds numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('add is wrong', () => {
  assert.strictEqual(add(2, 2), 5);
});

test('throws unexpectedly', () => {
  divide(1, 0);
});

test('skipped test', { skip: 'not today' }, () => {});

test('todo that fails', { todo: 'later' }, () => {
  assert.fail('not done yet');
});

test('todo that passes', { todo: true }, () => {});

describe('math suite', () => {
  it('nested passes', () => {
    assert.strictEqual(add(0, 0), 0);
  });

  describe('inner [bracket] \u00fcn\u00efcode', () => {
    it('deep # hash name', () => {});
    it.skip('deep skipped', () => {});
  });

  for (const [a, b, want] of [[1, 2, 3], [2, 2, 5]]) {
    it(`add(${a}, ${b}) is ${want}`, () => {
      assert.strictEqual(add(a, b), want);
    });
  }
});
"""

NODE_TAP_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (FAILED, "throws unexpectedly"),  # TAP has no error status: not ok
    (SKIPPED, "skipped test"),
    (XFAIL, "todo that fails"),
    (PASSED, "todo that passes"),
    (PASSED, "math suite > nested passes"),
    (PASSED, "math suite > inner [bracket] ünïcode > deep # hash name"),
    (SKIPPED, "math suite > inner [bracket] ünïcode > deep skipped"),
    (PASSED, "math suite > add(1, 2) is 3"),
    (FAILED, "math suite > add(2, 2) is 5"),
)

JEST_TEST = """\
const { add, divide } = require('../calc');

describe('calc', () => {
  test('adds numbers', () => {
    expect(add(2, 3)).toBe(5);
  });

  test('add is wrong', () => {
    expect(add(2, 2)).toBe(5);
  });

  test('throws unexpectedly', () => {
    divide(1, 0);
  });

  test.skip('skipped test', () => {});

  test.todo('todo test');

  test.each([
    [1, 2, 3],
    [2, 2, 5],
  ])('add(%i, %i) is %i', (a, b, want) => {
    expect(add(a, b)).toBe(want);
  });

  describe('inner [bracket] \u00fcn\u00efcode', () => {
    test('deep name with spaces', () => {
      expect(add(0, 0)).toBe(0);
    });
  });
});

test('top level test', () => {
  expect(add(1, 1)).toBe(2);
});
"""

JEST_EXPECTED = (
    (PASSED, "calc > adds numbers"),
    (FAILED, "calc > add is wrong"),
    (FAILED, "calc > throws unexpectedly"),  # Jest has no error status
    (SKIPPED, "calc > skipped test"),
    (SKIPPED, "calc > todo test"),
    (PASSED, "calc > add(1, 2) is 3"),
    (FAILED, "calc > add(2, 2) is 5"),
    (PASSED, "calc > inner [bracket] ünïcode > deep name with spaces"),
    (PASSED, "top level test"),
    (ERROR, f"{WORKDIR}/__tests__/broken.test.js"),  # the file fails to load
)

MOCHA_TEST = """\
const assert = require('assert');
const { add, divide } = require('../calc');

describe('calc', function () {
  it('adds numbers', function () {
    assert.strictEqual(add(2, 3), 5);
  });

  it('add is wrong', function () {
    assert.strictEqual(add(2, 2), 5);
  });

  it('throws unexpectedly', function () {
    divide(1, 0);
  });

  it.skip('skipped test', function () {});

  it('pending without a body');

  it('skips itself', function () {
    this.skip();
  });

  [[1, 2, 3], [2, 2, 5]].forEach(([a, b, want]) => {
    it(`add(${a}, ${b}) is ${want}`, function () {
      assert.strictEqual(add(a, b), want);
    });
  });

  describe('inner [bracket] \u00fcn\u00efcode', function () {
    it('deep name with spaces', function () {
      assert.strictEqual(add(0, 0), 0);
    });
  });
});

describe('broken hook', function () {
  before(function () {
    throw new Error('setup failed');
  });

  it('never runs', function () {});
});
"""

MOCHA_EXPECTED = (
    (PASSED, "calc adds numbers"),
    (FAILED, "calc add is wrong"),
    (FAILED, "calc throws unexpectedly"),
    (SKIPPED, "calc skipped test"),
    (SKIPPED, "calc pending without a body"),
    (SKIPPED, "calc skips itself"),
    (PASSED, "calc add(1, 2) is 3"),
    (FAILED, "calc add(2, 2) is 5"),
    (PASSED, "calc inner [bracket] ünïcode deep name with spaces"),
    # the failing hook is the result; the test it guards never runs
    (ERROR, 'broken hook "before all" hook for "never runs"'),
)


def _package_json(name: str, dev: dict[str, str], **extra: object) -> str:
    doc = {"name": name, "version": "1.0.0", "private": True, **extra, "devDependencies": dev}
    return json.dumps(doc, indent=2) + "\n"


# --------------------------------------------------------------------------- TypeScript

TS_CALC = """\
export function add(a: number, b: number): number {
  return a + b;
}

export function divide(a: number, b: number): number {
  if (b === 0) throw new Error('division by zero');
  return a / b;
}
"""

VITEST_TEST = """\
import { describe, expect, test } from 'vitest';
import { add, divide } from '../src/calc';

describe('calc', () => {
  test('adds numbers', () => {
    expect(add(2, 3)).toBe(5);
  });

  test('add is wrong', () => {
    expect(add(2, 2)).toBe(5);
  });

  test('throws unexpectedly', () => {
    divide(1, 0);
  });

  test.skip('skipped test', () => {});

  test.todo('todo test');

  test.each([
    [1, 2, 3],
    [2, 2, 5],
  ])('add(%i, %i) is %i', (a: number, b: number, want: number) => {
    expect(add(a, b)).toBe(want);
  });

  describe('inner [bracket] \u00fcn\u00efcode', () => {
    test('deep name with spaces', () => {
      expect(add(0, 0)).toBe(0);
    });
  });
});

test('top level test', async () => {
  await expect(Promise.resolve(add(1, 1))).resolves.toBe(2);
});
"""

VITEST_BROKEN = """\
import { test } from 'vitest';
import { missing } from '../src/missing';

test('never collected', () => {
  missing();
});
"""

VITEST_EXPECTED = (
    (PASSED, "calc > adds numbers"),
    (FAILED, "calc > add is wrong"),
    (FAILED, "calc > throws unexpectedly"),
    (SKIPPED, "calc > skipped test"),
    (SKIPPED, "calc > todo test"),
    (PASSED, "calc > add(1, 2) is 3"),
    (FAILED, "calc > add(2, 2) is 5"),
    (PASSED, "calc > inner [bracket] ünïcode > deep name with spaces"),
    (PASSED, "top level test"),
    (ERROR, f"{WORKDIR}/tests/broken.test.ts"),
)

# Type declarations for what the tests use of node:test and node:assert (the image has
# no @types/node, and the tests need nothing from npm).
TS_NODE_SHIMS = """\
declare module 'node:test' {
  type Body = () => void | Promise<void>;
  interface Options {
    skip?: boolean | string;
    todo?: boolean | string;
  }
  interface TestFn {
    (name: string, fn: Body): void;
    (name: string, options: Options, fn: Body): void;
    skip(name: string, fn?: Body): void;
    todo(name: string, fn?: Body): void;
  }
  const test: TestFn;
  export const it: TestFn;
  export function describe(name: string, fn: () => void): void;
  export default test;
}

declare module 'node:assert' {
  const assert: {
    strictEqual(actual: unknown, expected: unknown, message?: string): void;
    rejects(block: Promise<unknown>, message?: string): Promise<void>;
    fail(message?: string): never;
  };
  export default assert;
}
"""

TS_TAP_TEST = """\
import test, { describe, it } from 'node:test';
import assert from 'node:assert';
import { add, divide } from '../src/calc';

interface Row {
  a: number;
  b: number;
  want: number;
}

const rows: Row[] = [
  { a: 1, b: 2, want: 3 },
  { a: 2, b: 2, want: 5 },
];

test('adds numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('add is wrong', () => {
  assert.strictEqual(add(2, 2), 5);
});

test('throws unexpectedly', () => {
  divide(1, 0);
});

test('rejects asynchronously', async () => {
  await Promise.reject(new Error('async failure'));
});

test('skipped test', { skip: true }, () => {});

describe('typed suite \u00fcn\u00efcode', () => {
  for (const { a, b, want } of rows) {
    it(`add(${a}, ${b}) is ${want} [row]`, () => {
      assert.strictEqual(add(a, b), want);
    });
  }
  it.todo('todo without a body');
});
"""

TS_TSCONFIG = json.dumps(
    {
        "compilerOptions": {
            "target": "es2020",
            "module": "commonjs",
            "strict": True,
            "esModuleInterop": True,
            "outDir": "dist",
            "rootDir": ".",
            "types": [],
        },
        "include": ["src", "test", "types"],
    },
    indent=2,
)

TS_TAP_EXPECTED = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (FAILED, "throws unexpectedly"),
    (FAILED, "rejects asynchronously"),
    (SKIPPED, "skipped test"),
    (PASSED, "typed suite ünïcode > add(1, 2) is 3 [row]"),
    (FAILED, "typed suite ünïcode > add(2, 2) is 5 [row]"),
    (PASSED, "typed suite ünïcode > todo without a body"),  # a todo that does nothing: ok
)

# --------------------------------------------------------------------------- PHP

PHP_CALC = """\
<?php

declare(strict_types=1);

namespace Golden;

final class Calculator
{
    public static function add(int $a, int $b): int
    {
        return $a + $b;
    }

    public static function divide(int $a, int $b): int
    {
        return intdiv($a, $b);
    }
}
"""

PHP_TEST = """\
<?php

declare(strict_types=1);

namespace Golden\\Tests;

use Golden\\Calculator;
use PHPUnit\\Framework\\TestCase;

require_once __DIR__ . '/../src/Calculator.php';

final class CalculatorTest extends TestCase
{
    public function testAddsNumbers(): void
    {
        $this->assertSame(5, Calculator::add(2, 3));
    }

    public function testAddIsWrong(): void
    {
        $this->assertSame(5, Calculator::add(2, 2));
    }

    public function testThrowsUnexpectedly(): void
    {
        // DivisionByZeroError: an error, not a failed assertion
        $this->assertSame(0, Calculator::divide(1, 0));
    }

    public function testSkipped(): void
    {
        $this->markTestSkipped('not today');
    }

    public function testIncomplete(): void
    {
        $this->markTestIncomplete('later');
    }

    /**
     * @dataProvider sums
     */
    public function testSum(int $a, int $b, int $want): void
    {
        $this->assertSame($want, Calculator::add($a, $b));
    }

    public function sums(): array
    {
        return [
            'one plus two' => [1, 2, 3],
            '\u00fcn\u00efcode [bracket]' => [1, 1, 2],
            [2, 2, 5],
        ];
    }
}
"""

PHP_FILES = {"src/Calculator.php": PHP_CALC, "tests/CalculatorTest.php": PHP_TEST}
_PHP_DATA_SETS = (('"one plus two"', PASSED), ('"ünïcode [bracket]"', PASSED), ("#0", FAILED))
_PHP_CLASS = "Golden\\Tests\\CalculatorTest"
PHPUNIT_JUNIT_EXPECTED = (
    (PASSED, f"{_PHP_CLASS}::testAddsNumbers"),
    (FAILED, f"{_PHP_CLASS}::testAddIsWrong"),
    (ERROR, f"{_PHP_CLASS}::testThrowsUnexpectedly"),
    (SKIPPED, f"{_PHP_CLASS}::testSkipped"),
    (SKIPPED, f"{_PHP_CLASS}::testIncomplete"),
    *((st, f"{_PHP_CLASS}::testSum with data set {ds}") for ds, st in _PHP_DATA_SETS),
)
# testdox: the class header "Calculator (Golden\\Tests\\Calculator)" without its
# parenthesis, and PHPUnit's prettified method names; failure and error are both ✘.
PHPUNIT_TESTDOX_EXPECTED = (
    (PASSED, "Calculator > Adds numbers"),
    (FAILED, "Calculator > Add is wrong"),
    (FAILED, "Calculator > Throws unexpectedly"),
    (SKIPPED, "Calculator > Skipped"),
    (SKIPPED, "Calculator > Incomplete"),
    *((st, f"Calculator > Sum with data set {ds}") for ds, st in _PHP_DATA_SETS),
)
PHPUNIT = "phpunit --colors=never --do-not-cache-result"

# --------------------------------------------------------------------------- Ruby

RB_CALC = """\
module Calculator
  def self.add(a, b)
    a + b
  end

  def self.divide(a, b)
    a / b
  end
end
"""

MINITEST_TEST = """\
require "minitest/autorun"
require_relative "../lib/calculator"

class CalculatorTest < Minitest::Test
  def test_adds_numbers
    assert_equal 5, Calculator.add(2, 3)
  end

  def test_add_is_wrong
    assert_equal 5, Calculator.add(2, 2)
  end

  def test_divides_by_zero
    assert_equal 0, Calculator.divide(1, 0) # ZeroDivisionError: an error
  end

  def test_skipped
    skip "not today"
  end

  [[1, 2, 3], [2, 2, 5]].each do |a, b, want|
    define_method("test_add_#{a}_#{b}_is_#{want}") do
      assert_equal want, Calculator.add(a, b)
    end
  end
end

describe "Calculator spec" do
  it "adds with spaces [bracket]" do
    _(Calculator.add(1, 1)).must_equal 2
  end

  it "\u00fcn\u00efcode name" do
    _(Calculator.add(0, 0)).must_equal 0
  end
end
"""

MINITEST_EXPECTED = (
    (PASSED, "CalculatorTest#test_adds_numbers"),
    (FAILED, "CalculatorTest#test_add_is_wrong"),
    (ERROR, "CalculatorTest#test_divides_by_zero"),
    (SKIPPED, "CalculatorTest#test_skipped"),
    (PASSED, "CalculatorTest#test_add_1_2_is_3"),
    (FAILED, "CalculatorTest#test_add_2_2_is_5"),
    # spec style: the describe string is the class, "test_NNNN_<it>" the method
    (PASSED, "Calculator spec#test_0001_adds with spaces [bracket]"),
    (PASSED, "Calculator spec#test_0002_ünïcode name"),
)

RSPEC_TEST = """\
require_relative "../lib/calculator"

RSpec.describe Calculator do
  describe ".add" do
    it "adds two numbers" do
      expect(Calculator.add(2, 3)).to eq(5)
    end

    it "is wrong on purpose" do
      expect(Calculator.add(2, 2)).to eq(5)
    end

    [[1, 2, 3], [2, 2, 5]].each do |a, b, want|
      it "adds #{a} and #{b} to #{want}" do
        expect(Calculator.add(a, b)).to eq(want)
      end
    end
  end

  describe "#divide" do
    it "raises unexpectedly" do
      expect(Calculator.divide(1, 0)).to eq(0)
    end
  end

  it "is skipped", skip: "not today" do
    expect(true).to be(false)
  end

  xit "is pending via xit" do
    expect(true).to be(false)
  end

  it "\u00fcn\u00efcode [bracket] name" do
    expect(Calculator.add(0, 0)).to eq(0)
  end

  context "with a context" do
    pending "fails as expected" do
      expect(Calculator.add(1, 1)).to eq(3)
    end
  end
end
"""


def _rspec_join(*parts: str) -> str:
    """RSpec's full_description: group and example descriptions joined with a space,
    except before a part that starts with '#', '.' or '::' (a method name)."""
    out = parts[0]
    for part in parts[1:]:
        out += part if part.startswith(("#", ".", "::")) else " " + part
    return out


RSPEC_EXPECTED = (
    (PASSED, _rspec_join("Calculator", ".add", "adds two numbers")),
    (FAILED, _rspec_join("Calculator", ".add", "is wrong on purpose")),
    (PASSED, _rspec_join("Calculator", ".add", "adds 1 and 2 to 3")),
    (FAILED, _rspec_join("Calculator", ".add", "adds 2 and 2 to 5")),
    (FAILED, _rspec_join("Calculator", "#divide", "raises unexpectedly")),  # no error status
    (SKIPPED, _rspec_join("Calculator", "is skipped")),
    (SKIPPED, _rspec_join("Calculator", "is pending via xit")),
    (PASSED, _rspec_join("Calculator", "ünïcode [bracket] name")),
    (SKIPPED, _rspec_join("Calculator", "with a context", "fails as expected")),
)

RSPEC_BROKEN = """\
require_relative "../lib/missing"

RSpec.describe "never loaded" do
  it "never runs" do
  end
end
"""

RB_FILES = {"lib/calculator.rb": RB_CALC}

# --------------------------------------------------------------------------- Rust

RS_CARGO_TOML = """\
[package]
name = "golden"
version = "0.1.0"
edition = "2021"

[dependencies]
"""

# version 3: Debian's cargo (1.65 on bookworm) cannot read the version 4 newer cargo writes
RS_CARGO_LOCK = """\
# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 3

[[package]]
name = "golden"
version = "0.1.0"
"""

RS_LIB = """\
//! A calculator with every kind of test libtest knows.

/// Adds two numbers.
///
/// ```
/// assert_eq!(golden::add(2, 3), 5);
/// ```
///
/// ```should_panic
/// golden::divide(1, 0);
/// ```
///
/// ```no_run
/// loop { golden::add(1, 1); }
/// ```
///
/// ```compile_fail
/// let small: u8 = golden::add(1, 2);
/// ```
///
/// ```ignore
/// this is not Rust
/// ```
///
/// ```
/// assert_eq!(golden::add(2, 2), 5);
/// ```
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Divides, panicking on a zero divisor.
pub fn divide(a: i64, b: i64) -> i64 {
    if b == 0 {
        panic!("division by zero");
    }
    a / b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_numbers() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn add_is_wrong() {
        assert_eq!(add(2, 2), 5, "two and two");
    }

    #[test]
    #[should_panic(expected = "division by zero")]
    fn divides_by_zero() {
        divide(1, 0);
    }

    #[test]
    #[should_panic]
    fn does_not_panic() {
        divide(4, 2);
    }

    #[test]
    #[ignore]
    fn ignored_plain() {}

    #[test]
    #[ignore = "not today"]
    fn ignored_with_reason() {}

    #[test]
    fn prints_then_passes() {
        println!("some output");
    }

    #[test]
    fn prints_then_fails() {
        println!("about to fail");
        assert!(add(1, 1) == 3);
    }

    #[test]
    fn returns_err() -> Result<(), String> {
        Err("an error value".to_string())
    }

    mod nested {
        #[test]
        fn deep_module() {
            assert_eq!(crate::add(0, 0), 0);
        }
    }
}
"""

# Two integration test binaries with a test of the same name: one id, the worst status.
RS_TEST_API = """\
#[test]
fn smoke() {
    assert_eq!(golden::add(1, 1), 2);
}

#[test]
fn \u00fcn\u00efcode_name() {
    println!("printed by a test");
    assert_eq!(golden::divide(9, 3), 3);
}
"""

RS_TEST_OTHER = """\
#[test]
fn smoke() {
    assert_eq!(golden::add(1, 1), 3);
}
"""

RS_FILES = {
    "Cargo.toml": RS_CARGO_TOML,
    "Cargo.lock": RS_CARGO_LOCK,
    "src/lib.rs": RS_LIB,
    "tests/api.rs": RS_TEST_API,
    "tests/other.rs": RS_TEST_OTHER,
}

RS_EXPECTED = (
    *_ids(PASSED, "tests::adds_numbers", "tests::divides_by_zero", "tests::prints_then_passes",
          "tests::nested::deep_module"),
    *_ids(FAILED, "tests::add_is_wrong", "tests::does_not_panic", "tests::prints_then_fails",
          "tests::returns_err"),
    *_ids(SKIPPED, "tests::ignored_plain", "tests::ignored_with_reason"),
    (FAILED, "smoke"),  # passes in tests/api.rs, fails in tests/other.rs
    (PASSED, "\u00fcn\u00efcode_name"),
    # doc-tests: named by file, item and the line of the fence; should_panic, no_run and
    # compile_fail are modes, not part of the name
    *_ids(PASSED, "src/lib.rs - add (line 5)", "src/lib.rs - add (line 9)",
          "src/lib.rs - add (line 13)", "src/lib.rs - add (line 17)"),
    (SKIPPED, "src/lib.rs - add (line 21)"),
    (FAILED, "src/lib.rs - add (line 25)"),
)

# --------------------------------------------------------------------------- the cases

CASES: list[Case] = [
    Case(
        name="python-pytest-junit",
        language="python",
        framework="pytest",
        image="python",
        format="junit:pytest",
        files=PY_FILES,
        command=f"{PYTEST} --junitxml=report.xml tests",
        report="report.xml",
        report_path="report.xml",
        expected=_pytest_expected(skipped=True),
    ),
    Case(
        name="python-pytest-rA",
        language="python",
        framework="pytest",
        image="python",
        format="pytest",
        files=PY_FILES,
        command=f"{PYTEST} -rA tests",
        report="stdout.txt",
        expected=_pytest_expected(skipped=False),
        note="without -v, skipped tests are named by file:line only; none is expected",
    ),
    Case(
        name="python-pytest-rA-verbose",
        language="python",
        framework="pytest",
        image="python",
        format="pytest",
        files=PY_FILES,
        command=f"{PYTEST} -rA -v tests",
        report="stdout.txt",
        expected=_pytest_expected(skipped=True),
    ),
    Case(
        name="java-junit5-surefire",
        language="java",
        framework="JUnit 5 (Maven Surefire)",
        image="java",
        format="junit:java",
        files={
            "pom.xml": JAVA_POM,
            "src/main/java/org/example/golden/Calc.java": JAVA_CALC,
            "src/test/java/org/example/golden/CalcTest.java": JAVA_TEST,
        },
        command="mvn -B -ntp test",
        report="report.xml",
        report_path="/tmp/report.xml",
        collect="cat $(ls target/surefire-reports/TEST-*.xml | LC_ALL=C sort) > /tmp/report.xml",
        expected=JAVA_EXPECTED,
        network=True,
        note="target/surefire-reports/TEST-*.xml concatenated in file-name order",
    ),
    Case(
        name="go-test-json",
        language="go",
        framework="go test",
        image="go",
        format="gotest-json",
        files=GO_FILES,
        command="go test -json ./...",
        report="report.json",
        expected=GO_EXPECTED,
    ),
    Case(
        name="go-test-verbose",
        language="go",
        framework="go test",
        image="go",
        format="gotest",
        files=GO_FILES,
        command="go test -v ./...",
        report="stdout.txt",
        expected=GO_EXPECTED,
    ),
    Case(
        name="c-ctest-junit",
        language="c",
        framework="CTest",
        image="cpp",
        format="junit:ctest",
        files={
            "CMakeLists.txt": C_CMAKE,
            "calc.c": C_CALC,
            "tests/check_calc.c": C_CTEST_MAIN,
        },
        setup=("cmake -S . -B build -G Ninja >/dev/null", "cmake --build build >/dev/null"),
        command=f"ctest --test-dir build --output-junit {WORKDIR}/report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=CTEST_EXPECTED,
    ),
    Case(
        name="c-automake-check",
        language="c",
        framework="automake (make check)",
        image="cpp",
        format="automake",
        files=AM_FILES,
        setup=(
            "chmod +x tests/*.sh",
            "autoreconf -fi >/dev/null 2>&1",
            "./configure -q",
            "make -s >/dev/null",
        ),
        command="make check",
        report="stdout.txt",
        expected=AM_EXPECTED,
    ),
    Case(
        name="cpp-gtest-xml",
        language="cpp",
        framework="GoogleTest",
        image="cpp",
        format="junit:gtest",
        files={"calc_test.cc": GTEST_SRC},
        setup=(f"{CXX} -o calc_test calc_test.cc -lgtest -lgtest_main -pthread",),
        command="./calc_test --gtest_output=xml:report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=GTEST_EXPECTED,
    ),
    Case(
        name="cpp-catch2-xml",
        language="cpp",
        framework="Catch2 v2",
        image="cpp",
        format="catch2-xml",
        files={"calc_test.cpp": CATCH2_SRC},
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test -r xml -o report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=CATCH2_XML_EXPECTED,
    ),
    Case(
        name="cpp-catch2-junit",
        language="cpp",
        framework="Catch2 v2",
        image="cpp",
        format="junit:catch2",
        files={"calc_test.cpp": CATCH2_SRC},
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test -r junit -o report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=CATCH2_JUNIT_EXPECTED,
    ),
    Case(
        name="cpp-doctest-xml",
        language="cpp",
        framework="doctest",
        image="cpp",
        format="doctest-xml",
        files={"calc_test.cpp": DOCTEST_SRC},
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test --reporters=xml --out=report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=DOCTEST_EXPECTED,
    ),
    Case(
        name="js-node-test-tap",
        language="javascript",
        framework="node:test",
        image="node",
        format="tap",
        files={"calc.js": JS_CALC, "test/calc.test.js": NODE_TAP_TEST},
        command="node --test --test-reporter=tap test/",
        report="report.tap",
        expected=NODE_TAP_EXPECTED,
    ),
    Case(
        name="js-jest-json",
        language="javascript",
        framework=f"Jest {JEST}",
        image="node",
        format="jest-json",
        files={
            "package.json": _package_json("golden-jest", {"jest": JEST}),
            "calc.js": JS_CALC,
            "__tests__/calc.test.js": JEST_TEST,
            "__tests__/broken.test.js": "require('./does-not-exist');\n\ntest('never', () => {});\n",
        },
        setup=(NPM_INSTALL,),
        command="npx jest --ci --json --outputFile=report.json",
        report="report.json",
        report_path="report.json",
        expected=JEST_EXPECTED,
        network=True,
    ),
    Case(
        name="js-mocha-json",
        language="javascript",
        framework=f"Mocha {MOCHA}",
        image="node",
        format="mocha-json",
        files={
            "package.json": _package_json("golden-mocha", {"mocha": MOCHA}),
            "calc.js": JS_CALC,
            "test/calc.spec.js": MOCHA_TEST,
        },
        setup=(NPM_INSTALL,),
        command="npx mocha --reporter json",
        report="report.json",
        expected=MOCHA_EXPECTED,
        network=True,
    ),
    Case(
        name="ts-vitest-json",
        language="typescript",
        framework=f"Vitest {VITEST}",
        image="node",
        format="vitest-json",
        files={
            "package.json": _package_json("golden-vitest", {"vitest": VITEST}, type="module"),
            "src/calc.ts": TS_CALC,
            "tests/calc.test.ts": VITEST_TEST,
            "tests/broken.test.ts": VITEST_BROKEN,
        },
        setup=(NPM_INSTALL,),
        command="npx vitest run --reporter=json --outputFile=report.json",
        report="report.json",
        report_path="report.json",
        expected=VITEST_EXPECTED,
        network=True,
    ),
    Case(
        name="ts-tsc-node-test-tap",
        language="typescript",
        framework="node:test (compiled by tsc)",
        image="node",
        format="tap",
        files={
            "tsconfig.json": TS_TSCONFIG,
            "types/node-test.d.ts": TS_NODE_SHIMS,
            "src/calc.ts": TS_CALC,
            "test/calc.test.ts": TS_TAP_TEST,
        },
        setup=("tsc -p tsconfig.json",),
        command="node --test --test-reporter=tap dist/test/",
        report="report.tap",
        expected=TS_TAP_EXPECTED,
    ),
    Case(
        name="php-phpunit-junit",
        language="php",
        framework="PHPUnit 9",
        image="php",
        format="junit:phpunit",
        files=PHP_FILES,
        command=f"{PHPUNIT} --log-junit report.xml tests",
        report="report.xml",
        report_path="report.xml",
        expected=PHPUNIT_JUNIT_EXPECTED,
    ),
    Case(
        name="php-phpunit-testdox",
        language="php",
        framework="PHPUnit 9",
        image="php",
        format="phpunit-testdox",
        files=PHP_FILES,
        command=f"{PHPUNIT} --testdox tests",
        report="stdout.txt",
        expected=PHPUNIT_TESTDOX_EXPECTED,
    ),
    Case(
        name="ruby-minitest-verbose",
        language="ruby",
        framework="minitest",
        image="ruby",
        format="minitest",
        files={**RB_FILES, "test/calculator_test.rb": MINITEST_TEST},
        command="ruby -Ilib -Itest test/calculator_test.rb -v --seed 1",
        report="stdout.txt",
        expected=MINITEST_EXPECTED,
    ),
    Case(
        name="ruby-rspec-json",
        language="ruby",
        framework="RSpec 3",
        image="ruby",
        format="rspec-json",
        files={**RB_FILES, "spec/calculator_spec.rb": RSPEC_TEST},
        command="rspec --format json --out report.json",
        report="report.json",
        report_path="report.json",
        expected=RSPEC_EXPECTED,
    ),
    Case(
        name="ruby-rspec-json-load-error",
        language="ruby",
        framework="RSpec 3",
        image="ruby",
        format="rspec-json",
        files={
            **RB_FILES,
            "spec/calculator_spec.rb": RSPEC_TEST,
            "spec/broken_spec.rb": RSPEC_BROKEN,
        },
        command="rspec --format json --out report.json",
        report="report.json",
        report_path="report.json",
        # a file that fails to load stops RSpec before any example runs
        expected=((ERROR, "./spec/broken_spec.rb"),),
    ),
    Case(
        name="rust-cargo-test",
        language="rust",
        framework="cargo test (libtest)",
        image="rust",
        format="libtest",
        files=RS_FILES,
        # cargo names each test binary on stderr, libtest prints the results on stdout
        command="cargo test --no-fail-fast 2>&1",
        report="stdout.txt",
        expected=RS_EXPECTED,
    ),
    Case(
        name="rust-cargo-test-nocapture",
        language="rust",
        framework="cargo test (libtest)",
        image="rust",
        format="libtest",
        files=RS_FILES,
        # one thread: libtest names a test before it runs, so its output splits the line
        command="cargo test --no-fail-fast -- --test-threads=1 --nocapture 2>&1",
        report="stdout.txt",
        expected=RS_EXPECTED,
    ),
]

# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    case: Case
    exit_code: int
    report: bytes


class CaseFailed(RuntimeError):
    pass


def _source_text(files: dict[str, str]) -> str:
    parts = []
    for path in sorted(files):
        parts.append(f"==> {path} <==\n{files[path]}")
        if not files[path].endswith("\n"):
            parts.append("\n")
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)


def run_case(case: Case, *, log=print) -> Outcome:
    from envs import images
    from envs.models import Limits
    from envs.sandbox import Sandbox

    tag = images.ensure(case.image).tag
    limits = Limits(memory="4g", pids=4096, cpus=4.0, timeout=900.0, output_bytes=8 << 20)
    env = {"HOME": "/root", "CI": "1", "NO_COLOR": "1", "FORCE_COLOR": "0"}
    with Sandbox.start(tag, network=case.network, workdir=WORKDIR, limits=limits) as sb:
        sb.put_files({f"{WORKDIR}/{p}": text for p, text in case.files.items()})
        for step in case.setup:
            r = sb.exec(step, timeout=900, env=env)
            if r.exit_code != 0:
                raise CaseFailed(
                    f"{case.name}: setup step {step!r} exited {r.exit_code}\n"
                    f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
                )
        r = sb.exec(case.command, timeout=900, env=env)
        log(f"{case.name}: {case.command!r} exited {r.exit_code} in {r.duration:.1f}s")
        if r.timed_out or r.stdout_truncated:
            raise CaseFailed(f"{case.name}: timed out or output truncated")
        if case.collect:
            c = sb.exec(case.collect, timeout=120, env=env)
            if c.exit_code != 0:
                raise CaseFailed(f"{case.name}: collect step exited {c.exit_code}: {c.stderr}")
        if case.report_path is None:
            data = r.stdout.encode("utf-8")
        else:
            path = case.report_path
            path = path if path.startswith("/") else f"{WORKDIR}/{path}"
            try:
                data = sb.get_file(path)
            except FileNotFoundError as exc:
                raise CaseFailed(
                    f"{case.name}: no report at {path}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
                ) from exc
    if len(data) > MAX_REPORT_BYTES:
        raise CaseFailed(f"{case.name}: the report is {len(data)} bytes, over {MAX_REPORT_BYTES}")
    return Outcome(case, r.exit_code, data)


def _consistent(case: Case, exit_code: int) -> bool:
    failing = any(st in (FAILED, ERROR) for st, _ in case.expected)
    return (exit_code == 0) != failing


def write_case(outcome: Outcome, root: Path = GOLDEN) -> Path:
    case = outcome.case
    d = root / case.name
    if d.exists():
        for f in d.iterdir():
            if f.is_file():
                f.unlink()
    d.mkdir(parents=True, exist_ok=True)
    (d / case.report).write_bytes(outcome.report)
    meta: dict[str, object] = {
        "format": case.format,
        "report": case.report,
        "exit_code": outcome.exit_code,
        "consistent": _consistent(case, outcome.exit_code),
        "framework": case.framework,
        "language": case.language,
        "image": case.image,
        "command": case.command,
    }
    if case.setup:
        meta["setup"] = list(case.setup)
    if case.collect:
        meta["collect"] = case.collect
    if case.options:
        meta["options"] = case.options
    if case.note:
        meta["note"] = case.note
    (d / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    (d / "expected.json").write_text(
        json.dumps(case.expected_list, indent=2, ensure_ascii=False) + "\n"
    )
    (d / "source.txt").write_text(_source_text(case.files))
    return d


def check_case(case: Case) -> None:
    """Sanity of a definition: ids unique, statuses known."""
    seen: set[str] = set()
    for status, tid in case.expected:
        if status not in (PASSED, FAILED, ERROR, SKIPPED, XFAIL):
            raise ValueError(f"{case.name}: bad status {status!r}")
        if tid in seen:
            raise ValueError(f"{case.name}: {tid!r} expected twice")
        seen.add(tid)


def select(names: Sequence[str] | None) -> list[Case]:
    if not names:
        return list(CASES)
    by_name = {c.name: c for c in CASES}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}; see --list")
    return [by_name[n] for n in names]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m data.golden", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--only", action="append", metavar="CASE", help="run this case (repeatable)"
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--out", type=Path, default=GOLDEN, help="where to write (default: %(default)s)"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    for case in CASES:
        check_case(case)
    if args.list:
        for case in CASES:
            print(f"{case.name:28} {case.language:11} {case.format:16} {case.framework}")
        return 0
    failed = []
    for case in select(args.only):
        try:
            outcome = run_case(case)
        except Exception as exc:  # keep going: one broken toolchain must not stop the rest
            print(f"FAILED {case.name}: {exc}", file=sys.stderr)
            failed.append(case.name)
            continue
        path = write_case(outcome, args.out)
        if not _consistent(case, outcome.exit_code):
            print(
                f"warning: {case.name} exited {outcome.exit_code}, "
                "which does not agree with the planted failures",
                file=sys.stderr,
            )
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
