"""TAP 13/14: ``node --test``, node-tap, prove / Test::More, tape.

- ``ok N - name`` PASSED, ``not ok N - name`` FAILED; ``# SKIP`` SKIPPED; ``# TODO`` on
  a failing test is an expected failure (XFAIL), on a passing one PASSED.
- Subtests are indented blocks that precede their parent's own line. Ids are the name
  path joined with `` > `` (``suite > inner > test``), without the test file's own
  wrapper subtest (``/testbed/test/x.test.js``, which node 18 and node-tap add and newer
  node does not, as in the Jest convention), and only leaves are reported:
  a parent's line only aggregates its children. The exception is a parent that fails
  while none of its children do (a failing before/after hook): then the parent is
  reported FAILED too, so the failure is not lost.
- YAML diagnostic blocks (``---`` ... ``...``) are skipped; ``duration_ms`` and
  ``error``/``message`` are kept.
- prove's ``t/foo.t ..`` headers prefix the file (``t/foo.t > name``); in prove's
  non-verbose form, the file's verdict line is its only result.
- ``Bail out!`` stops the stream; tests after it are absent (graded as failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import FAILING, ParseContext, ReportParseError, register

_POINT = re.compile(
    r"^(?P<indent>[ \t]*)(?P<ok>not ok|ok)(?=\s|$)(?:[ \t]+(?P<num>\d+))?(?P<rest>.*)$"
)
_SUBTEST = re.compile(r"^(?P<indent>[ \t]*)# Subtest:?[ \t]*(?P<name>.*)$")
_PLAN = re.compile(r"^[ \t]*1\.\.(\d{1,18})(?!\d)")  # int() refuses >4300 digits
_BAIL = re.compile(r"^[ \t]*Bail out!\s*(.*)$", re.I)
_VERSION = re.compile(r"^[ \t]*TAP version \d+", re.I)
_YAML_START = re.compile(r"^(?P<indent>[ \t]*)---\s*$")
_PROVE_FILE = re.compile(r"^(?P<file>\S+?)\s\.{2,}\s*(?P<rest>.*)$")
_PROVE_VERDICT = re.compile(
    r"^(ok|skipped:?.*|Failed \d+/\d+ subtests.*|Dubious,.*|No subtests run.*|Bad plan\..*)$"
)


_SCRIPT_PATH = re.compile(r"^\S*/\S*\.[cm]?[jt]sx?$")
_UNESCAPE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_BLOCK = "\0block"  # placeholder while a YAML block scalar's first line is pending


@dataclass
class _Leaf:
    indent: int
    rpath: list[str]  # the name path, leaf first: lifting under a parent is an append
    status: TestStatus
    message: str | None = None
    duration: float | None = None


def _width(ws: str) -> int:
    return len(ws.expandtabs(4))


def _split_directive(rest: str) -> tuple[str, str]:
    """Description and directive: the description ends at the first unescaped ``#``."""
    out = []
    i = 0
    while i < len(rest):
        c = rest[i]
        if c == "\\" and i + 1 < len(rest):
            # node's tapEscape: \\ \# and \n \t \r \b \f \v for control characters
            out.append(_UNESCAPE.get(rest[i + 1], rest[i + 1]))
            i += 2
            continue
        if c == "#":
            return "".join(out), rest[i + 1 :].replace("\\#", "#").strip()
        out.append(c)
        i += 1
    return "".join(out), ""


def _status(ok: bool, directive: str) -> tuple[TestStatus, str | None]:
    word = directive.split(maxsplit=1)[0].lower() if directive else ""
    reason = directive[len(word) :].strip() or None if word else None
    if word.startswith("skip"):
        return TestStatus.SKIPPED, reason
    if word == "todo":
        return (TestStatus.PASSED if ok else TestStatus.XFAIL), reason
    return (TestStatus.PASSED if ok else TestStatus.FAILED), None


def _yaml_value(line: str, key: str) -> str | None:
    m = re.match(rf"^\s*{key}:\s*(.*?)\s*$", line)
    if not m:
        return None
    value = m.group(1)
    if value in ("|", "|-", ">", ">-", ""):
        return None
    return value.strip("'\"")


@register("tap", kind="structured", description="TAP 13/14 (node --test, node-tap, prove)")
def parse_tap(text: str, ctx: ParseContext) -> None:
    pending: list[_Leaf] = []
    headers: dict[int, str] = {}  # indent -> name from "# Subtest: name"
    prefix: list[str] = []  # prove's current test file
    verdict_done = False
    saw_tap = False
    last: _Leaf | None = None  # the leaf a following YAML block describes
    after_point = False  # a YAML block may only follow a test point
    yaml_indent: int | None = None
    top_level: int | None = None
    points: dict[int, int] = {}
    plans: dict[int, int] = {}
    bailed = False

    def flush() -> None:
        for leaf in pending:
            _emit(ctx, leaf, headers, prefix)
        pending.clear()

    for line in lines(text):
        indent = _width(line[: len(line) - len(line.lstrip())])
        if yaml_indent is not None:
            stripped = line.strip()
            if stripped == "...":
                yaml_indent = None
                continue
            if not stripped or indent >= yaml_indent:
                if last is not None:
                    _read_yaml_line(line, last)
                continue
            yaml_indent = None  # dedented without "...": the block is over
        m = _YAML_START.match(line)
        if m and after_point:
            yaml_indent = indent
            after_point = False
            continue
        after_point = False
        m = _BAIL.match(line)
        if m:
            saw_tap = True
            ctx.warn("bail-out", f"Bail out! {m.group(1)}".strip())
            bailed = True
            break
        m = _PROVE_FILE.match(line)
        if (
            m
            and indent == 0
            and not line.startswith("#")
            and ("/" in m["file"] or m["file"].endswith(".t"))
        ):
            flush()
            prefix = [m["file"]]
            verdict_done = False
            saw_tap = True
            line = m["rest"].strip()  # "t/x.t .. ok": the verdict may share the line
            if not line:
                continue
        if prefix and not verdict_done and indent == 0 and _PROVE_VERDICT.match(line):
            # prove's verdict on the file: the only result without -v, and the failure
            # itself when the script died before reporting a failing test
            verdict_done = True
            status = (
                TestStatus.PASSED
                if line == "ok"
                else TestStatus.SKIPPED
                if line.startswith("skipped")
                else TestStatus.FAILED
            )
            failing = any(leaf.status in FAILING for leaf in pending)  # this file's leaves
            if (status is TestStatus.FAILED and not failing) or (
                status is not TestStatus.FAILED and not pending
            ):
                ctx.add(prefix[0], status, message=None if status is TestStatus.PASSED else line)
            continue
        m = _SUBTEST.match(line)
        if m:
            saw_tap = True
            headers[indent] = m["name"]
            continue
        if _VERSION.match(line):
            saw_tap = True
            continue
        m = _PLAN.match(line)
        if m:
            saw_tap = True
            plans[indent] = plans.get(indent, 0) + int(m.group(1))
            continue
        m = _POINT.match(line)
        if not m:
            continue
        saw_tap = True
        after_point = True
        points[indent] = points.get(indent, 0) + 1
        top_level = indent if top_level is None else min(top_level, indent)
        desc, directive = _split_directive(m["rest"])
        desc = desc.strip()
        if desc.startswith("- "):
            desc = desc[2:]
        elif desc == "-":
            desc = ""
        name = desc.strip() or (m["num"] or "")
        status, reason = _status(m["ok"] == "ok", directive)
        # pending stays sorted by indent, so this point's subtests are a suffix of it
        split = len(pending)
        while split and pending[split - 1].indent > indent:
            split -= 1
        children = pending[split:]
        if children:
            del pending[split:]
            for child in children:
                child.indent = indent
                child.rpath.append(name)
            pending.extend(children)
            last = None
            if status in FAILING and not any(c.status in FAILING for c in children):
                last = _Leaf(indent, [name], status)  # its YAML says why (a hook failed)
                pending.append(last)
        else:
            last = _Leaf(indent, [name], status, reason)
            pending.append(last)
        for level in [k for k in headers if k >= indent]:
            del headers[level]
    if not saw_tap:
        raise ReportParseError("tap: no TAP lines found")
    if pending and any(k < max(leaf.indent for leaf in pending) for k in headers) and not bailed:
        ctx.warn("truncated", "the TAP stream ends inside a subtest")
    flush()
    top = top_level or 0
    if plans.get(top) and not bailed and plans[top] != points.get(top, 0):
        ctx.warn(
            "plan-mismatch",
            f"the plan says {plans[top]} tests, the stream has {points.get(top, 0)}",
        )


def _read_yaml_line(line: str, leaf: _Leaf) -> None:
    if leaf.message == _BLOCK:  # the first line of an "error: |-" block scalar
        if line.strip():
            leaf.message = line.strip()
        return
    for key in ("error", "message"):
        if leaf.message is None and re.match(rf"^\s*{key}:\s*[|>]-?\s*$", line):
            leaf.message = _BLOCK
            return
        value = _yaml_value(line, key)
        if value and leaf.message is None:
            leaf.message = value
    value = _yaml_value(line, "duration_ms")
    if value:
        try:
            leaf.duration = float(value) / 1000.0
        except ValueError:
            pass


def _emit(
    ctx: ParseContext,
    leaf: _Leaf,
    headers: dict[int, str],
    prefix: list[str],
) -> None:
    # Headers still open are the "# Subtest:" lines of parents that never closed (a
    # truncated stream): they name the leaf's ancestors. A closed parent's header is gone.
    path = [headers[k] for k in sorted(headers) if k < leaf.indent] + leaf.rpath[::-1]
    if len(path) > 1 and _SCRIPT_PATH.match(path[0]):
        # node --test (18; and node-tap) wraps each test file's tests in a subtest named
        # by the file's path, newer node does not: ids leave it out, so both agree
        path = path[1:]
    message = None if leaf.message == _BLOCK else leaf.message
    ctx.add(" > ".join(prefix + path), leaf.status, duration=leaf.duration, message=message)
