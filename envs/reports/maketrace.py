"""``make --trace`` output: a Makefile's test targets as the tests, when its suite prints
no per-test lines of its own.

Many C projects test with shell recipes under a ``check`` / ``test`` target (``test-basic:
prog; ./test-basic.sh``) that print no ``PASS name`` lines. GNU make's ``--trace`` names
every target whose recipe runs (``Makefile:12: update target 'test-basic' due to: prog``,
or ``target 'x' does not exist``), and ``-k`` goes on past a failing one, whose failure
make prints as ``make[1]: *** [Makefile:12: test-basic] Error 1``. So:

- lines that the ``plain`` format reads (``PASS: name``, ``name ... ok``) win: when there
  are any, they are the report, as without ``--trace``;
- otherwise each traced target whose name says it tests (``test``, ``check`` in it) is a
  test: FAILED when make reports its recipe failed, else PASSED. A target of a build step
  (``prog``, ``lib.o``) is not a test;
- a target whose recipe runs another make (the next lines enter a deeper directory) only
  aggregates the targets it runs, as a TAP parent does: it is not a test itself;
- ids are ``dir/target``, the directory made relative to the outermost directory make
  entered from (the top-level make's own targets carry no directory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.generic import parse_plain
from envs.reports.registry import ParseContext, register

_TRACE = re.compile(r"^\S+:\d+: (?:update target '(?P<a>[^']+)' due to:|"
                    r"target '(?P<b>[^']+)' does not exist)")
_DIR = re.compile(r"^\S*?make(?:\[(?P<level>\d+)\])?: (?P<verb>Entering|Leaving) directory "
                  r"['`](?P<dir>[^']*)'")
_ERROR = re.compile(r"^\S*?make(?:\[(?P<level>\d+)\])?: \*\*\* "
                    r"\[(?:[^\]]*?:\d+: )?(?P<t>[^\]]+)\]")
_TESTY = re.compile(r"test|check", re.I)
_BUILT = re.compile(r"\.(?:o|a|so|lo|la|obj|exe|dll|dylib|c|h|cc|cpp)$")


@dataclass
class _Target:
    name: str
    dir: str
    depth: int
    aggregates: bool = False
    failed: bool = False


@register("make-trace", kind="text",
          description="make --trace: a Makefile's test targets, when nothing prints per-test lines")
def parse_make_trace(text: str, ctx: ParseContext) -> None:
    parse_plain(text, ctx)
    if ctx.result_count:
        return
    stack: list[tuple[int, str]] = []  # (make's level, directory) entered, outermost first
    targets: list[_Target] = []
    for line in lines(text):
        m = _DIR.match(line)
        if m:
            level = int(m["level"] or 0)
            if m["verb"] == "Entering":
                stack.append((level, m["dir"]))
                # the recipe of the last target one level up runs this make: an aggregate
                up = next((t for t in reversed(targets) if t.depth < level), None)
                if up is not None and up.depth == level - 1:
                    up.aggregates = True
            elif stack:
                stack.pop()
            continue
        m = _TRACE.match(line)
        if m:
            level, here = stack[-1] if stack else (0, "")
            targets.append(_Target(m["a"] or m["b"], here, level))
            continue
        m = _ERROR.match(line)
        if m:
            # by make's level, not the directory now entered: make's errors go to stderr,
            # which may reach the log after the lines of stdout that followed them
            level, name = int(m["level"] or 0), m["t"]
            hit = next((t for t in reversed(targets) if t.depth == level and t.name == name),
                       None)
            if hit is not None:
                hit.failed = True
    root = _root(targets)
    for t in targets:
        if t.aggregates or not _TESTY.search(t.name) or _BUILT.search(t.name):
            continue
        rel = t.dir[len(root):].strip("/") if root and t.dir.startswith(root) else ""
        ctx.add(f"{rel}/{t.name}" if rel else t.name,
                TestStatus.FAILED if t.failed else TestStatus.PASSED)


def _root(targets: list[_Target]) -> str:
    """The directory the outermost make ran in: the parent of the shallowest one entered
    (a top-level make without ``-w`` does not print its own)."""
    entered = sorted((t.depth, t.dir) for t in targets if t.dir)
    if not entered:
        return ""
    depth, d = entered[0]
    return d if depth == 0 else d.rsplit("/", 1)[0]
