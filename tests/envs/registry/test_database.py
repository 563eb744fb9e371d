"""The registry's database (envs/registry/): opened from a URL or the settings, with one-line
errors; migrated to head by Alembic exactly as the models declare it, once; shared safely by
processes, forked children and threads."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from envs.errors import UserError
from envs.registry import (
    SCHEMA_REVISION,
    Base,
    Registry,
    RegistryError,
    head_revision,
    migration_config,
)
from tests.envs.registry.factories import TABLES, run, swe_task

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
    ("bad", "kind"),
    [
        ("not a url", RegistryError),
        ("nosuchdialect://host/db", UserError),  # the URL itself is bad input (exit 2)
        ("sqlite:///{tmp}", RegistryError),  # a directory, not a database file
        ("sqlite:///{tmp}/a-file/registry.sqlite", RegistryError),  # under a regular file
        ("postgresql://user:s3cret@127.0.0.1:1/registry", RegistryError),  # nothing listens
    ],
)
def test_a_bad_or_unreachable_url_is_a_one_line_registry_error(bad: str, kind: type,
                                                               tmp_path: Path):
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(kind) as info:
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
