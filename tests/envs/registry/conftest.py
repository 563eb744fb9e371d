"""Fresh registry databases for the tests here (factories.py has the models to store)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from envs.registry import Registry

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
