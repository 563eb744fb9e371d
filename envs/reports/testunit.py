"""test-unit verbose output (``ruby -Itest test/x.rb -v``, ``rake test TESTOPTS=-v``).

test-unit (Ruby's bundled ``test/unit``) prints, with ``-v`` / ``--verbose=verbose``, one
line per test case and one per test, indented two spaces a level::

    TC_Set:
      test_aref:\t\t\t\t\t.: (0.000123)
      test_fail:\t\t\t\t\tF
    ===============================================================
    Failure: test_fail(TC_Set)
    ...
    ===============================================================
    : (0.001720)
      ctx:
        test: with spaces:\t\t\t.: (0.000217)

The marker is ``.`` (pass), ``F`` (failure), ``E`` (error), ``O`` (omission) or ``P``
(pending) -- both SKIPPED -- or ``N`` (a notification, the test goes on); a fault is
followed by its block between ``=`` rules, whose first line (``Failure:``, ``Error:``,
``Omission:``, ``Pending:``, ``Notification:``) decides the status, and the test ends at
``: (seconds)``. What a test prints lands between its name and its marker.

The id is ``ClassName#test_name``. A nested case prints its name without its parent's
prefix (a ``sub_test_case "ctx"`` of ``TC_Set`` as ``ctx``, a subclass ``TC_Set::Sub`` as
``Sub``), so the full name is the parent's joined with ``::`` unless the printed name is
already qualified. Without ``-v`` (progress dots) only the fault blocks name their tests:
those are reported, the passes cannot be.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import ParseContext, register

_SUITE = re.compile(r"^(?P<ind> *)(?P<name>[^\s\t][^\t]*?):$")
_TEST = re.compile(r"^(?P<ind> *)(?P<name>[^\s\t][^\t]*?):\t+(?P<rest>.*)$")
_DONE = re.compile(r": \((?P<t>\d{1,12}(?:\.\d{1,12})?)\)$")
_RULE = re.compile(r"^={20,}$")
_HEADER = re.compile(r"^(?P<kind>Failure|Error|Omission|Pending|Notification):\s?(?P<rest>.*)$")
# "Failure: test_x(TC_A)", "Error: test_x(TC_A): RuntimeError: boom",
# "Omission: why [test_x(TC_A)]", "Pending: test_x(TC_A): why"
_NAMED = re.compile(r"^(?P<test>[^\s(][^(]*?)\((?P<cls>[A-Za-z_][\w:]*)\)(?::|$)")
_NAMED_LAST = re.compile(r"\[(?P<test>[^\[\]()]+?)\((?P<cls>[A-Za-z_][\w:]*)\)\]$")
_SUMMARY = re.compile(r"^(?P<n>\d{1,9}) tests, \d{1,12} assertions, \d{1,9} failures, "
                      r"\d{1,9} errors, \d{1,9} pendings, \d{1,9} omissions")
_KIND = {
    "Failure": TestStatus.FAILED,
    "Error": TestStatus.ERROR,
    "Omission": TestStatus.SKIPPED,
    "Pending": TestStatus.SKIPPED,
}
_RANK = {TestStatus.ERROR: 3, TestStatus.FAILED: 2, TestStatus.SKIPPED: 1}


def _worse(a: TestStatus | None, b: TestStatus) -> TestStatus:
    return b if a is None or _RANK.get(b, 0) > _RANK.get(a, 0) else a


@register("testunit", kind="text", description="test-unit -v output", aliases=("test-unit",))
def parse_testunit(text: str, ctx: ParseContext) -> None:
    stack: list[tuple[int, str]] = []  # (indent, full case name)
    pending: str | None = None
    status: TestStatus | None = None  # the worst fault of the pending test so far
    in_block = header_next = False
    verbose = False
    faulted: dict[str, TestStatus] = {}  # from fault blocks, for output without -v
    expected = 0

    def finish(done: bool, seconds: str | None = None) -> None:
        nonlocal pending, status
        if pending is not None and (done or status is not None):
            ctx.add(pending, status or TestStatus.PASSED, duration=seconds)
        pending, status = None, None

    for line in lines(text):
        if _RULE.match(line):
            in_block = not in_block
            header_next = in_block
            continue
        if in_block:
            if header_next:
                header_next = False
                m = _HEADER.match(line)
                if m and m["kind"] in _KIND:
                    kind = _KIND[m["kind"]]
                    if pending is not None:
                        status = _worse(status, kind)
                    else:
                        named = _NAMED_LAST.search(m["rest"]) or _NAMED.match(m["rest"])
                        if named:
                            tid = f"{named['cls']}#{named['test'].strip()}"
                            faulted[tid] = _worse(faulted.get(tid), kind)
            continue
        m = _TEST.match(line)
        if m:
            finish(False)
            verbose = True
            indent = len(m["ind"])
            while stack and stack[-1][0] >= indent:
                stack.pop()
            name = m["name"].strip()
            pending = f"{stack[-1][1]}#{name}" if stack else name
            rest = m["rest"]
            d = _DONE.search(rest)
            if d:
                finish(True, d["t"])
            continue
        if pending is not None:
            d = _DONE.search(line)
            if d:
                finish(True, d["t"])
            continue
        m = _SUITE.match(line)
        if m:
            indent = len(m["ind"])
            while stack and stack[-1][0] >= indent:
                stack.pop()
            name = m["name"].strip()
            if stack and "::" not in name:
                name = f"{stack[-1][1]}::{name}"
            stack.append((indent, name))
            continue
        m = _SUMMARY.match(line)
        if m:
            expected += int(m["n"])
    finish(False)
    if not verbose:
        for tid, st in faulted.items():
            ctx.add(tid, st)
    if expected and verbose and ctx.result_count < expected:
        ctx.warn("missing", f"the summary counts {expected} tests, {ctx.result_count} were "
                 "reported")
