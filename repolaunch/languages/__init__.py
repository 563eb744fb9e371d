"""Language plug-ins: everything the factory knows of one language, in one module each.

A plug-in (`repolaunch/languages/<language>.py`, registered with `@register("<language>")`)
holds its language's `Traits` (source extensions, root build files, test-file name rules,
the image family it builds in, its CI/tool version key, GitHub's name for it), an optional
``facts(tree)`` (build system, package manager, test framework and versions, read from the
repository's files by `repolaunch.detect`), its own diagnose rules (registered with
`repolaunch.diagnose.rule`) and ``plan(repo, detection)``: the setup steps and a test command
whose report a format of `envs.reports` reads. The detector, the miner's test-path rule and
the GitHub miner ask the registry instead of keeping tables, so adding a language is adding
a module here. Modules are found by name (`pkgutil`), helpers start with the language's
name and an underscore-free plug-in module registers itself; a failed lookup lists the
known names.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from envs.errors import unknown
from envs.models import Language
from repolaunch.detect import Detection


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    language: Language
    image_family: str  # envs.images recipe name ("python", "cpp", "node", ...)
    suite: str | None = None  # the Debian suite whose toolchain fits (None: the default)
    build_system: str
    test_framework: str
    setup_steps: tuple[str, ...] = ()  # run in the workdir at env-build time, network on
    test_command: str  # run in the workdir; writes the report
    report_format: str  # an envs.reports format, "name" or "name:variant"
    report_path: str | None = None  # None: the report is the command's stdout
    # Run only chosen tests: "{tests}" is replaced by the space-joined, shell-quoted ids.
    per_test_command: str = ""
    # Run only the tests in chosen test files (SWE-bench's scope: the test patch's files):
    # "{tests}" is replaced by the space-joined, shell-quoted paths. Empty: the language
    # cannot narrow a run to files, and a scoped import runs the whole suite.
    scope_command: str = ""
    # Run at build time after setup, "{tests}" replaced by test files that exist: a runner
    # that cannot start (or collect them) is diagnosed while the environment is built.
    check_command: str = ""
    # A narrower setup to rebuild with when the check fails and no diagnosis cures it (an
    # optional dependency that breaks the import of the project itself).
    fallback_steps: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    # Globs (relative to the repo root) of the files that decide the dependencies; their
    # contents hash into the env image's fingerprint.
    dependency_files: tuple[str, ...] = ()
    network_at_test: bool = False
    notes: tuple[str, ...] = ()


class Traits(BaseModel):
    """What the factory's shared parts need to know of a language, declared by its plug-in."""

    model_config = ConfigDict(frozen=True)

    image_family: str  # the envs.images recipe its environments start from
    extensions: tuple[str, ...] = ()  # source extensions whose bytes count for it
    build_files: tuple[str, ...] = ()  # root files that say "this ecosystem" (a weight)
    # Full-match regexes over a file's base name: its test files. Each names its extension,
    # so the union over languages can be applied to any path.
    test_files: tuple[str, ...] = ()
    version_key: str | None = None  # the key of its toolchain in CI matrices / .tool-versions
    github_names: tuple[str, ...] = ()  # GitHub's "language" values for it, first is canonical


class LanguagePlugin(Protocol):
    language: Language
    traits: Traits

    def plan(self, repo: Path, detection: Detection) -> Plan: ...


_PLUGINS: dict[str, LanguagePlugin] = {}


def register(name: str):
    def deco(cls):
        if not isinstance(getattr(cls, "traits", None), Traits):
            raise TypeError(f"language plug-in {name!r} declares no Traits")
        _PLUGINS[name] = cls()
        return cls

    return deco


@functools.cache
def _load() -> None:
    # Every module of this package; the plug-ins among them register themselves.
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def plugins() -> list[LanguagePlugin]:
    _load()
    return [_PLUGINS[k] for k in sorted(_PLUGINS)]


def traits(language: Language | str) -> Traits:
    return get(language).traits


def extension_map() -> dict[str, Language]:
    """Source extension -> language, over every plug-in."""
    return {ext: p.language for p in plugins() for ext in p.traits.extensions}


@functools.cache
def test_file_rule() -> re.Pattern[str]:
    """One regex, full-matched against a base name: a test file of some language."""
    return re.compile("|".join(f"(?:{rx})" for p in plugins() for rx in p.traits.test_files))


def from_github(name: str | None) -> Language | None:
    """The language GitHub calls `name` (case-insensitive), or None."""
    low = (name or "").lower()
    return next((p.language for p in plugins()
                 if low in (n.lower() for n in p.traits.github_names)), None)


def get(name: Language | str) -> LanguagePlugin:
    _load()
    key = name.value if isinstance(name, Language) else str(name)
    try:
        return _PLUGINS[key]
    except KeyError:
        raise unknown("language plug-in", key, sorted(_PLUGINS)) from None


def names() -> list[str]:
    _load()
    return sorted(_PLUGINS)


def plan(repo: Path, detection: Detection, **hints: Any) -> Plan:
    """The plug-in's plan; ``hints`` (``resolve_date``, ``suite``) go to plug-ins that take
    them."""
    plugin = get(detection.primary)
    accepted = inspect.signature(plugin.plan).parameters
    return plugin.plan(repo, detection, **{k: v for k, v in hints.items() if k in accepted})
