"""bench/replicate.py's own parts: the seeded sample, the figures, and a document that holds
one section per dataset beside the hand-written notes."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

from envs.models import SWETask
from repolaunch.importer import Agreement, InstanceReport

_SPEC = importlib.util.spec_from_file_location(
    "replicate", Path(__file__).resolve().parents[2] / "bench" / "replicate.py")
replicate = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(replicate)  # type: ignore[union-attr]


def _task(repo: str, n: int) -> SWETask:
    return SWETask(instance_id=f"{repo.replace('/', '__')}-{n}", repo=repo, base_commit="0" * 40,
                   patch="", test_patch="", problem_statement="")


def _row(repo: str, language: str, *, exact: bool, minutes: float) -> InstanceReport:
    f2p = Agreement(relation="exact" if exact else "subset", ours=1, theirs=2 - exact, both=1)
    return InstanceReport(instance_id=f"{repo}-x", repo=repo, language=language,
                          status="agree" if exact else "disagree", built=True, tests_ran=True,
                          fail_to_pass=f2p, pass_to_pass=f2p, seconds=minutes * 60)


def test_the_sample_is_seeded_and_covers_every_repository() -> None:
    tasks = [_task(r, i) for r in ("a/x", "b/y", "c/z") for i in range(10)]
    one, again = replicate.pick(tasks, 6, 0), replicate.pick(tasks, 6, 0)
    assert [t.instance_id for t in one] == [t.instance_id for t in again]
    assert Counter(t.repo for t in one) == {"a/x": 2, "b/y": 2, "c/z": 2}
    assert [t.instance_id for t in replicate.pick(tasks, 6, 1)] != \
        [t.instance_id for t in one]


def test_a_dataset_of_several_languages_gets_a_table_per_language() -> None:
    rows = [_row("a/x", "go", exact=True, minutes=1), _row("b/y", "rust", exact=False,
                                                            minutes=3)]
    text = replicate.markdown(replicate.by_repo(rows, None), None, Counter(), None,
                              command="bench/replicate.py ...", notes=[], dataset="ml",
                              languages=replicate.by_repo(rows, None, key="language"))
    assert text.startswith("## ml\n")
    assert "### By language" in text
    assert "| go | 1 | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) |" in text
    assert "| rust | 1 | 1/1 (100%) | 1/1 (100%) | 0/1 (0%) |" in text


def test_a_pass_to_pass_that_holds_all_of_theirs_is_counted_apart_from_jaccard() -> None:
    more = Agreement(relation="superset", ours=90, theirs=17, both=17)
    less = Agreement(relation="subset", ours=10, theirs=17, both=10)
    rows = [_row("a/x", "rust", exact=True, minutes=1) for _ in range(2)]
    rows = [rows[0].model_copy(update={"pass_to_pass": more}),
            rows[1].model_copy(update={"pass_to_pass": less})]
    f = replicate.figures(rows, None)
    assert (f["p2p_covers"], f["p2p_compared"]) == (1, 2)
    text = replicate.markdown(replicate.by_repo(rows, None), None, Counter(), None,
                              command="c", notes=[], dataset="ml")
    assert "| P2P ⊇ |" in text and "| 1/2 |" in text


def test_each_dataset_keeps_its_own_section_and_the_notes_stay(tmp_path: Path) -> None:
    doc = tmp_path / "replication.md"
    doc.write_text(f"# Replication\n\nintro\n\n{replicate.NOTES_HEADING}\n\nhand-written\n")
    replicate.write_section(doc, "dev", "## dev\n\nfirst\n")
    replicate.write_section(doc, "ml", "## ml\n\nother\n")
    replicate.write_section(doc, "dev", "## dev\n\nsecond\n")
    text = doc.read_text()
    assert "first" not in text and text.count("second") == 1 and "other" in text
    assert text.index("## dev") < text.index("## ml") < text.index(replicate.NOTES_HEADING)
    assert text.startswith("# Replication\n\nintro\n") and text.endswith("hand-written\n")
    fresh = tmp_path / "new.md"
    replicate.write_section(fresh, "dev", "## dev\n")
    assert fresh.read_text().startswith(replicate.TITLE)


def test_past_its_time_budget_a_run_keeps_what_is_done_and_leaves_the_rest(
        tmp_path: Path, tmp_home) -> None:
    import json

    rows = [_task("a/x", 1), _task("a/x", 2)]
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps(t.to_swebench()) + "\n" for t in rows))
    state = tmp_path / "state.jsonl"
    done = _row("a/x", "go", exact=True, minutes=1).model_copy(
        update={"instance_id": rows[0].instance_id})
    state.write_text(done.model_dump_json() + "\n")
    skipped: list[str] = []
    got, gold = replicate.run_ours(dataset, rows, tmp_path, state, lambda m: None, None,
                                   deadline=0.0, skipped=skipped)
    assert [r.instance_id for r in got] == [rows[0].instance_id]
    assert skipped == [rows[1].instance_id] and gold == {}


def test_gold_is_kept_per_instance_and_a_resumed_run_does_not_evaluate_it_again(
        tmp_path: Path, tmp_home, monkeypatch) -> None:
    import json

    import harness.evaluate

    rows = [_task("a/x", 1)]
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps(t.to_swebench()) + "\n" for t in rows))
    state = tmp_path / "state.jsonl"
    done = _row("a/x", "go", exact=True, minutes=1).model_copy(
        update={"instance_id": rows[0].instance_id, "registered": True})
    state.write_text(done.model_dump_json() + "\n")
    state.with_suffix(".gold.jsonl").write_text(
        json.dumps({"instance_id": rows[0].instance_id, "resolved": True}) + "\n{torn")

    def evaluate(*a, **k):
        raise AssertionError("gold was evaluated again")

    monkeypatch.setattr(harness.evaluate, "evaluate", evaluate)
    got, gold = replicate.run_ours(dataset, rows, tmp_path, state, lambda m: None, None)
    assert [r.instance_id for r in got] == [rows[0].instance_id]
    assert gold == {rows[0].instance_id: True}
