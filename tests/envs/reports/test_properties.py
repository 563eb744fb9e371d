"""Robustness, for every registered format: whatever the bytes -- random, recombined
from a real sample's tokens, mutated, or a valid sample cut at any offset -- a parser
returns a well-formed ParsedReport or raises ReportParseError, never anything else
(and never an "internal" ReportParseError, which would mean a parser bug)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs import reports
from envs.models import TestResult
from envs.reports import ParsedReport, ReportParseError
from envs.reports.registry import MAX_WARNINGS

from . import (
    test_automake,
    test_catch2,
    test_doctest,
    test_generic,
    test_gotest,
    test_jest,
    test_junit,
    test_libtest,
    test_maketrace,
    test_minitest,
    test_mocha,
    test_phpunit_testdox,
    test_pytest_text,
    test_rspec,
    test_sympy_text,
    test_tap,
    test_tcltest,
    test_testunit,
    test_unittest_text,
)

SAMPLES: list[tuple[str, str]] = [
    *test_automake.SAMPLES,
    *test_catch2.SAMPLES,
    *test_doctest.SAMPLES,
    *test_generic.SAMPLES,
    *test_gotest.SAMPLES,
    *test_jest.SAMPLES,
    *test_junit.SAMPLES,
    *test_maketrace.SAMPLES,
    *test_libtest.SAMPLES,
    *test_minitest.SAMPLES,
    *test_mocha.SAMPLES,
    *test_phpunit_testdox.SAMPLES,
    *test_pytest_text.SAMPLES,
    *test_rspec.SAMPLES,
    *test_sympy_text.SAMPLES,
    *test_tap.SAMPLES,
    *test_tcltest.SAMPLES,
    *test_testunit.SAMPLES,
    *test_unittest_text.SAMPLES,
    ("exitcode", "some output\n"),
]
FORMATS = reports.formats()
# Formats whose truncation recovery keeps only complete elements/objects: a cut report
# can lose tests but never invent one.
NO_INVENTED_IDS = {"junit", "catch2-xml", "doctest-xml", "jest-json", "vitest-json", "rspec-json"}
_SPLIT = re.compile(r"(\s+|[<>{}\[\]\"':,=#/\\&;!?-])")
_EXTRA_TOKENS = [
    "<!DOCTYPE x>",
    "<!ENTITY a 'b'>",
    "&a;",
    "<![CDATA[",
    "]]>",
    "\x00",
    "\x1b[31m",
    "\r",
    "\ufeff",
    "ü",
    "\u2028",
]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tokens(fmt: str) -> list[str]:
    texts = [s for f, s in SAMPLES if f == fmt] or [s for _, s in SAMPLES]
    # whole lines (line-oriented formats recombine into plausible reports) and the
    # pieces between delimiters (for XML and JSON)
    found = {t for text in texts for t in _SPLIT.split(text) if t}
    found |= {line + "\n" for text in texts for line in text.split("\n")}
    return sorted(found) + _EXTRA_TOKENS


TOKENS = {fmt: _tokens(fmt) for fmt in FORMATS}


def check(fmt: str, data: bytes | str, exit_code: int | None = 1) -> ParsedReport | None:
    try:
        report = reports.parse(fmt, data, exit_code=exit_code)
    except ReportParseError as exc:
        assert not exc.internal, f"parser bug: {exc}"
        return None
    assert isinstance(report, ParsedReport)
    assert report.exit_code == exit_code
    assert all(isinstance(r, TestResult) for r in report.results)
    ids = [r.test_id for r in report.results]
    assert len(ids) == len(set(ids)), "duplicate ids must be merged"
    assert all(i and i == i.strip() for i in ids)
    assert all(isinstance(w, str) for w in report.warnings)
    assert len(report.warnings) <= MAX_WARNINGS + 1
    assert isinstance(report.consistent, bool)
    json.dumps(report.to_dict(), ensure_ascii=False).encode()  # serialisable, as UTF-8 too
    for r in report.results:
        r.model_dump_json()
    return report


def test_every_format_has_a_sample():
    assert {f for f, _ in SAMPLES} == set(FORMATS)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=st.binary(max_size=2000), exit_code=st.one_of(st.none(), st.integers(-1, 255)))
def test_arbitrary_bytes(fmt, data, exit_code):
    check(fmt, data, exit_code)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=st.data())
def test_sample_tokens_recombined(fmt, data):
    pieces = data.draw(st.lists(st.sampled_from(TOKENS[fmt]), max_size=150))
    check(fmt, "".join(pieces))


@SETTINGS
@given(data=st.data())
def test_mutated_samples(data):
    fmt, sample = data.draw(st.sampled_from(SAMPLES))
    buf = bytearray(sample.encode())
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(buf)))
        j = data.draw(st.integers(i, min(len(buf), i + 300)))
        op = data.draw(st.sampled_from(["delete", "duplicate", "insert", "swap-formats"]))
        if op == "delete":
            del buf[i:j]
        elif op == "duplicate":
            buf[i:i] = buf[i:j]
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(max_size=40))
        else:
            other = data.draw(st.sampled_from(SAMPLES))[1].encode()
            buf[i:j] = other[: j - i + 50]
    check(fmt, bytes(buf))


@SETTINGS
@given(text=st.text(max_size=500), fmt=st.sampled_from(FORMATS))
def test_arbitrary_str_including_surrogates(text, fmt):
    check(fmt, text)


_HUGE = "9" * 5000  # int() refuses strings of more than 4300 digits
HUGE_NUMBERS = [
    "1.." + _HUGE,
    "ok " + _HUGE + " - x",
    "--- PASS: T (" + _HUGE + "s)",
    "A#b = " + _HUGE + " s = .",
    "[gw0] [ " + _HUGE + "%] PASSED a::b",
    '{"testResults": [], "examples": [], "passes": [], "x": ' + _HUGE + "}",
    '{"Action": "pass", "Test": "T", "Elapsed": ' + _HUGE + "}",
    '<testsuite><testcase name="a" time="' + _HUGE + '"/></testsuite>',
    '<Catch><TestCase name="a"><OverallResult success="true" skips="'
    + _HUGE
    + '"/></TestCase></Catch>',
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_huge_numbers(fmt):
    for data in HUGE_NUMBERS:
        check(fmt, data)


def _offsets(n: int) -> list[int]:
    step = max(1, n // 120)
    return sorted(set(range(0, n, step)) | set(range(max(0, n - 12), n)))


@pytest.mark.parametrize(
    ("fmt", "sample"), SAMPLES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(SAMPLES)]
)
def test_truncated_samples(fmt, sample):
    data = sample.encode()
    full = check(fmt, data)
    assert full is not None and (full.results or fmt == "exitcode")
    full_ids = set(full.by_id)
    for cut in _offsets(len(data)):
        report = check(fmt, data[:cut])  # may cut inside a UTF-8 sequence
        if report is not None and fmt in NO_INVENTED_IDS:
            invented = set(report.by_id) - full_ids
            assert not invented, f"cut at {cut} invented {invented}"
