"""Python: pyproject / setup.py / setup.cfg / requirements projects, tested with pytest.

Setup makes a tool venv with uv (`/opt/envfactory/tools`) and a project venv outside the
checkout (`/opt/envfactory/venv`), installs the project (editable where its build backend
can, else a normal install) with its test extras, test requirement files and pytest, and
records what was resolved in `/opt/envfactory/resolved.txt`. Tests run with pytest (it
runs unittest suites too), the checkout first on PYTHONPATH, so an instance at another
commit (`git checkout -f <sha> && git clean -fd`) tests its own code with no rebuild.
The report is pytest's JUnit XML with `junit_family=xunit1` (it carries `file=`), read as
`junit:pytest`: ids are node ids, `tests/test_x.py::TestC::test_name`.

Time machine: dependencies resolve as of a date with uv's `--exclude-newer` (build
dependencies such as setuptools included), so an old commit builds with the world of its
day. The date is the HEAD commit's committer date unless the plan is given another:

    PythonPlugin().plan(repo, det)                         # as of HEAD's commit date
    PythonPlugin().plan(repo, det, resolve_date="2021-06-01")
    PythonPlugin().plan(repo, det, resolve_date=None)      # latest packages

`ENVFACTORY_TIME_MACHINE=0` (or false/no/off) in the planning process turns it off for
every plan that was not given an explicit date. When pytest is ours (the project does not
declare it) and the date predates a pytest that runs on the image's Python 3.11, pytest
and the packages only it needs (`RUNNER_PACKAGES`) are resolved as of `PYTEST_FLOOR`:
the runner is not the project's world.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import Plan, register

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    tomllib = None  # type: ignore[assignment]

TOOLS = "/opt/envfactory/tools"
VENV = "/opt/envfactory/venv"
RESOLVED = "/opt/envfactory/resolved.txt"
REPORT = "/tmp/envfactory/pytest-junit.xml"
TIME_MACHINE_ENV = "ENVFACTORY_TIME_MACHINE"
# pytest 7.1.2 (2022-04-23) and py 1.11 are the oldest that run on Python 3.11 (older ones
# die in py's vendored apipkg with "AttributeError: __spec__").
PYTEST_FLOOR = "2022-04-24T00:00:00Z"
# pytest and the packages only it needs (py < 1.11 is what breaks on 3.11) share the floor
RUNNER_PACKAGES = ("pytest", "py", "pluggy", "iniconfig")
PATH = f"{VENV}/bin:{TOOLS}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

TEST_EXTRAS = ("test", "tests", "testing", "dev")
_REQUIREMENT_GLOBS = ("requirements*.txt", "*requirements*.txt", "requirements/*.txt")
_TEST_WORDS = re.compile(r"(^|[-_/.])(test|tests|testing|dev|develop)([-_/.]|$)")
_FALSE = {"0", "false", "no", "off"}
_AUTO: Any = object()


def time_machine_enabled() -> bool:
    """False when ENVFACTORY_TIME_MACHINE is 0/false/no/off."""
    return os.environ.get(TIME_MACHINE_ENV, "1").strip().lower() not in _FALSE


def to_utc(date: str) -> str:
    """An ISO date or timestamp -> RFC 3339 UTC (`2021-06-01T00:00:00Z`), as uv wants."""
    text = date.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T00:00:00+00:00"
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def commit_date(repo: Path) -> str | None:
    """HEAD's committer date in UTC, or None when repo is not a git checkout."""
    try:
        proc = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%cI"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return to_utc(out) if proc.returncode == 0 and out else None


def parse_resolved(text: str) -> dict[str, str]:
    """`name==version` lines of a resolved.txt (or the setup step's output) -> {name: version}.

    The project itself (`name @ file:///testbed`, `-e file:///testbed`) is left out."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and name and not name.startswith("#") and " " not in name:
            out[name.lower()] = version.strip()
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _pyproject(repo: Path) -> dict[str, Any]:
    path = repo / "pyproject.toml"
    if not path.is_file() or tomllib is None:
        return {}
    try:
        return tomllib.loads(_read(path))
    except (tomllib.TOMLDecodeError, ValueError):
        return {}


def _setup_cfg_extras(repo: Path) -> set[str]:
    path = repo / "setup.cfg"
    if not path.is_file():
        return set()
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(_read(path))
    except configparser.Error:
        return set()
    return set(cfg["options.extras_require"]) if cfg.has_section("options.extras_require") \
        else set()


def _setup_py_extras(repo: Path) -> set[str]:
    text = _read(repo / "setup.py")
    if "extras_require" not in text:
        return set()
    return {m.group(2) for m in re.finditer(r"""(["'])([A-Za-z0-9_.-]+)\1\s*:\s*\[""", text)}


def requirement_files(repo: Path) -> list[str]:
    """requirements.txt plus the test/dev requirement files, repo-relative, sorted."""
    found: set[str] = set()
    for pattern in _REQUIREMENT_GLOBS:
        for path in repo.glob(pattern):
            rel = path.relative_to(repo).as_posix()
            name = path.name.lower()
            if path.is_file() and (name == "requirements.txt" or _TEST_WORDS.search(rel.lower())):
                found.add(rel)
    return sorted(found)


def build_system(repo: Path) -> str:
    data = _pyproject(repo)
    if "project" in data or "build-system" in data or "poetry" in data.get("tool", {}):
        return "pyproject"
    if (repo / "setup.py").is_file() or (repo / "setup.cfg").is_file():
        return "setuptools"
    if requirement_files(repo):
        return "requirements"
    return "plain"


def declares_pytest(repo: Path) -> bool:
    files = ["pyproject.toml", "setup.py", "setup.cfg", "tox.ini", *requirement_files(repo)]
    return any(re.search(r"\bpytest\b(?![-_])", _read(repo / f)) for f in files)


def src_roots(repo: Path) -> list[str]:
    """What goes first on PYTHONPATH: `src/` when it holds code, then the repo root."""
    roots = []
    src = repo / "src"
    if src.is_dir() and (any(src.glob("*/__init__.py")) or any(src.glob("*.py"))):
        roots.append("/testbed/src")
    roots.append("/testbed")
    return roots


@register("python")
class PythonPlugin:
    language = Language.PYTHON

    def plan(self, repo: Path, detection: Detection, *, resolve_date: str | None = _AUTO) -> Plan:
        repo = Path(repo)
        system = build_system(repo)
        data = _pyproject(repo)
        notes: list[str] = []

        if resolve_date is _AUTO:
            date = commit_date(repo) if time_machine_enabled() else None
            if date is None:
                notes.append("time machine off: latest packages"
                             if not time_machine_enabled() else
                             "no commit date: latest packages")
        else:
            date = to_utc(resolve_date) if resolve_date else None
            if date is None:
                notes.append("time machine off: latest packages")
        uv_flags = ""
        if date:
            uv_flags = f" --exclude-newer {date}"
            notes.append(f"time machine: dependencies resolved as of {date} (uv --exclude-newer)")
            if not declares_pytest(repo) and date < PYTEST_FLOOR:
                uv_flags += "".join(f" --exclude-newer-package {name}={PYTEST_FLOOR}"
                                    for name in RUNNER_PACKAGES)
                notes.append(f"pytest (ours, not the project's) and {', '.join(RUNNER_PACKAGES[1:])}"
                             f" resolved as of {PYTEST_FLOOR}: older ones do not run on Python 3.11")

        # what to install
        targets: list[str] = []
        if system in ("pyproject", "setuptools"):
            extras = set(data.get("project", {}).get("optional-dependencies", {}) or {})
            extras |= _setup_cfg_extras(repo) | _setup_py_extras(repo)
            chosen = [e for e in TEST_EXTRAS if e in extras]
            targets.append("." + (f"[{','.join(chosen)}]" if chosen else ""))
            if chosen:
                notes.append(f"extras: {', '.join(chosen)}")
        reqs = requirement_files(repo)
        groups = [g for g in TEST_EXTRAS if g in (data.get("dependency-groups") or {})]

        uv = f"uv pip install --python {VENV}/bin/python{uv_flags}"
        extra_args = " ".join(
            [*(f"-r {shlex.quote(r)}" for r in reqs), *(f"--group {g}" for g in groups), "pytest"]
        )
        setup = [
            f"python3 -m venv {TOOLS} && {TOOLS}/bin/pip install -q --disable-pip-version-check uv"
            f" && {TOOLS}/bin/uv --version",
            f"uv venv -q --python /usr/bin/python3 {VENV}",
        ]
        if targets:
            project = " ".join(shlex.quote(t) for t in targets)
            # An editable install needs a PEP 660 backend (setuptools >= 64, Aug 2022); with
            # the build tools of an older day a normal install does, as the checkout comes
            # first on PYTHONPATH anyway.
            setup.append(f"{uv} -e {project} {extra_args} || {uv} {project} {extra_args}")
        else:
            setup.append(f"{uv} {extra_args}")
        header = f"# resolved as of {date}" if date else "# resolved: latest"
        setup.append(
            f"{{ echo {shlex.quote(header)}; uv pip freeze --python {VENV}/bin/python; }}"
            f" > {RESOLVED} && cat {RESOLVED} && uv cache clean -q"
        )
        notes.append(f"resolved versions: {RESOLVED}")
        if detection.test_framework == "unittest":
            notes.append("unittest suites run under pytest (one report format)")

        base = (f"mkdir -p /tmp/envfactory && rm -f {REPORT} && python -m pytest -rA"
                f" -p no:cacheprovider -o junit_family=xunit1 --junitxml={REPORT}")
        deps = ["pyproject.toml", "setup.py", "setup.cfg", *_REQUIREMENT_GLOBS,
                "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock", "pdm.lock"]
        return Plan(
            language=Language.PYTHON,
            image_family="python",
            build_system=system,
            test_framework=detection.test_framework or "pytest",
            setup_steps=tuple(setup),
            test_command=base,
            report_format="junit:pytest",
            report_path=REPORT,
            per_test_command=base + " {tests}",
            env={
                "PATH": PATH,
                "VIRTUAL_ENV": VENV,
                "PYTHONPATH": ":".join(src_roots(repo)),
                "PYTHONDONTWRITEBYTECODE": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "UV_LINK_MODE": "copy",
            },
            dependency_files=tuple(deps),
            notes=tuple(notes),
        )
