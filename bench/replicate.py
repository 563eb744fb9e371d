"""Replicate a SWE-bench-style dataset: build each instance the way envfactory does, compare its
FAIL_TO_PASS / PASS_TO_PASS with the dataset's, evaluate gold on what it registers — and, with
``--baseline naive``, run a 40-line hand recipe on the same instances in the same run.

    .venv/bin/python bench/replicate.py --dataset ../shared/realdata/swebench_dev.jsonl \\
        --repos /tmp/repos --sample 60 --seed 0 --baseline naive

Per repository and in total: instances, environments built, environments whose tests ran,
FAIL_TO_PASS identical (ids in `reports.comparable_id` form: SWE-bench's cut at whitespace,
absolute paths in parameters reduced to their last part), PASS_TO_PASS Jaccard (median),
gold resolving on the tasks registered, minutes per instance (median, p90), and the failure
causes counted by their typed reason (`repolaunch.importer.CAUSES`).

Resumable: each finished instance is appended to a state file per dataset and system under
``--state-dir`` (default ``$ENVFACTORY_HOME/bench/replicate/``); a rerun skips it, whatever
sample or ``-i`` selected it the first time (a row is one instance's measurement), so a
sample can be measured over several sittings, and machines, with a state directory kept
between them. The table is
printed and written to ``docs/replication.md`` (``--out``) as this dataset's section (between
``<!-- replicate:<dataset> -->`` markers); other datasets' sections and the hand-written part
headed "Reading the figures" are kept. A dataset of several languages gets a table per
language too. An instance whose repository is
not under ``--repos`` is left out of the sample and named in the table's notes.

The naive baseline (``--baseline naive``): Python 3.11 (the default image), ``uv pip install
--exclude-newer <instance date> -e . pytest`` (a normal install where the build backend of
that day cannot do editable ones), then ``pytest -rA`` on the test patch's files
with the network off, once before and once after the fix, ids as SWE-bench's parser writes
them. No diagnosis, no retries.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import statistics
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs import images, reports
from envs.config import get_settings
from envs.files import atomic_write
from envs.models import Limits, SWETask, TestStatus
from envs.sandbox import Sandbox, SandboxError
from repolaunch.importer import (
    InstanceReport,
    agreement,
    files_under_test,
    import_instances,
    read_instances,
)
from repolaunch.sources import checkout_copy, find_repo

ROOT = Path(__file__).resolve().parents[1]
NAIVE_LIMITS = Limits(memory="6g", pids=4096, cpus=2.0, timeout=1800)
_PASS = {TestStatus.PASSED, TestStatus.XFAIL}


# --------------------------------------------------------------------------- sampling


def pick(tasks: list[SWETask], n: int | None, seed: int) -> list[SWETask]:
    """A seeded sample that covers every repository: round-robin over the repositories,
    each shuffled with the seed, until n are taken (all when n is None)."""
    if n is None or n >= len(tasks):
        return tasks
    rng = random.Random(seed)
    groups: dict[str, list[SWETask]] = defaultdict(list)
    for t in tasks:
        groups[t.repo].append(t)
    for g in groups.values():
        rng.shuffle(g)
    out: list[SWETask] = []
    while len(out) < n:
        for repo in sorted(groups):
            if groups[repo] and len(out) < n:
                out.append(groups[repo].pop())
    return out


# --------------------------------------------------------------------------- the naive recipe


def naive_one(task: SWETask, repo: Path, *, state_dir: Path) -> InstanceReport:
    """The hand recipe on one instance (see the module doc)."""
    t0 = time.monotonic()
    row = InstanceReport(instance_id=task.instance_id, repo=task.repo, status="error")
    files = files_under_test(task.test_patch)
    log_dir = state_dir / "naive-logs" / task.instance_id
    log_dir.mkdir(parents=True, exist_ok=True)
    row.log_dir = str(log_dir)
    try:
        base = images.ensure("python").tag
        date = task.created_at or ""
        tm = f"--exclude-newer {shlex.quote(date)}" if date else ""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="envfactory-naive-") as tmp:
            src = checkout_copy(repo, task.base_commit, Path(tmp) / "repo")
            with Sandbox.start(base, network=True, workdir="/testbed", limits=NAIVE_LIMITS,
                               cap_add=("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID",
                                        "SETGID")) as sb:
                sb.put_dir(src, "/testbed")
                uv = f"/opt/tools/bin/uv pip install --python /opt/venv/bin/python {tm}"
                setup = sb.exec(
                    "python3 -m venv /opt/tools && /opt/tools/bin/pip install -q uv && "
                    "/opt/tools/bin/uv venv -q --python /usr/bin/python3 /opt/venv && "
                    f"{{ {uv} -e . pytest || {uv} . pytest; }}", timeout=1800)
                atomic_write(log_dir / "setup.log", setup.output)
                if setup.exit_code != 0:
                    row.cause = "env_build_failed"
                    row.error = "setup failed: " + reports_tail(setup.output)
                    return _done(row, t0)
                row.built = True
                snap = sb.snapshot()
                cmd = ("/opt/venv/bin/python -m pytest -rA -p no:cacheprovider "
                       + " ".join(shlex.quote(f) for f in files))
                maps = {}
                for side in ("before", "after"):
                    with Sandbox.start(snap.ref, network=False, workdir="/testbed",
                                       limits=NAIVE_LIMITS) as tb:
                        if not tb.apply_patch(task.test_patch).applied:
                            row.cause = "test_patch_failed"
                            return _done(row, t0)
                        if side == "after" and not tb.apply_patch(task.patch).applied:
                            row.cause = "patch_failed"
                            return _done(row, t0)
                        res = tb.exec(cmd, timeout=1800)
                    atomic_write(log_dir / f"{side}.log", res.output)
                    parsed = reports.parse("pytest", res.stdout, exit_code=res.exit_code)
                    maps[side] = {reports.swebench_id(r.test_id): r.status
                                  for r in parsed.results}
        before, after = maps["before"], maps["after"]
        row.tests_ran = bool(before or after)
        f2p = [t for t, s in after.items() if s in _PASS and before.get(t) not in _PASS]
        p2p = [t for t, s in after.items() if s in _PASS and before.get(t) in _PASS]
        row.fail_to_pass = agreement(f2p, task.FAIL_TO_PASS, form=reports.comparable_id)
        row.pass_to_pass = agreement(p2p, task.PASS_TO_PASS, form=reports.comparable_id)
        if not row.tests_ran:
            row.cause = "runner_failed"
        elif not f2p:
            row.cause = "no_fail_to_pass"
        else:
            row.cause = {"exact": None, "subset": "fail_to_pass_missing",
                         "superset": "fail_to_pass_extra"}.get(row.fail_to_pass.relation,
                                                               "fail_to_pass_differs")
        row.status = "agree" if row.cause is None else "disagree"
    except (SandboxError, OSError, RuntimeError) as exc:
        row.cause, row.error = "infrastructure", str(exc).splitlines()[0][:200]
    return _done(row, t0)


def reports_tail(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"


def _done(row: InstanceReport, t0: float) -> InstanceReport:
    row.seconds = round(time.monotonic() - t0, 1)
    return row


def run_naive(tasks: list[SWETask], repos: Path, state: Path, log: Any) -> list[InstanceReport]:
    done: dict[str, InstanceReport] = {}
    if state.is_file():
        for line in state.read_text().splitlines():
            try:
                r = InstanceReport.model_validate_json(line)
            except ValueError:
                continue
            done[r.instance_id] = r
    out = []
    for i, task in enumerate(tasks, 1):
        prior = done.get(task.instance_id)
        if prior is not None and prior.cause != "infrastructure":
            out.append(prior)
            continue
        repo = find_repo(repos, task.repo)
        assert repo is not None
        log(f"[naive {i}/{len(tasks)}] {task.instance_id}")
        row = naive_one(task, repo, state_dir=state.parent)
        log(f"[naive {i}/{len(tasks)}] {task.instance_id}: {row.cause or 'identical'} "
            f"({row.seconds:.0f}s)")
        with state.open("a") as fh:
            fh.write(row.model_dump_json() + "\n")
        out.append(row)
    return out


# --------------------------------------------------------------------------- envfactory


def _state_ids(state: Path) -> set[str]:
    if not state.is_file():
        return set()
    out = set()
    for line in state.read_text().splitlines():
        try:
            out.add(json.loads(line)["instance_id"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line
    return out


def _gold_state(state: Path) -> dict[str, bool]:
    out: dict[str, bool] = {}
    if state.is_file():
        for line in state.read_text().splitlines():
            try:
                row = json.loads(line)
                out[str(row["instance_id"])] = bool(row["resolved"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line
    return out


def run_ours(dataset: Path, tasks: list[SWETask], repos: Path, state: Path, log: Any,
             timeout: float | None, deadline: float | None = None,
             skipped: list[str] | None = None,
             keep_images: bool = False) -> tuple[list[InstanceReport], dict[str, bool]]:
    """The importer over the sample (registering what verifies), and gold on each registered
    instance as soon as it is (kept in a state file of its own, ``*.gold.jsonl``); then the
    instance's env image is removed unless `keep_images` (a 60-instance sample of Rust and
    Go repositories would otherwise fill a disk). Past `deadline` (time.monotonic()),
    instances not already in the state file are left for a later run and named in
    `skipped`."""
    from envs import images
    from envs.registry import Registry
    from harness.evaluate import evaluate

    order = {t.instance_id: i for i, t in enumerate(tasks)}
    rows: list[InstanceReport] = []
    done = _state_ids(state)
    gold_path = state.with_suffix(".gold.jsonl")
    gold_done = _gold_state(gold_path)
    for i, task in enumerate(tasks, 1):
        if deadline is not None and time.monotonic() > deadline and task.instance_id not in done:
            if skipped is not None:
                skipped.append(task.instance_id)
            continue
        log(f"[envfactory {i}/{len(tasks)}] {task.instance_id}")
        rep = import_instances(dataset, repos=repos, instance_ids=[task.instance_id],
                               register=True, state=state, timeout=timeout, log=log)
        rows += rep.instances
        for r in rep.instances:
            if r.registered and r.instance_id not in gold_done:
                with Registry() as reg:
                    known = reg.get_swe_task(r.instance_id)
                if known is not None:
                    summary = evaluate("gold", tasks={r.instance_id: known},
                                       run_id=f"replicate-gold-{state.stem}",
                                       instance_ids=[r.instance_id], timeout=timeout,
                                       record=False)
                    gold_done[r.instance_id] = r.instance_id in set(summary.resolved_ids)
                    with gold_path.open("a") as fh:
                        fh.write(json.dumps({"instance_id": r.instance_id,
                                             "resolved": gold_done[r.instance_id]}) + "\n")
            if r.env_image and not keep_images and r.instance_id not in done:
                images.remove(r.env_image)
    rows.sort(key=lambda r: order.get(r.instance_id, 0))
    gold = {r.instance_id: gold_done[r.instance_id] for r in rows
            if r.registered and r.instance_id in gold_done}
    return rows, gold


# --------------------------------------------------------------------------- the table


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))] if s else float("nan")


def figures(rows: list[InstanceReport], gold: dict[str, bool] | None) -> dict[str, Any]:
    n = len(rows)
    minutes = [r.seconds / 60 for r in rows]
    jac = [r.pass_to_pass.jaccard for r in rows if r.pass_to_pass is not None]
    out: dict[str, Any] = {
        "n": n,
        "built": sum(r.built for r in rows),
        "tests_ran": sum(r.tests_ran for r in rows),
        "f2p_identical": sum(r.fail_to_pass is not None and r.fail_to_pass.relation == "exact"
                             for r in rows),
        "p2p_jaccard_median": round(statistics.median(jac), 3) if jac else None,
        # ours holds every test of theirs (we may run more: a whole file where their spec
        # ran a few names)
        "p2p_covers": sum(r.pass_to_pass is not None and r.pass_to_pass.relation in
                          ("exact", "superset") for r in rows),
        "p2p_compared": len(jac),
        "minutes_median": round(statistics.median(minutes), 1) if minutes else None,
        "minutes_p90": round(_pct(minutes, 90), 1) if minutes else None,
    }
    if gold is not None:
        mine = [gold[r.instance_id] for r in rows if r.instance_id in gold]
        out["registered"] = len(mine)
        out["gold_resolved"] = sum(mine)
    return out


def _rate(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def _table(groups: dict[str, dict[str, Any]], naive: dict[str, dict[str, Any]] | None,
           first: str) -> list[str]:
    lines = [f"| {first} | n | built | ran | F2P identical | P2P J | P2P ⊇ | gold | "
             "min (med / p90) |"
             + (" naive: built | ran | F2P identical | P2P J | min (med) |" if naive else ""),
             "|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|---|" if naive else "")]
    for name, f in groups.items():
        cells = [f"**{name}**" if name == "total" else name, str(f["n"]),
                 _rate(f["built"], f["n"]), _rate(f["tests_ran"], f["n"]),
                 _rate(f["f2p_identical"], f["n"]), str(f["p2p_jaccard_median"]),
                 f"{f.get('p2p_covers', 0)}/{f.get('p2p_compared', 0)}",
                 f"{f.get('gold_resolved', 0)}/{f.get('registered', 0)}",
                 f"{f['minutes_median']} / {f['minutes_p90']}"]
        if naive:
            g = naive.get(name, {})
            cells += [_rate(g.get("built", 0), g.get("n", 0)),
                      _rate(g.get("tests_ran", 0), g.get("n", 0)),
                      _rate(g.get("f2p_identical", 0), g.get("n", 0)),
                      str(g.get("p2p_jaccard_median")), str(g.get("minutes_median"))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(groups: dict[str, dict[str, Any]], naive: dict[str, dict[str, Any]] | None,
             causes: Counter, naive_causes: Counter | None, *, command: str, notes: list[str],
             dataset: str = "", languages: dict[str, dict[str, Any]] | None = None) -> str:
    """One dataset's section of the replication document."""
    lines = [f"## {dataset or 'Dataset'}", "",
             f"Measured {datetime.now(timezone.utc):%Y-%m-%d} with:", "",
             f"    {command}", "",
             "Figures are per repository and in total. *Built*: an environment image exists; "
             "*ran*: some test run reported per-test results; *F2P identical*: our "
             "FAIL_TO_PASS equals the dataset's (ids compared as SWE-bench's parser writes "
             "them, absolute paths in parameters reduced to their last part); *P2P J*: "
             "median Jaccard of PASS_TO_PASS; *P2P ⊇*: instances whose PASS_TO_PASS holds "
             "every test of the dataset's (a superset where we ran more of the test file "
             "than the dataset's own command did); *gold*: the reference patch resolves, evaluated "
             "by `envfactory eval`'s harness on the tasks registered; minutes per instance "
             "on this 2-core machine (median / p90).", "",
             *_table(groups, naive, "repository")]
    if languages and len(languages) > 2:  # more than one language, and the total
        lines += ["", "### By language", "", *_table(languages, None, "language")]
    lines += ["", "### Why an instance does not agree", "",
              "| cause | envfactory" + (" | naive |" if naive_causes is not None else " |"),
              "|---|---|" + ("---|" if naive_causes is not None else "")]
    from repolaunch.importer import CAUSES

    for cause in sorted(set(causes) | set(naive_causes or {}),
                        key=lambda c: -(causes.get(c, 0))):
        lines.append(f"| `{cause}`: {CAUSES.get(cause, '')} | {causes.get(cause, 0)}"
                     + (f" | {naive_causes.get(cause, 0)} |" if naive_causes is not None
                        else " |"))
    if notes:
        lines += ["", "### Notes", "", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"


NOTES_HEADING = "## Reading the figures"
TITLE = "# Replication of real instances"


def write_section(path: Path, key: str, section: str) -> None:
    """Put one dataset's section into the document: in place of its earlier one, else
    before the hand-written notes (NOTES_HEADING), else at the end. Everything else in
    the file (other datasets' sections, the notes) is kept."""
    begin, end = f"<!-- replicate:{key} -->", f"<!-- /replicate:{key} -->"
    block = f"{begin}\n{section.rstrip()}\n{end}\n"
    try:
        text = path.read_text()
    except OSError:
        text = f"{TITLE}\n\n"
    i, j = text.find(begin), text.find(end)
    if i >= 0 and j > i:
        text = text[:i] + block + text[j + len(end):].lstrip("\n")
    else:
        k = text.find("\n" + NOTES_HEADING)
        text = (text[:k + 1] + block + "\n" + text[k + 1:]) if k >= 0 \
            else text.rstrip("\n") + "\n\n" + block
    atomic_write(path, text)


def by_repo(rows: list[InstanceReport], gold: dict[str, bool] | None, *,
            key: str = "repo") -> dict[str, dict[str, Any]]:
    groups: dict[str, list[InstanceReport]] = defaultdict(list)
    for r in rows:
        groups[str(getattr(r, key) or "unknown")].append(r)
    out = {repo: figures(rs, gold) for repo, rs in sorted(groups.items())}
    out["total"] = figures(rows, gold)
    return out


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--repos", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", choices=["naive"], default=None)
    ap.add_argument("--instance-id", "-i", action="append", default=None)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per test run")
    ap.add_argument("--budget-minutes", type=float, default=None,
                    help="start no new instance after this long; the table holds what is "
                         "done, and a rerun resumes")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "replication.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="where finished instances are kept (default "
                         "$ENVFACTORY_HOME/bench/replicate)")
    ap.add_argument("--keep-images", action="store_true",
                    help="keep each instance's env image (removed once measured by default)")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"{datetime.now():%H:%M:%S} {msg}", file=sys.stderr, flush=True)

    all_tasks = [t for _, t in read_instances(args.dataset) if isinstance(t, SWETask)]
    missing = sorted({t.repo for t in all_tasks if find_repo(args.repos, t.repo) is None})
    usable = [t for t in all_tasks if t.repo not in missing]
    if args.instance_id:
        usable = [t for t in usable if t.instance_id in set(args.instance_id)]
    tasks = pick(usable, args.sample, args.seed)
    key = args.dataset.stem
    state_dir = args.state_dir or get_settings().home / "bench" / "replicate"
    state_dir.mkdir(parents=True, exist_ok=True)
    log(f"{len(tasks)} instance(s) of {len({t.repo for t in tasks})} repositories; state in "
        f"{state_dir}/{key}-*.jsonl")

    deadline = (time.monotonic() + 60 * args.budget_minutes) if args.budget_minutes else None
    skipped: list[str] = []
    ours, gold = run_ours(args.dataset, tasks, args.repos, state_dir / f"{key}-envfactory.jsonl",
                          log, args.timeout, deadline, skipped, keep_images=args.keep_images)
    naive_rows = run_naive(tasks, args.repos, state_dir / f"{key}-naive.jsonl", log) \
        if args.baseline == "naive" else None
    groups = by_repo(ours, gold)
    naive_groups = by_repo(naive_rows, None) if naive_rows is not None else None
    causes = Counter(r.cause for r in ours if r.cause)
    naive_causes = Counter(r.cause for r in naive_rows if r.cause) if naive_rows else None
    notes = [f"{repo}: no mirror under --repos; its "
             f"{sum(t.repo == repo for t in all_tasks)} instance(s) are left out"
             for repo in missing]
    if skipped:
        notes.append(f"{len(skipped)} of {len(tasks)} sampled instance(s) not measured yet "
                     f"(time budget); the same command resumes: "
                     + ", ".join(skipped[:20]) + ("..." if len(skipped) > 20 else ""))
    cmd = "bench/replicate.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    text = markdown(groups, naive_groups, causes, naive_causes, command=cmd, notes=notes,
                    dataset=args.dataset.stem, languages=by_repo(ours, gold, key="language"))
    if args.json:
        print(json.dumps({"envfactory": groups, "naive": naive_groups,
                          "causes": dict(causes), "naive_causes": dict(naive_causes or {}),
                          "instances": [r.model_dump(mode="json") for r in ours]}, indent=2))
    else:
        print(text)
    if not args.no_write:
        write_section(args.out, args.dataset.stem, text)
        log(f"wrote the {args.dataset.stem} section of {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
