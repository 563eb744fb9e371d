"""JUnit XML, per producing tool: ids follow each ecosystem's convention."""

from __future__ import annotations

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, X, statuses

SUREFIRE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.google.gson.JsonParserTest" time="0.045" tests="6" errors="1" skipped="1" failures="1">
  <properties>
    <property name="java.version" value="17.0.9"/>
    <property name="file.encoding" value="UTF-8"/>
  </properties>
  <testcase name="testParseString" classname="com.google.gson.JsonParserTest" time="0.003"/>
  <testcase name="testParseEmptyString" classname="com.google.gson.JsonParserTest" time="0.001">
    <failure message="expected:&lt;1&gt; but was:&lt;2&gt;" type="junit.framework.AssertionFailedError"><![CDATA[junit.framework.AssertionFailedError: expected:<1> but was:<2>
	at com.google.gson.JsonParserTest.testParseEmptyString(JsonParserTest.java:42)
]]></failure>
    <system-out><![CDATA[parsing "" <!DOCTYPE html> is just text here]]></system-out>
  </testcase>
  <testcase name="testParseMixedArray" classname="com.google.gson.JsonParserTest" time="0.002">
    <error message="null" type="java.lang.NullPointerException">java.lang.NullPointerException
	at com.google.gson.JsonParser.parse(JsonParser.java:10)</error>
  </testcase>
  <testcase name="testUnicode" classname="com.google.gson.JsonParserTest" time="0">
    <skipped message="not on this JDK"/>
  </testcase>
  <testcase name="testFlaky" classname="com.google.gson.JsonParserTest" time="0.010">
    <flakyFailure message="timing" type="java.lang.AssertionError"><stackTrace>java.lang.AssertionError: timing</stackTrace></flakyFailure>
  </testcase>
  <testcase name="testRoundTrip(String)[2]" classname="com.google.gson.JsonParserTest" time="0.001"/>
</testsuite>
"""

GRADLE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="org.example.CalculatorTest" tests="3" skipped="0" failures="1" errors="0" timestamp="2024-05-01T12:00:00" hostname="buildkitsandbox" time="0.021">
  <properties/>
  <testcase name="adds()" classname="org.example.CalculatorTest" time="0.012"/>
  <testcase name="divides by zero — ünïcode" classname="org.example.CalculatorTest" time="0.004">
    <failure message="org.opentest4j.AssertionFailedError: expected: &lt;0&gt; but was: &lt;1&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;0&gt; but was: &lt;1&gt;
	at app//org.example.CalculatorTest.divides(CalculatorTest.java:20)
</failure>
  </testcase>
  <testcase name="[1] a=1, b=[2, 3]" classname="org.example.CalculatorTest" time="0.001"/>
  <system-out><![CDATA[]]></system-out>
  <system-err><![CDATA[]]></system-err>
</testsuite>
"""

PYTEST_XUNIT2 = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="2" failures="1" skipped="2" tests="9" time="0.061" timestamp="2024-05-01T12:00:00.000000+00:00" hostname="e3b0c44298fc"><testcase classname="tests.test_calc" name="test_add" time="0.001" /><testcase classname="tests.test_calc.TestDivide" name="test_by_zero" time="0.002"><failure message="ZeroDivisionError: division by zero">tests/test_calc.py:12: in test_by_zero
    1 / 0
E   ZeroDivisionError: division by zero</failure></testcase><testcase classname="tests.test_calc" name="test_param[a b-\\xfc]" time="0.001" /><testcase classname="tests.test_calc" name="test_param[x::y-ü]" time="0.001" /><testcase classname="tests.test_calc" name="test_xfail" time="0.001"><skipped type="pytest.xfail" message="known bug" /></testcase><testcase classname="tests.test_calc" name="test_skip" time="0.000"><skipped type="pytest.skip" message="no network">/app/tests/test_calc.py:30: no network</skipped></testcase><testcase classname="tests.test_calc" name="test_teardown" time="0.001"><error message="failed on teardown with &quot;RuntimeError: boom&quot;">RuntimeError: boom</error></testcase><testcase classname="tests.unit.test_models.TestUser.TestNested" name="test_deep" time="0.001" /><testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">ImportError while importing test module '/app/tests/test_broken.py'.</error></testcase></testsuite></testsuites>"""

PYTEST_XUNIT1 = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2" time="0.01" timestamp="2024-05-01T12:00:00" hostname="h"><testcase classname="Tests.test_app.TestApp" name="test_ok" file="Tests/test_app.py" line="4" time="0.001" /><testcase classname="test_root" name="test_top[1.5-2]" file="test_root.py" line="1" time="0.001" /></testsuite></testsuites>"""

GTEST = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" failures="1" disabled="1" errors="0" time="0.003" timestamp="2024-05-01T12:00:00.000" name="AllTests">
  <testsuite name="FormatTest" tests="3" failures="1" disabled="1" skipped="0" errors="0" time="0.001" timestamp="2024-05-01T12:00:00.000">
    <testcase name="Escape" file="test/format-test.cc" line="42" status="run" result="completed" time="0" timestamp="2024-05-01T12:00:00.000" classname="FormatTest" />
    <testcase name="Unicode" file="test/format-test.cc" line="55" status="run" result="completed" time="0.001" timestamp="2024-05-01T12:00:00.000" classname="FormatTest">
      <failure message="test/format-test.cc:57&#x0A;Expected equality of these values:&#x0A;  &quot;ü&quot;&#x0A;  fmt::format(&quot;{}&quot;, s)" type=""><![CDATA[test/format-test.cc:57
Expected equality of these values:
  "ü"
  fmt::format("{}", s)
    Which is: "u"]]></failure>
    </testcase>
    <testcase name="DISABLED_Slow" file="test/format-test.cc" line="70" status="notrun" result="suppressed" time="0" timestamp="2024-05-01T12:00:00.000" classname="FormatTest" />
  </testsuite>
  <testsuite name="Inst/ParamTest" tests="2" failures="0" disabled="0" skipped="0" errors="0" time="0" timestamp="2024-05-01T12:00:00.000">
    <testcase name="Works/0" value_param="1" file="test/param-test.cc" line="8" status="run" result="completed" time="0" timestamp="2024-05-01T12:00:00.000" classname="Inst/ParamTest" />
    <testcase name="Works/1" value_param="&quot;a b&quot;" file="test/param-test.cc" line="8" status="run" result="completed" time="0" timestamp="2024-05-01T12:00:00.000" classname="Inst/ParamTest" />
  </testsuite>
  <testsuite name="SkipTest" tests="1" failures="0" disabled="0" skipped="1" errors="0" time="0" timestamp="2024-05-01T12:00:00.000">
    <testcase name="OnlyOnLinux" file="test/skip-test.cc" line="3" status="run" result="skipped" time="0" timestamp="2024-05-01T12:00:00.000" classname="SkipTest">
      <skipped message="test/skip-test.cc:4&#x0A;not on CI"><![CDATA[test/skip-test.cc:4
not on CI]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
"""

PHPUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="Unit" tests="6" assertions="6" errors="1" failures="1" skipped="1" time="0.010512">
    <testsuite name="Tests\\Unit\\CalculatorTest" file="/app/tests/Unit/CalculatorTest.php" tests="6" assertions="6" errors="1" failures="1" skipped="1" time="0.010512">
      <testcase name="testAdd" file="/app/tests/Unit/CalculatorTest.php" line="12" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="1" time="0.001"/>
      <testcase name="testDivide" file="/app/tests/Unit/CalculatorTest.php" line="18" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="1" time="0.002">
        <failure type="PHPUnit\\Framework\\ExpectationFailedException">Tests\\Unit\\CalculatorTest::testDivide
Failed asserting that 2 is identical to 3.

/app/tests/Unit/CalculatorTest.php:20</failure>
      </testcase>
      <testcase name="testTypeError" file="/app/tests/Unit/CalculatorTest.php" line="24" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="0" time="0.001">
        <error type="TypeError">Tests\\Unit\\CalculatorTest::testTypeError
TypeError: Argument #1 must be of type int, string given</error>
      </testcase>
      <testcase name="testLater" file="/app/tests/Unit/CalculatorTest.php" line="30" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="0" time="0">
        <skipped/>
      </testcase>
      <testsuite name="Tests\\Unit\\CalculatorTest::testProvider" tests="2" assertions="2" errors="0" failures="0" skipped="0" time="0.002">
        <testcase name="testProvider with data set #0" file="/app/tests/Unit/CalculatorTest.php" line="40" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="1" time="0.001"/>
        <testcase name="testProvider with data set &quot;négatif&quot;" file="/app/tests/Unit/CalculatorTest.php" line="40" class="Tests\\Unit\\CalculatorTest" classname="Tests.Unit.CalculatorTest" assertions="1" time="0.001"/>
      </testsuite>
    </testsuite>
  </testsuite>
</testsuites>
"""

# as cmCTestTestHandler::WriteJUnitXML writes it (CMake 3.21+); captured output is raw,
# ANSI escapes included, which XML forbids
CTEST = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<testsuite name="Linux-c++"\n\ttests="4"\n\tfailures="1"\n\tdisabled="1"\n\tskipped="1"\n'
    '\thostname=""\n\ttime="0"\n\ttimestamp="2024-05-01T12:00:00"\n\t>\n'
    '\t<testcase name="unit_parser" classname="unit_parser" time="0.0123" status="run">\n'
    '\t\t<properties>\n\t\t\t<property name="cmake_labels" value="unit;fast"/>\n\t\t</properties>\n'
    "\t\t<system-out>\x1b[32mAll tests passed\x1b[0m (12 assertions in 3 test cases)\n</system-out>\n"
    "\t</testcase>\n"
    '\t<testcase name="unit_writer" classname="unit_writer" time="0.02" status="fail">\n'
    '\t\t<failure message="Failed"/>\n'
    "\t\t<properties/>\n"
    "\t\t<system-out>writer.cpp:10: FAILED:\n  REQUIRE( out == &quot;x&quot; )\n</system-out>\n"
    "\t</testcase>\n"
    '\t<testcase name="slow test" classname="slow test" time="0" status="disabled">\n'
    "\t\t<properties/>\n\t\t<system-out/>\n"
    "\t</testcase>\n"
    '\t<testcase name="needs_gpu" classname="needs_gpu" time="0" status="notrun">\n'
    '\t\t<skipped message="SKIP_RETURN_CODE=77"/>\n'
    "\t\t<properties/>\n\t\t<system-out/>\n"
    "\t</testcase>\n"
    '\t<testcase name="missing" classname="missing" time="0" status="notrun">\n'
    '\t\t<skipped message="Unable to find executable"/>\n'
    "\t\t<system-out>Unable to find executable: /nonexistent/binary</system-out>\n"
    "\t</testcase>\n"
    "</testsuite>\n"
)

CATCH2_JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="tests" errors="0" failures="1" skipped="0" tests="3" hostname="tbd" time="0.001" timestamp="2024-05-01T12:00:00Z">
    <properties>
      <property name="random-seed" value="1234"/>
    </properties>
    <testcase classname="tests.global" name="Factorials are computed" time="0.000" status="run"/>
    <testcase classname="tests.global" name="vectors can be sized/resizing bigger changes size" time="0.000" status="run">
      <failure message="v.size() == 10" type="REQUIRE">
FAILED:
  REQUIRE( v.size() == 10 )
with expansion:
  5 == 10
at /src/test.cpp:20
      </failure>
    </testcase>
    <testcase classname="tests.global" name="[tag] odd &lt;name&gt;" time="0.000" status="run"/>
  </testsuite>
</testsuites>
"""

DOCTEST_JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="all">
  <testsuite name="unit" errors="0" failures="1" tests="2">
    <testcase classname="tests/src/unit-json.cpp" name="parse strings" time="0.000" status="run"/>
    <testcase classname="tests/src/unit-json.cpp" name="dump unicode" time="0.001" status="run">
      <failure message="CHECK( j.dump() == &quot;ü&quot; ) is NOT correct!" type="CHECK"/>
    </testcase>
  </testsuite>
</testsuites>
"""

SAMPLES = [
    ("junit", SUREFIRE),
    ("junit", GRADLE),
    ("junit", PYTEST_XUNIT2),
    ("junit", PYTEST_XUNIT1),
    ("junit", GTEST),
    ("junit", PHPUNIT),
    ("junit", CTEST),
    ("junit", CATCH2_JUNIT),
    ("junit", DOCTEST_JUNIT),
]


def test_surefire_ids_are_class_hash_method():
    report = reports.parse("junit", SUREFIRE.encode(), exit_code=1)
    assert report.format == "junit:java"
    assert statuses(report) == {
        "com.google.gson.JsonParserTest#testParseString": P,
        "com.google.gson.JsonParserTest#testParseEmptyString": F,
        "com.google.gson.JsonParserTest#testParseMixedArray": E,
        "com.google.gson.JsonParserTest#testUnicode": S,
        "com.google.gson.JsonParserTest#testFlaky": P,  # passed on rerun
        "com.google.gson.JsonParserTest#testRoundTrip(String)[2]": P,
    }
    by_id = report.by_id
    assert (
        by_id["com.google.gson.JsonParserTest#testParseEmptyString"].message
        == "expected:<1> but was:<2>"
    )
    assert by_id["com.google.gson.JsonParserTest#testParseString"].duration == pytest.approx(0.003)
    assert report.consistent and report.warnings == ()


def test_gradle_drops_junit5_parentheses_and_keeps_display_names():
    report = reports.parse("junit", GRADLE)
    assert statuses(report) == {
        "org.example.CalculatorTest#adds": P,
        "org.example.CalculatorTest#divides by zero — ünïcode": F,
        "org.example.CalculatorTest#[1] a=1, b=[2, 3]": P,
    }


def test_pytest_junit_maps_classnames_back_to_node_ids():
    report = reports.parse("junit", PYTEST_XUNIT2, exit_code=1)
    assert report.format == "junit:pytest"
    assert statuses(report) == {
        "tests/test_calc.py::test_add": P,
        "tests/test_calc.py::TestDivide::test_by_zero": F,
        "tests/test_calc.py::test_param[a b-\\xfc]": P,
        "tests/test_calc.py::test_param[x::y-ü]": P,
        "tests/test_calc.py::test_xfail": X,
        "tests/test_calc.py::test_skip": S,
        "tests/test_calc.py::test_teardown": E,
        "tests/unit/test_models.py::TestUser::TestNested::test_deep": P,
        "tests/test_broken.py": E,  # collection error: the module is the node
    }


def test_pytest_junit_uses_the_file_attribute_when_present():
    report = reports.parse("junit", PYTEST_XUNIT1)
    assert statuses(report) == {
        "Tests/test_app.py::TestApp::test_ok": P,
        "test_root.py::test_top[1.5-2]": P,
    }


def test_pytest_junit_with_a_custom_suite_name_is_still_recognised():
    xml = (
        '<testsuites><testsuite name="my-project" tests="2">'
        '<testcase classname="tests.test_calc.TestC" name="test_a" time="0.1"/>'
        '<testcase classname="pkg.math_test" name="test_b[1]" time="0.1"/>'
        "</testsuite></testsuites>"
    )
    report = reports.parse("junit", xml)
    assert report.format == "junit:pytest"
    assert list(report.by_id) == [
        "tests/test_calc.py::TestC::test_a",
        "pkg/math_test.py::test_b[1]",
    ]


def test_gtest_ids_are_suite_dot_test():
    report = reports.parse("junit", GTEST, exit_code=1)
    assert report.format == "junit:gtest"
    assert statuses(report) == {
        "FormatTest.Escape": P,
        "FormatTest.Unicode": F,
        "FormatTest.DISABLED_Slow": S,
        "Inst/ParamTest.Works/0": P,
        "Inst/ParamTest.Works/1": P,
        "SkipTest.OnlyOnLinux": S,
    }
    assert "Expected equality" in report.by_id["FormatTest.Unicode"].message


def test_phpunit_ids_are_class_double_colon_method():
    report = reports.parse("junit", PHPUNIT, exit_code=2)
    assert report.format == "junit:phpunit"
    assert statuses(report) == {
        "Tests\\Unit\\CalculatorTest::testAdd": P,
        "Tests\\Unit\\CalculatorTest::testDivide": F,
        "Tests\\Unit\\CalculatorTest::testTypeError": E,
        "Tests\\Unit\\CalculatorTest::testLater": S,
        "Tests\\Unit\\CalculatorTest::testProvider with data set #0": P,
        'Tests\\Unit\\CalculatorTest::testProvider with data set "négatif"': P,
    }


def test_ctest_ids_are_test_names_and_control_characters_are_tolerated():
    report = reports.parse("junit", CTEST.encode(), exit_code=8)
    assert report.format == "junit:name"
    assert statuses(report) == {
        "unit_parser": P,
        "unit_writer": F,
        "slow test": S,  # DISABLED
        "needs_gpu": S,  # skipped itself (SKIP_RETURN_CODE)
        "missing": E,  # could not run: ctest counts it as failed
    }


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        (
            CATCH2_JUNIT,
            {
                "Factorials are computed": P,
                "vectors can be sized/resizing bigger changes size": F,
                "[tag] odd <name>": P,
            },
        ),
        (DOCTEST_JUNIT, {"parse strings": P, "dump unicode": F}),
    ],
    ids=["catch2", "doctest"],
)
def test_cpp_junit_reporters_use_test_case_names(sample, expected):
    report = reports.parse("junit", sample)
    assert report.format == "junit:name"
    assert statuses(report) == expected


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        # ctest --output-junit (golden c-ctest-junit): classname = name, and a test
        # named like a Python test module ("disabled_test")
        (
            '<testsuite name="(empty)" tests="2">'
            '<testcase name="adds numbers" classname="adds numbers" time="0.01" status="run"/>'
            '<testcase name="disabled_test" classname="disabled_test" time="0" status="disabled">'
            "<system-out>Disabled</system-out></testcase></testsuite>",
            {"adds numbers": P, "disabled_test": S},
        ),
        # Catch2 v2 -r junit (golden cpp-catch2-junit): the binary is calc_test
        (
            '<testsuites><testsuite name="calc_test" errors="0" failures="1" tests="2">'
            '<testcase classname="calc_test.global" name="adds numbers" time="0.000"/>'
            '<testcase classname="calc_test.global" name="add is wrong" time="0.000">'
            '<failure message="add(2, 2) == 5" type="CHECK"/></testcase>'
            "</testsuite></testsuites>",
            {"adds numbers": P, "add is wrong": F},
        ),
    ],
    ids=["ctest", "catch2"],
)
def test_name_flavor_wins_over_test_module_like_names(xml, expected):
    report = reports.parse("junit", xml, exit_code=1)
    assert report.format == "junit:name"
    assert statuses(report) == expected


def test_pytest_collection_errors_alone_are_not_name_flavored_by_module_names():
    xml = (
        '<testsuites><testsuite name="my-project" errors="1" tests="1">'
        '<testcase classname="" name="tests.test_broken" time="0.0">'
        '<error message="collection failure">ImportError</error></testcase>'
        '<testcase classname="tests.test_ok" name="test_a" time="0.0"/>'
        "</testsuite></testsuites>"
    )
    report = reports.parse("junit", xml, exit_code=2)
    assert report.format == "junit:pytest"
    assert statuses(report) == {"tests/test_broken.py": E, "tests/test_ok.py::test_a": P}


def test_flavor_can_be_forced_through_the_format_string():
    assert "FormatTest#Escape" in reports.parse("junit:java", GTEST).by_id
    assert "unit_parser" in reports.parse("junit:ctest", CTEST).by_id
    assert reports.parse("junit:ctest", CTEST).format == "junit:name"
    with pytest.raises(ReportParseError, match="unknown variant"):
        reports.parse("junit:nunit", CTEST)


def test_concatenated_documents_are_all_read():
    both = SUREFIRE + "\n" + GRADLE
    report = reports.parse("junit", both)
    assert len(report.results) == 9
    assert report.warnings == ()


def test_truncated_report_keeps_complete_testcases_and_warns():
    cut = SUREFIRE.index('<testcase name="testUnicode"') + 20
    report = reports.parse("junit", SUREFIRE[:cut])
    assert list(statuses(report)) == [
        "com.google.gson.JsonParserTest#testParseString",
        "com.google.gson.JsonParserTest#testParseEmptyString",
        "com.google.gson.JsonParserTest#testParseMixedArray",
    ]
    assert report.warning_codes == ("truncated",)


def test_a_testcase_cut_inside_its_body_is_dropped():
    cut = SUREFIRE.index("at com.google.gson.JsonParserTest.testParseEmptyString")
    report = reports.parse("junit", SUREFIRE[:cut])
    assert list(statuses(report)) == ["com.google.gson.JsonParserTest#testParseString"]


def test_nothing_recoverable_is_an_error():
    with pytest.raises(ReportParseError):
        reports.parse("junit", SUREFIRE[:300])
    with pytest.raises(ReportParseError, match="not XML"):
        reports.parse("junit", b"BUILD FAILURE")
    with pytest.raises(ReportParseError, match="not a JUnit report"):
        reports.parse("junit", b"<html><body>hi</body></html>")


def test_an_empty_suite_is_a_valid_report_with_no_results():
    report = reports.parse("junit", '<testsuite name="x" tests="0"/>')
    assert report.results == ()


@pytest.mark.parametrize(
    "evil",
    [
        # billion laughs
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
        '<testsuite><testcase name="&lol2;"/></testsuite>',
        # external entity
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<testsuite><testcase name="&x;"/></testsuite>',
        '<!DOCTYPE testsuite SYSTEM "http://example.invalid/junit.dtd"><testsuite/>',
    ],
    ids=["billion-laughs", "external-entity", "external-dtd"],
)
def test_dtds_and_entities_are_refused(evil):
    with pytest.raises(ReportParseError, match="DTD"):
        reports.parse("junit", evil)


def test_log_noise_around_the_xml_is_skipped():
    noisy = "[INFO] Running tests\n" + GRADLE + "\n[INFO] BUILD FAILURE\n"
    report = reports.parse("junit", noisy)
    assert len(report.results) == 3


def test_duplicate_ids_keep_the_worst_status_and_warn():
    xml = (
        '<testsuite name="s"><testcase classname="a.B" name="t"/>'
        '<testcase classname="a.B" name="t"><failure message="boom"/></testcase>'
        '<testcase classname="a.B" name="t"/></testsuite>'
    )
    report = reports.parse("junit", xml)
    assert statuses(report) == {"a.B#t": F}
    assert report.by_id["a.B#t"].message == "boom"
    assert report.warning_codes == ("duplicate",)
