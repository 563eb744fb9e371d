"""Catch2 -r xml (v2 and v3)."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses

CATCH2_V3 = """<?xml version="1.0" encoding="UTF-8"?>
<Catch2TestRun name="tests" rng-seed="1234" xml-format-version="3" catch2-version="3.5.2">
  <TestCase name="Factorials are computed" tags="[factorial]" filename="/src/test.cpp" line="10">
    <OverallResult success="true" skips="0" durationInSeconds="0.000123"/>
  </TestCase>
  <TestCase name="vectors can be sized &amp; resized" tags="[vector]" filename="/src/test.cpp" line="20">
    <Section name="resizing bigger changes size and capacity" filename="/src/test.cpp" line="25">
      <Expression success="false" type="REQUIRE" filename="/src/test.cpp" line="28">
        <Original>
          v.size() == 10
        </Original>
        <Expanded>
          5 == 10
        </Expanded>
      </Expression>
      <OverallResults successes="0" failures="1" expectedFailures="0" skipped="false"/>
    </Section>
    <OverallResult success="false" skips="0"/>
  </TestCase>
  <TestCase name="throws ünïcode &lt;3" filename="/src/test.cpp" line="40">
    <Exception filename="/src/test.cpp" line="42">
      std::runtime_error: boom
    </Exception>
    <OverallResult success="false" skips="0"/>
  </TestCase>
  <TestCase name="not on this platform" filename="/src/test.cpp" line="50">
    <Skip filename="/src/test.cpp" line="51">
      needs a GPU
    </Skip>
    <OverallResult success="true" skips="1"/>
  </TestCase>
  <OverallResults successes="1" failures="2" expectedFailures="0" skips="1"/>
  <OverallResultsCases successes="1" failures="2" expectedFailures="0" skips="1"/>
</Catch2TestRun>
"""

CATCH2_V2 = """<?xml version="1.0" encoding="UTF-8"?>
<Catch name="tests">
  <Group name="tests">
    <TestCase name="adds" filename="test.cpp" line="3">
      <OverallResult success="true"/>
    </TestCase>
    <TestCase name="explicitly fails" filename="test.cpp" line="5">
      <Failure filename="test.cpp" line="6">
        not implemented
      </Failure>
      <OverallResult success="false"/>
    </TestCase>
    <TestCase name="subtracts" filename="test.cpp" line="8">
      <Expression success="false" type="CHECK" filename="test.cpp" line="9">
        <Original>1 - 1 == 1</Original>
        <Expanded>0 == 1</Expanded>
      </Expression>
      <OverallResult success="false"/>
    </TestCase>
    <OverallResults successes="1" failures="1" expectedFailures="0"/>
  </Group>
  <OverallResults successes="1" failures="1" expectedFailures="0"/>
</Catch>
"""

SAMPLES = [("catch2-xml", CATCH2_V3), ("catch2-xml", CATCH2_V2)]


def test_catch2_v3():
    report = reports.parse("catch2-xml", CATCH2_V3, exit_code=2)
    assert statuses(report) == {
        "Factorials are computed": P,
        "vectors can be sized & resized": F,
        "throws ünïcode <3": E,
        "not on this platform": S,
    }
    assert report.by_id["vectors can be sized & resized"].message == (
        "REQUIRE( v.size() == 10 ) with expansion: 5 == 10"
    )
    assert report.by_id["Factorials are computed"].duration == pytest.approx(0.000123)


def test_catch2_v2():
    report = reports.parse("catch2-xml", CATCH2_V2)
    assert statuses(report) == {"adds": P, "explicitly fails": F, "subtracts": F}
    assert report.by_id["explicitly fails"].message == "not implemented"


def test_truncated_catch2_keeps_finished_cases():
    cut = CATCH2_V3.index("<Exception")
    report = reports.parse("catch2-xml", CATCH2_V3[:cut])
    assert statuses(report) == {"Factorials are computed": P, "vectors can be sized & resized": F}
    assert report.warning_codes == ("truncated",)


def test_not_catch2():
    with pytest.raises(ReportParseError, match="not a Catch2 report"):
        reports.parse("catch2-xml", "<testsuites/>")
