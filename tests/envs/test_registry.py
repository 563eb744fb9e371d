"""The registry (envs/registry.py): models in and out of SQL, migrations, concurrency."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from envs import registry as registry_module
from envs.models import (
    Difficulty,
    EnvSpec,
    FailureKind,
    ImageRecord,
    Language,
    Limits,
    RunRecord,
    RunStatus,
    SWETask,
    TaskKind,
    TerminalTask,
    TestResult,
    VerificationRun,
)
from envs.registry import (
    SCHEMA_REVISION,
    Base,
    Registry,
    RegistryError,
    head_revision,
    migration_config,
)

AT = datetime(2024, 5, 17, 12, 30, 45, 123456, tzinfo=timezone.utc)
TABLES = {"images", "environments", "swe_tasks", "terminal_tasks", "runs", "attempts", "jobs"}


# --------------------------------------------------------------------------- factories


def image(tag: str = "envfactory/python:abc", **kw) -> ImageRecord:
    fields = dict(
        tag=tag,
        kind="language",
        language=Language.PYTHON,
        parent="envfactory/base:1",
        content_hash="sha256:" + "ab" * 32,
        size_bytes=5_000_000_000,  # past 32 bits
        versions={"python": "3.11.9"},
        created_at=AT,
    )
    return ImageRecord(**(fields | kw))


def env(name: str = "acme__widgets", **kw) -> EnvSpec:
    fields = dict(
        name=name,
        language=Language.PYTHON,
        base_image="envfactory/python:abc",
        setup_steps=("pip install -e .",),
        test_command="pytest -rA",
        report_format="junit",
        report_path="/tmp/r.xml",
        env={"A": "1"},
        limits=Limits(memory="1g"),
        image="envfactory/env:1",
        fingerprint="fp1",
    )
    return EnvSpec(**(fields | kw))


def swe_task(instance_id: str = "acme__widgets-1", **kw) -> SWETask:
    fields = dict(
        instance_id=instance_id,
        repo="acme/widgets",
        base_commit="a" * 40,
        patch="diff --git a/x b/x\n+é unicode ✓\n",
        test_patch="diff --git a/t b/t\n",
        problem_statement="It breaks.\n" * 50,
        created_at="2024-05-17T12:30:45Z",
        FAIL_TO_PASS=["t::a"],
        PASS_TO_PASS=["t::b", "t::c"],
        language=Language.PYTHON,
        issue_numbers=[7],
        pr_number=8,
        kind=TaskKind.BUG_FIX,
        env_spec=env(),
    )
    return SWETask(**(fields | kw))


def terminal_task(task_id: str = "csv-1", **kw) -> TerminalTask:
    fields = dict(
        task_id=task_id,
        instruction="Dedupe /data/in.csv.",
        dockerfile="FROM envfactory/base:1\n",
        files={"data/in.csv": "a\na\n"},
        solution="sort -u /data/in.csv\n",
        tests={"test.sh": "true\n"},
        family="csv",
        category="data",
        difficulty=Difficulty.EASY,
        tags=["csv"],
        verification=[VerificationRun(gate="oracle", passed=True, reward=1.0, at=AT)],
    )
    return TerminalTask(**(fields | kw))


def run(run_id: str = "run-1", **kw) -> RunRecord:
    fields = dict(
        run_id=run_id,
        kind="eval",
        target="acme__widgets-1",
        status=RunStatus.DONE,
        failure_kind=FailureKind.MODEL,
        resolved=False,
        results=[TestResult(test_id="t::a", status="FAILED", duration=0.5)],
        details={"model": "tiny", "n": [1, 2.5, None]},
        started_at=AT,
        finished_at=AT + timedelta(seconds=90),
    )
    return RunRecord(**(fields | kw))


# --------------------------------------------------------------------------- databases
#
# The portable tests run on SQLite and on PostgreSQL. PostgreSQL is a throwaway server made
# with initdb (needs the server binaries and psycopg; skipped without them), or the server
# at ENVFACTORY_TEST_PG_URL (a URL whose user may CREATE DATABASE).


@pytest.fixture(params=["sqlite", "postgresql"])
def new_url(request, tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A function that gives the URL of a brand-new, empty database on each call."""
    counter = itertools.count()
    if request.param == "sqlite":
        yield lambda: f"sqlite:///{tmp_path / f'db{next(counter)}' / 'registry.sqlite'}"
        return
    yield request.getfixturevalue("pg_database")  # fails under CI when there is none


@pytest.fixture()
def reg(new_url: Callable[[], str]) -> Iterator[Registry]:
    """A registry on a fresh database, SQLite and PostgreSQL in turn."""
    with Registry(new_url()) as r:
        yield r


@pytest.fixture()
def url(tmp_path: Path) -> str:
    """A SQLite file for the SQLite-only tests."""
    return f"sqlite:///{tmp_path / 'registry.sqlite'}"


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
    monkeypatch.setattr(registry_module, "_ON_CONFLICT", {})
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


# --------------------------------------------------------------------------- opening


def test_default_registry_is_sqlite_under_envfactory_home(tmp_home: Path):
    with Registry() as reg:
        reg.put_run(run())
    assert (tmp_home / "registry.sqlite").is_file()


def test_envfactory_db_url_chooses_the_database(tmp_home: Path, tmp_path: Path, monkeypatch):
    from envs.config import reset_settings_cache

    monkeypatch.setenv("ENVFACTORY_DB_URL", f"sqlite:///{tmp_path / 'elsewhere.sqlite'}")
    reset_settings_cache()
    with Registry() as reg:
        reg.put_run(run())
    assert (tmp_path / "elsewhere.sqlite").is_file()
    assert not (tmp_home / "registry.sqlite").exists()


def test_in_memory_sqlite_works():
    with Registry("sqlite://") as reg:
        reg.put_swe_task(swe_task())
        assert reg.get_swe_task("acme__widgets-1") == swe_task()


def test_sqlite_registry_uses_wal(url: str):
    with Registry(url) as reg, reg.engine.connect() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"


@pytest.mark.parametrize(
    "bad",
    [
        "not a url",
        "nosuchdialect://host/db",
        "sqlite:///{tmp}",  # a directory, not a database file
        "sqlite:///{tmp}/a-file/registry.sqlite",  # under a regular file
        "postgresql://user:s3cret@127.0.0.1:1/registry",  # nothing listens (or no driver)
    ],
)
def test_a_bad_or_unreachable_url_is_a_one_line_registry_error(bad: str, tmp_path: Path):
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(RegistryError) as info:
        Registry(bad.format(tmp=tmp_path))
    message = str(info.value)
    assert message and "\n" not in message
    assert "registry" in message
    assert "s3cret" not in message  # passwords are not repeated


# --------------------------------------------------------------------------- migrations


def test_the_history_starts_with_the_initial_revision():
    script = ScriptDirectory.from_config(migration_config())
    revisions = list(script.walk_revisions())
    assert revisions[-1].revision == "0001"
    assert revisions[-1].down_revision is None
    assert head_revision() == SCHEMA_REVISION  # bump SCHEMA_REVISION with each new revision


def test_a_fresh_database_is_migrated_to_head(reg: Registry):
    assert reg.schema_revision() == head_revision()
    assert TABLES | {"alembic_version"} == set(inspect(reg.engine).get_table_names())


def test_the_migrations_build_exactly_the_schema_the_models_declare(reg: Registry):
    with reg.engine.connect() as c:
        diff = compare_metadata(
            MigrationContext.configure(c, opts={"compare_type": True}), Base.metadata
        )
    assert diff == []


def test_reopening_a_migrated_database_runs_no_migration(url: str, monkeypatch):
    Registry(url).close()

    def fail(*args, **kwargs):
        raise AssertionError("upgrade ran on a database already at head")

    monkeypatch.setattr(command, "upgrade", fail)
    for _ in range(20):  # speed is bench/'s business; here: no migration runs at all
        Registry(url).close()


def test_the_initial_revision_downgrades_and_upgrades_again(reg: Registry):
    reg.put_run(run())
    with reg.engine.begin() as c:
        command.downgrade(migration_config(c), "base")
    assert set(inspect(reg.engine).get_table_names()) == {"alembic_version"}
    with reg.engine.begin() as c:
        command.upgrade(migration_config(c), "head")
    assert reg.schema_revision() == SCHEMA_REVISION
    assert reg.count("runs") == 0


def test_alembic_can_migrate_by_url_without_a_registry(url: str):
    command.upgrade(migration_config(url=url), "head")
    with Registry(url) as reg:
        assert reg.schema_revision() == SCHEMA_REVISION


def test_the_migrations_render_as_sql_for_a_dba(capsys):
    command.upgrade(migration_config(url="postgresql://dba@nowhere/registry"), "head", sql=True)
    sql = capsys.readouterr().out
    assert all(f"CREATE TABLE {table} " in sql for table in TABLES)
    assert "TIMESTAMP WITH TIME ZONE" in sql


def test_a_database_from_a_newer_envfactory_is_refused_clearly(url: str):
    Registry(url).close()
    with sqlite3.connect(url.removeprefix("sqlite:///")) as raw:
        raw.execute("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(RegistryError, match="9999") as info:
        Registry(url)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- concurrency


def _write_rows(url: str, worker: int, n: int, kind: str, barrier) -> None:
    with Registry(url) as reg:
        barrier.wait(timeout=30)  # all writers start together
        for i in range(n):
            key = f"w{worker}-{i:04d}"
            if kind == "runs":
                reg.put_run(run(key, target=f"t{i % 7}"))
            else:
                reg.put_swe_task(swe_task(key, repo=f"o/r{worker}"))


def _open_fresh(urls: list[str], barrier) -> None:
    for i, url in enumerate(urls):
        barrier.wait(timeout=30)  # every process opens the same brand-new file at once
        with Registry(url) as reg:
            reg.add_attempt(f"open-{i}", 0, "open", 0, "", 0.0)


def _start(target, args_for) -> list[multiprocessing.process.BaseProcess]:
    """Four spawned processes running target(*args_for(worker), barrier); joined."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=target, args=(*args_for(w), barrier)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    return procs


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["runs", "swe_tasks"])
def test_four_processes_writing_500_rows_each_lose_none(kind: str, new_url: Callable[[], str]):
    url = new_url()
    Registry(url).close()
    procs = _start(_write_rows, lambda w: (url, w, 500, kind))
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with Registry(url) as reg:
        assert reg.count(kind) == 2000
        if kind == "runs":
            keys = {r.run_id for r in reg.list_runs()}
            assert len(reg.list_runs(target="t0")) == 4 * len(range(0, 500, 7))
        else:
            keys = {t.instance_id for t in reg.list_swe_tasks()}
            assert len(reg.list_swe_tasks(repo="o/r3")) == 500
    assert keys == {f"w{w}-{i:04d}" for w in range(4) for i in range(500)}


@pytest.mark.slow
def test_four_processes_opening_a_brand_new_database_at_once_all_succeed(
    new_url: Callable[[], str],
):
    urls = [new_url() for _ in range(5)]
    procs = _start(_open_fresh, lambda w: (urls,))
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    for url in urls:
        with Registry(url) as reg:
            assert reg.schema_revision() == SCHEMA_REVISION
            assert reg.count("attempts") == 4
            with reg.engine.connect() as c:
                assert c.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1


def _use_inherited_registry(reg: Registry) -> None:
    with reg.engine.connect() as c:
        # The guard gave this child a connection of its own, not one forked from the parent.
        assert c.connection.info["pid"] == os.getpid()
    reg.put_run(run("from-child"))


def test_a_registry_inherited_through_fork_opens_its_own_connections(reg: Registry):
    reg.put_run(run("before"))  # the parent's pool now holds an open connection
    child = multiprocessing.get_context("fork").Process(target=_use_inherited_registry, args=(reg,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    reg.put_run(run("after"))  # and the parent's connection still works
    assert [r.run_id for r in reg.list_runs()] == ["after", "before", "from-child"]


def test_threads_can_share_one_registry(reg: Registry):
    def write(t: int) -> None:
        for i in range(100):
            reg.put_run(run(f"t{t}-{i}"))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert reg.count("runs") == 800


def test_a_writer_retries_while_another_connection_holds_the_lock(url: str):
    # busy_timeout shorter than the lock: SQLite gives up, and the registry's retry waits.
    with Registry(url, busy_timeout=0.05) as reg:
        locked = threading.Event()

        def hold_lock() -> None:
            raw = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
            raw.execute("BEGIN IMMEDIATE")
            locked.set()
            time.sleep(0.5)
            raw.execute("COMMIT")
            raw.close()

        holder = threading.Thread(target=hold_lock)
        holder.start()
        locked.wait()
        started = time.perf_counter()
        reg.put_run(run())
        waited = time.perf_counter() - started
        holder.join()
        assert reg.get_run("run-1") == run()
        assert waited > 0.3
