"""phpunit --testdox text."""

from __future__ import annotations

from envs import reports

from ._helpers import F, P, S, statuses

TESTDOX = """\
PHPUnit 10.5.20 by Sebastian Bergmann and contributors.

Runtime:       PHP 8.3.6
Configuration: /app/phpunit.xml.dist

Formula Translator (PhpOffice\\PhpSpreadsheetTests\\Reader\\Ods\\FormulaTranslator)
 ✔ Translate with data set "range"
 ✘ Translate with data set "ünïcode [x]"
   │
   │ Failed asserting that two strings are identical.
   │ --- Expected
   │ +++ Actual
   │
 ↩ Skipped on windows
 ∅ Not yet implemented

Round Down (PhpOffice\\PhpSpreadsheetTests\\Calculation\\Functions\\MathTrig\\RoundDown)
 ✔ Round down with data set #0
 ✔ Round down with data set #1

Time: 00:00.102, Memory: 12.00 MB

FAILURES!
Tests: 6, Assertions: 6, Failures: 1, Skipped: 1, Incomplete: 1.
"""

SAMPLES = [("phpunit-testdox", TESTDOX)]


def test_testdox_ids_are_suite_arrow_test_as_in_swebench():
    report = reports.parse("phpunit-testdox", TESTDOX, exit_code=1)
    assert statuses(report) == {
        'Formula Translator > Translate with data set "range"': P,
        'Formula Translator > Translate with data set "ünïcode [x]"': F,
        "Formula Translator > Skipped on windows": S,
        "Formula Translator > Not yet implemented": S,
        "Round Down > Round down with data set #0": P,
        "Round Down > Round down with data set #1": P,
    }


# PHPUnit 9.6 (seen in the golden fixture php-phpunit-testdox): the tests that did not
# pass are listed again, header and all, after the run.
TESTDOX_WITH_SUMMARY = """\
PHPUnit 9.6.7 by Sebastian Bergmann and contributors.

Calculator (Golden\\Tests\\Calculator)
 ✔ Adds numbers
 ✘ Add is wrong
   │
   │ Failed asserting that 4 is identical to 5.
   │
 ↩ Skipped

Time: 00:00.108, Memory: 6.00 MB

Summary of non-successful tests:

Calculator (Golden\\Tests\\Calculator)
 ✘ Add is wrong
   │
   │ Failed asserting that 4 is identical to 5.
   │
 ↩ Skipped

FAILURES!
Tests: 3, Assertions: 2, Failures: 1, Skipped: 1.
"""

SAMPLES.append(("phpunit-testdox", TESTDOX_WITH_SUMMARY))


def test_the_summary_of_non_successful_tests_is_not_a_duplicate():
    report = reports.parse("phpunit-testdox", TESTDOX_WITH_SUMMARY, exit_code=1)
    assert statuses(report) == {
        "Calculator > Adds numbers": P,
        "Calculator > Add is wrong": F,
        "Calculator > Skipped": S,
    }
    assert report.warnings == ()


def test_a_summary_that_contradicts_the_run_still_warns():
    forged = TESTDOX_WITH_SUMMARY.replace(
        " ✘ Add is wrong\n   │\n   │ Failed", " ✔ Add is wrong\n   │\n   │ Failed", 1
    )
    report = reports.parse("phpunit-testdox", forged, exit_code=1)
    assert statuses(report)["Calculator > Add is wrong"] == F
    assert report.warning_codes == ("duplicate",)
