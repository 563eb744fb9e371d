"""Queries over the registry for trainers: filter, sample with a seed, split by repository.

    tasks = query.find(kind="swe", language="python", tags=["bug_fix"])
    batch = query.sample(tasks, 64, seed=3)
    split = query.split(tasks, test_fraction=0.2)   # split.train / split.test

The split is by repository (SWE: `repo`; terminal tasks: their family, since one family's
tasks are near-duplicates) with a stable hash of that name, so every task of a repository
lands on the same side in every run, on every machine, whatever else is in the registry.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict

from envs.models import SWETask, TerminalTask

Task = Union[SWETask, TerminalTask]
Kind = Literal["swe", "terminal"]


def kind_of(task: Task) -> Kind:
    return "swe" if isinstance(task, SWETask) else "terminal"


def id_of(task: Task) -> str:
    return task.instance_id if isinstance(task, SWETask) else task.task_id


def repo_of(task: Task) -> str:
    """The unit a split keeps together."""
    if isinstance(task, SWETask):
        return task.repo
    return f"terminal/{task.family or task.task_id}"


def language_of(task: Task) -> str | None:
    if isinstance(task, SWETask):
        lang = task.language or (task.env_spec.language if task.env_spec else None)
        return lang.value if lang is not None else None
    return None


def difficulty_of(task: Task) -> str:
    return task.difficulty.value if isinstance(task, TerminalTask) else "unknown"


def tags_of(task: Task) -> set[str]:
    """Terminal tasks: their tags, category and family; SWE tasks: their kind (bug_fix...)."""
    if isinstance(task, TerminalTask):
        return {*task.tags, *(t for t in (task.category, task.family) if t)}
    return {task.kind.value}


def matches(task: Task, *, kind: Kind | None = None, language: str | None = None,
            repo: str | None = None, difficulty: str | None = None,
            tags: Iterable[str] = ()) -> bool:
    """All given criteria hold (tags: every one of them)."""
    if kind is not None and kind_of(task) != kind:
        return False
    if language is not None and language_of(task) != language.lower():
        return False
    if repo is not None and repo_of(task) != repo:
        return False
    if difficulty is not None and difficulty_of(task) != difficulty.lower():
        return False
    return set(tags) <= tags_of(task)


def find(*, kind: Kind | None = None, language: str | None = None, repo: str | None = None,
         difficulty: str | None = None, tags: Iterable[str] = (), registry: Any = None,
         tasks: Iterable[Task] | None = None) -> list[Task]:
    """Tasks matching every criterion, ordered by id (so sampling is reproducible).

    From `tasks` if given, else from the registry (the default one if none is passed).
    """
    wanted = list(tags)
    if tasks is None:
        tasks = _from_registry(registry, kind, language, repo)
    out = [t for t in tasks if matches(t, kind=kind, language=language, repo=repo,
                                       difficulty=difficulty, tags=wanted)]
    return sorted(out, key=lambda t: (kind_of(t), id_of(t)))


def _from_registry(registry: Any, kind: Kind | None, language: str | None,
                   repo: str | None) -> list[Task]:
    from envs.registry import Registry

    reg = registry or Registry()
    try:
        out: list[Task] = []
        if kind in (None, "swe"):
            # The registry filters what it can; matches() does the rest.
            out.extend(reg.list_swe_tasks(repo=repo, language=language))
        if kind in (None, "terminal") and language is None:
            out.extend(reg.list_terminal_tasks())
        return out
    finally:
        if registry is None:
            reg.close()


def sample(tasks: Sequence[Task], n: int, *, seed: int, replace: bool = False) -> list[Task]:
    """n tasks chosen with `random.Random(seed)`, the same for the same input and seed.
    Without replacement n is capped at len(tasks)."""
    ordered = sorted(tasks, key=lambda t: (kind_of(t), id_of(t)))
    rng = random.Random(seed)
    if replace:
        return [rng.choice(ordered) for _ in range(n)] if ordered else []
    return rng.sample(ordered, min(n, len(ordered)))


def bucket(repo: str, salt: str = "") -> float:
    """A repository's stable place in [0, 1): sha256, not hash() (which is salted per run)."""
    digest = hashlib.sha256(f"{salt}\0{repo}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class Split(BaseModel):
    model_config = ConfigDict(frozen=True)

    train: list[Task]
    test: list[Task]

    @property
    def train_repos(self) -> set[str]:
        return {repo_of(t) for t in self.train}

    @property
    def test_repos(self) -> set[str]:
        return {repo_of(t) for t in self.test}


def split(tasks: Iterable[Task], *, test_fraction: float = 0.2, salt: str = "") -> Split:
    """Train/test by repository: a repository's tasks are all on one side.

    A repository goes to test when its bucket is below `test_fraction`, so the fraction is of
    repositories, not of tasks, and growing the registry never moves a repository across.
    """
    if not 0.0 <= test_fraction <= 1.0:
        raise ValueError("test_fraction must be in [0, 1]")
    train: list[Task] = []
    test: list[Task] = []
    for t in sorted(tasks, key=lambda t: (kind_of(t), id_of(t))):
        (test if bucket(repo_of(t), salt) < test_fraction else train).append(t)
    return Split(train=train, test=test)
