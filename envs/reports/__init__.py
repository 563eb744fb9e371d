"""Test reports -> per-test results.

    from envs import reports
    report = reports.parse("junit", xml_bytes, exit_code=1)
    report.results, report.consistent, report.warnings

Formats are registered by decorator (`register`), one module per format; see
`formats()` for the names and each module's docstring for its test-id convention.
A format string may carry a variant, ``name:variant`` (``junit:gtest``, ``exitcode:tests``).
Every parser returns results or raises `ReportParseError`, whatever bytes it is given.
"""

from __future__ import annotations

from envs.reports.ids import comparable_id, is_pytest_format, swebench_id
from envs.reports.registry import (
    PART_FAILED,
    FormatInfo,
    ParseContext,
    ParsedReport,
    ReportParseError,
    ReportWarning,
    UnknownFormatError,
    format_info,
    formats,
    parse,
    parse_best,
    register,
)

# Importing the modules registers their formats.
from envs.reports import (  # noqa: F401  isort: skip
    automake,
    catch2,
    doctest,
    generic,
    gotest,
    jest,
    junit,
    maketrace,
    libtest,
    minitest,
    mocha,
    phpunit,
    pytest_text,
    rspec,
    sympy_text,
    tap,
    tcltest,
    testunit,
    unittest_text,
)

__all__ = [
    "PART_FAILED",
    "FormatInfo",
    "ParseContext",
    "ParsedReport",
    "ReportParseError",
    "ReportWarning",
    "UnknownFormatError",
    "comparable_id",
    "format_info",
    "formats",
    "is_pytest_format",
    "parse",
    "parse_best",
    "register",
    "swebench_id",
]
