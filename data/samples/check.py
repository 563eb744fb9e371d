"""Compare what the pipeline made of a sample repository with what the generator planted.

    problems = check_pipeline(sample, repo_path, report)   # [] when all is as planted

The truth is the generator's: every planted fix must become a verified task whose
FAIL_TO_PASS is exactly the planted list (and PASS_TO_PASS too, where one was planted);
every decoy must end rejected with its reason, at mining or at validation. The main job
(`envfactory run`) and the pipeline tests both judge with this one function.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from data.samples import Planted, SampleRepo

# Decoys the miner rejects, and the reason it gives (a refactor changes no test).
AT_MINING = {"docs_only": "docs_only", "tests_only": "tests_only", "refactor": "no_tests"}
# Decoys that reach validation, and the reason validation must give.
AT_VALIDATION = {"no_fail_to_pass": "no_fail_to_pass", "flaky": "no_fail_to_pass"}


def commit_shas(repo: Path) -> list[str]:
    """The sample's commits in order (index = `Planted.commit`)."""
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "--first-parent",
                          "HEAD"], capture_output=True, text=True, check=True).stdout
    return out.split()


def _where(sample: SampleRepo, p: Planted) -> str:
    return f"{sample.name} commit {p.commit} ({p.decoy or 'fix'})"


def check_pipeline(sample: SampleRepo, repo: Path, report: Any,
                   flaky_tests: dict[str, str] | None = None) -> list[str]:
    """Every way `report` (a `repolaunch.pipeline.PipelineReport`) differs from the plan.

    Duck-typed on the report (``tasks`` with ``base_commit``, ``verified``, ``reason``,
    ``fail_to_pass``, ``flaky``; ``rejected_at_mining``) so `data` needs no pipeline import.
    """
    shas = commit_shas(Path(repo))
    outcome = {t.base_commit: t for t in report.tasks}
    problems: list[str] = []
    for p in sample.planted:
        base = shas[p.commit - 1]
        where = _where(sample, p)
        o = outcome.get(base)
        if p.decoy in AT_MINING:
            if o is not None:
                problems.append(f"{where}: reached validation, should be rejected at mining "
                                f"as {AT_MINING[p.decoy]}")
            elif report.rejected_at_mining.get(AT_MINING[p.decoy], 0) < 1:
                problems.append(f"{where}: no mining rejection {AT_MINING[p.decoy]!r}")
            continue
        if o is None:
            problems.append(f"{where}: not mined")
            continue
        if p.decoy is None:
            if not o.verified:
                problems.append(f"{where}: not verified: {o.reason}: {o.detail}"[:300])
            elif sorted(o.fail_to_pass) != sorted(p.fail_to_pass):
                problems.append(f"{where}: FAIL_TO_PASS {sorted(o.fail_to_pass)} != planted "
                                f"{sorted(p.fail_to_pass)}")
        elif p.decoy in AT_VALIDATION:
            if o.verified or o.reason != AT_VALIDATION[p.decoy]:
                problems.append(f"{where}: {'verified' if o.verified else o.reason}, should "
                                f"be rejected as {AT_VALIDATION[p.decoy]}")
            flaky = (flaky_tests or {}).get(sample.name)
            if p.decoy == "flaky" and flaky and flaky in o.fail_to_pass:
                problems.append(f"{where}: the flaky test {flaky} is in FAIL_TO_PASS")
        else:
            problems.append(f"{where}: unknown decoy {p.decoy!r}")
    return problems


def planted_counts(sample: SampleRepo) -> tuple[int, int]:
    """(planted fixes, planted decoys)."""
    fixes = sum(1 for p in sample.planted if p.decoy is None)
    return fixes, len(sample.planted) - fixes
