"""Shared fixtures. Docker tests run against a real engine; under CI a missing engine fails."""

from __future__ import annotations

import os

import pytest

from envs import engine


def _engine_or_fail() -> None:
    if engine.ping():
        return
    message = "no Docker engine answers (run `envfactory doctor --fix`)"
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def docker_engine():
    _engine_or_fail()
    return engine.client()


@pytest.fixture(scope="session")
def base_image(docker_engine) -> str:
    """The content-addressed Debian base image (built once, then a cache hit)."""
    from envs import images

    return images.ensure("base").tag


@pytest.fixture(scope="session")
def language_image(docker_engine):
    """A function: language family name -> built image tag."""
    from envs import images

    def get(family: str) -> str:
        return images.ensure(family).tag

    return get


# The fixtures that provide the Docker engine, or what only the engine makes (an image, a
# sandbox, a verified task). Every one of them requests `docker_engine` (which skips, or under
# CI fails, when no engine answers), and so must any new fixture that reaches the engine:
# then the hook below marks each test that uses it. The others are listed to document them.
ENGINE_FIXTURES = frozenset({
    "docker_engine",       # here: the engine's client
    "base_image",          # here: the content-addressed Debian base image
    "language_image",      # here: a language family's image
    "plan_runner",         # tests/repolaunch/conftest.py: a plan run in containers
    "verified_families",   # tests/synth/conftest.py: every family through every gate
    "small_task",          # tests/synth/conftest.py: a task to plant defects into
})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items):
    """A test that requests an engine fixture, directly or through other fixtures
    (`item.fixturenames` is the closure), carries the `docker` mark, so `-m 'not docker'`
    never selects a test that needs the engine."""
    for item in items:
        if (ENGINE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
                and item.get_closest_marker("docker") is None):
            item.add_marker(pytest.mark.docker)


@pytest.fixture()
def tmp_home(tmp_path, monkeypatch):
    """An isolated ENVFACTORY_HOME (and registry) for one test."""
    from envs.config import reset_settings_cache

    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENVFACTORY_DB_URL", raising=False)
    reset_settings_cache()
    yield tmp_path / "home"
    reset_settings_cache()


# A test run leaves no sandbox behind: anything labelled that appeared during the session
# and is still there at the end fails the run.
_SANDBOX_LABEL = "envfactory.sandbox"
_before: set[str] = set()


def _labelled() -> set[str]:
    """Sandboxes owned by this process, or by a process that is gone (a leak either way);
    sandboxes of other live processes (a concurrent run) are theirs to clean."""
    if not engine.ping():
        return set()
    c = engine.client()
    out = set()
    # sparse: no per-container inspect, which raced containers removed meanwhile (404)
    for x in c.containers.list(all=True, sparse=True, filters={"label": _SANDBOX_LABEL}):
        owner = (x.attrs.get("Labels") or {}).get("envfactory.owner", "")
        pid = owner.rpartition(":")[2]
        if not pid.isdigit() or int(pid) == os.getpid() or not _alive(int(pid)):
            out.add(x.id)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def pytest_sessionstart(session):
    _before.update(_labelled())


def pytest_sessionfinish(session, exitstatus):
    left = _labelled() - _before
    if left:
        import sys

        sys.stderr.write(f"\nleftover sandbox containers after the tests: {sorted(left)}\n")
        session.exitstatus = 1


# --------------------------------------------------------------------------- services
#
# PostgreSQL and Redis: the servers `.ci/run` starts (envfactory/services.sh exports
# ENVFACTORY_TEST_PG_URL / ENVFACTORY_TEST_REDIS_URL), else throwaway ones made here from the
# Debian binaries. Without either, these tests skip, except under CI, where they fail.


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {message} (.ci/run starts it: envfactory/services.sh)",
                    pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def pg_server():
    """The URL of a PostgreSQL server's maintenance database (its user may CREATE DATABASE)."""
    import glob
    import pwd
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    given = os.environ.get("ENVFACTORY_TEST_PG_URL")
    if given:
        yield given
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("PostgreSQL tests need psycopg")
    found = shutil.which("initdb") or next(
        iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)), None)
    if found is None:
        _missing("no PostgreSQL server binaries (initdb)")
    bindir = Path(found).parent
    run_as: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="envfactory-pg-"))
    if os.geteuid() == 0:  # postgres refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            _missing("running as root and there is no postgres user")
        os.chown(root, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()

    def pg(*args: object, check: bool = True) -> None:
        subprocess.run([*run_as, *map(str, args)], check=check, capture_output=True)

    try:
        pg(bindir / "initdb", "-D", data, "-A", "trust", "-U", "envfactory")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        pg(bindir / "pg_ctl", "-D", data, "-o", options, "-l", root / "log", "-w", "start")
        yield f"postgresql+psycopg://envfactory@127.0.0.1:{port}/postgres"
    finally:
        pg(bindir / "pg_ctl", "-D", data, "-m", "immediate", "stop", check=False)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def pg_database(pg_server):
    """A function: a brand-new PostgreSQL database's URL on each call (dropped afterwards)."""
    import itertools
    import time

    import psycopg
    from sqlalchemy.engine import make_url

    server = make_url(pg_server)
    admin = server.set(drivername="postgresql").render_as_string(hide_password=False)
    counter = itertools.count()
    created: list[str] = []

    def create() -> str:
        name = f"envfactory_test_{os.getpid()}_{next(counter)}_{time.monotonic_ns()}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return server.set(database=name).render_as_string(hide_password=False)

    yield create
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in created:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def redis_server():
    """The URL of a Redis server (a database of its own for the tests)."""
    import shutil
    import subprocess
    import tempfile
    import time

    given = os.environ.get("ENVFACTORY_TEST_REDIS_URL")
    if given:
        yield given
        return
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("no redis-server")
    port, root = free_port(), tempfile.mkdtemp(prefix="envfactory-redis-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", root],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import redis

        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/15"
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(root, ignore_errors=True)
