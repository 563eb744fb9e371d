"""The registry's records (envs/registry/): every model in and out of SQL exactly, replaced
by key, with its datetimes as aware UTC, filtered by the indexed columns; build transcripts
in step order; the row count of each table."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from envs.models import Language, RunStatus, TaskKind, VerificationRun
from envs.registry import Registry
from envs.registry import store as registry_store
from tests.envs.registry.factories import TABLES, env, image, run, swe_task, terminal_task

# --------------------------------------------------------------------------- round trips

KINDS = {
    "image": (image, Registry.put_image, Registry.get_image, lambda m: m.tag),
    "env": (env, Registry.put_env, Registry.get_env, lambda m: m.name),
    "swe_task": (swe_task, Registry.put_swe_task, Registry.get_swe_task, lambda m: m.instance_id),
    "terminal_task": (
        terminal_task,
        Registry.put_terminal_task,
        Registry.get_terminal_task,
        lambda m: m.task_id,
    ),
    "run": (run, Registry.put_run, Registry.get_run, lambda m: m.run_id),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_model_round_trips_exactly(kind: str, new_url: Callable[[], str]):
    make, put, get, key = KINDS[kind]
    model = make()
    url = new_url()
    with Registry(url) as reg:
        put(reg, model)
        assert get(reg, key(model)) == model
    with Registry(url) as again:  # and from disk, in a new registry
        assert get(again, key(model)) == model


@pytest.mark.parametrize("kind", list(KINDS))
def test_get_of_an_unknown_key_is_none(kind: str, reg: Registry):
    _, _, get, _ = KINDS[kind]
    assert get(reg, "no-such-key") is None


@pytest.mark.parametrize("kind", list(KINDS))
def test_put_replaces_the_row_with_the_same_key(kind: str, reg: Registry):
    make, put, get, key = KINDS[kind]
    first = make()
    # A changed, non-key string field each model has.
    field = {"image": "kind", "env": "test_command", "swe_task": "patch",
             "terminal_task": "instruction", "run": "target"}[kind]  # fmt: skip
    second = first.model_copy(update={field: "changed"})
    put(reg, first)
    put(reg, second)
    assert get(reg, key(first)) == second
    table = {"image": "images", "env": "environments", "swe_task": "swe_tasks",
             "terminal_task": "terminal_tasks", "run": "runs"}[kind]  # fmt: skip
    assert reg.count(table) == 1


def test_replacing_an_env_keeps_its_first_registration_time(reg: Registry):
    reg.put_env(env(image=None))
    time.sleep(0.01)
    reg.put_env(env(image="envfactory/env:2"))
    with reg.engine.connect() as c:
        created, updated = c.execute(text("SELECT created_at, updated_at FROM environments")).one()
    assert created < updated
    assert reg.get_env("acme__widgets").image == "envfactory/env:2"


def test_replacing_works_the_same_without_insert_on_conflict(reg: Registry, monkeypatch):
    # Dialects without ON CONFLICT get the portable update-then-insert path.
    monkeypatch.setattr(registry_store, "ON_CONFLICT", {})
    reg.put_run(run(status=RunStatus.RUNNING))
    reg.put_run(run(status=RunStatus.DONE))
    reg.put_env(env(image="a"))
    reg.put_env(env(image="b"))
    assert reg.get_run("run-1").status is RunStatus.DONE
    assert reg.get_env("acme__widgets").image == "b"
    assert reg.count("runs") == reg.count("environments") == 1


def test_delete_image_says_whether_there_was_one(reg: Registry):
    reg.put_image(image("a"))
    assert reg.delete_image("a") is True
    assert reg.get_image("a") is None
    assert reg.delete_image("a") is False


# --------------------------------------------------------------------------- time


def test_datetimes_come_back_tz_aware_utc(reg: Registry):
    plus_two = timezone(timedelta(hours=2))
    started = datetime(2024, 1, 1, 14, 0, tzinfo=plus_two)
    reg.put_run(run(started_at=started, finished_at=None))
    reg.put_image(image(created_at=started))
    got_run, got_image = reg.get_run("run-1"), reg.get_image("envfactory/python:abc")
    for value in (got_run.started_at, got_image.created_at):
        assert value == started  # the same instant
        assert value.utcoffset() == timedelta(0)  # expressed in UTC
    assert got_run.finished_at is None


def test_naive_datetimes_are_taken_as_utc(reg: Registry):
    reg.put_run(run(started_at=datetime(2024, 1, 1, 12, 0)))
    reg.put_terminal_task(
        terminal_task(
            verification=[VerificationRun(gate="nop", passed=False, at=datetime(2024, 1, 1))]
        )
    )
    assert reg.get_run("run-1").started_at == datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc)
    got = reg.get_terminal_task("csv-1").verification[0].at
    assert got == datetime(2024, 1, 1, tzinfo=timezone.utc)


def test_sqlite_datetime_columns_hold_utc(url: str):
    with Registry(url) as reg:
        reg.put_run(run(started_at=datetime(2024, 1, 1, 14, tzinfo=timezone(timedelta(hours=2)))))
        with reg.engine.connect() as c:
            stored = c.execute(text("SELECT started_at FROM runs")).scalar_one()
    assert str(stored).startswith("2024-01-01 12:00:00")


# --------------------------------------------------------------------------- filters


def test_list_images_filters_by_kind(reg: Registry):
    reg.put_image(image("b", kind="env"))
    reg.put_image(image("a", kind="base", language=None))
    reg.put_image(image("c", kind="env"))
    assert [i.tag for i in reg.list_images()] == ["a", "b", "c"]
    assert [i.tag for i in reg.list_images(kind="env")] == ["b", "c"]
    assert reg.list_images(kind="task") == []


def test_list_envs_filters_by_language(reg: Registry):
    reg.put_env(env("py"))
    reg.put_env(env("go", language=Language.GO))
    assert [e.name for e in reg.list_envs()] == ["go", "py"]
    assert [e.name for e in reg.list_envs(language=Language.GO)] == ["go"]
    assert [e.name for e in reg.list_envs(language="python")] == ["py"]


def test_list_swe_tasks_filters_by_repo_language_and_kind(reg: Registry):
    reg.put_swe_task(swe_task("a-1"))
    reg.put_swe_task(swe_task("a-2", kind=TaskKind.FEATURE))
    reg.put_swe_task(swe_task("b-1", repo="o/b", language=Language.GO))
    reg.put_swe_task(swe_task("c-1", repo="o/c", language=None, env_spec=None))

    def ids(**filters) -> list[str]:
        return [t.instance_id for t in reg.list_swe_tasks(**filters)]

    assert ids() == ["a-1", "a-2", "b-1", "c-1"]
    assert ids(repo="acme/widgets") == ["a-1", "a-2"]
    assert ids(language=Language.GO) == ["b-1"]
    assert ids(language="python") == ["a-1", "a-2"]
    assert ids(kind=TaskKind.FEATURE) == ["a-2"]
    assert ids(repo="acme/widgets", kind="bug_fix") == ["a-1"]
    assert ids(repo="o/b", language="python") == []


def test_list_terminal_tasks_filters_by_family_and_category(reg: Registry):
    reg.put_terminal_task(terminal_task("t1"))
    reg.put_terminal_task(terminal_task("t2", family="git", category="vcs"))
    reg.put_terminal_task(terminal_task("t3", family="git", category="data"))
    assert [t.task_id for t in reg.list_terminal_tasks()] == ["t1", "t2", "t3"]
    assert [t.task_id for t in reg.list_terminal_tasks(family="git")] == ["t2", "t3"]
    assert [t.task_id for t in reg.list_terminal_tasks(category="data")] == ["t1", "t3"]
    assert [t.task_id for t in reg.list_terminal_tasks(family="git", category="data")] == ["t3"]


def test_list_runs_filters_by_kind_target_and_status(reg: Registry):
    reg.put_run(run("r1"))
    reg.put_run(run("r2", kind="validate", status=RunStatus.FAILED))
    reg.put_run(run("r3", target="other", status=RunStatus.PENDING, started_at=None))
    assert [r.run_id for r in reg.list_runs()] == ["r1", "r2", "r3"]
    assert [r.run_id for r in reg.list_runs(kind="eval")] == ["r1", "r3"]
    assert [r.run_id for r in reg.list_runs(target="other")] == ["r3"]
    assert [r.run_id for r in reg.list_runs(status=RunStatus.FAILED)] == ["r2"]
    assert [r.run_id for r in reg.list_runs(kind="eval", status="done")] == ["r1"]


# --------------------------------------------------------------------------- attempts, count


def test_attempts_form_a_transcript_per_run_in_step_order(reg: Registry):
    a = reg.add_attempt("build-1", 2, "make", 2, "error: x\n", 3.5)
    b = reg.add_attempt("build-1", 1, "./configure", 0, "ok\n", 1.25)
    reg.add_attempt("build-2", 1, "true", None, "", 0.0)
    assert b > a  # ids are assigned in insertion order
    transcript = reg.list_attempts("build-1")
    assert [(t.step, t.command, t.exit_code, t.seconds) for t in transcript] == [
        (1, "./configure", 0, 1.25),
        (2, "make", 2, 3.5),
    ]
    assert transcript[1].output_tail == "error: x\n"
    assert transcript[0].created_at.utcoffset() == timedelta(0)
    assert reg.list_attempts("build-2")[0].exit_code is None
    assert reg.list_attempts("nothing") == []
    assert reg.count("attempts") == 3


def test_count_knows_every_table_and_only_those(reg: Registry):
    assert {name: reg.count(name) for name in TABLES} == dict.fromkeys(TABLES, 0)
    with pytest.raises(ValueError, match="no registry table"):
        reg.count("alembic_version; DROP TABLE runs")
