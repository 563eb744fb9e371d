"""What each golden project plants: the results its test framework must report.

Ids follow each ``envs.reports`` format module's convention (see the docstrings in
envs/reports/). These are written from the projects' sources under ``data/golden/<project>/``,
never from a parser's output.
"""

from __future__ import annotations

PASSED, FAILED, ERROR, SKIPPED, XFAIL = "PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"
STATUSES = (PASSED, FAILED, ERROR, SKIPPED, XFAIL)

# The sandbox's working directory, where a project is written; Jest and Vitest name a test
# file that fails to load by its absolute path.
WORKDIR = "/testbed"

Expected = tuple[tuple[str, str], ...]  # (status, test_id)


def _ids(status: str, *ids: str) -> list[tuple[str, str]]:
    return [(status, i) for i in ids]


# --------------------------------------------------------------------------- Python


def _pytest_escape(param_id: str) -> str:
    """pytest's default: non-ASCII in parametrize ids is written as escapes (\\xfc)."""
    return param_id.encode("unicode_escape").decode("ascii")


def pytest_expected(*, skipped: bool) -> Expected:
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


# --------------------------------------------------------------------------- Java

_J = "org.example.golden.CalcTest"
JAVA = (
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


def _go_name(name: str) -> str:
    return name.replace(" ", "_")  # go test's rewrite of subtest names


GO = (
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

# --------------------------------------------------------------------------- C

CTEST = (
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

AUTOMAKE = (
    (PASSED, "tests/t_add"),
    (FAILED, "tests/t_add_wrong"),
    (FAILED, "tests/t_crash"),
    (XFAIL, "tests/t_known_bug"),  # fails, as XFAIL_TESTS says
    (FAILED, "tests/t_fixed_bug"),  # passes, listed in XFAIL_TESTS (XPASS): a failure to automake
    (SKIPPED, "tests/skip_me.sh"),
    (ERROR, "tests/hard_error.sh"),  # exit status 99 is a hard error
)

# --------------------------------------------------------------------------- C++

GTEST = (
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

CATCH2_XML = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (ERROR, "throws unexpectedly"),
    (PASSED, "ünïcode [bracket] name"),
    (PASSED, "default is zero - int"),
    (PASSED, "default is zero - double"),
    (PASSED, "generated values"),
)
# The JUnit reporter writes a test case per leaf section, "<test case>/<section>".
CATCH2_JUNIT = (
    (PASSED, "adds numbers"),
    (FAILED, "add is wrong"),
    (ERROR, "throws unexpectedly"),
    (PASSED, "ünïcode [bracket] name/first section"),
    (PASSED, "ünïcode [bracket] name/second section"),
    (PASSED, "default is zero - int"),
    (PASSED, "default is zero - double"),
    (PASSED, "generated values"),
)

DOCTEST = (
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

# --------------------------------------------------------------------------- JavaScript

NODE_TAP = (
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

JEST = (
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

MOCHA = (
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

# --------------------------------------------------------------------------- TypeScript

VITEST = (
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

TS_TAP = (
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

_PHP_DATA_SETS = (('"one plus two"', PASSED), ('"ünïcode [bracket]"', PASSED), ("#0", FAILED))
_PHP_CLASS = "Golden\\Tests\\CalculatorTest"
PHPUNIT_JUNIT = (
    (PASSED, f"{_PHP_CLASS}::testAddsNumbers"),
    (FAILED, f"{_PHP_CLASS}::testAddIsWrong"),
    (ERROR, f"{_PHP_CLASS}::testThrowsUnexpectedly"),
    (SKIPPED, f"{_PHP_CLASS}::testSkipped"),
    (SKIPPED, f"{_PHP_CLASS}::testIncomplete"),
    *((st, f"{_PHP_CLASS}::testSum with data set {ds}") for ds, st in _PHP_DATA_SETS),
)
# testdox: the class header "Calculator (Golden\\Tests\\Calculator)" without its
# parenthesis, and PHPUnit's prettified method names; failure and error are both ✘.
PHPUNIT_TESTDOX = (
    (PASSED, "Calculator > Adds numbers"),
    (FAILED, "Calculator > Add is wrong"),
    (FAILED, "Calculator > Throws unexpectedly"),
    (SKIPPED, "Calculator > Skipped"),
    (SKIPPED, "Calculator > Incomplete"),
    *((st, f"Calculator > Sum with data set {ds}") for ds, st in _PHP_DATA_SETS),
)

# --------------------------------------------------------------------------- Ruby

MINITEST = (
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


def _rspec_join(*parts: str) -> str:
    """RSpec's full_description: group and example descriptions joined with a space,
    except before a part that starts with '#', '.' or '::' (a method name)."""
    out = parts[0]
    for part in parts[1:]:
        out += part if part.startswith(("#", ".", "::")) else " " + part
    return out


RSPEC = (
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

# a spec file that fails to load stops RSpec before any example runs
RSPEC_LOAD_ERROR = ((ERROR, "./spec/broken_spec.rb"),)

# --------------------------------------------------------------------------- Rust

RUST = (
    *_ids(PASSED, "tests::adds_numbers", "tests::divides_by_zero", "tests::prints_then_passes",
          "tests::nested::deep_module"),
    *_ids(FAILED, "tests::add_is_wrong", "tests::does_not_panic", "tests::prints_then_fails",
          "tests::returns_err"),
    *_ids(SKIPPED, "tests::ignored_plain", "tests::ignored_with_reason"),
    # tests/api.rs and tests/other.rs are two integration test binaries with a test of
    # the same name: one id, the worst status (it passes in one and fails in the other)
    (FAILED, "smoke"),
    (PASSED, "\u00fcn\u00efcode_name"),
    # doc-tests: named by file, item and the line of the fence; should_panic, no_run and
    # compile_fail are modes, not part of the name
    *_ids(PASSED, "src/lib.rs - add (line 5)", "src/lib.rs - add (line 9)",
          "src/lib.rs - add (line 13)", "src/lib.rs - add (line 17)"),
    (SKIPPED, "src/lib.rs - add (line 21)"),
    (FAILED, "src/lib.rs - add (line 25)"),
)
