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


class DetectionError(ValueError):
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

EXTENSIONS: dict[str, Language] = {
    ".py": Language.PYTHON, ".pyi": Language.PYTHON,
    ".java": Language.JAVA,
    ".go": Language.GO,
    ".c": Language.C,
    ".cc": Language.CPP, ".cpp": Language.CPP, ".cxx": Language.CPP, ".c++": Language.CPP,
    ".hpp": Language.CPP, ".hh": Language.CPP, ".hxx": Language.CPP, ".h++": Language.CPP,
    ".ipp": Language.CPP, ".tpp": Language.CPP, ".ixx": Language.CPP, ".cppm": Language.CPP,
    ".js": Language.JAVASCRIPT, ".mjs": Language.JAVASCRIPT, ".cjs": Language.JAVASCRIPT,
    ".jsx": Language.JAVASCRIPT,
    ".ts": Language.TYPESCRIPT, ".tsx": Language.TYPESCRIPT, ".mts": Language.TYPESCRIPT,
    ".cts": Language.TYPESCRIPT,
    ".php": Language.PHP,
    ".rb": Language.RUBY, ".rake": Language.RUBY,
}
_HEADER = ".h"


def _skip_dir(name: str) -> bool:
    return name in SKIP_DIRS or any(p.search(name) for p in _SKIP_DIR_PATTERNS)


def _ext(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".d.ts"):
        return ".d.ts"
    return os.path.splitext(lower)[1] if not name.endswith(".C") else ".cpp"


@dataclass
class _Tree:
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


def _walk(root: Path) -> _Tree:
    tree = _Tree(root=root)
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
            lang = EXTENSIONS.get(ext)
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

def _json(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _toml_doc(text: str) -> dict[str, Any]:
    if _toml is None or not text:
        return {}
    try:
        return _toml.loads(text)
    except Exception:  # malformed TOML: fall back to the regexes
        return {}


def _first(pattern: str, text: str, flags: int = 0) -> str | None:
    m = re.search(pattern, text, flags)
    return m.group(1).strip() if m else None


def _strip_c_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


@dataclass
class _Facts:
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

_BUILD_FILES: dict[Language, tuple[str, ...]] = {
    Language.PYTHON: ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
                      "tox.ini", "noxfile.py", "Pipfile", "environment.yml"),
    Language.JAVA: ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
                    "settings.gradle.kts", "gradlew", "build.xml"),
    Language.GO: ("go.mod",),
    Language.C: ("CMakeLists.txt", "meson.build", "configure.ac", "configure.in",
                 "Makefile.am", "configure", "Makefile", "GNUmakefile", "makefile"),
    Language.CPP: ("CMakeLists.txt", "meson.build", "configure.ac", "configure.in",
                   "Makefile.am", "configure", "Makefile", "GNUmakefile", "makefile"),
    Language.JAVASCRIPT: ("package.json",),
    Language.TYPESCRIPT: ("tsconfig.json",),
    Language.PHP: ("composer.json",),
    Language.RUBY: ("Gemfile", "Rakefile", ".rspec"),
}
BUILD_WEIGHT = 0.35  # added to a language's byte share when its root build files exist


def _cmake_languages(text: str) -> set[str]:
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


def _c_or_cpp(tree: _Tree) -> Language | None:
    """What the build files say: C or C++ (None: they do not say)."""
    cmake = tree.read("CMakeLists.txt") if tree.has("CMakeLists.txt") else ""
    langs = _cmake_languages(cmake)
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


def _package_json(tree: _Tree) -> dict[str, Any]:
    return _json(tree.read("package.json")) if tree.has("package.json") else {}


def _all_deps(pkg: dict[str, Any]) -> dict[str, str]:
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


def _is_type_test(rel: str) -> bool:
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


def _node_source_bytes(tree: _Tree) -> tuple[int, int]:
    """(TypeScript, JavaScript) source bytes, without declarations and type tests."""
    def size(rels: list[str]) -> int:
        total = 0
        for rel in rels:
            if ".min." in rel.rsplit("/", 1)[-1] or rel.startswith(".github/"):
                continue
            if _is_type_test(rel):
                continue
            try:
                n = os.path.getsize(tree.root / rel)
            except OSError:
                continue
            if n <= MAX_FILE_BYTES:
                total += n
        return total

    return size(tree.with_ext(*_TS_EXTS)), size(tree.with_ext(*_JS_EXTS))


def _is_typescript(tree: _Tree) -> bool:
    """TypeScript tooling (a root ``tsconfig*.json`` or a ``typescript`` dependency) and
    TypeScript sources that are a real part of the JS + TS bytes (`MIN_TS_SHARE`)."""
    if not tree.bytes_by_lang.get(Language.TYPESCRIPT, 0):
        return False
    root_tsconfig = any(f.startswith("tsconfig.") and f.endswith(".json") for f in tree.files)
    if not root_tsconfig and "typescript" not in _all_deps(_package_json(tree)):
        return False
    ts, js = _node_source_bytes(tree)
    return ts > 0 and ts >= MIN_TS_SHARE * (ts + js)


def _primary(tree: _Tree) -> tuple[Language, dict[Language, float]]:
    total = sum(tree.bytes_by_lang.values())
    shares = {lang: n / total for lang, n in tree.bytes_by_lang.items()} if total else {}
    scores = dict(shares)
    for lang, names in _BUILD_FILES.items():
        if lang in (Language.C, Language.CPP):
            continue
        if any(tree.has(n) for n in names):
            scores[lang] = scores.get(lang, 0.0) + BUILD_WEIGHT
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
    c_build = any(tree.has(n) for n in _BUILD_FILES[Language.C])
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


# --------------------------------------------------------------------------- python

def _python(tree: _Tree) -> _Facts:
    f = _Facts(package_manager="pip")
    pyproject = tree.read("pyproject.toml") if tree.has("pyproject.toml") else ""
    doc = _toml_doc(pyproject)
    setup_py = tree.read("setup.py") if tree.has("setup.py") else ""
    setup_cfg = tree.read("setup.cfg") if tree.has("setup.cfg") else ""
    reqs = sorted(p for p in tree.files
                  if re.fullmatch(r"(requirements[^/]*\.(txt|in)|requirements/[^/]+\.(txt|in))", p))
    tox = tree.read("tox.ini") if tree.has("tox.ini") else ""
    nox = tree.read("noxfile.py") if tree.has("noxfile.py") else ""

    has_project = "project" in doc or bool(re.search(r"(?m)^\[project\]", pyproject))
    has_backend = "build-system" in doc or bool(re.search(r"(?m)^\[build-system\]", pyproject))
    backend = str(doc.get("build-system", {}).get("build-backend", "")) if doc else ""
    if pyproject and (has_project or (has_backend and not (setup_py or setup_cfg))
                      or "poetry" in doc.get("tool", {})):
        f.build_system = "pyproject"
        f.cite("pyproject.toml")
    elif setup_py or setup_cfg:
        f.build_system = "setuptools"
        f.cite("setup.py" if setup_py else "setup.cfg")
    elif reqs:
        f.build_system = "requirements"
        f.cite(reqs[0])
    elif tox:
        f.build_system = "tox"
        f.cite("tox.ini")
    elif nox:
        f.build_system = "nox"
        f.cite("noxfile.py")
    tool = doc.get("tool", {}) if isinstance(doc.get("tool"), dict) else {}
    if "poetry" in tool or "poetry" in backend:
        f.package_manager = "poetry"
    elif tree.has("uv.lock"):
        f.package_manager = "uv"
    elif tree.has("pdm.lock") or "pdm" in tool:
        f.package_manager = "pdm"
    elif tree.has("Pipfile"):
        f.package_manager = "pipenv"
    f.extra.update({"tox": "tox.ini"} if tox else {})
    f.extra.update({"nox": "noxfile.py"} if nox else {})

    # versions
    project = doc.get("project", {}) if isinstance(doc.get("project"), dict) else {}
    req_py = project.get("requires-python") or _first(
        r"""requires-python\s*=\s*["']([^"']+)""", pyproject)
    if not req_py and "poetry" in tool:
        req_py = tool["poetry"].get("dependencies", {}).get("python")
    req_py = req_py or _first(r"""python_requires\s*=\s*["']([^"']+)""", setup_py) or _first(
        r"(?m)^\s*python_requires\s*=\s*(\S+)", setup_cfg)
    if req_py:
        f.versions["python"] = str(req_py)
    elif tree.has(".python-version"):
        f.versions["python"] = tree.read(".python-version").strip().splitlines()[0]

    # test framework
    dep_text = "\n".join([pyproject, setup_py, setup_cfg, tox, nox,
                          *(tree.read(r) for r in reqs)]).lower()
    tests = [p for p in tree.with_ext(".py")
             if re.search(r"(^|/)(test_[^/]*|[^/]*_test|tests?)\.py$", p) or "/tests/" in "/" + p
             or p.startswith("test/")]
    test_text = "\n".join(tree.read(p, 60_000) for p in tests[:200])
    pytest_cfg = (tree.has("pytest.ini") or "pytest" in tool
                  or "[tool:pytest]" in setup_cfg or "[pytest]" in tox
                  or bool(tree.named("conftest.py")))
    if pytest_cfg or re.search(r"\bpytest\b", dep_text) or re.search(
            r"(?m)^\s*(import pytest|from pytest\b)", test_text):
        f.test_framework = "pytest"
    elif re.search(r"\bnose2?\b", dep_text) or re.search(r"(?m)^\s*(import|from) nose", test_text):
        f.test_framework = "nose"
    elif re.search(r"\bunittest\b", test_text):
        f.test_framework = "unittest"
    elif tests:
        f.test_framework = "pytest"
    return f


# --------------------------------------------------------------------------- java

def _java(tree: _Tree) -> _Facts:
    f = _Facts()
    pom = tree.read("pom.xml") if tree.has("pom.xml") else ""
    gradle_files = [n for n in ("build.gradle", "build.gradle.kts", "settings.gradle",
                                "settings.gradle.kts") if tree.has(n)]
    gradle = "\n".join(tree.read(p) for p in tree.files
                       if p.rsplit("/", 1)[-1] in ("build.gradle", "build.gradle.kts"))
    dep_text = ""
    if pom:
        f.build_system = f.package_manager = "maven"
        f.cite("pom.xml")
        dep_text = "\n".join(tree.read(p) for p in tree.named("pom.xml"))
        v = (_first(r"<maven\.compiler\.release>\s*([^<\s]+)", pom)
             or _first(r"<release>\s*([^<\s]+)\s*</release>", pom)
             or _first(r"<maven\.compiler\.source>\s*([^<\s]+)", pom)
             or _first(r"<source>\s*([^<\s$]+)\s*</source>", pom)
             or _first(r"<java\.version>\s*([^<\s]+)", pom))
        if v:
            f.versions["java"] = v
        if tree.has("mvnw"):
            f.extra["maven_wrapper"] = "mvnw"
    elif gradle_files or tree.has("gradlew"):
        f.build_system = f.package_manager = "gradle"
        f.cite(*(gradle_files or ["gradlew"]))
        dep_text = gradle
        if tree.has("gradlew"):
            f.extra["gradle_wrapper"] = "gradlew"
        v = (_first(r"languageVersion(?:\.set)?\s*[(=]?\s*JavaLanguageVersion\.of\((\d+)\)", gradle)
             or _first(r"sourceCompatibility\s*=?\s*(?:JavaVersion\.VERSION_)?['\"]?([\d._]+)",
                       gradle)
             or _first(r"jvmToolchain\((\d+)\)", gradle))
        if v:
            v = v.replace("_", ".")
            f.versions["java"] = v[2:] if v.startswith("1.") and len(v) > 2 else v
    elif tree.has("build.xml"):
        f.build_system = "ant"
        f.cite("build.xml")
    else:
        f.build_system = "javac"
        f.cite(*tree.with_ext(".java")[:1])
    sources = "\n".join(tree.read(p, 20_000) for p in tree.with_ext(".java")
                        if "test" in p.lower())[:2_000_000]
    if re.search(r"org\.junit\.jupiter|junit-jupiter|junit-bom|useJUnitPlatform", dep_text) or (
            not dep_text and "org.junit.jupiter" in sources):
        f.test_framework = "junit5"
    elif re.search(r"<artifactId>\s*junit\s*</artifactId>|junit:junit", dep_text) or (
            not dep_text and re.search(r"import\s+(static\s+)?org\.junit\.", sources)):
        f.test_framework = "junit4"
    elif re.search(r"testng", dep_text) or "org.testng" in sources:
        f.test_framework = "testng"
    elif "org.junit.jupiter" in sources:
        f.test_framework = "junit5"
    elif re.search(r"import\s+(static\s+)?org\.junit\.", sources):
        f.test_framework = "junit4"
    return f


# --------------------------------------------------------------------------- go

def _go(tree: _Tree) -> _Facts:
    f = _Facts(package_manager="go")
    if tree.has("go.mod"):
        f.build_system = "go-modules"
        f.cite("go.mod")
        mod = tree.read("go.mod")
        v = _first(r"(?m)^go\s+(\d+\.\d+(?:\.\d+)?)", mod)
        if v:
            f.versions["go"] = v
        tc = _first(r"(?m)^toolchain\s+go(\S+)", mod)
        if tc:
            f.versions["go-toolchain"] = tc
        module = _first(r"(?m)^module\s+(\S+)", mod)
        if module:
            f.extra["module"] = module
    else:
        f.build_system = "gopath"
    if any(p.endswith("_test.go") for p in tree.with_ext(".go")):
        f.test_framework = "gotest"
    return f


# --------------------------------------------------------------------------- c / c++

def _c_family(tree: _Tree, language: Language) -> _Facts:
    f = _Facts()
    cmake_files = tree.named("CMakeLists.txt")
    cmake = "\n".join(tree.read(p) for p in cmake_files if p.count("/") <= 3)
    makefile = next((n for n in ("GNUmakefile", "makefile", "Makefile") if tree.has(n)), None)
    make_text = tree.read(makefile) if makefile else ""
    if tree.has("CMakeLists.txt"):
        f.build_system = "cmake"
        f.cite("CMakeLists.txt")
        v = _first(r"cmake_minimum_required\s*\(\s*VERSION\s+([\d.]+)", cmake, re.I)
        if v:
            f.versions["cmake"] = v
    elif tree.has("meson.build"):
        f.build_system = "meson"
        f.cite("meson.build")
    elif any(tree.has(n) for n in ("configure.ac", "configure.in", "Makefile.am", "configure")):
        f.build_system = "autotools"
        f.cite(*(n for n in ("configure.ac", "configure.in", "Makefile.am", "configure")
                 if tree.has(n)))
    elif makefile:
        f.build_system = "make"
        f.cite(makefile)
    std = _first(r"CMAKE_CXX_STANDARD\s+(\d+)", cmake) or _first(
        r"-std=(?:c|gnu)\+\+(\w+)", cmake + make_text)
    if std:
        f.versions["cxx_standard"] = std
    cstd = _first(r"CMAKE_C_STANDARD\s+(\d+)", cmake) or _first(
        r"-std=(?:c|gnu)(\d\w)\b", cmake + make_text)
    if cstd:
        f.versions["c_standard"] = cstd

    srcs = tree.with_ext(".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hh")
    test_srcs = [p for p in srcs if re.search(r"test", p, re.I)] or srcs
    includes = "\n".join(tree.read(p, 20_000) for p in test_srcs[:300])
    low = cmake.lower()
    if re.search(r"find_package\s*\(\s*gtest|gtest_discover_tests|gtest::|\bgtest(_main)?\b|"
                 r"googletest", low) or re.search(r"#\s*include\s*[<\"]gtest/", includes):
        f.test_framework = "gtest"
    elif re.search(r"catch2|catch_discover_tests", low) or re.search(
            r"#\s*include\s*[<\"](catch2/|catch\.hpp)", includes):
        f.test_framework = "catch2"
    elif "doctest" in low or re.search(r"#\s*include\s*[<\"](doctest/)?doctest\.h", includes):
        f.test_framework = "doctest"
    elif re.search(r"\benable_testing\s*\(|\badd_test\s*\(|include\s*\(\s*ctest", low):
        f.test_framework = "ctest"
    elif re.search(r"(?m)^\s*(check_PROGRAMS|TESTS|dist_check_SCRIPTS)\s*[+:]?=", "\n".join(
            tree.read(p) for p in tree.named("Makefile.am"))):
        f.test_framework = "automake"  # automake's test harness: PASS:/FAIL: lines, .trs
    elif re.search(r"(?m)^check\s*:", make_text):
        f.test_framework = "make-check"
    elif re.search(r"(?m)^test\s*:", make_text):
        f.test_framework = "make-test"
    elif tree.has("meson.build") and "test(" in tree.read("meson.build"):
        f.test_framework = "meson-test"
    return f


# --------------------------------------------------------------------------- javascript / ts

_JS_RUNNERS = (  # (framework, word in scripts.test, dependency names, config-file prefixes)
    ("vitest", r"\bvitest\b", ("vitest",), ("vitest.config.", "vitest.workspace.")),
    ("jest", r"\bjest\b", ("jest", "ts-jest", "babel-jest"), ("jest.config.",)),
    ("mocha", r"\bmocha\b", ("mocha",), (".mocharc",)),
    ("ava", r"\bava\b", ("ava",), ("ava.config.",)),
    ("jasmine", r"\bjasmine\b", ("jasmine",), ()),
    ("tap", r"(^|[\s;&|])(tap|node-tap)\b", ("tap",), (".taprc",)),
    ("uvu", r"\buvu\b", ("uvu",), ()),
    ("node-test", r"\bnode\b[^;&|]*\s--test\b", (), ()),
)


def _node(tree: _Tree, language: Language) -> _Facts:
    f = _Facts()
    pkg = _package_json(tree)
    if tree.has("package.json"):
        f.cite("package.json")
    lockfiles = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"),
                 ("bun.lock", "bun"), ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"))
    manager = None
    for name, pm in lockfiles:
        if tree.has(name):
            manager = pm
            f.extra["lockfile"] = name
            f.cite(name)
            break
    declared = str(pkg.get("packageManager", "")).split("@", 1)[0]
    if manager is None and declared in ("npm", "yarn", "pnpm", "bun"):
        manager = declared
    if manager is None and pkg:
        manager = "npm"
    if manager:
        f.build_system = f.package_manager = manager
    tsconfig = next((p for p in ("tsconfig.json", "tsconfig.build.json") if tree.has(p)), None)
    if tsconfig:
        f.extra["tsconfig"] = tsconfig
        f.cite(tsconfig)
    if pkg.get("type") == "module":
        f.extra["module_type"] = "module"
    workspaces = pkg.get("workspaces")
    if workspaces:
        f.extra["workspaces"] = "yes"

    deps = _all_deps(pkg)
    engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
    if engines.get("node"):
        f.versions["node"] = str(engines["node"])
    else:
        for name in (".nvmrc", ".node-version"):
            if tree.has(name):
                f.versions["node"] = tree.read(name).strip().splitlines()[0].removeprefix("v")
                break
    if "typescript" in deps:
        f.versions["typescript"] = deps["typescript"]

    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    test_script = str(scripts.get("test", ""))
    if re.search(r"no test specified", test_script):
        test_script = ""
    if test_script:
        f.extra["test_script"] = test_script
    other_scripts = " ; ".join(str(v) for k, v in scripts.items() if "test" in k and k != "test")
    found = None
    for script in (test_script, other_scripts):
        hits = [(m.start(), fw) for fw, word, _, _ in _JS_RUNNERS
                for m in [re.search(word, script)] if m]
        if hits:
            found = min(hits)[1]
            break
    if found is None:
        for fw, _, dep_names, _ in _JS_RUNNERS:
            if any(d in deps for d in dep_names):
                found = fw
                break
    if found is None:
        for fw, _, _, prefixes in _JS_RUNNERS:
            if prefixes and any(p.rsplit("/", 1)[-1].startswith(prefixes) and "/" not in p
                                for p in tree.files):
                found = fw
                break
    if found is None:
        srcs = [p for p in tree.with_ext(".js", ".mjs", ".cjs", ".ts", ".mts")
                if re.search(r"test", p, re.I)]
        text = "\n".join(tree.read(p, 20_000) for p in srcs[:200])
        if re.search(r"""from\s+['"]node:test['"]|require\(\s*['"]node:test['"]\s*\)""", text):
            found = "node-test"
    f.test_framework = found
    return f


# --------------------------------------------------------------------------- php

def _php(tree: _Tree) -> _Facts:
    f = _Facts()
    composer = _json(tree.read("composer.json")) if tree.has("composer.json") else {}
    if tree.has("composer.json"):
        f.build_system = f.package_manager = "composer"
        f.cite("composer.json")
        if tree.has("composer.lock"):
            f.extra["lockfile"] = "composer.lock"
    req = composer.get("require") if isinstance(composer.get("require"), dict) else {}
    dev = composer.get("require-dev") if isinstance(composer.get("require-dev"), dict) else {}
    if req.get("php"):
        f.versions["php"] = str(req["php"])
    platform = composer.get("config", {}).get("platform", {}) if isinstance(
        composer.get("config"), dict) else {}
    if isinstance(platform, dict) and platform.get("php") and "php" not in f.versions:
        f.versions["php"] = str(platform["php"])
    if "pestphp/pest" in dev or "pestphp/pest" in req:
        f.test_framework = "pest"
    elif ("phpunit/phpunit" in dev or "phpunit/phpunit" in req
          or any(tree.has(n) for n in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"))):
        f.test_framework = "phpunit"
        f.cite(*(n for n in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
                 if tree.has(n)))
    elif any(re.search(r"Test\.php$", p) for p in tree.with_ext(".php")):
        f.test_framework = "phpunit"
    return f


# --------------------------------------------------------------------------- ruby

def _ruby(tree: _Tree) -> _Facts:
    f = _Facts()
    gemspecs = [p for p in tree.files if p.endswith(".gemspec") and "/" not in p]
    gemfile = tree.read("Gemfile") if tree.has("Gemfile") else ""
    spec_text = "\n".join(tree.read(p) for p in gemspecs)
    if gemfile:
        f.build_system = f.package_manager = "bundler"
        f.cite("Gemfile")
        if tree.has("Gemfile.lock"):
            f.extra["lockfile"] = "Gemfile.lock"
    elif gemspecs:
        f.build_system, f.package_manager = "gemspec", "gem"
        f.cite(gemspecs[0])
    elif tree.has("Rakefile"):
        f.build_system, f.package_manager = "rake", "gem"
        f.cite("Rakefile")
    if tree.has("Rakefile"):
        f.extra["rakefile"] = "Rakefile"
    v = _first(r"""(?m)^\s*ruby\s+['"]([^'"]+)['"]""", gemfile)
    if v:
        f.versions["ruby"] = v
    elif tree.has(".ruby-version"):
        f.versions["ruby"] = tree.read(".ruby-version").strip().splitlines()[0].removeprefix(
            "ruby-")
    elif (rv := _first(r"required_ruby_version\s*=\s*['\"]([^'\"]+)", spec_text)):
        f.versions["ruby"] = rv
    deps = gemfile + "\n" + spec_text
    rb = tree.with_ext(".rb")
    specs = [p for p in rb if p.endswith("_spec.rb")]
    tests = [p for p in rb if re.search(r"(^|/)(test_[^/]+|[^/]+_test)\.rb$", p)]
    rake = tree.read("Rakefile") if tree.has("Rakefile") else ""
    if tree.has(".rspec") or (specs and (re.search(r"rspec", deps) or len(specs) >= len(tests))):
        f.test_framework = "rspec"
        f.cite(".rspec" if tree.has(".rspec") else specs[0])
    elif (unit := _ruby_unit_framework(tree, rb)):
        f.test_framework = unit  # the test files say which (a Gemfile often lists both)
    elif re.search(r"test-unit|test/unit", deps + rake) and not re.search(r"minitest", deps):
        f.test_framework = "test-unit"
    elif tests or re.search(r"minitest|Rake::TestTask", deps + rake):
        f.test_framework = "minitest"
    return f


def _ruby_unit_framework(tree: _Tree, rb: list[str]) -> str | None:
    """'test-unit' or 'minitest' by what the files under test/ require and subclass."""
    tu = mt = 0
    for p in [p for p in rb if p.startswith("test/")][:300]:
        text = tree.read(p, 200_000)
        tu += bool(re.search(r"""require\s*\(?\s*['"]test/unit['"]|Test::Unit::TestCase""", text))
        mt += bool(re.search(r"""require\s*\(?\s*['"]minitest(/[\w/]+)?['"]|"""
                             r"Mini[Tt]est::(Test|Spec)\b|MiniTest::Unit::TestCase", text))
    if tu == mt:
        return None
    return "test-unit" if tu > mt else "minitest"


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


def _ci(tree: _Tree) -> tuple[list[str], dict[str, list[str]], list[str]]:
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

def _tool_versions(tree: _Tree) -> dict[str, str]:
    out: dict[str, str] = {}
    names = {"nodejs": "node", "node": "node", "python": "python", "ruby": "ruby",
             "golang": "go", "go": "go", "java": "java", "php": "php"}
    if tree.has(".tool-versions"):
        for line in tree.read(".tool-versions").splitlines():
            parts = line.split("#", 1)[0].split()
            if len(parts) >= 2 and parts[0] in names:
                v = parts[1]
                if names[parts[0]] == "java":
                    v = _first(r"(\d+(?:\.\d+)*)", v) or v
                out.setdefault(names[parts[0]], v)
    return out


# --------------------------------------------------------------------------- entry point

_RULES = {
    Language.PYTHON: _python,
    Language.JAVA: _java,
    Language.GO: _go,
    Language.PHP: _php,
    Language.RUBY: _ruby,
}
_VERSION_KEY = {Language.PYTHON: "python", Language.JAVA: "java", Language.GO: "go",
                Language.JAVASCRIPT: "node", Language.TYPESCRIPT: "node", Language.PHP: "php",
                Language.RUBY: "ruby"}


def detect(repo: Path) -> Detection:
    """What the repository is, from its own files. Raises `DetectionError` (one line)."""
    root = Path(repo)
    if not root.is_dir():
        raise DetectionError(f"{root} is not a directory")
    tree = _walk(root)
    if not tree.any_file:
        raise DetectionError(f"{root.name} is an empty repository (no files outside .git)")
    primary, shares = _primary(tree)
    if primary in (Language.C, Language.CPP):
        facts = _c_family(tree, primary)
    elif primary in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        facts = _node(tree, primary)
    else:
        facts = _RULES[primary](tree)
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
