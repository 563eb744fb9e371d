"""Cold builds at HEAD of real repositories, judged by RepoLaunch's rule: the environment
builds and its tests run with at least 85% of them passing.

    .venv/bin/python bench/head.py --list ../shared/realdata/README.md --repos /tmp/heads \\
        [--only owner/name ...] [--budget-minutes N] [--keep-images] [--json] [--no-write]

The list is the README's section "Repositories for cold builds at HEAD" (``Language:
owner/name, owner/name. Language: ...``), or any text in that form. Each repository is
taken from its clone or mirror under ``--repos`` (``owner__name``), launched cold at its
HEAD exactly as ``envfactory launch`` does (detect, plan, build with diagnosis, run the
whole suite with the network off), and measured: the language detected, tests reported,
% passing (of those not skipped), minutes, and, where it falls short, the typed cause of
`repolaunch.importer` (or ``tests_failing``: they ran, under 85% passed).

Resumable: each repository's row is appended to ``$ENVFACTORY_HOME/bench/head/<list>.jsonl``
and a rerun skips it; each env image is removed once measured unless ``--keep-images``.
The table goes to ``docs/replication.md`` (``--out``) as its own section (``head``),
beside the replication sections.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from envs.config import get_settings
from repolaunch.sources import find_repo

ROOT = Path(__file__).resolve().parents[1]
RULE = 0.85  # RepoLaunch: a build counts when its tests run and this share of them pass
SECTION = "head"
_HEADING = re.compile(r"(?im)^#+ .*cold builds at head.*$")
_LANGUAGE = re.compile(r"\b([A-Z][A-Za-z+#]*):\s")
_REPO = re.compile(r"\b([A-Za-z0-9][\w.-]*/[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)\b")


def read_list(text: str) -> list[tuple[str, str]]:
    """(language, owner/name) pairs of the list: the section headed "... cold builds at
    HEAD ..." when there is one (up to the next blank line), else the whole text. The
    order is round-robin over the languages (each one's first, then each one's second...),
    so a run cut short by its budget still covers every language."""
    m = _HEADING.search(text)
    if m:
        rest = text[m.end():].lstrip("\n")
        text = rest.split("\n\n", 1)[0]
    out: list[tuple[str, str]] = []
    marks = list(_LANGUAGE.finditer(text))
    for i, mark in enumerate(marks):
        body = text[mark.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for repo in _REPO.findall(body):
            lang = mark.group(1).lower().replace("+", "p")  # C++ is cpp, as envfactory says
            if (lang, repo) not in out:
                out.append((lang, repo))
    by_lang: dict[str, list[tuple[str, str]]] = {}
    for pair in out:
        by_lang.setdefault(pair[0], []).append(pair)
    rounds = max((len(v) for v in by_lang.values()), default=0)
    return [v[k] for k in range(rounds) for v in by_lang.values() if k < len(v)]


def measure(repo_path: Path, full_name: str, listed: str, *, keep_image: bool,
            log: Any) -> dict[str, Any]:
    """One cold launch at HEAD and its row."""
    from envs import images
    from repolaunch.build import launch
    from repolaunch.importer import build_cause, unreachable_registry

    t0 = time.monotonic()
    row: dict[str, Any] = {"repo": full_name, "listed": listed, "language": None,
                           "built": False, "tests": 0, "passed": 0, "pct": None,
                           "meets": False, "cause": None, "detail": ""}
    try:
        res = launch(repo_path, rebuild=True, run_tests=True, log=log)
    except Exception as exc:  # one repository's failure must not end the run
        row.update(cause="infrastructure", detail=f"{type(exc).__name__}: {exc}"[:300])
        row["minutes"] = round((time.monotonic() - t0) / 60, 1)
        return row
    row["language"] = res.plan.language.value
    row["built"] = res.env is not None
    counts = res.counts or {}
    ran = counts.get("total", 0) - counts.get("skipped", 0)
    good = counts.get("passed", 0) + counts.get("xfail", 0)
    row.update(tests=counts.get("total", 0), passed=good,
               pct=round(100 * good / ran, 1) if ran > 0 else None)
    row["meets"] = ran > 0 and good / ran >= RULE
    if res.env is None:
        row["cause"], row["detail"] = build_cause(res.failure, res.transcript)
    elif ran <= 0:
        row["cause"] = "runner_failed"
        row["detail"] = (res.failure or "no test reported a result").splitlines()[0][:300]
    elif not row["meets"]:
        row["cause"] = "tests_failing"
        row["detail"] = f"{ran - good} of {ran} tests did not pass"
    host = unreachable_registry(res.transcript) if row["cause"] in (
        "runner_failed", "tests_failing") else None
    if host is not None:  # the setup went on without what that registry would have given
        row["cause"] = "registry_unavailable"
        row["detail"] = f"{host} (a registry this machine cannot reach); {row['detail']}"[:300]
    if res.env is not None and res.env.image and not keep_image:
        images.remove(res.env.image)
    row["minutes"] = round((time.monotonic() - t0) / 60, 1)
    return row


def _read_state(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
                out[row["repo"]] = row
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line
    return out


def markdown(rows: list[dict[str, Any]], *, command: str, notes: list[str]) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    lines = ["## Cold builds at HEAD", "",
             f"Measured {when} with:", "", f"    {command}", "",
             "Each repository at its HEAD, launched cold as `envfactory launch` does (whole "
             "suite, network off). *Meets*: RepoLaunch's rule, the tests run and at least "
             f"{RULE:.0%} of those not skipped pass. Minutes on this 2-core machine.", "",
             "| repository | language | tests | % passing | meets | minutes | cause |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lang = r["language"] or r["listed"]
        if r["language"] and r["language"] != r["listed"]:
            lang = f"{r['language']} (listed {r['listed']})"
        pct = "" if r["pct"] is None else f"{r['pct']:.1f}"
        cause = f"`{r['cause']}`: {r['detail']}" if r["cause"] else ""
        lines.append(f"| {r['repo']} | {lang} | {r['tests']} | {pct} | "
                     f"{'yes' if r['meets'] else 'no'} | {r['minutes']} | "
                     f"{cause.replace('|', '/')[:160]} |")
    lines += ["", "### By language", "", "| language | repositories | meet the rule |",
              "|---|---|---|"]
    by_lang: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_lang.setdefault(r["listed"], []).append(r)
    for lang, rs in sorted(by_lang.items()):
        met = sum(r["meets"] for r in rs)
        lines.append(f"| {lang} | {len(rs)} | {met}/{len(rs)} ({100 * met // len(rs)}%) |")
    met = sum(r["meets"] for r in rows)
    share = f"{100 * met // len(rows)}%" if rows else "n/a"
    minutes = [r["minutes"] for r in rows]
    lines.append(f"| **total** | {len(rows)} | {met}/{len(rows)} ({share}) |")
    if minutes:
        lines += ["", f"Minutes per repository: median {statistics.median(minutes):.1f}, "
                      f"max {max(minutes):.1f}."]
    causes = Counter(r["cause"] for r in rows if r["cause"])
    if causes:
        lines += ["", "Causes: " + ", ".join(f"`{c}` {n}" for c, n in causes.most_common())
                  + "."]
    if notes:
        lines += ["", "### Notes", "", *(f"- {n}" for n in notes)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import shlex

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", type=Path, required=True, help="the list (see above)")
    ap.add_argument("--repos", type=Path, required=True, help="clones or mirrors, owner__name")
    ap.add_argument("--only", action="append", default=None,
                    help="measure only owner/name (repeatable; again if measured before); the "
                         "table keeps every row done")
    ap.add_argument("--budget-minutes", type=float, default=None,
                    help="start no new repository after this many minutes (resume later)")
    ap.add_argument("--keep-images", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "replication.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"{datetime.now():%H:%M:%S} {msg}", file=sys.stderr, flush=True)

    try:
        wanted = read_list(args.list.read_text(encoding="utf-8"))
    except OSError as exc:
        print(f"error: cannot read the list: {exc}", file=sys.stderr)
        return 2
    if not wanted:
        print("error: the list names no repository (Language: owner/name, ...)",
              file=sys.stderr)
        return 2
    state_dir = get_settings().home / "bench" / "head"
    state_dir.mkdir(parents=True, exist_ok=True)
    state = state_dir / f"{args.list.stem}.jsonl"
    done = _read_state(state)
    deadline = time.monotonic() + 60 * args.budget_minutes if args.budget_minutes else None
    rows, notes, left = [], [], []
    for i, (lang, full_name) in enumerate(wanted, 1):
        if full_name in done and not (args.only and full_name in args.only):
            rows.append(done[full_name])
            continue
        if args.only and full_name not in args.only:
            continue  # measured another time; its row is in the table once it is
        path = find_repo(args.repos, full_name)
        if path is None:
            notes.append(f"{full_name}: no clone or mirror under --repos; left out")
            continue
        if deadline is not None and time.monotonic() > deadline:
            left.append(full_name)
            continue
        log(f"[{i}/{len(wanted)}] {full_name} ({lang})")
        row = measure(path, full_name, lang, keep_image=args.keep_images, log=log)
        log(f"[{i}/{len(wanted)}] {full_name}: {row['tests']} tests, {row['pct']}% passing, "
            f"{row['cause'] or 'meets the rule'} ({row['minutes']} min)")
        with state.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        rows.append(row)
    if left:
        notes.append(f"{len(left)} repositories not measured yet (time budget); the same "
                     "command resumes: " + ", ".join(left))
    cmd = "bench/head.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    text = markdown(rows, command=cmd, notes=notes)
    if args.json:
        print(json.dumps({"rows": rows, "notes": notes}, indent=2))
    else:
        print(text)
    if not args.no_write:
        from replicate import write_section

        write_section(args.out, SECTION, text)
        log(f"wrote the {SECTION} section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
