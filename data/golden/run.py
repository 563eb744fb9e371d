"""Run the golden cases in sandboxes and write their fixtures (``python -m data.golden``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .cases import CASES, Case
from .expected import ERROR, FAILED, STATUSES, WORKDIR

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "envs" / "reports" / "golden"
MAX_REPORT_BYTES = 200 * 1024
DESCRIPTION = "Golden report fixtures: real framework output for the report parsers' tests."


@dataclass
class Outcome:
    case: Case
    exit_code: int
    report: bytes


class CaseFailed(RuntimeError):
    pass


def _source_text(files: dict[str, str]) -> str:
    parts = []
    for path in sorted(files):
        parts.append(f"==> {path} <==\n{files[path]}")
        if not files[path].endswith("\n"):
            parts.append("\n")
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)


def run_case(case: Case, *, log=print) -> Outcome:
    from envs import images
    from envs.models import Limits
    from envs.sandbox import Sandbox

    tag = images.ensure(case.image).tag
    limits = Limits(memory="4g", pids=4096, cpus=4.0, timeout=900.0, output_bytes=8 << 20)
    env = {"HOME": "/root", "CI": "1", "NO_COLOR": "1", "FORCE_COLOR": "0"}
    with Sandbox.start(tag, network=case.network, workdir=WORKDIR, limits=limits) as sb:
        for path, (data, mode) in case.tree.items():
            sb.put_file(f"{WORKDIR}/{path}", data, mode)
        for step in case.setup:
            r = sb.exec(step, timeout=900, env=env)
            if r.exit_code != 0:
                raise CaseFailed(
                    f"{case.name}: setup step {step!r} exited {r.exit_code}\n"
                    f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
                )
        r = sb.exec(case.command, timeout=900, env=env)
        log(f"{case.name}: {case.command!r} exited {r.exit_code} in {r.duration:.1f}s")
        if r.timed_out or r.stdout_truncated:
            raise CaseFailed(f"{case.name}: timed out or output truncated")
        if case.collect:
            c = sb.exec(case.collect, timeout=120, env=env)
            if c.exit_code != 0:
                raise CaseFailed(f"{case.name}: collect step exited {c.exit_code}: {c.stderr}")
        if case.report_path is None:
            data = r.stdout.encode("utf-8")
        else:
            path = case.report_path
            path = path if path.startswith("/") else f"{WORKDIR}/{path}"
            try:
                data = sb.get_file(path)
            except FileNotFoundError as exc:
                raise CaseFailed(
                    f"{case.name}: no report at {path}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
                ) from exc
    if len(data) > MAX_REPORT_BYTES:
        raise CaseFailed(f"{case.name}: the report is {len(data)} bytes, over {MAX_REPORT_BYTES}")
    return Outcome(case, r.exit_code, data)


def _consistent(case: Case, exit_code: int) -> bool:
    failing = any(st in (FAILED, ERROR) for st, _ in case.expected)
    return (exit_code == 0) != failing


def write_case(outcome: Outcome, root: Path = GOLDEN) -> Path:
    case = outcome.case
    d = root / case.name
    if d.exists():
        for f in d.iterdir():
            if f.is_file():
                f.unlink()
    d.mkdir(parents=True, exist_ok=True)
    (d / case.report).write_bytes(outcome.report)
    meta: dict[str, object] = {
        "format": case.format,
        "report": case.report,
        "exit_code": outcome.exit_code,
        "consistent": _consistent(case, outcome.exit_code),
        "framework": case.framework,
        "language": case.language,
        "image": case.image,
        "command": case.command,
    }
    if case.setup:
        meta["setup"] = list(case.setup)
    if case.collect:
        meta["collect"] = case.collect
    if case.options:
        meta["options"] = case.options
    if case.note:
        meta["note"] = case.note
    (d / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    (d / "expected.json").write_text(
        json.dumps(case.expected_list, indent=2, ensure_ascii=False) + "\n"
    )
    (d / "source.txt").write_text(_source_text(case.files))
    return d


def check_case(case: Case) -> None:
    """Sanity of a definition: ids unique, statuses known, the project there."""
    seen: set[str] = set()
    for status, tid in case.expected:
        if status not in STATUSES:
            raise ValueError(f"{case.name}: bad status {status!r}")
        if tid in seen:
            raise ValueError(f"{case.name}: {tid!r} expected twice")
        seen.add(tid)
    if "-" not in case.project:  # a hyphen: never a module name (ruff and packaging)
        raise ValueError(f"{case.name}: project {case.project!r} needs a '-' in its name")
    if not case.tree:
        raise ValueError(f"{case.name}: project {case.project!r} has no files")


def select(names: Sequence[str] | None) -> list[Case]:
    if not names:
        return list(CASES)
    by_name = {c.name: c for c in CASES}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}; see --list")
    return [by_name[n] for n in names]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data.golden", description=DESCRIPTION)
    parser.add_argument(
        "--only", action="append", metavar="CASE", help="run this case (repeatable)"
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument(
        "--out", type=Path, default=GOLDEN, help="where to write (default: %(default)s)"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    for case in CASES:
        check_case(case)
    if args.list:
        for case in CASES:
            print(f"{case.name:28} {case.language:11} {case.format:16} {case.framework}")
        return 0
    failed = []
    for case in select(args.only):
        try:
            outcome = run_case(case)
        except Exception as exc:  # keep going: one broken toolchain must not stop the rest
            print(f"FAILED {case.name}: {exc}", file=sys.stderr)
            failed.append(case.name)
            continue
        path = write_case(outcome, args.out)
        if not _consistent(case, outcome.exit_code):
            print(
                f"warning: {case.name} exited {outcome.exit_code}, "
                "which does not agree with the planted failures",
                file=sys.stderr,
            )
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
