"""Detect a repository's languages, build system, package manager, test framework and versions
from its own files (no network, no LLM).

    det = detect(Path("repo"))
    det.primary, det.build_system, det.test_framework, det.versions, det.hints

Rules, in order:

1. **Languages** by source bytes, walking the tree but skipping vendored, generated and tool
   directories (``node_modules``, ``vendor``, ``build``, ``dist``, ``target``, ``.git``,
   ``third_party``, virtualenvs, caches, ...) and minified files. ``.h`` headers count for
   C++ when the repository has more C++ sources than C sources, else for C.
2. **Primary language**: the byte shares, plus a weight for the root build files of each
   ecosystem (``package.json``, ``pyproject.toml``, ``pom.xml``, ``go.mod``,
   ``CMakeLists.txt``, ``composer.json``, ``Gemfile``, ...). ``package.json`` plus
   ``tsconfig.json`` (or a ``typescript`` dependency) plus ``.ts`` sources is TypeScript; C
   against C++ follows CMake's ``project(... LANGUAGES ...)`` / meson's ``project()``
   languages, then the file extensions.
3. **Build system, package manager, test framework, versions** from the primary language's
   files (see the ``_<language>`` functions), with CI workflow files (GitHub Actions,
   GitLab CI, Travis) as hints: their commands go to ``hints``, the language versions they
   name to ``ci_versions``.

A repository with no files, or with neither recognisable sources nor build files, raises
`DetectionError` with a one-line reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.errors import UserError
from envs.models import Language

try:  # Python >= 3.11
    import tomllib as _toml
except ImportError:  # pragma: no cover - 3.10
    _toml = None  # type: ignore[assignment]


class Detection(BaseModel):
    model_config = ConfigDict(frozen=True)

    primary: Language
    languages: dict[Language, float] = Field(default_factory=dict)  # share of source bytes
    build_system: str = "plain"  # pyproject, setuptools, maven, gradle, go-modules, cmake, ...
    package_manager: str | None = None  # pip, npm, yarn, pnpm, composer, bundler, ...
    test_framework: str | None = None  # pytest, unittest, junit5, gotest, gtest, jest, ...
    versions: dict[str, str] = Field(default_factory=dict)  # e.g. {"python": ">=3.9"}
    evidence: tuple[str, ...] = ()  # the files the verdict rests on
    hints: tuple[str, ...] = ()  # e.g. commands seen in CI workflow files
    # Language versions CI workflow files name, e.g. {"node": ("18", "20")}.
    ci_versions: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    # Facts a plug-in may want without re-reading files, e.g. {"tsconfig": "tsconfig.json",
    # "lockfile": "package-lock.json", "gradle_wrapper": "gradlew"}.
    extra: dict[str, str] = Field(default_factory=dict)


class DetectionError(UserError):
    """Nothing in the repository says what it is; one line."""


# --------------------------------------------------------------------------- the file walk

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "bower_components", "jspm_packages", "vendor",
    "build", "dist", "out", "target", "third_party", "third-party", "thirdparty", "external",
    "extern", "deps", "_deps", ".venv", "venv", "env", ".env", ".tox", ".nox", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", ".gradle",
    ".idea", ".vscode", "coverage", ".nyc_output", ".next", ".nuxt", ".cache", ".parcel-cache",
    ".svelte-kit", ".turbo", "Pods", ".bundle", "_build", "CMakeFiles", ".yarn", ".pnpm-store",
    "obj", "htmlcov", "_site", "blib",
})
_SKIP_DIR_PATTERNS = (re.compile(r"^cmake-build-"), re.compile(r"\.egg-info$"))
MAX_FILE_BYTES = 1_000_000  # bigger "sources" are generated or data
MAX_FILES = 50_000

_HEADER = ".h"


def _skip_dir(name: str) -> bool:
    return name in SKIP_DIRS or any(p.search(name) for p in _SKIP_DIR_PATTERNS)


def _ext(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".d.ts"):
        return ".d.ts"
    return os.path.splitext(lower)[1] if not name.endswith(".C") else ".cpp"


@dataclass
class Tree:
    root: Path
    files: list[str] = field(default_factory=list)  # posix paths relative to root
    bytes_by_lang: dict[Language, int] = field(default_factory=dict)
    by_ext: dict[str, list[str]] = field(default_factory=dict)
    any_file: bool = False

    def has(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def read(self, rel: str, limit: int = 400_000) -> str:
        try:
            with open(self.root / rel, "rb") as fh:
                return fh.read(limit).decode("utf-8", "replace")
        except OSError:
            return ""

    def with_ext(self, *exts: str) -> list[str]:
        out: list[str] = []
        for e in exts:
            out.extend(self.by_ext.get(e, ()))
        return out

    def named(self, *names: str) -> list[str]:
        wanted = set(names)
        return [f for f in self.files if f.rsplit("/", 1)[-1] in wanted]


def _walk(root: Path) -> Tree:
    from repolaunch import languages

    extensions = languages.extension_map()
    tree = Tree(root=root)
    headers = 0
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(
            d for d in dirnames
            if not _skip_dir(d) and not os.path.islink(os.path.join(dirpath, d))
            and (not d.startswith(".") or d in (".github", ".circleci", ".gitlab"))
        )
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            tree.any_file = True
            count += 1
            if count > MAX_FILES:
                return tree
            rel = rel_dir + name
            tree.files.append(rel)
            ext = _ext(name)
            tree.by_ext.setdefault(ext, []).append(rel)
            lang = extensions.get(ext)
            if lang is None and ext != _HEADER:
                continue
            if ".min." in name or rel_dir.startswith(".github/"):
                continue
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            if size > MAX_FILE_BYTES:
                continue
            if lang is None:
                headers += size
                continue
            tree.bytes_by_lang[lang] = tree.bytes_by_lang.get(lang, 0) + size
    if headers:
        c, cpp = tree.bytes_by_lang.get(Language.C, 0), tree.bytes_by_lang.get(Language.CPP, 0)
        side = Language.CPP if cpp > c else Language.C
        tree.bytes_by_lang[side] = tree.bytes_by_lang.get(side, 0) + headers
    return tree


# --------------------------------------------------------------------------- helpers

def read_json(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def read_toml(text: str) -> dict[str, Any]:
    if _toml is None or not text:
        return {}
    try:
        return _toml.loads(text)
    except Exception:  # malformed TOML: fall back to the regexes
        return {}


def first_match(pattern: str, text: str, flags: int = 0) -> str | None:
    m = re.search(pattern, text, flags)
    return m.group(1).strip() if m else None


def strip_c_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


@dataclass
class Facts:
    build_system: str = "plain"
    package_manager: str | None = None
    test_framework: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    def cite(self, *paths: str) -> None:
        for p in paths:
            if p and p not in self.evidence:
                self.evidence.append(p)


# --------------------------------------------------------------------------- primary language

BUILD_WEIGHT = 0.35  # added to a language's byte share when its root build files exist


def cmake_languages(text: str) -> set[str]:
    """Languages a CMake ``project()`` names: ``project(x LANGUAGES C CXX)`` / ``project(x C)``."""
    m = re.search(r"\bproject\s*\(([^)]*)\)", text, re.I)
    if not m:
        return set()
    words = m.group(1).split()[1:]
    langs: set[str] = set()
    keywords = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}
    skip_next = False
    for w in words:
        u = w.upper().strip('"')
        if skip_next:
            skip_next = False
            continue
        if u in ("VERSION", "DESCRIPTION", "HOMEPAGE_URL"):
            skip_next = True
            continue
        if u in keywords:
            continue
        if u in ("C", "CXX", "CUDA", "OBJC", "OBJCXX", "FORTRAN", "ASM", "NONE"):
            langs.add(u)
    return langs


def _c_or_cpp(tree: Tree) -> Language | None:
    """What the build files say: C or C++ (None: they do not say)."""
    cmake = tree.read("CMakeLists.txt") if tree.has("CMakeLists.txt") else ""
    langs = cmake_languages(cmake)
    if langs:
        if "CXX" in langs and "C" not in langs:
            return Language.CPP
        if "C" in langs and "CXX" not in langs:
            return Language.C
    elif cmake and re.search(r"\bproject\s*\(", cmake, re.I):
        pass  # CMake's default is C and C++: the extensions decide
    meson = tree.read("meson.build") if tree.has("meson.build") else ""
    m = re.search(r"\bproject\s*\(([^)]*)\)", meson, re.S)
    if m:
        args = set(re.findall(r"'(c|cpp)'", m.group(1)))
        if args == {"cpp"}:
            return Language.CPP
        if args == {"c"}:
            return Language.C
    return None


def package_json(tree: Tree) -> dict[str, Any]:
    return read_json(tree.read("package.json")) if tree.has("package.json") else {}


def all_deps(pkg: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = pkg.get(key)
        if isinstance(deps, dict):
            out.update({str(k): str(v) for k, v in deps.items()})
    return out


_TS_EXTS = (".ts", ".tsx", ".mts", ".cts")  # ".d.ts" is its own extension: never counted
_JS_EXTS = (".js", ".mjs", ".cjs", ".jsx")
_TYPE_TEST_DIRS = frozenset({"test-d", "tests-d", "type-test", "type-tests", "types-test",
                             "types-tests", "typetests", "typings-test"})
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs"})
# The TypeScript share of the JS + TS bytes (type tests and declarations left out) a package
# with TypeScript tooling needs to be TypeScript: a JavaScript package that type-checks its
# declarations (a tests/types/tsconfig.json, an index.test-d.ts, typescript for tsd) is not.
MIN_TS_SHARE = 0.2


def is_type_test(rel: str) -> bool:
    """A type test (tsd's ``*.test-d.ts``, ``test-d/``, ``tests/types/``): checks the
    declarations of a package, says nothing about the language it is written in."""
    parts = rel.lower().split("/")
    name = parts[-1]
    if re.search(r"\.test-d\.[cm]?tsx?$", name):
        return True
    dirs = parts[:-1]
    if any(d in _TYPE_TEST_DIRS for d in dirs):
        return True
    return any(d in ("types", "typings", "type") and i and dirs[i - 1] in _TEST_DIRS
               for i, d in enumerate(dirs))


def _node_source_bytes(tree: Tree) -> tuple[int, int]:
    """(TypeScript, JavaScript) source bytes, without declarations and type tests."""
    def size(rels: list[str]) -> int:
        total = 0
        for rel in rels:
            if ".min." in rel.rsplit("/", 1)[-1] or rel.startswith(".github/"):
                continue
            if is_type_test(rel):
                continue
            try:
                n = os.path.getsize(tree.root / rel)
            except OSError:
                continue
            if n <= MAX_FILE_BYTES:
                total += n
        return total

    return size(tree.with_ext(*_TS_EXTS)), size(tree.with_ext(*_JS_EXTS))


def _is_typescript(tree: Tree) -> bool:
    """TypeScript tooling (a root ``tsconfig*.json`` or a ``typescript`` dependency) and
    TypeScript sources that are a real part of the JS + TS bytes (`MIN_TS_SHARE`)."""
    if not tree.bytes_by_lang.get(Language.TYPESCRIPT, 0):
        return False
    root_tsconfig = any(f.startswith("tsconfig.") and f.endswith(".json") for f in tree.files)
    if not root_tsconfig and "typescript" not in all_deps(package_json(tree)):
        return False
    ts, js = _node_source_bytes(tree)
    return ts > 0 and ts >= MIN_TS_SHARE * (ts + js)


def _primary(tree: Tree) -> tuple[Language, dict[Language, float]]:
    from repolaunch import languages

    total = sum(tree.bytes_by_lang.values())
    shares = {lang: n / total for lang, n in tree.bytes_by_lang.items()} if total else {}
    scores = dict(shares)
    for plugin in languages.plugins():
        if plugin.language in (Language.C, Language.CPP):
            continue  # they share their build files: weighed below
        if any(tree.has(n) for n in plugin.traits.build_files):
            scores[plugin.language] = scores.get(plugin.language, 0.0) + BUILD_WEIGHT
    if any(f.endswith(".gemspec") and "/" not in f for f in tree.files):
        scores[Language.RUBY] = scores.get(Language.RUBY, 0.0) + BUILD_WEIGHT
    if any(f.endswith(".go") for f in tree.files) and tree.has("go.mod"):
        pass  # already weighted
    # JavaScript and TypeScript are one ecosystem: package.json + tsconfig + .ts is TypeScript.
    js = scores.pop(Language.JAVASCRIPT, 0.0)
    ts = scores.pop(Language.TYPESCRIPT, 0.0)
    if js or ts:
        key = Language.TYPESCRIPT if _is_typescript(tree) else (
            Language.TYPESCRIPT if ts > js and not tree.has("package.json") else
            Language.JAVASCRIPT)
        scores[key] = js + ts
    # C and C++ share build files: the build files' verdict, else the bytes.
    c_build = any(tree.has(n) for n in languages.traits(Language.C).build_files)
    if c_build or Language.C in scores or Language.CPP in scores:
        said = _c_or_cpp(tree)
        c = scores.pop(Language.C, 0.0)
        cpp = scores.pop(Language.CPP, 0.0)
        if c or cpp or (c_build and said):
            key = said or (Language.CPP if cpp > c else Language.C)
            scores[key] = c + cpp + (BUILD_WEIGHT if c_build and (c or cpp or said) else 0.0)
    if not scores:
        raise DetectionError(
            f"no recognisable source or build files in {tree.root.name} "
            f"({len(tree.files)} files)")
    primary = max(sorted(scores, key=lambda lang: lang.value), key=lambda lang: scores[lang])
    return primary, {lang: round(v, 4) for lang, v in sorted(shares.items(),
                                                             key=lambda kv: -kv[1])}


# --------------------------------------------------------------------------- CI hints

_CI_VERSION_KEYS = {
    "python-version": "python", "node-version": "node", "java-version": "java",
    "go-version": "go", "php-version": "php", "ruby-version": "ruby", "python": "python",
    "node": "node", "java": "java", "go": "go", "php": "php", "ruby": "ruby", "jdk": "java",
    "node_js": "node", "rvm": "ruby",
}
_IMAGE_LANG = {"python": "python", "node": "node", "golang": "go", "openjdk": "java",
               "eclipse-temurin": "java", "maven": "java", "gradle": "java", "php": "php",
               "ruby": "ruby"}


def _scalars(value: Any) -> list[str]:
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value)]
    return []


def _ci(tree: Tree) -> tuple[list[str], dict[str, list[str]], list[str]]:
    import yaml

    files = sorted(p for p in tree.files
                   if re.fullmatch(r"\.github/workflows/[^/]+\.ya?ml", p)
                   or p in (".gitlab-ci.yml", ".travis.yml", ".circleci/config.yml"))
    hints: list[str] = []
    versions: dict[str, list[str]] = {}

    def add_version(lang: str, values: Iterable[str]) -> None:
        for v in values:
            v = v.strip()
            if v and "${{" not in v and v not in versions.setdefault(lang, []):
                versions[lang].append(v)

    def visit(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                key = str(k)
                if key in ("run", "script", "before_script", "install", "before_install"):
                    for cmd in _scalars(v):
                        for line in cmd.splitlines():
                            line = line.strip()
                            if line and not line.startswith("#"):
                                hint = f"{path}: {line}"
                                if hint not in hints:
                                    hints.append(hint)
                elif key in _CI_VERSION_KEYS and (
                        key.endswith(("-version", "_js")) or key in ("rvm", "jdk")
                        or isinstance(v, (list, str, int, float))):
                    add_version(_CI_VERSION_KEYS[key], _scalars(v))
                elif key == "image" and isinstance(v, (str, dict)):
                    name = v if isinstance(v, str) else str(v.get("name", ""))
                    m = re.match(r"(?:.*/)?([a-z-]+):(\d[\w.]*)", name)
                    if m and m.group(1) in _IMAGE_LANG:
                        add_version(_IMAGE_LANG[m.group(1)], [m.group(2).split("-")[0]])
                if isinstance(v, (dict, list)):
                    visit(v, path)
        elif isinstance(node, list):
            for item in node:
                visit(item, path)

    for rel in files:
        try:
            doc = yaml.safe_load(tree.read(rel))
        except yaml.YAMLError:
            continue
        visit(doc, rel)
    return files, versions, hints[:60]


# --------------------------------------------------------------------------- tool versions

def _tool_versions(tree: Tree) -> dict[str, str]:
    out: dict[str, str] = {}
    names = {"nodejs": "node", "node": "node", "python": "python", "ruby": "ruby",
             "golang": "go", "go": "go", "java": "java", "php": "php"}
    if tree.has(".tool-versions"):
        for line in tree.read(".tool-versions").splitlines():
            parts = line.split("#", 1)[0].split()
            if len(parts) >= 2 and parts[0] in names:
                v = parts[1]
                if names[parts[0]] == "java":
                    v = first_match(r"(\d+(?:\.\d+)*)", v) or v
                out.setdefault(names[parts[0]], v)
    return out


# --------------------------------------------------------------------------- entry point



def detect(repo: Path) -> Detection:
    """What the repository is, from its own files. Raises `DetectionError` (one line)."""
    root = Path(repo)
    if not root.is_dir():
        raise DetectionError(f"{root} is not a directory")
    tree = _walk(root)
    if not tree.any_file:
        raise DetectionError(f"{root.name} is an empty repository (no files outside .git)")
    primary, shares = _primary(tree)
    from repolaunch import languages

    plugin = languages.get(primary)
    reader = getattr(plugin, "facts", None)
    facts = reader(tree) if reader is not None else Facts()
    for lang, v in _tool_versions(tree).items():
        facts.versions.setdefault(lang, v)
    ci_files, ci_versions, hints = _ci(tree)
    facts.cite(*ci_files)
    return Detection(
        primary=primary,
        languages=shares,
        build_system=facts.build_system,
        package_manager=facts.package_manager,
        test_framework=facts.test_framework,
        versions=facts.versions,
        evidence=tuple(facts.evidence),
        hints=tuple(hints),
        ci_versions={k: tuple(v) for k, v in ci_versions.items()},
        extra=facts.extra,
    )
