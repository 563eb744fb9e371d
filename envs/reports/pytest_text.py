"""pytest's terminal output: the ``-rA`` short test summary and ``-v`` progress lines.

Ids are pytest node ids, whole: ``tests/test_x.py::TestC::test_p[a b-ü]``. (SWE-bench's
parser splits lines on whitespace, which is why some of its expected ids are cut at a
space inside a parameter; grading prefix-matches those, see envs/grading.py.)

- Summary lines ``PASSED id``, ``FAILED id - message``, ``ERROR id``, ``XFAIL id - reason``,
  ``XPASS id`` (-> PASSED; a strict XPASS is already reported as FAILED), and
  ``SKIPPED [N] file:line: reason``, which names no test and so is not a result.
- ``-v`` lines ``id PASSED [ 50%]``, ``id SKIPPED (reason) [ 75%]`` and xdist's
  ``[gw0] [ 50%] PASSED id``.
- When the log has a "short test summary info" header, summary-style lines are read only
  inside that section, so a test that prints "PASSED something" cannot add a result.
- A test that passes and then errors in teardown is listed twice; ERROR is kept.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_WORDS = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
_STATUS = {
    "PASSED": TestStatus.PASSED,
    "FAILED": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "SKIPPED": TestStatus.SKIPPED,
    "XFAIL": TestStatus.XFAIL,
    "XPASS": TestStatus.PASSED,
}
_SUMMARY = re.compile(rf"^({_WORDS}) (.+)$")
_SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+\s*$")
_SKIP_LOCATION = re.compile(r"^\[\d+\] ")
_PERCENT = re.compile(r"\[\s*\d+%\]")
_VERBOSE_WORD = re.compile(rf" ({_WORDS})(?= \(|$)")
_XDIST = re.compile(rf"^\[gw\d+\]\s+(?:\[\s*\d+%\]\s+)?(?P<st>{_WORDS}) (?P<id>\S.*)$")
_INHERITED = re.compile(r" <- \S+$")


def _is_section_rule(line: str) -> bool:
    return line.startswith("=") and line.endswith("=")


def parse_verbose(line: str) -> tuple[str, str, str | None] | None:
    """``nodeid STATUS [ 50%]`` / ``nodeid SKIPPED (reason) [ 75%]`` -> (id, word, reason).

    Done by hand rather than one regex: the obvious regex backtracks quadratically on
    long lines full of status words, and test output is attacker-controlled."""
    if not line or line[0].isspace() or "::" not in line:
        return None
    body = line
    if line.endswith("%]"):
        start = line.rfind("[")
        if start > 0 and _PERCENT.fullmatch(line[start:]):
            body = line[:start].rstrip()
    first_sep = body.find("::")
    if first_sep < 0:
        return None
    closes = body.endswith(")")
    for word in _VERBOSE_WORD.finditer(body, first_sep + 2):
        end = word.end()
        if end == len(body):
            return body[: word.start()], word.group(1), None
        if closes and body.startswith(" (", end):
            return body[: word.start()], word.group(1), body[end + 2 : -1]
    return None


def split_id(rest: str) -> tuple[str, str | None]:
    """Split ``nodeid - message`` at the first `` - `` outside brackets (parameters may
    contain `` - ``); an old-style ``XPASS nodeid reason`` ends the id at the first space
    outside brackets after the last ``::``."""
    depth = 0
    i = 0
    n = len(rest)
    while i < n:
        c = rest[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif depth == 0 and rest.startswith(" - ", i):
            return rest[:i], rest[i + 3 :]
        i += 1
    node = rest
    tail = node.rfind("::")
    if tail >= 0:
        depth = 0
        for j in range(tail, len(node)):
            c = node[j]
            if c == "[":
                depth += 1
            elif c == "]":
                depth = max(0, depth - 1)
            elif depth == 0 and c.isspace():
                return node[:j], node[j + 1 :]
    return node, None


@register("pytest", kind="text", description="pytest -rA / -v terminal output")
def parse_pytest(text: str, ctx: ParseContext) -> None:
    ctx.expect_repeats = True  # a test's -v line and its summary line are one observation
    all_lines = list(lines(text))
    has_header = any(_SUMMARY_HEADER.match(line) for line in all_lines)
    in_summary = not has_header
    location_skips = 0
    verbose_seen = False
    for line in all_lines:
        if _SUMMARY_HEADER.match(line):
            in_summary = True
            continue
        if has_header and in_summary and _is_section_rule(line):
            in_summary = False
            continue
        m = _XDIST.match(line)
        if m:
            verbose_seen = True
            node, _ = split_id(m["id"])
            ctx.add(_INHERITED.sub("", node), _STATUS[m["st"]])
            continue
        if in_summary:
            m = _SUMMARY.match(line)
            if m:
                word, rest = m.groups()
                if word == "SKIPPED" and _SKIP_LOCATION.match(rest):
                    location_skips += 1
                    continue
                node, message = split_id(rest)
                ctx.add(node, _STATUS[word], message=message)
                continue
        verbose = None if _SUMMARY.match(line) else parse_verbose(line)
        if verbose is not None:
            verbose_seen = True
            node, word, reason = verbose
            ctx.add(_INHERITED.sub("", node), _STATUS[word], message=reason)
    if location_skips and not verbose_seen:
        ctx.warn(
            "no-node-id",
            f"{location_skips} 'SKIPPED [N] file:line' summary lines name no test; "
            "run with -v (or use junit) to get skipped tests by id",
        )
