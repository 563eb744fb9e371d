"""Rust: libtest's text output, as ``cargo test`` prints it (``libtest``).

Ids are the test names exactly as libtest prints them, as in SWE-bench Multilingual's cargo
parser: ``tests::parses_units`` (a unit test in ``mod tests``), ``parses_units`` (an
integration test in ``tests/*.rs``), ``src/lib.rs - parse (line 12)`` (a doc-test). The test
mode libtest appends after the name (`` - should panic``, `` - compile fail``, and
`` - compile`` for ``no_run`` doc-tests) is not part of it: the ``failures:`` list and
``cargo test -- --exact NAME`` use the bare name.

``cargo test`` runs one binary after another (``Running unittests src/lib.rs (...)``,
``Running tests/it.rs (...)``, ``Doc-tests crate``), so the output is read binary by
binary. ``ok`` is PASSED, ``FAILED`` FAILED, ``ignored`` (``ignored, <reason>``) SKIPPED,
and a ``bench:`` line PASSED. A failure's message is its ``---- name stdout ----`` block
(the panic message), up to the stack backtrace. The same name in two binaries (a ``smoke``
test in two files under ``tests/``) is one id, and the worst status wins.

- With ``--test-threads=1`` libtest prints ``test name ... `` before the test runs, so what
  the test prints under ``--nocapture`` lands between the name and the status
  (``test a ... hello`` then ``ok`` on a later line). The status is taken from a later line
  that is only a status, and what came before it is a failure's message; failing that,
  from the binary's ``failures:`` list once its summary has been printed.
- A binary that does not compile runs no tests: ``error: could not compile`` is a
  ``package-failed`` warning, with no result. A binary that crashes (an abort, a stack
  overflow) before its summary is a ``package-failed`` warning too, and the test it was
  running, when libtest had named it, is FAILED.
- Without ``--no-fail-fast`` cargo stops at the first binary with a failing test: a
  ``bail-out`` warning says that later binaries, if any, did not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import MAX_MESSAGE, ParseContext, register

# cargo's own lines (stderr, right-aligned to 12 columns) and libtest's (stdout)
_RUNNING = re.compile(r"^\s*Running (\S.*)$")
_DOC_TESTS = re.compile(r"^\s*Doc-tests (\S+)$")
_RUNNING_N = re.compile(r"^running \d+ tests?$")
_SUMMARY = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d{1,18}) passed; (\d{1,18}) failed; (\d{1,18}) ignored;"
    r" (\d{1,18}) measured;"
)
_BLOCK = re.compile(r"^---- (.+) std(?:out|err) ----$")
_STATUS = re.compile(r"^(ok|FAILED|ignored|bench:)(.*)$")
_TIME = re.compile(r"^ <(\d{1,18}(?:\.\d{1,18})?)s>$")  # --report-time (unstable)
_NOT_COMPILED = re.compile(r"^error: could not compile (.+)$")
# cargo's words after a binary that failed, and after one that died without a summary
_BINARY_FAILED = ("error: test failed, to rerun pass", "error: doctest failed, to rerun pass")
_CRASHED = "process didn't exit successfully"
_NO_FAIL_FAST = re.compile(r"^error: \d+ targets? failed:$")
_MODES = (" - should panic", " - compile fail", " - compile")
_WORDS = {"ok": TestStatus.PASSED, "FAILED": TestStatus.FAILED, "bench:": TestStatus.PASSED}


@dataclass
class _Result:
    status: TestStatus
    duration: str | None = None
    message: str | None = None


@dataclass
class _Binary:
    name: str
    results: dict[str, _Result] = field(default_factory=dict)
    # named, status not seen yet: what the test printed since (--nocapture)
    pending: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)  # the ---- name stdout ---- blocks
    listed: dict[str, None] = field(default_factory=dict)  # the final "failures:" list
    counted: int | None = None  # tests its summary line counts; None: no summary
    crashed: bool = False


def _status(rest: str) -> _Result | None:
    """``ok``, ``FAILED <0.01s>``, ``ignored, reason``, ``bench: 12 ns/iter`` -> a result."""
    m = _STATUS.match(rest)
    if not m:
        return None
    word, tail = m.groups()
    if word == "ignored":
        if tail and not tail.startswith(", "):
            return None
        return _Result(TestStatus.SKIPPED, message=tail[2:] or None)
    if word == "bench:":
        return _Result(TestStatus.PASSED)
    if not tail:
        return _Result(_WORDS[word])
    t = _TIME.match(tail)
    return _Result(_WORDS[word], duration=t.group(1)) if t else None


def _test_line(line: str) -> tuple[str, str] | None:
    """``test NAME ... REST`` -> (NAME without its test mode, REST); found by hand, not by a
    regex, so that a line full of ``...`` costs linear time."""
    if not line.startswith("test "):
        return None
    cut = line.find(" ...", 5)
    if cut < 0:
        return None
    after = line[cut + 4 :]
    if after and after[0] != " ":
        return None
    name = line[5:cut]
    for mode in _MODES:
        if name.endswith(mode):
            name = name[: -len(mode)]
            break
    # benches pad their names to one width
    return name.strip(), after[1:]


class _Reader:
    """The state of one pass over the output: the binary being read and where in it."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.binary = _Binary("test binary")
        self.started = False  # the current binary printed "running N tests"
        self.next_name: str | None = None  # from cargo's "Running ..." line
        self.count = 0  # binaries started
        # "tests": result lines; "section": just after "failures:"/"successes:";
        # "blocks": inside ---- name stdout ---- blocks; "list": the names after them
        self.mode = "tests"
        self.failures = False  # the section is "failures:" (not --show-output's "successes:")
        self.block: str | None = None  # the failing test whose block is being read
        self.stopped_after: str | None = None  # cargo gave up after this binary's failure
        self.no_fail_fast = False

    def feed(self, line: str) -> None:
        m = _RUNNING.match(line)
        d = None if m else _DOC_TESTS.match(line)
        if m or d:
            self.finish()
            # "unittests src/lib.rs (target/debug/deps/x-1f2e)" -> "unittests src/lib.rs"
            self.next_name = m.group(1).split(" (", 1)[0] if m else f"Doc-tests {d.group(1)}"
            self.stopped_after = None  # cargo went on to the next binary
            return
        if self.mode == "blocks" and self._in_block(line):
            return
        if self.mode == "section" and self._after_header(line):
            return
        if self.mode == "list":
            if line.startswith("    ") and line.strip():
                self.binary.listed[line.strip()] = None
                return
            if line.strip():
                self.mode = "tests"
        self._tests(line)

    def _in_block(self, line: str) -> bool:
        """Inside the failures' blocks only section headers count: a failing test's
        captured output may itself look like libtest's (a test that runs cargo)."""
        if line in ("failures:", "successes:"):
            self._header(line)
            return True
        m = _BLOCK.match(line)
        if m:
            self.block = m.group(1) if self.failures else None
            if self.block is not None:
                self.binary.messages.setdefault(self.block, "")
            return True
        if self.block is not None:
            if line.startswith("stack backtrace:"):
                self.block = None  # the panic message is what matters; frames are noise
                return True
            text = self.binary.messages[self.block]
            if len(text) < MAX_MESSAGE:
                self.binary.messages[self.block] = text + line + "\n"
        return True

    def _after_header(self, line: str) -> bool:
        if not line:
            return True
        if _BLOCK.match(line):
            self.mode = "blocks"
            return self._in_block(line)
        if line.startswith("    "):
            self.mode = "list" if self.failures else "tests"
            if self.failures:
                self.binary.listed[line.strip()] = None
            return True
        self.mode = "tests"
        return False

    def _header(self, line: str) -> None:
        self.mode = "section"
        self.failures = line == "failures:"
        self.block = None

    def _tests(self, line: str) -> None:
        b = self.binary
        if _RUNNING_N.match(line):
            if self.started:  # stdout alone: no "Running" line between two binaries
                self.finish()
            self.count += 1
            self.binary.name = self.next_name or f"test binary {self.count}"
            self.next_name = None
            self.started = True
            return
        if line in ("failures:", "successes:"):
            self._header(line)
            return
        m = _SUMMARY.match(line)
        if m:
            b.counted = sum(int(n) for n in m.groups())
            return
        parsed = _test_line(line)
        if parsed is not None:
            name, rest = parsed
            result = _status(rest)
            if result is not None:
                b.results[name] = result
                b.pending.pop(name, None)
            else:
                b.pending[name] = rest + "\n" if rest else ""
            self._note_failure(rest)
            return
        if b.pending:
            name = next(reversed(b.pending))
            result = _status(line)
            if result is None:
                if len(b.pending[name]) < MAX_MESSAGE:
                    b.pending[name] += line + "\n"
            else:  # the status of the test whose own output broke its line
                output = b.pending.pop(name)
                if result.status is TestStatus.FAILED:
                    result.message = output
                b.results[name] = result
                return
        self._note_failure(line)
        m = _NOT_COMPILED.match(line)
        if m:
            what = m.group(1).split(" due to ", 1)[0]
            self.ctx.warn("package-failed", f"cargo could not compile {what}; its tests did not run")
        elif _NO_FAIL_FAST.match(line):
            self.no_fail_fast = True

    def _note_failure(self, text: str) -> None:
        if text.startswith(_BINARY_FAILED):
            self.stopped_after = self.binary.name
        if _CRASHED in text and self.binary.counted is None and self.started:
            self.binary.crashed = True

    def finish(self) -> None:
        """Record the binary read so far and start the next one."""
        b, ctx = self.binary, self.ctx
        for name in b.listed:  # libtest's own list of what failed has the last word
            old = b.results.get(name)
            if old is None or old.status is not TestStatus.FAILED:
                b.results[name] = _Result(
                    TestStatus.FAILED,
                    duration=old.duration if old else None,
                    message=b.pending.get(name),
                )
        unresolved = [t for t in b.pending if t not in b.results]
        for name in unresolved:
            if b.crashed:
                b.results[name] = _Result(
                    TestStatus.FAILED,
                    message="the test binary crashed while this test ran\n" + b.pending[name],
                )
            elif b.counted is not None:
                # the summary is printed after every test finished, and every failure is
                # in the failures list: a test not in it did not fail
                b.results[name] = _Result(TestStatus.PASSED)
        if unresolved and not b.crashed and b.counted is None:
            ctx.warn("truncated", f"{b.name}: {len(unresolved)} tests never finished; left out")
        if b.crashed:
            ctx.warn("package-failed", f"{b.name} crashed before its summary; results may be missing")
        elif b.counted is not None and len(b.results) < b.counted:
            ctx.warn(
                "truncated",
                f"{b.name}: its summary counts {b.counted} tests, {len(b.results)} were read",
            )
        for name, r in b.results.items():
            message = r.message
            if r.status is TestStatus.FAILED and b.messages.get(name, "").strip():
                message = b.messages[name]
            ctx.add(name, r.status, duration=r.duration, message=message)
        self.binary = _Binary("test binary")
        self.started = False
        self.mode = "tests"
        self.block = None

    def close(self) -> None:
        self.finish()
        if self.stopped_after is not None and not self.no_fail_fast:
            self.ctx.warn(
                "bail-out",
                f"cargo stopped after a failure in {self.stopped_after}; later test binaries, "
                "if any, did not run (cargo test --no-fail-fast runs them all)",
            )


@register("libtest", kind="text", description="Rust libtest output (cargo test)")
def parse_libtest(text: str, ctx: ParseContext) -> None:
    reader = _Reader(ctx)
    for line in lines(text):
        reader.feed(line)
    reader.close()
