"""Task families: one module each, registered by the `@family` decorator.

A family is parametrized by a seeded RNG, so one family yields many distinct tasks. It
knows its category and a difficulty estimate, how to sample parameters (`sample`), how
to say the task in several phrasings that never give the solution away (`phrasings`),
and how to implement it (`implement` -> Blueprint: files, oracle steps, tests, mutants).
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from typing import Any, ClassVar

from envs.errors import unknown
from envs.models import Difficulty
from synth.spec import Blueprint

CATEGORIES = (
    "file-operations", "text-processing", "log-analysis", "data-wrangling", "sqlite",
    "git", "archives", "permissions-users", "process-management", "shell-scripting",
    "regex", "config-editing", "build-debug",
)


class Family:
    """Base class; subclasses set the class attributes through `@family`."""

    name: ClassVar[str] = ""
    category: ClassVar[str] = ""
    difficulty: ClassVar[Difficulty] = Difficulty.UNKNOWN
    image: ClassVar[str] = "base"
    language: ClassVar[str | None] = None

    def sample(self, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def implement(self, p: dict[str, Any]) -> Blueprint:
        raise NotImplementedError


_FAMILIES: dict[str, Family] = {}


def family(name: str, *, category: str, difficulty: Difficulty, image: str = "base",
           language: str | None = None):
    """Register a Family subclass under `name`."""
    if category not in CATEGORIES:
        raise ValueError(f"family {name}: unknown category {category!r}")

    def deco(cls: type[Family]) -> type[Family]:
        if name in _FAMILIES:
            raise ValueError(f"family {name!r} registered twice")
        cls.name, cls.category, cls.difficulty, cls.image = name, category, difficulty, image
        cls.language = language
        _FAMILIES[name] = cls()
        return cls

    return deco


_loaded = False


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    _loaded = True


def all_families() -> dict[str, Family]:
    _load()
    return dict(sorted(_FAMILIES.items()))


def get_family(name: str) -> Family:
    fams = all_families()
    try:
        return fams[name]
    except KeyError:
        raise unknown("task family", name, fams) from None


def select(spec: str | list[str] | None) -> list[Family]:
    """'all' (or None), a comma-separated list, or a list of names -> families."""
    if spec is None or spec == "all" or spec == ["all"]:
        return list(all_families().values())
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    return [get_family(n.strip()) for n in names if n.strip()]
