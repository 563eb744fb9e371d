"""Registry queries: filters, seeded sampling, and train/test splits that keep every
repository on one side."""

from __future__ import annotations

import pytest

from envs import query
from envs.models import Difficulty, Language, SWETask, TaskKind, TerminalTask
from envs.registry import Registry


def _swe(i: int, repo: str, lang: Language = Language.PYTHON,
         kind: TaskKind = TaskKind.BUG_FIX) -> SWETask:
    return SWETask(instance_id=f"{repo.replace('/', '__')}-{i}", repo=repo, base_commit="a" * 40,
                   language=lang, kind=kind)


def _term(i: int, family: str, difficulty: Difficulty = Difficulty.EASY,
          tags: tuple[str, ...] = ()) -> TerminalTask:
    return TerminalTask(task_id=f"{family}-{i}", instruction="x", dockerfile="FROM x\n",
                        solution="true", family=family, difficulty=difficulty, tags=list(tags))


@pytest.fixture()
def tasks():
    out = [_swe(i, f"org/repo{i % 7}", Language.GO if i % 3 == 0 else Language.PYTHON,
                TaskKind.FEATURE if i % 5 == 0 else TaskKind.BUG_FIX) for i in range(60)]
    out += [_term(i, f"fam{i % 4}", Difficulty.HARD if i % 2 else Difficulty.EASY,
                  ("files",) if i % 3 == 0 else ()) for i in range(20)]
    return out


def test_filters(tasks):
    assert len(query.find(kind="swe", tasks=tasks)) == 60
    assert len(query.find(kind="terminal", tasks=tasks)) == 20
    go = query.find(language="go", tasks=tasks)
    assert go and all(t.language is Language.GO for t in go)
    repo = query.find(repo="org/repo3", tasks=tasks)
    assert repo and {t.repo for t in repo} == {"org/repo3"}
    hard = query.find(difficulty="hard", tasks=tasks)
    assert len(hard) == 10 and all(t.difficulty is Difficulty.HARD for t in hard)
    tagged = query.find(tags=["files", "fam0"], tasks=tasks)
    assert tagged and all("files" in t.tags and t.family == "fam0" for t in tagged)
    assert {t.kind for t in query.find(kind="swe", tags=["feature"], tasks=tasks)} == \
        {TaskKind.FEATURE}
    ids = [query.id_of(t) for t in query.find(tasks=tasks)]
    assert ids == sorted(ids, key=lambda i: (not i.startswith("org"), i))


def test_sampling_is_seeded(tasks):
    a = query.sample(tasks, 10, seed=7)
    assert a == query.sample(list(reversed(tasks)), 10, seed=7)  # input order does not matter
    assert a != query.sample(tasks, 10, seed=8)
    assert len({query.id_of(t) for t in a}) == 10
    assert len(query.sample(tasks, 500, seed=1)) == len(tasks)
    assert len(query.sample(tasks[:3], 9, seed=1, replace=True)) == 9


def test_split_keeps_repositories_on_one_side(tasks):
    s = query.split(tasks, test_fraction=0.3)
    assert s.train and s.test
    assert not (s.train_repos & s.test_repos)
    assert len(s.train) + len(s.test) == len(tasks)
    # Stable: the same on a shuffled input, and adding tasks never moves a repository.
    again = query.split([*reversed(tasks), _swe(99, "org/new")], test_fraction=0.3)
    assert s.test_repos <= again.test_repos and s.train_repos <= again.train_repos
    assert query.bucket("org/repo1") == query.bucket("org/repo1")
    assert query.split(tasks, test_fraction=0.0).test == []
    with pytest.raises(ValueError):
        query.split(tasks, test_fraction=2)


def test_find_reads_the_registry(tmp_home, tasks):
    with Registry() as reg:
        for t in tasks:
            if isinstance(t, SWETask):
                reg.put_swe_task(t)
            else:
                reg.put_terminal_task(t)
        assert len(query.find(registry=reg)) == len(tasks)
        assert len(query.find(kind="swe", language="go", registry=reg)) == 20
        assert len(query.find(kind="terminal", difficulty="hard", registry=reg)) == 10
    assert len(query.find(repo="org/repo2")) == len(query.find(repo="org/repo2", tasks=tasks))
