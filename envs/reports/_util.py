"""Small helpers the parsers share: line splitting, ANSI stripping, tolerant JSON loading."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from envs.reports.registry import ReportParseError

# CSI sequences, two-byte escapes, and charset designations: libtest's colours end with
# terminfo's sgr0, ESC ( B ESC [ m, whose ESC ( B the first two leave behind.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()*+][0-~]|\x1b[@-Z\\-_]")
_JSON_START = re.compile(r"(?m)^[ \t]*[\[{]")
_MAX_JSON_STARTS = 50  # bounds the work on a log that is mostly not JSON


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


MAX_LINE = 65_536  # longer lines are cut: no test id is that long, and it bounds regex work


def lines(text: str, *, ansi: bool = True, max_len: int | None = MAX_LINE) -> Iterator[str]:
    """Lines as a terminal shows them: split on newlines only (not str.splitlines, which
    also splits on U+2028 and friends that can occur inside test names), and a carriage
    return overwrites what came before it on the line. Trailing whitespace is removed.

    Every line regex the parsers apply to these lines must be linear-time: a patch
    controls what the tests print, and a regex that backtracks would hang the grader."""
    if ansi:
        text = strip_ansi(text)
    for line in text.split("\n"):
        line = line.rstrip()
        if "\r" in line:
            line = line.rsplit("\r", 1)[1]
        if max_len is not None and len(line) > max_len:
            line = line[:max_len]
        yield line


def load_json(text: str, what: str, accept: Callable[[Any], bool] | None = None) -> Any:
    """Parse a JSON document, tolerating log noise around it (console output before the
    reporter's JSON, a trailing summary). Raises ReportParseError when none is found.

    ``accept`` says what the report's top level looks like; without it, an inner object
    of a truncated pretty-printed document could be mistaken for the document."""
    stripped = text.strip()
    if not stripped:
        raise ReportParseError(f"{what}: empty report")
    try:
        doc = json.loads(stripped)
    except RecursionError as exc:
        raise ReportParseError(f"{what}: JSON nested too deeply") from exc
    except ValueError as first:
        error: Exception = first
    else:
        if accept is None or accept(doc):
            return doc
        error = ReportParseError("not the expected document")
    decoder = json.JSONDecoder()
    for n, match in enumerate(_JSON_START.finditer(text)):
        if n >= _MAX_JSON_STARTS:
            break
        start = match.end() - 1
        try:
            obj, _ = decoder.raw_decode(text, start)
        except RecursionError as exc:
            raise ReportParseError(f"{what}: JSON nested too deeply") from exc
        except ValueError:
            continue
        if isinstance(obj, (dict, list)) and (accept is None or accept(obj)):
            return obj
    raise ReportParseError(f"{what}: no report found ({error})")


def salvage_objects(text: str, first_key: str, limit: int = 100_000) -> list[dict[str, Any]]:
    """Complete JSON objects whose first key is ``first_key``, decoded one by one.

    Used to recover the finished entries of a truncated JSON report (stdout is capped
    head + tail by the sandbox), where the document as a whole no longer parses."""
    pattern = re.compile(r"\{\s*" + re.escape(json.dumps(first_key)) + r"\s*:")
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    # Each failed decode may read to the end of the text; the budget keeps adversarial
    # input (thousands of unclosed candidates) linear instead of quadratic.
    # (A failed decode also costs O(position): JSONDecodeError counts the lines before
    # it, hence the cap on failures too. A real truncated report has one.)
    budget = 4 * len(text) + 1_000_000
    failures_left = 200
    resume = 0
    for match in pattern.finditer(text):
        start = match.start()
        if start < resume:
            continue  # inside an object already salvaged
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            budget -= max(exc.pos - start, 1)
            failures_left -= 1
            if budget <= 0 or failures_left <= 0:
                break
            continue
        except (ValueError, RecursionError):
            budget -= len(text) - start  # cost unknown: assume it read to the end
            failures_left -= 1
            if budget <= 0 or failures_left <= 0:
                break
            continue
        budget -= end - start
        if isinstance(obj, dict):
            found.append(obj)
            resume = end
            if len(found) >= limit or budget <= 0:
                break
    return found


def as_str(value: Any) -> str:
    """A JSON value as text for an id: strings as-is, anything else via json."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def ms_to_s(value: Any) -> float | None:
    """A JSON millisecond count as seconds; None for anything that is not a sane number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) / 1000.0
    except OverflowError:
        return None
