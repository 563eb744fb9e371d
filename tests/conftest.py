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
