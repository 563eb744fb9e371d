"""Where a Python project's test dependencies come from, by trust, and what to try when they
do not resolve together.

Sources, most trusted first: the project itself with its test extras (``test``, ``tests``,
``testing``, ``dev``); its pinned requirement files for tests (``requirements*.txt`` and
``requirements/*.txt`` named for tests, dev or CI; root ``requirements.txt``); tox's
``[testenv]`` deps and extras; what the CI workflows ``pip install`` (tools left out); the
extras that pull every optional dependency (``all``, ``full``, ``optional``) so tests guarded
by an import are not skipped. Files for docs, linters,
pre-commit, typing or releases are never used. A minimum-pins file (``*min*``, ``lowest``,
``oldest``) is tried only on its own, never merged with the others.

The setup script (`install_plan`) tries everything at once; failing that, the project with
its test extras (else alone), then each other source on top of it, keeping those that
install: a resolver conflict or a package that cannot build drops that one source instead
of giving up. Requirement lines are read here
(``-r`` includes followed) and written into one file per set: a VCS or GitHub URL (which
cannot be fetched from a registry-only network) is dropped with a note, as are editable
installs of the project itself. A file included with ``-r`` is subject to the same rule
(a test file that includes the pre-commit pins does not bring them).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

TEST_EXTRAS = ("test", "tests", "testing", "dev")
OPTIONAL_EXTRAS = ("all", "full", "complete", "optional")
REQUIREMENT_GLOBS = ("requirements*.txt", "*requirements*.txt", "requirements/*.txt",
                     "requirements/*.in", "requirements-*.in", "tests/requirements*.txt",
                     "tests/requirements/*.txt", "test/requirements*.txt")
_TEST_WORDS = re.compile(r"(^|[-_/.])(test|tests|testing|dev|develop|ci)([-_/.]|$)")
_MIN_WORDS = re.compile(r"(^|[-_/.])(min|minimal|minimum|lowest|oldest)([-_/.]|$)")
_NEVER = re.compile(r"(^|[-_/.])(doc|docs|lint|linting|pre[-_]?commit|typing|mypy|flake8|"
                    r"style|format|release|publish|benchmarks?|examples?)([-_/.]|$)")
_VCS = re.compile(r"^(?:-e\s+)?(?:\S+\s*@\s*)?(?:git|hg|svn|bzr)\+|://(?:www\.)?(?:github|gitlab)\.com/",
                  re.I)


class InstallSet(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    extras: tuple[str, ...] = ()  # of the project, when it is installable
    requirements: tuple[str, ...] = ()  # requirement lines, -r resolved
    files: tuple[str, ...] = ()  # repo-relative files the lines came from


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# keys of other setup() dicts (entry points, package data) that a loose match may catch
_NOT_EXTRAS = frozenset({"console_scripts", "gui_scripts", "name", "version", "packages",
                         "package_data", "entry_points", "python_requires", "install_requires"})


def project_extras(repo: Path, pyproject: dict[str, Any]) -> set[str]:
    """The extras a project declares (pyproject, setup.cfg, setup.py)."""
    extras = set(pyproject.get("project", {}).get("optional-dependencies", {}) or {})
    poetry = pyproject.get("tool", {}).get("poetry", {})
    extras |= set(poetry.get("extras", {}) or {})
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(_read(repo / "setup.cfg"))
        if cfg.has_section("options.extras_require"):
            extras |= set(cfg["options.extras_require"])
    except configparser.Error:
        pass
    text = _read(repo / "setup.py")
    if "extras_require" in text.lower():
        # {'test': [...]} / {'test': TESTS_REQUIRE} literals, EXTRAS['dev'] = ... assignments
        extras |= {m.group(2) for m in
                   re.finditer(r"""(["'])([A-Za-z0-9_.-]+)\1\s*:\s*[\[({A-Za-z_]""", text)
                   if m.group(2) not in _NOT_EXTRAS}
        extras |= {m.group(2) for m in
                   re.finditer(r"""\[(["'])([A-Za-z0-9_.-]+)\1\]\s*=[^=]""", text)}
    return extras


def requirement_files(repo: Path) -> list[str]:
    """Root requirements.txt plus the requirement files for tests/dev/CI, repo-relative,
    sorted; files for docs, linters, typing and releases left out (see module doc)."""
    found: set[str] = set()
    for pattern in REQUIREMENT_GLOBS:
        for path in repo.glob(pattern):
            rel = path.relative_to(repo).as_posix()
            low = rel.lower()
            if not path.is_file() or _NEVER.search(low):
                continue
            if path.name.lower() == "requirements.txt" or _TEST_WORDS.search(low):
                found.add(rel)
    return sorted(found)


def is_min_pins(rel: str) -> bool:
    return bool(_MIN_WORDS.search(rel.lower()))


def read_requirements(repo: Path, rel: str, notes: list[str],
                      seen: set[str] | None = None) -> list[str]:
    """A requirement file's lines, ``-r`` / ``--requirement`` includes followed (within the
    repository), comments, options and unreachable URLs dropped."""
    seen = seen if seen is not None else set()
    if rel in seen:
        return []
    seen.add(rel)
    path = repo / rel
    out: list[str] = []
    text = _read(path).replace("\\\n", " ")
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        m = re.match(r"^(?:-r|--requirement)[=\s]\s*(\S+)", line)
        if m:
            if _NEVER.search(m.group(1).lower()):
                continue  # an included linter / pre-commit / docs file is not for tests
            inc = (path.parent / m.group(1)).resolve()
            try:
                inc_rel = inc.relative_to(repo.resolve()).as_posix()
            except ValueError:
                continue
            out += read_requirements(repo, inc_rel, notes, seen)
            continue
        if line.startswith("-"):
            # -e ., -c constraints, --index-url ...: the project and the index are ours
            if _VCS.search(line):
                notes.append(f"dropped {line[:80]!r} from {rel}: a VCS/GitHub URL cannot be "
                             "fetched here")
            continue
        if _VCS.search(line):
            notes.append(f"dropped {line[:80]!r} from {rel}: a VCS/GitHub URL cannot be "
                         "fetched here")
            continue
        line = re.sub(r"\s+--hash[=\s]\S+", "", line)
        if line in (".",) or line.startswith(("./", "file:")):
            continue
        out.append(line)
    return out


def tox_testenv(repo: Path, notes: list[str]) -> tuple[list[str], list[str]]:
    """(deps, extras) of tox.ini's ``[testenv]``, how the project runs its own tests:
    plain requirement lines and the files its ``-r`` lines name (followed), factor-
    conditional lines and substitutions left out."""
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cfg.read_string(_read(repo / "tox.ini"))
    except configparser.Error:
        return [], []
    deps: list[str] = []
    extras: list[str] = []
    if cfg.has_option("testenv", "extras"):
        extras = [e.strip() for e in re.split(r"[,\s]+", cfg.get("testenv", "extras"))
                  if re.fullmatch(r"[A-Za-z0-9_.-]+", e.strip())]
    raw = cfg.get("testenv", "deps") if cfg.has_option("testenv", "deps") else ""
    for line in raw.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "{" in line or re.match(r"^[\w,!-]+:\s", line):
            continue
        m = re.match(r"^-r\s*(\S+)$", line)
        if m:
            if not _NEVER.search(m.group(1).lower()):
                deps += read_requirements(repo, m.group(1), notes)
            continue
        if line.startswith("-") or line.startswith((".", "/")):
            continue
        if _VCS.search(line):
            notes.append(f"dropped {line[:80]!r} from tox.ini: a VCS/GitHub URL cannot be "
                         "fetched here")
            continue
        deps.append(line)
    return deps, extras


# Tools a CI job installs to lint, package, publish or measure coverage: never test deps.
_CI_TOOLS = frozenset({
    "pip", "setuptools", "wheel", "twine", "build", "tox", "nox", "pre-commit", "codecov",
    "coveralls", "flake8", "mypy", "black", "isort", "pylint", "ruff", "pyflakes",
    "pycodestyle", "pydocstyle", "bandit", "check-manifest", "sphinx", "virtualenv",
    "pipenv", "poetry", "uv", "cibuildwheel", "setuptools-scm", "towncrier", "bump2version",
    "asv", "doctr", "ghapi",
})
_CI_FILES = (".github/workflows/*.yml", ".github/workflows/*.yaml", ".travis.yml",
             "azure-pipelines.yml", ".circleci/config.yml", "appveyor.yml", ".gitlab-ci.yml")
_PIP_INSTALL = re.compile(r"^(?:sudo\s+)?(?:[\w./-]*python[\d.]*\s+-m\s+)?(?:pip3?|conda|mamba)"
                          r"\s+install\s+(?P<args>.+)$")
# a script a CI step runs (`source ci/install.sh`, `bash build_tools/travis/install.sh`)
_CI_SCRIPT = re.compile(r"(?:^|[\s;&|])(?:source|bash|sh|\.)\s+\.?/?([\w./-]+\.sh)\b")
_YAML_PREFIX = re.compile(r"^(?:-\s+)?(?:(?:run|script|install|before_install|command)"
                          r"\s*:\s*[|>]?-?\s*)?")
_PKG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?(?:\s*[<>=!~]=?\s*[\w.*+-]+"
                  r"(?:\s*,\s*[<>=!~]=?\s*[\w.*+-]+)*)?$")
_ARG_OPTIONS = ("-r", "-c", "--requirement", "--constraint", "-f", "-i", "--index-url",
                "--extra-index-url", "--find-links", "--target", "-t", "--prefix", "--channel",
                "-n", "--name", "-p")


def distribution_name(pyproject: str, setup_cfg: str, setup_py: str) -> str | None:
    """The name a Python project publishes under, from the texts of its metadata files:
    ``[project] name``, setup.cfg's ``[metadata] name``, setup.py's ``name=`` (a literal,
    or a module-level constant it names)."""
    for table in ("project", "tool.poetry"):
        body = re.search(rf"(?ms)^\[{re.escape(table)}\]\s*$(.*?)(?=^\[|\Z)", pyproject)
        m = body and re.search(r"""(?m)^name\s*=\s*["']([^"']+)""", body.group(1))
        if m:
            return m.group(1)
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(setup_cfg)
        if cfg.has_option("metadata", "name"):
            return cfg.get("metadata", "name").strip()
    except configparser.Error:
        pass
    m = re.search(r"""\bname\s*=\s*(?:["']([A-Za-z0-9_.-]+)["']|([A-Za-z_]\w*)\s*[,)])""",
                  setup_py)
    if m and m.group(1):
        return m.group(1)
    if m:
        const = re.search(rf"""(?m)^{re.escape(m.group(2))}\s*=\s*["']([A-Za-z0-9_.-]+)["']""",
                          setup_py)
        return const.group(1) if const else None
    return None


def project_name(repo: Path) -> str | None:
    """The distribution name of the checkout (`distribution_name` of its files)."""
    return distribution_name(_read(repo / "pyproject.toml"), _read(repo / "setup.cfg"),
                             _read(repo / "setup.py"))


def _own_name(repo: Path) -> str:
    name = project_name(repo)
    return _norm(name) if name else ""


def _norm(name: str) -> str:
    return re.split(r"[\[<>=!~ ]", name, maxsplit=1)[0].lower().replace("_", "-")


def ci_packages(repo: Path, notes: list[str]) -> tuple[list[str], list[str]]:
    """(packages, project extras) the CI configurations ``pip install`` / ``conda install``,
    in their own lines and in the shell scripts they run: what the project's own test jobs
    add (numpy for a project whose tests skip without it). Tools (linters, packagers,
    coverage uploaders), the project itself, paths, variables, requirement files, options
    and version pins (the CI's, for its interpreters) are left out; a VCS URL is dropped
    with a note."""
    own = _own_name(repo)
    pkgs: list[str] = []
    extras: list[str] = []
    files = [f for pattern in _CI_FILES for f in sorted(repo.glob(pattern))]
    seen: set[Path] = set()
    while files:
        f = files.pop(0)
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        text = _read(f).replace("\\\n", " ")
        for raw in text.splitlines():
            line = _YAML_PREFIX.sub("", re.sub(r"(^|\s)#.*$", "", raw).strip())
            files += [repo / m.group(1) for m in _CI_SCRIPT.finditer(line)]
            for command in re.split(r"\s*(?:&&|\|\||;)\s*", line):
                m = _PIP_INSTALL.match(command.strip())
                # conda packages from a named channel are mostly native libraries
                # (openjpeg, gdcm), not the index's namesakes
                if m and not (re.search(r"\b(?:conda|mamba)\s+install", command)
                              and re.search(r"\s(?:-c|--channel)[\s=]", command)):
                    _pip_args(m.group("args"), own, pkgs, extras, notes,
                              f.relative_to(repo).as_posix())
    return pkgs, extras


def _pip_args(args: str, own: str, pkgs: list[str], extras: list[str], notes: list[str],
              where: str) -> None:
    skip_next = False
    args = re.sub(r"\$\{\{.*?\}\}|\$\{[^}]*\}|\$\([^)]*\)", " ", args)  # CI/shell expansions
    for tok in args.split():
        tok = tok.strip("'\"")
        if skip_next:
            skip_next = False
            continue
        if tok in _ARG_OPTIONS:
            skip_next = True
            continue
        em = re.match(r"^\.\[([\w,.-]+)\]$", tok)
        if em:
            extras += em.group(1).split(",")
            continue
        if tok.startswith("-") or "$" in tok or "{" in tok or tok in (".", ".."):
            continue
        if _VCS.search(tok):
            notes.append(f"dropped {tok[:80]!r} from {where}: a VCS/GitHub URL cannot be "
                         "fetched here")
            continue
        name = _norm(tok)
        # the CI's pins are for the CI's interpreters: the environment's day picks versions
        bare = re.split(r"\s*[<>=!~]", tok, maxsplit=1)[0]
        if _PKG.match(tok) and name not in _CI_TOOLS and name != own \
                and not name.startswith(("types-", "sphinx")) and bare not in pkgs:
            pkgs.append(bare)


def _dedupe(lines: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return tuple(out)


class InstallPlan(BaseModel):
    """What the setup script tries: ``widest`` all at once; failing that the first ``cores``
    set that installs, then each of ``addons`` on top of it, kept when it installs (a
    conflict or a package that cannot build drops that source, not the rest); ``minimal``
    sets last."""

    model_config = ConfigDict(frozen=True)

    widest: InstallSet
    cores: tuple[InstallSet, ...] = ()
    addons: tuple[InstallSet, ...] = ()
    minimal: tuple[InstallSet, ...] = ()

    def describe(self) -> str:
        def one(s: InstallSet) -> str:
            return f"{s.label} ({', '.join([*s.extras, *s.files]) or 'no extras'})"

        parts = [one(self.widest)]
        if self.cores:
            parts.append("else " + " / ".join(one(c) for c in self.cores)
                         + (" plus whichever of " + ", ".join(a.label for a in self.addons)
                            + " install" if self.addons else ""))
        parts += [f"else {one(m)}" for m in self.minimal]
        return "; ".join(parts)


def install_plan(repo: Path, pyproject: dict[str, Any], *, installable: bool,
                 notes: list[str]) -> InstallPlan:
    """The dependency sources of a checkout, arranged for the setup script (module doc)."""
    extras = project_extras(repo, pyproject) if installable else set()
    test_extras = tuple(e for e in TEST_EXTRAS if e in extras)
    optional = tuple(e for e in OPTIONAL_EXTRAS if e in extras)
    files = requirement_files(repo)
    regular = [f for f in files if not is_min_pins(f)]
    minimal = [f for f in files if is_min_pins(f)]
    per_file = {f: read_requirements(repo, f, notes) for f in regular}
    tox, tox_extras_all = tox_testenv(repo, notes)
    ci, ci_extras = ci_packages(repo, notes)
    tox_extras = tuple(dict.fromkeys(e for e in [*tox_extras_all, *ci_extras]
                                     if e in extras and e not in test_extras))
    widest = InstallSet(label="everything for tests",
                        extras=test_extras + tox_extras + optional,
                        requirements=_dedupe([ln for f in regular for ln in per_file[f]]
                                             + tox + ci), files=tuple(regular))
    cores: list[InstallSet] = []
    if installable:
        if test_extras + tox_extras:
            cores.append(InstallSet(label="the project with its test extras",
                                    extras=test_extras + tox_extras))
        cores.append(InstallSet(label="the project alone"))
    else:
        cores.append(InstallSet(label="pytest alone"))
    addons = [InstallSet(label=f, requirements=_dedupe(per_file[f]), files=(f,))
              for f in regular if per_file[f]]
    if tox:
        addons.append(InstallSet(label="tox deps", requirements=_dedupe(tox)))
    addons += [InstallSet(label=f"extra [{e}]", extras=(e,)) for e in optional]
    addons += [InstallSet(label=f"CI: {p}", requirements=(p,)) for p in ci
               if p not in widest.requirements[:len(widest.requirements) - len(ci)]]
    mins = [InstallSet(label=f"minimum pins {f}", requirements=_dedupe(
        read_requirements(repo, f, notes)), files=(f,)) for f in minimal]
    return InstallPlan(widest=widest, cores=tuple(cores), addons=tuple(addons),
                       minimal=tuple(mins))
