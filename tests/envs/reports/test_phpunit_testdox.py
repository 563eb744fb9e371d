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
