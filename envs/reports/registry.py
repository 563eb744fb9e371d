"""The parser registry and the types every report parser shares.

A parser is a function ``(text, ctx) -> None`` registered under a format name. It reads
the decoded report text and records what it finds through ``ctx.add`` / ``ctx.warn``; the
registry turns that into an immutable `ParsedReport` (duplicates merged, warnings capped).

Format strings are ``name`` or ``name:variant``. The variant is the parser's one free
option (the JUnit flavor, the test name of ``exitcode``, the id field of ``rspec-json``),
so an `EnvSpec.report_format` string alone says how to read a report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from envs.models import TestResult, TestStatus

Kind = Literal["structured", "text", "fallback"]
ParserFunc = Callable[[str, "ParseContext"], None]

# How bad a status is, for merging duplicate ids: any failure beats any pass, and an
# ERROR (the test could not even run to completion) beats a FAILED assertion.
STATUS_RANK: Mapping[TestStatus, int] = MappingProxyType(
    {
        TestStatus.PASSED: 0,
        TestStatus.XFAIL: 1,
        TestStatus.SKIPPED: 2,
        TestStatus.FAILED: 3,
        TestStatus.ERROR: 4,
    }
)
FAILING = frozenset({TestStatus.FAILED, TestStatus.ERROR})
# Warnings that say a part of the suite failed as a whole, with no per-test result for it
# (a crate that did not compile, a test binary that aborted, a suite file that threw, a
# bail-out): such a run exits non-zero although no test it reported failed.
PART_FAILED = frozenset({"package-failed", "suite-failed", "bail-out", "aborted"})

MAX_WARNINGS = 50  # arbitrary input must not make a report arbitrarily large
MAX_MESSAGE = 2000
MAX_ID = 4000
_SURROGATE = re.compile("[\ud800-\udfff]")
_DUP_DETAIL = 10  # duplicate ids named one by one before they are only counted


class ReportParseError(ValueError):
    """The data is not a readable report of the requested format.

    ``internal`` is True when a parser itself broke (a bug, never the input's fault);
    the property tests assert it never happens.
    """

    def __init__(self, message: str, *, format: str | None = None, internal: bool = False):
        super().__init__(message)
        self.format = format
        self.internal = internal


class UnknownFormatError(ReportParseError):
    """No parser is registered under that name; ``known`` lists the names that are."""

    def __init__(self, name: str, known: Iterable[str]):
        self.known = sorted(known)
        super().__init__(
            f"unknown report format {name!r}; known formats: {', '.join(self.known)}",
            format=name,
        )


class ReportWarning(str):
    """A warning: readable text that also carries a machine-readable ``code``.

    It is a `str`, so ``ParsedReport.warnings`` stays a tuple of strings (and JSON).
    Codes: duplicate, truncated, package-failed, suite-failed, no-node-id, bail-out,
    plan-mismatch, unknown-status, empty-id, fallback (parse_best), suppressed.
    """

    code: str

    def __new__(cls, code: str, message: str) -> ReportWarning:
        obj = super().__new__(cls, f"{code}: {message}")
        obj.code = code
        return obj


@dataclass(frozen=True)
class ParsedReport:
    """What a test report said, as per-test results plus the run's exit code."""

    format: str
    results: tuple[TestResult, ...]
    exit_code: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[TestStatus, int]:
        counts = dict.fromkeys(TestStatus, 0)
        for result in self.results:
            counts[result.status] += 1
        return counts

    @property
    def by_id(self) -> dict[str, TestResult]:
        return {r.test_id: r for r in self.results}

    @property
    def has_failures(self) -> bool:
        return any(r.status in FAILING for r in self.results)

    @property
    def consistent(self) -> bool:
        """Does the report agree with the exit code?

        False when the exit code is non-zero but no test failed or errored (a runner that
        crashed after printing passes, or a patch that prints fake PASSED lines; SWE-bench
        #620) and no warning says a part of the suite failed as a whole (`PART_FAILED`:
        that explains the exit), or when the exit code is 0 but tests failed. True without
        an exit code.
        """
        if self.exit_code is None:
            return True
        if self.exit_code != 0 and not self.has_failures:
            return self.part_failed
        return (self.exit_code == 0) != self.has_failures

    @property
    def part_failed(self) -> bool:
        """A part of the suite failed with no per-test results (see `PART_FAILED`)."""
        return any(code in PART_FAILED for code in self.warning_codes)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(getattr(w, "code", "other") for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "exit_code": self.exit_code,
            "consistent": self.consistent,
            "counts": {s.value: n for s, n in self.counts.items()},
            "warnings": list(self.warnings),
            "results": [r.model_dump(mode="json") for r in self.results],
        }


def _clean_duration(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isnan(number) or math.isinf(number) or number < 0:
        return None
    return number


def _clean_message(value: Any) -> str | None:
    if value is None:
        return None
    text = _SURROGATE.sub("\ufffd", str(value)).strip()
    if not text:
        return None
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 3] + "..."
    return text


@dataclass
class _Entry:
    result: TestResult
    statuses: list[TestStatus] = field(default_factory=list)


class ParseContext:
    """Handed to a parser: its options, and where it records results and warnings."""

    def __init__(
        self,
        name: str,
        variant: str | None = None,
        options: Mapping[str, str] | None = None,
        exit_code: int | None = None,
    ):
        self.name = name
        self.variant = variant
        self.options: Mapping[str, str] = MappingProxyType(dict(options or {}))
        self.exit_code = exit_code
        # A parser may name what it detected, e.g. "junit:gtest".
        self.resolved_format = name if variant is None else f"{name}:{variant}"
        # Formats that print one test in several sections (pytest's -v lines and its
        # summary) set this, so identical repeats are not reported as duplicates.
        self.expect_repeats = False
        self._entries: dict[str, _Entry] = {}
        self._warnings: list[ReportWarning] = []
        self._suppressed = 0

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def warn(self, code: str, message: str) -> None:
        if len(self._warnings) >= MAX_WARNINGS:
            self._suppressed += 1
            return
        self._warnings.append(ReportWarning(code, _SURROGATE.sub("\ufffd", message)[:MAX_MESSAGE]))

    def add(
        self,
        test_id: str,
        status: TestStatus,
        *,
        duration: Any = None,
        message: Any = None,
    ) -> None:
        # JSON escapes can smuggle lone surrogates in, which no JSON encoder will write out
        test_id = _SURROGATE.sub("\ufffd", test_id).strip()
        if not test_id:
            self.warn("empty-id", f"a {status.value} result without a test name was dropped")
            return
        if len(test_id) > MAX_ID:
            test_id = test_id[:MAX_ID]
        result = TestResult(
            test_id=test_id,
            status=status,
            duration=_clean_duration(duration),
            message=_clean_message(message),
        )
        entry = self._entries.get(test_id)
        if entry is None:
            self._entries[test_id] = _Entry(result, [status])
            return
        entry.statuses.append(status)
        if STATUS_RANK[status] > STATUS_RANK[entry.result.status]:
            entry.result = result

    @property
    def result_count(self) -> int:
        return len(self._entries)

    def finish(self) -> ParsedReport:
        duplicates = [(tid, e) for tid, e in self._entries.items() if len(e.statuses) > 1]
        if self.expect_repeats:
            duplicates = [(t, e) for t, e in duplicates if len(set(e.statuses)) > 1]
        for tid, entry in duplicates[:_DUP_DETAIL]:
            seen = ", ".join(s.value for s in entry.statuses)
            self.warn(
                "duplicate",
                f"{tid!r} reported {len(entry.statuses)} times ({seen}); kept {entry.result.status.value}",
            )
        if len(duplicates) > _DUP_DETAIL:
            self.warn(
                "duplicate",
                f"{len(duplicates) - _DUP_DETAIL} more test ids reported more than once; kept the worst status",
            )
        warnings: list[str] = list(self._warnings)
        if self._suppressed:
            warnings.append(ReportWarning("suppressed", f"{self._suppressed} more warnings"))
        return ParsedReport(
            format=self.resolved_format,
            results=tuple(e.result for e in self._entries.values()),
            exit_code=self.exit_code,
            warnings=tuple(warnings),
        )


@dataclass(frozen=True)
class FormatInfo:
    name: str
    func: ParserFunc
    kind: Kind
    description: str
    variants: tuple[str, ...] | None  # None: the variant is free-form (or unused)
    aliases: tuple[str, ...]


_REGISTRY: dict[str, FormatInfo] = {}
_ALIASES: dict[str, str] = {}


def register(
    name: str,
    *,
    kind: Kind = "structured",
    description: str = "",
    variants: Iterable[str] | None = None,
    aliases: Iterable[str] = (),
) -> Callable[[ParserFunc], ParserFunc]:
    """Register a parser under ``name`` (and ``aliases``). Re-registering a name is an error."""

    def decorate(func: ParserFunc) -> ParserFunc:
        names = [name, *aliases]
        for n in names:
            if n in _REGISTRY or n in _ALIASES or ":" in n:
                raise ValueError(f"report format {n!r} is already registered or invalid")
        info = FormatInfo(
            name=name,
            func=func,
            kind=kind,
            description=description or (func.__doc__ or "").strip().split("\n")[0],
            variants=tuple(variants) if variants is not None else None,
            aliases=tuple(aliases),
        )
        _REGISTRY[name] = info
        for alias in aliases:
            _ALIASES[alias] = name
        return func

    return decorate


def formats() -> list[str]:
    """The registered format names (aliases not included), sorted."""
    return sorted(_REGISTRY)


def format_info(name: str) -> FormatInfo:
    base, _ = split_format(name)
    canonical = _ALIASES.get(base, base)
    try:
        return _REGISTRY[canonical]
    except KeyError:
        raise UnknownFormatError(base, [*_REGISTRY, *_ALIASES]) from None


def split_format(fmt: str) -> tuple[str, str | None]:
    name, sep, variant = fmt.strip().partition(":")
    return name.strip().lower(), (variant.strip() if sep and variant.strip() else None)


def decode(data: bytes | bytearray | memoryview | str) -> str:
    """Report text: bytes as UTF-8 with replacement; str made encodable (lone surrogates replaced)."""
    if isinstance(data, str):
        text = _SURROGATE.sub("\ufffd", data)
    elif isinstance(data, (bytes, bytearray, memoryview)):
        text = bytes(data).decode("utf-8", "replace")
    else:
        raise ReportParseError(f"report data must be bytes or str, not {type(data).__name__}")
    return text[1:] if text.startswith("\ufeff") else text


def parse(
    fmt: str,
    data: bytes | str,
    *,
    exit_code: int | None = None,
    options: Mapping[str, str] | None = None,
) -> ParsedReport:
    """Parse ``data`` as report format ``fmt`` (``name`` or ``name:variant``)."""
    info = format_info(fmt)
    _, variant = split_format(fmt)
    if variant is not None and info.variants is not None:
        if variant.lower() not in info.variants:
            raise ReportParseError(
                f"{info.name}: unknown variant {variant!r}; known: {', '.join(info.variants)}",
                format=info.name,
            )
        variant = variant.lower()
    text = decode(data)
    ctx = ParseContext(info.name, variant, options, exit_code)
    try:
        info.func(text, ctx)
    except ReportParseError as exc:
        if exc.format is None:
            exc.format = info.name
        raise
    except RecursionError as exc:
        raise ReportParseError(f"{info.name}: report nested too deeply", format=info.name) from exc
    except Exception as exc:  # a parser bug must still surface as a typed error
        raise ReportParseError(
            f"{info.name}: internal parser error: {exc!r}", format=info.name, internal=True
        ) from exc
    return ctx.finish()


def parse_best(
    candidates: Iterable[tuple[str, bytes | str]],
    exit_code: int | None = None,
    *,
    options: Mapping[str, str] | None = None,
) -> ParsedReport:
    """The most trustworthy reading of several reports of one run.

    Structured reports (XML, JSON, TAP) are tried first, then text logs, then fallbacks
    such as ``exitcode``, each group in the order given. The first with at least one
    result wins; failing that, the first that parsed at all. What was passed over is kept
    as a ``fallback`` warning. Raises ReportParseError when nothing parses.
    """
    rank = {"structured": 0, "text": 1, "fallback": 2}
    ordered = sorted(
        enumerate(candidates), key=lambda ic: (rank[format_info(ic[1][0]).kind], ic[0])
    )
    notes: list[str] = []
    empty: ParsedReport | None = None
    empty_note = 0
    for _, (fmt, data) in ordered:
        try:
            report = parse(fmt, data, exit_code=exit_code, options=options)
        except UnknownFormatError:
            raise
        except ReportParseError as exc:
            notes.append(f"{fmt}: {exc}")
            continue
        if report.results:
            return _with_notes(report, notes)
        if empty is None:
            empty, empty_note = report, len(notes)
        notes.append(f"{fmt}: parsed, but no test results")
    if empty is not None:
        return _with_notes(empty, notes[:empty_note] + notes[empty_note + 1 :])
    raise ReportParseError(
        "no candidate report could be parsed: " + "; ".join(notes)
        if notes
        else "no candidate reports"
    )


def _with_notes(report: ParsedReport, notes: list[str]) -> ParsedReport:
    if not notes:
        return report
    extra = tuple(ReportWarning("fallback", n) for n in notes[:MAX_WARNINGS])
    return ParsedReport(report.format, report.results, report.exit_code, report.warnings + extra)
