"""Go: ``go test -json`` events (``gotest-json``) and ``go test -v`` text (``gotest``).

Ids are the test names as Go prints them, ``TestName`` and ``TestName/sub_test`` (Go
turns spaces in subtest names into underscores), without the package, as in SWE-bench
Multilingual. Parents are reported as well as subtests.

A package that fails without any failing test in it (a build failure, a vet error, a
panic in TestMain, a timeout) becomes an ERROR result whose id is the package import
path, plus a ``package-failed`` warning: the failure stays visible, and the report stays
consistent with the non-zero exit code. (Before Go 1.24 a build failure is not an
event at all but a bare ``FAIL\t<pkg> [build failed]`` line in the stream; it counts
the same.) Tests that started in a failed package but never
finished (the test that panicked or hung) are FAILED.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from envs.models import TestStatus
from envs.reports._util import lines
from envs.reports.registry import FAILING, MAX_MESSAGE, ParseContext, ReportParseError, register

_ACTIONS = {"pass": TestStatus.PASSED, "fail": TestStatus.FAILED, "skip": TestStatus.SKIPPED}
_OUTPUT_CAP = MAX_MESSAGE  # per test: the tail of its output is the failure message


@dataclass
class _Package:
    results: dict[str, TestStatus] = field(default_factory=dict)
    running: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    output: dict[str, str] = field(default_factory=dict)
    done: TestStatus | None = None
    build_failed: bool = False
    package_output: str = ""


def _append(buf: str, text: str) -> str:
    buf += text
    return buf[-_OUTPUT_CAP:] if len(buf) > _OUTPUT_CAP else buf


def _message(output: str | None) -> str | None:
    """A test's output without go's own progress lines (=== RUN, --- FAIL: ...)."""
    if not output:
        return None
    kept = [
        line
        for line in output.split("\n")
        if not line.lstrip().startswith(("=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- "))
    ]
    return "\n".join(kept).strip() or None


def _finish_packages(packages: dict[str, _Package], ctx: ParseContext, *, truncated: bool) -> None:
    for name, pkg in packages.items():
        unfinished = [t for t in pkg.running if t not in pkg.results]
        if pkg.done is TestStatus.FAILED:
            for test in unfinished:
                ctx.add(
                    test, TestStatus.FAILED, message="no result: the package failed while it ran"
                )
                pkg.results[test] = TestStatus.FAILED
        elif unfinished and truncated:
            ctx.warn("truncated", f"{len(unfinished)} tests in {name} never finished; left out")
        if pkg.done is TestStatus.FAILED and not any(s in FAILING for s in pkg.results.values()):
            why = "build failed" if pkg.build_failed else "failed without a failing test"
            ctx.add(name, TestStatus.ERROR, message=(pkg.package_output.strip() or why))
            ctx.warn("package-failed", f"package {name}: {why}")


# Before Go 1.24, ``go test -json`` writes a package that fails to build as a bare text
# line on stdout, outside the event stream: "FAIL\t<pkg> [build failed]".
_BARE_BUILD_FAIL = re.compile(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]$")
_TEXT_RESULT = re.compile(r"^\s*--- (?:PASS|FAIL|SKIP): ")


@register("gotest-json", kind="structured", description="go test -json event stream")
def parse_gotest_json(text: str, ctx: ParseContext) -> None:
    packages: dict[str, _Package] = {}
    events = 0
    bad = 0
    bare_build_failures = 0
    text_results = False  # -v text, not a -json stream
    for line in lines(text, ansi=False, max_len=None):  # one event per line, however long
        line = line.strip()
        if not line.startswith("{"):
            m = _BARE_BUILD_FAIL.match(line)
            if m:
                pkg = packages.setdefault(m.group(1), _Package())
                pkg.done = TestStatus.FAILED
                pkg.build_failed = True
                bare_build_failures += 1
            elif not text_results and _TEXT_RESULT.match(line):
                text_results = True
            continue  # go's own stderr lines interleaved with the stream
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            continue
        if not isinstance(event, dict):
            continue
        action = event.get("Action")
        if not isinstance(action, str):
            continue
        events += 1
        pkg_name = event.get("Package") or event.get("ImportPath") or ""
        if not isinstance(pkg_name, str):
            pkg_name = str(pkg_name)
        # Go 1.24 build events name "pkg [pkg.test]": the same package
        pkg_name = pkg_name.split(" [", 1)[0]
        pkg = packages.setdefault(pkg_name, _Package())
        test = event.get("Test")
        if action in ("build-output", "build-fail"):
            pkg.build_failed = pkg.build_failed or action == "build-fail"
            if isinstance(event.get("Output"), str):
                pkg.package_output = _append(pkg.package_output, event["Output"])
            continue
        if not isinstance(test, str) or not test:
            if action in ("pass", "fail", "skip"):
                pkg.done = _ACTIONS[action]
                if event.get("FailedBuild"):
                    pkg.build_failed = True
            elif action == "output" and isinstance(event.get("Output"), str):
                out = event["Output"]
                if "[build failed]" in out or "[setup failed]" in out:
                    pkg.build_failed = True
                pkg.package_output = _append(pkg.package_output, out)
            continue
        if action == "run":
            pkg.running[test] = None
        elif action == "output" and isinstance(event.get("Output"), str):
            pkg.output[test] = _append(pkg.output.get(test, ""), event["Output"])
        elif action in _ACTIONS:
            status = _ACTIONS[action]
            pkg.results[test] = status
            pkg.running.setdefault(test, None)
            message = _message(pkg.output.get(test)) if status is not TestStatus.PASSED else None
            ctx.add(test, status, duration=event.get("Elapsed"), message=message)
    if events == 0 and (bare_build_failures == 0 or text_results):
        # (a stream of nothing but build failures is still a -json report: every
        # package failed to build; -v text, with its "--- PASS:" lines, is not)
        raise ReportParseError("gotest-json: no go test -json events found")
    truncated = bad > 0
    if truncated:
        ctx.warn("truncated", f"{bad} lines that start like an event are not valid JSON")
    _finish_packages(packages, ctx, truncated=truncated)


_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (.+) \((\d+(?:\.\d+)?)s\)$")
_RUN = re.compile(r"^\s*=== RUN\s+(\S.*)$")
_PKG_OK = re.compile(r"^ok\s+(\S+)")
_PKG_FAIL = re.compile(r"^FAIL\s+(\S+)(?:\s+\[(build failed|setup failed)\])?(?:\s+[\d.]+s)?$")
_TEXT_STATUS = {"PASS": TestStatus.PASSED, "FAIL": TestStatus.FAILED, "SKIP": TestStatus.SKIPPED}


@register("gotest", kind="text", description="go test -v text output")
def parse_gotest(text: str, ctx: ParseContext) -> None:
    # Package lines come after the package's tests, so tests collect in `current`
    # until an "ok"/"FAIL <pkg>" line says which package they belonged to.
    packages: dict[str, _Package] = {}
    current = _Package()
    for line in lines(text):
        m = _RESULT.match(line)
        if m:
            word, test, seconds = m.groups()
            status = _TEXT_STATUS[word]
            current.results[test] = status
            current.running.setdefault(test, None)
            ctx.add(test, status, duration=seconds)
            continue
        m = _RUN.match(line)
        if m:
            current.running[m.group(1)] = None
            continue
        m = _PKG_FAIL.match(line)
        if m and m.group(1) != "FAIL":
            current.done = TestStatus.FAILED
            current.build_failed = m.group(2) is not None
            packages[m.group(1)] = current
            current = _Package()
            continue
        m = _PKG_OK.match(line)
        if m:
            current.done = TestStatus.PASSED
            packages[m.group(1)] = current
            current = _Package()
    _finish_packages(packages, ctx, truncated=False)
