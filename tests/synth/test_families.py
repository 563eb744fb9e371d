"""The family registry: enough families, spread over categories and languages, seeded."""

from __future__ import annotations

import random

import pytest

from synth.draft import draft
from synth.families import CATEGORIES, all_families, get_family, select
from synth.implement import from_blueprint, steps_of

FAMILIES = list(all_families())


def test_at_least_twenty_families_over_every_category():
    fams = all_families()
    assert len(fams) >= 20
    assert {f.category for f in fams.values()} == set(CATEGORIES)


def test_build_debug_families_cover_five_languages():
    langs = {f.language for f in all_families().values() if f.category == "build-debug"}
    assert len(langs - {None}) >= 5


def test_unknown_family_lists_the_known_names():
    with pytest.raises(KeyError, match=r"known: .*dedupe-lines"):
        get_family("no-such-family")


def test_select_all_and_lists():
    assert len(select("all")) == len(FAMILIES)
    assert [f.name for f in select("dedupe-lines,regex-emails")] == ["dedupe-lines",
                                                                      "regex-emails"]


@pytest.mark.parametrize("name", FAMILIES)
def test_drafts_are_deterministic_in_the_seed(name):
    fam = get_family(name)
    assert draft(fam, 7) == draft(fam, 7)


@pytest.mark.parametrize("name", FAMILIES)
def test_one_family_yields_many_distinct_tasks(name):
    fam = get_family(name)
    prints = {draft(fam, s).fingerprint for s in range(12)}
    assert len(prints) >= 6


@pytest.mark.parametrize("name", FAMILIES)
def test_implementation_is_complete_and_instruction_leaks_no_solution(name):
    fam = get_family(name)
    d = draft(fam, 3)
    task = from_blueprint(d, fam.implement(d.params), tag="envfactory/base:test")
    assert task.dockerfile.startswith("FROM envfactory/base:test\n")
    assert set(task.tests) == {"test.sh", "test_outputs.py"}
    assert "/logs/verifier/reward.txt" in task.tests["test.sh"]
    assert len(task.mutants) >= 2 and task.solution not in task.mutants.values()
    assert task.category == fam.category and task.difficulty == fam.difficulty
    for step in steps_of(task.solution):
        for line in step.splitlines():
            if len(line.strip()) > 25:  # a command line of the oracle
                assert line.strip() not in d.instruction, line
    compile(task.tests["test_outputs.py"], "test_outputs.py", "exec")


def test_phrasings_vary():
    fam = get_family("csv-group-sum")
    texts = {draft(fam, s).instruction.split(":")[0][:30] for s in range(20)}
    assert len(texts) >= 2


def test_families_use_only_the_seeded_rng():
    fam = get_family("log-top-ips")
    a = fam.sample(random.Random(1))
    random.seed(999)  # the global RNG must not matter
    assert fam.sample(random.Random(1)) == a
