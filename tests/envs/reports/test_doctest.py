"""doctest -r=xml."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses

DOCTEST = """<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="./tests/test-unicode">
  <Options order_by="file" rand_seed="0" first="0" last="4294967295" abort_after="0" subcase_filter_levels="2147483647" case_sensitive="false" no_throw="false" no_skip="false"/>
  <TestSuite name="unicode">
    <TestCase name="parse strings" filename="tests/src/unit-unicode.cpp" line="40">
      <SubCase name="escaped ü" filename="tests/src/unit-unicode.cpp" line="42">
      </SubCase>
      <OverallResultsAsserts successes="4" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="dump [with brackets]" filename="tests/src/unit-unicode.cpp" line="60">
      <SubCase name="ascii" filename="tests/src/unit-unicode.cpp" line="62">
      </SubCase>
      <SubCase name="non-ascii" filename="tests/src/unit-unicode.cpp" line="70">
        <SubCase name="ensure_ascii" filename="tests/src/unit-unicode.cpp" line="72">
          <Expression success="false" type="CHECK" filename="tests/src/unit-unicode.cpp" line="74">
            <Original>
              j.dump(-1, ' ', true) == "\\\\u00fc"
            </Original>
            <Expanded>
              "ü" == "\\\\u00fc"
            </Expanded>
          </Expression>
        </SubCase>
      </SubCase>
      <SubCase name="ascii" filename="tests/src/unit-unicode.cpp" line="62">
        <Expression success="true" type="CHECK_THROWS_AS" filename="tests/src/unit-unicode.cpp" line="64">
          <Original>
            json::parse("\\xff")
          </Original>
          <Exception>
            [json.exception.parse_error.101] parse error
          </Exception>
          <ExpectedException>
            json::parse_error&amp;
          </ExpectedException>
        </Expression>
      </SubCase>
      <OverallResultsAsserts successes="2" failures="1" test_case_success="false"/>
    </TestCase>
  </TestSuite>
  <TestSuite>
    <TestCase name="throws" filename="tests/src/unit-x.cpp" line="5">
      <Exception crash="false">
        std::out_of_range: key not found
      </Exception>
      <OverallResultsAsserts successes="0" failures="1" test_case_success="false"/>
    </TestCase>
    <TestCase name="slow one" filename="tests/src/unit-x.cpp" line="9" skipped="true">
      <OverallResultsAsserts successes="0" failures="0" test_case_success="true"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="6" failures="2"/>
  <OverallResultsTestCases successes="1" failures="2" skipped="1"/>
</doctest>
"""

# doctest < 2.4.9 wrote no test_case_success attribute
OLD_DOCTEST = """<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="./tests">
  <Options order_by="file" rand_seed="0" first="0" last="4294967295" abort_after="0" subcase_filter_levels="2147483647" case_sensitive="false" no_throw="false" no_skip="false"/>
  <TestSuite>
    <TestCase name="ok" filename="a.cpp" line="1">
      <OverallResultsAsserts successes="1" failures="0"/>
    </TestCase>
    <TestCase name="not ok" filename="a.cpp" line="5">
      <Expression success="false" type="CHECK" filename="a.cpp" line="6">
        <Original>1 == 2</Original>
        <Expanded>1 == 2</Expanded>
      </Expression>
      <OverallResultsAsserts successes="0" failures="1"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="1" failures="1"/>
  <OverallResultsTestCases successes="1" failures="1" skipped="0"/>
</doctest>
"""

SAMPLES = [("doctest-xml", DOCTEST), ("doctest-xml", OLD_DOCTEST)]


def test_doctest_test_cases_and_subcases():
    report = reports.parse("doctest-xml", DOCTEST, exit_code=1)
    assert statuses(report) == {
        "parse strings": P,
        "parse strings > escaped ü": P,
        "dump [with brackets]": F,
        # listed twice, same status: no warning; a passing CHECK_THROWS logs an Exception
        "dump [with brackets] > ascii": P,
        "dump [with brackets] > non-ascii": F,
        "dump [with brackets] > non-ascii > ensure_ascii": F,
        "throws": E,
        "slow one": S,
    }
    assert report.by_id["throws"].message == "std::out_of_range: key not found"
    assert report.warnings == ()


def test_old_doctest_without_test_case_success():
    assert statuses(reports.parse("doctest-xml", OLD_DOCTEST)) == {"ok": P, "not ok": F}


def test_not_doctest():
    with pytest.raises(ReportParseError, match="not a doctest report"):
        reports.parse("doctest-xml", "<Catch/>")
