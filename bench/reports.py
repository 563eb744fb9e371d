"""Report parsing time on hostile and large inputs: how it scales, side by side in one run.

    .venv/bin/python bench/reports.py [--n 6000] [--large-n 60000] [--scale 10] [--repeat 5]
        [--max-sample-s 2] [--only FMT ...] [--json]

Inputs: the hostile reports of tests/envs/reports/hostile.py (each was quadratic or worse in
some draft of a parser; the test there checks what they parse to, without time) and large
well-formed reports of the common formats (pytest -v with its -rA summary, JUnit XML,
`go test -json`, Jest JSON, cargo's libtest, TAP), each made at n characters and at
scale × n (hostile: 6,000 and 60,000, under the 65,536 characters at which the text parsers
cut a line, so a one-line input reaches the regexes whole; large: --large-n, 60,000 and
600,000), and the hostile ones at the tests' size (200,000) too. For every input, measured
interleaved in the same run, with the garbage collector off as timeit does (best of
--repeat; a sample over --max-sample-s is taken once):

  * scaling: t(scale × n) / t(n). A linear parser gives about `scale` (exponent
    log(ratio) / log(size ratio) about 1), a quadratic one scale² (exponent 2).
  * the one pass, the least any parser does: split the text into lines and tokenize each
    with one regex (`\\S+`); "vs one pass" = t(parse) / t(one pass) at scale × n, and the
    one pass's own exponent, measured alongside (the machine's caches bend both alike).
    Target: the parse's exponent exceeds the one pass's by at most 0.5 (a quadratic parse's
    does by about 1; the margin is for a busy machine), for every input that grows with n.

Prints ratios; nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from envs import reports
from tests.envs.reports.hostile import CASES, N, case_id

EXCESS_TARGET = 0.5  # the parse's exponent minus the one pass's (quadratic: about 1)
MIN_SAMPLE_S = 0.05  # each timing sample loops the parse until it lasts this long
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Input:
    name: str
    fmt: str
    make: Callable[[int], str]
    scales: bool = True
    tests: Callable[[int], int] | None = None  # how many results a well-formed one holds
    large: bool = False  # measured at --large-n (many lines: no line is ever cut)


# ------------------------------------------------------------------ large, well-formed


def _count(n: int, line: int) -> int:
    return max(1, n // line)


def _pytest(n: int) -> str:
    k = _count(n, 110)
    verbose = [f"tests/test_m{i // 50}.py::test_case_{i} {'FAILED' if i % 10 == 0 else 'PASSED'}"
               f"{' ' * 20}[{100 * (i + 1) // k:3d}%]" for i in range(k)]
    summary = [f"{'FAILED' if i % 10 == 0 else 'PASSED'} tests/test_m{i // 50}.py::test_case_{i}"
               + (" - assert 0" if i % 10 == 0 else "") for i in range(k)]
    return ("=" * 30 + " test session starts " + "=" * 30 + f"\ncollected {k} items\n\n"
            + "\n".join(verbose) + "\n" + "=" * 27 + " short test summary info "
            + "=" * 27 + "\n" + "\n".join(summary) + f"\n==== {k} tests in 1.00s ====\n")


def _junit(n: int) -> str:
    k = _count(n, 120)
    cases = []
    for i in range(k):
        head = f'<testcase classname="pkg.Mod{i // 50}" name="test_case_{i}" time="0.001"'
        cases.append(head + ('><failure message="boom">Traceback: assert 0</failure></testcase>'
                             if i % 10 == 0 else "/>"))
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="s" '
            f'tests="{k}">\n' + "\n".join(cases) + "\n</testsuite></testsuites>\n")


def _gotest_json(n: int) -> str:
    k = _count(n, 420)
    pkg, t0 = "example.com/kit", "2024-05-01T12:00:00Z"
    events: list[dict[str, Any]] = [{"Time": t0, "Action": "start", "Package": pkg}]
    for i in range(k):
        name, verdict = f"TestCase{i}", "fail" if i % 10 == 0 else "pass"
        events += [
            {"Time": t0, "Action": "run", "Package": pkg, "Test": name},
            {"Time": t0, "Action": "output", "Package": pkg, "Test": name,
             "Output": f"=== RUN   {name}\n"},
            {"Time": t0, "Action": verdict, "Package": pkg, "Test": name, "Elapsed": 0.001},
        ]
    events.append({"Time": t0, "Action": "fail", "Package": pkg, "Elapsed": 1.0})
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _jest_json(n: int) -> str:
    k = _count(n, 230)
    files: list[dict[str, Any]] = []
    for i in range(k):
        if i % 50 == 0:
            files.append({"name": f"/testbed/test/m{i // 50}.test.js", "status": "failed",
                          "assertionResults": []})
        failed = i % 10 == 0
        files[-1]["assertionResults"].append({
            "ancestorTitles": [f"module {i // 50}"], "title": f"case {i}",
            "fullName": f"module {i // 50} case {i}", "duration": 1,
            "status": "failed" if failed else "passed",
            "failureMessages": ["Error: expected 1 to be 2"] if failed else []})
    return json.dumps({"numTotalTests": k, "success": False, "testResults": files})


def _libtest(n: int) -> str:
    k = _count(n, 40)
    lines = [f"test tests::case_{i} ... {'FAILED' if i % 10 == 0 else 'ok'}" for i in range(k)]
    failed = [f"tests::case_{i}" for i in range(0, k, 10)]
    return (f"     Running unittests src/lib.rs (target/debug/deps/kit-0123456789abcdef)\n\n"
            f"running {k} tests\n" + "\n".join(lines) + "\n\nfailures:\n"
            + "".join(f"    {f}\n" for f in failed)
            + f"\ntest result: FAILED. {k - len(failed)} passed; {len(failed)} failed; "
              "0 ignored; 0 measured; 0 filtered out; finished in 0.50s\n\n")


def _tap(n: int) -> str:
    k = _count(n, 25)
    return (f"TAP version 13\n1..{k}\n"
            + "".join(f"{'not ok' if i % 10 == 0 else 'ok'} {i + 1} - case {i}\n"
                      for i in range(k)))


LARGE = [
    Input("large pytest -v/-rA", "pytest", _pytest, tests=lambda n: _count(n, 110), large=True),
    Input("large junit", "junit", _junit, tests=lambda n: _count(n, 120), large=True),
    Input("large gotest-json", "gotest-json", _gotest_json, tests=lambda n: _count(n, 420), large=True),
    Input("large jest-json", "jest-json", _jest_json, tests=lambda n: _count(n, 230), large=True),
    Input("large libtest", "libtest", _libtest, tests=lambda n: _count(n, 40), large=True),
    Input("large tap", "tap", _tap, tests=lambda n: _count(n, 25), large=True),
]
HOSTILE = [Input(f"hostile {case_id(i, c)}", c.fmt, c.make, scales=c.scales)
           for i, c in enumerate(CASES)]


# ------------------------------------------------------------------ measuring


def _parse(fmt: str, data: str) -> reports.ParsedReport | None:
    try:
        return reports.parse(fmt, data, exit_code=1)
    except reports.ReportParseError as exc:
        if exc.internal:
            raise
        return None


def _one_pass(data: str) -> int:
    return sum(len(_TOKEN.findall(line)) for line in data.splitlines())


def _loops(fn: Callable[[], object]) -> tuple[int, float]:
    """How many calls make one sample last MIN_SAMPLE_S (as timeit's autorange), and the
    time per call that sample took."""
    number = 1
    while True:
        per_call = _sample(fn, number)
        if per_call * number >= MIN_SAMPLE_S or number >= 1 << 14:
            return number, per_call
        number *= 4


def _sample(fn: Callable[[], object], number: int) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - t0) / number
    finally:
        gc.enable()


def measure_one(item: Input, n: int, scale: int, repeat: int, max_sample_s: float
                ) -> dict[str, Any]:
    small, big = item.make(n), item.make(n * scale)
    fns = {
        "parse_small": lambda: _parse(item.fmt, small),
        "parse_big": lambda: _parse(item.fmt, big),
        "pass_small": lambda: _one_pass(small),
        "pass_big": lambda: _one_pass(big),
    }
    full = None
    if not item.large:
        full = item.make(N)
        fns["parse_test_size"] = lambda: _parse(item.fmt, full)
    loops, best = {}, {}
    for k, fn in fns.items():
        loops[k], best[k] = _loops(fn)
    for _ in range(repeat - 1):  # interleaved: load on the machine hits all alike
        for k, fn in fns.items():
            if best[k] <= max_sample_s:
                best[k] = min(best[k], _sample(fn, loops[k]))
    report = _parse(item.fmt, big)
    row: dict[str, Any] = {
        "name": item.name, "format": item.fmt, "scales": item.scales,
        "chars_small": len(small), "chars_big": len(big),
        "chars_test_size": None if full is None else len(full),
        **{f"{k}_s": v for k, v in best.items()},
        "vs_one_pass": best["parse_big"] / best["pass_big"],
        "results": None if report is None else len(report.results),
    }
    if item.tests is not None:
        row["expected_results"] = item.tests(n * scale)
    if item.scales:
        size_ratio = len(big) / len(small)
        row["scaling"] = best["parse_big"] / best["parse_small"]
        row["exponent"] = math.log(row["scaling"]) / math.log(size_ratio)
        row["one_pass_exponent"] = (math.log(best["pass_big"] / best["pass_small"])
                                    / math.log(size_ratio))
        row["excess_exponent"] = row["exponent"] - row["one_pass_exponent"]
        row["meets_target"] = row["excess_exponent"] <= EXCESS_TARGET
    return row


def measure(n: int, large_n: int, scale: int, repeat: int, max_sample_s: float,
            only: list[str], console: Console) -> dict[str, Any]:
    items = [i for i in LARGE + HOSTILE if not only or i.fmt in only]
    rows = []
    for item in items:
        size = large_n if item.large else n
        console.log(f"{item.name}: {size} and {size * scale} chars ...")
        rows.append(measure_one(item, size, scale, repeat, max_sample_s))
    growing = [r for r in rows if r["scales"]]
    return {
        "n": n, "large_n": large_n, "scale": scale, "repeat": repeat, "test_size": N,
        "excess_exponent_target": EXCESS_TARGET,
        "worst_excess_exponent": max((r["excess_exponent"] for r in growing), default=None),
        "superlinear": [r["name"] for r in growing if not r["meets_target"]],
        "wrong_counts": [r["name"] for r in rows
                         if "expected_results" in r and r["results"] != r["expected_results"]],
        "rows": rows,
    }


def _ms(s: float) -> str:
    return f"{s * 1000:.2f} ms" if s < 0.1 else f"{s * 1000:.0f} ms"


def render(summary: dict[str, Any], console: Console) -> None:
    scale, n = summary["scale"], summary["n"]
    table = Table(
        title=f"report parsing: n chars vs {scale}×n (n = {n}; large: {summary['large_n']}), "
              f"best of {summary['repeat']}",
        caption=f"scaling = t({scale}×n) / t(n) (linear ≈ {scale}, quadratic ≈ {scale ** 2}); "
                "exp. = log(scaling) / log(size ratio), of the parse and of the one pass "
                f"(split lines + tokenize) side by side; target: parse exp. - one pass exp. <= "
                f"{EXCESS_TARGET}; vs one pass = t(parse) / t(one pass) at {scale}×n; "
                f"t(N) = at the tests' size, {summary['test_size']} chars; results = what the "
                f"{scale}×n input parsed to",
    )
    for col in ("input", "format", "t(n)", f"t({scale}×n)", "scaling", "exp.", "one pass exp.",
                "vs one pass", "t(N)", "results", ""):
        table.add_column(col, justify="left" if col in ("input", "format", "") else "right",
                         no_wrap=True)
    for r in summary["rows"]:
        results = "refused" if r["results"] is None else str(r["results"])
        if "expected_results" in r and r["results"] != r["expected_results"]:
            results += f" (expected {r['expected_results']})"
        grows = r["scales"]
        table.add_row(
            r["name"], r["format"], _ms(r["parse_small_s"]), _ms(r["parse_big_s"]),
            f"{r['scaling']:.1f}x" if grows else "fixed size",
            f"{r['exponent']:.2f}" if grows else "",
            f"{r['one_pass_exponent']:.2f}" if grows else "",
            f"{r['vs_one_pass']:.1f}x",
            _ms(r["parse_test_size_s"]) if "parse_test_size_s" in r else "", results,
            ("ok" if r["meets_target"] else "SUPERLINEAR") if grows else "")
    console.print(table)
    worst, bad = summary["worst_excess_exponent"], summary["superlinear"]
    console.print(
        f"worst excess exponent {worst:.2f} (target <= {EXCESS_TARGET}): "
        + (f"MISSED by {', '.join(bad)}" if bad else "met")
        + (f"; wrong result counts: {', '.join(summary['wrong_counts'])}"
           if summary["wrong_counts"] else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6000,
                    help="characters of the smaller input (scale × n best stays under 65,536)")
    ap.add_argument("--large-n", type=int, default=60_000,
                    help="characters of the smaller well-formed report")
    ap.add_argument("--scale", type=int, default=10, help="the larger input is scale × n")
    ap.add_argument("--repeat", type=int, default=5, help="samples per measure (best counts)")
    ap.add_argument("--max-sample-s", type=float, default=2.0,
                    help="a measure slower than this is taken once, not --repeat times")
    ap.add_argument("--only", nargs="*", default=[], metavar="FMT", help="only these formats")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json, quiet=args.json, width=max(Console().width, 160))
    summary = measure(max(100, args.n), max(100, args.large_n), max(2, args.scale),
                      max(1, args.repeat), args.max_sample_s, args.only, console)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        render(summary, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
