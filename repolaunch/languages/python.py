"""Python: pyproject / setup.py / setup.cfg / requirements projects, tested with pytest.

Setup makes a tool venv with uv (`/opt/envfactory/tools`) and a project venv outside the
checkout (`/opt/envfactory/venv`) on the interpreter of the commit's era
(`repolaunch.timemachine`: 3.9, 3.11 or 3.13, one per Debian suite), installs the project
(editable where its build backend can, else a normal install, else without build isolation,
else ``setup.py develop``) with the widest set of its test dependencies that resolves
(`repolaunch.languages.python_deps`), and records what was resolved — as of which day, on
which Python, from which set — in `/opt/envfactory/resolved.txt`. Tests run with pytest (it
runs unittest suites too), the checkout first on PYTHONPATH, so an instance at another
commit (`git checkout -f <sha> && git clean -fd`) tests its own code with no rebuild.
The report is pytest's JUnit XML with `junit_family=xunit1` (it carries `file=`), read as
`junit:pytest`: ids are node ids, `tests/test_x.py::TestC::test_name`. The plan's
``check_command`` collects the given test files at build time, so a runner that cannot
start is diagnosed (and another interpreter tried) while the environment is built.

Time machine: dependencies resolve as of a date with uv's `--exclude-newer` (build
dependencies such as setuptools included), so an old commit builds with the world of its
day — never older than the interpreter's `wheel_floor`. The date is the HEAD commit's
committer date unless the plan is given another:

    PythonPlugin().plan(repo, det)                         # as of HEAD's commit date
    PythonPlugin().plan(repo, det, resolve_date="2021-06-01")
    PythonPlugin().plan(repo, det, resolve_date=None)      # latest packages
    PythonPlugin().plan(repo, det, suite="bullseye")       # Python 3.9, whatever the era

`ENVFACTORY_TIME_MACHINE=0` (or false/no/off) in the planning process turns it off for
every plan that was not given an explicit date.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from pathlib import Path
from typing import Any

from envs.config import get_settings
from envs.gitcmd import commit_date, git
from envs.models import Language
from repolaunch import timemachine as tm_mod
from repolaunch.detect import Detection, Facts, Tree, first_match, read_toml
from repolaunch.languages import Plan, Traits, register
from repolaunch.languages.python_deps import (
    REQUIREMENT_GLOBS,
    InstallPlan,
    InstallSet,
    install_plan,
    project_name,
    requirement_files,
)
from repolaunch.languages.python_diagnose import AS_OF_FILE
from repolaunch.languages.python_runners import detect_runner

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    tomllib = None  # type: ignore[assignment]

TOOLS = "/opt/envfactory/tools"
VENV = "/opt/envfactory/venv"
RESOLVED = "/opt/envfactory/resolved.txt"
REPORT = "/tmp/envfactory/pytest-junit.xml"
TIME_MACHINE_ENV = "ENVFACTORY_TIME_MACHINE"
ADDON_TIMEOUT = 300  # seconds for one optional dependency source
PATH = f"{VENV}/bin:{TOOLS}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_FALSE = {"0", "false", "no", "off"}
_AUTO: Any = object()


def time_machine_enabled() -> bool:
    """False when ENVFACTORY_TIME_MACHINE is 0/false/no/off."""
    return os.environ.get(TIME_MACHINE_ENV, "1").strip().lower() not in _FALSE


def to_utc(date: str) -> str:
    """An ISO date or timestamp -> RFC 3339 UTC (`2021-06-01T00:00:00Z`), as uv wants."""
    return tm_mod.utc(tm_mod.parse_date(date))


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


_VCS_VERSIONED = re.compile(r"setuptools[_-]scm|use_scm_version|versioneer|hatch-vcs|"
                            r"hatch_vcs|pbr\b|dunamai|poetry-dynamic-versioning")


def vcs_version_env(repo: Path, notes: list[str]) -> dict[str, str]:
    """A pretend version for a project that takes its version from git tags when no tag is
    reachable from the commit (a mirror without tags, a fork): its build would otherwise
    fail or call itself 0.0; the nearest earlier tag by date, else 0.0.0."""
    text = "".join(_read(repo / f) for f in ("pyproject.toml", "setup.cfg", "setup.py"))
    if not _VCS_VERSIONED.search(text) or not (repo / ".git").exists():
        return {}

    def ask(*args: str) -> str:  # git's answer, "" when it has none
        return git("-C", str(repo), *args, timeout=60, default="").strip()

    if ask("describe", "--tags", "--abbrev=0"):
        return {}
    head = ask("log", "-1", "--format=%ct") or "0"
    version = "0.0.0"
    for line in ask("for-each-ref", "--sort=-creatordate",
                    "--format=%(creatordate:unix) %(refname:short)", "refs/tags").splitlines():
        when, _, tag = line.partition(" ")
        m = re.search(r"(\d+(?:\.\d+)+)", tag)
        if m and when.isdigit() and int(when) <= int(head):
            version = m.group(1)
            break
    notes.append(f"no git tag reaches the commit: the version is pretended to be {version}")
    return {"SETUPTOOLS_SCM_PRETEND_VERSION": version, "PBR_VERSION": version,
            "POETRY_DYNAMIC_VERSIONING_BYPASS": version}


def build_system(repo: Path) -> str:
    data = _pyproject(repo)
    if "project" in data or "build-system" in data or "poetry" in data.get("tool", {}):
        return "pyproject"
    if (repo / "setup.py").is_file() or (repo / "setup.cfg").is_file():
        return "setuptools"
    if requirement_files(repo):
        return "requirements"
    return "plain"


def src_roots(repo: Path) -> list[str]:
    """What goes first on PYTHONPATH: `src/` when it holds code, then the repo root."""
    roots = []
    src = repo / "src"
    if src.is_dir() and (any(src.glob("*/__init__.py")) or any(src.glob("*.py"))):
        roots.append("/testbed/src")
    roots.append("/testbed")
    return roots


# prints the requirements an installed distribution declares for the given extras
_EXTRA_REQS = (
    "import sys, re, importlib.metadata as m\n"
    "want = set(sys.argv[2:])\n"
    "for r in m.requires(sys.argv[1]) or []:\n"
    "    req, _, marker = r.partition(';')\n"
    "    extras = set(re.findall(r'extra\\s*==\\s*[\"\\'](.+?)[\"\\']', marker))\n"
    "    if extras & want: print(req.strip())\n")


def _uv_install_script(plan: InstallPlan, *, installable: bool, date: str | None,
                       pyver: str, own: str = "", narrow: bool = False) -> str:
    """The setup step that installs the dependencies (`python_deps.InstallPlan`): everything
    at once; else the first core set that installs (editable where the build backend can,
    else a normal install) and each add-on on top of it that installs; else the minimum
    pins, the project without build isolation, ``setup.py develop``. It records what went
    in, and as of which day, in the resolved file's header."""
    uv = f"uv pip install --python {VENV}/bin/python"
    tm = f"--exclude-newer {date}" if date else ""
    # A virtualenv of the day came with setuptools (pkg_resources) before Python 3.12.
    base_pkgs = "pytest" + (" setuptools wheel" if tm_mod.vkey(pyver) < (3, 12) else "")
    lines = [f'TM="{tm}"', "mkdir -p /opt/envfactory/reqs", "ok=''; kept=''; dropped=''",
             f'rm -f {AS_OF_FILE}; [ -n "$TM" ] && printf %s "${{TM##* }}" > {AS_OF_FILE}']
    counter = iter(range(1, 1000))

    def reqfile(cand: InstallSet) -> str:
        path = f"/opt/envfactory/reqs/{next(counter)}.txt"
        body = "\n".join(cand.requirements)
        lines.append(f"cat > {path} <<'ENVFACTORY_REQS'\n{body}\nENVFACTORY_REQS")
        return path

    def install(cand: InstallSet, pkgs: str = base_pkgs) -> str:
        rargs = f"-r {reqfile(cand)} {pkgs}".strip()
        if not installable:
            return f"{uv} $TM {rargs}"
        target = shlex.quote("." + (f"[{','.join(cand.extras)}]" if cand.extras else ""))
        return f"{{ {uv} $TM -e {target} {rargs} || {uv} $TM {target} {rargs}; }}"

    def attempt(cand: InstallSet, cmd: str) -> None:
        label = shlex.quote(cand.label)
        lines.append(f'[ -z "$ok" ] && {{ echo "envfactory: installing "{label};'
                     f" {cmd} && ok={label}; }}")

    if not narrow:  # the narrow script: the core sets only, no optional sources
        attempt(plan.widest, install(plan.widest))
    for core in plan.cores:
        attempt(core, install(core))
    if plan.addons and not narrow:
        lines.append(f'if [ -n "$ok" ] && [ "$ok" != {shlex.quote(plan.widest.label)} ]; then')
        for add in plan.addons:
            label = shlex.quote(add.label)
            # an add-on is optional: one that would compile for long is not worth waiting for
            cmd = (install(add, "") if add.extras
                   else f"timeout {ADDON_TIMEOUT} {uv} $TM -r {reqfile(add)}")
            if add.extras and own:
                # an extra that does not install whole goes in requirement by requirement,
                # read from the installed project's own metadata
                fallback = (f'n=0; {VENV}/bin/python -c {shlex.quote(_EXTRA_REQS)} {own} '
                            f'{" ".join(add.extras)} > /tmp/envfactory-extra.txt; '
                            f'while read -r r; do timeout {ADDON_TIMEOUT} {uv} $TM "$r" '
                            f'</dev/null && n=$((n+1)); done < /tmp/envfactory-extra.txt; '
                            f'kept="$kept, "{label}" ($n of $(wc -l < /tmp/envfactory-extra.txt))"')
            elif len(add.requirements) > 1:
                # a file that does not install as a whole goes in line by line: one package
                # that cannot build (a native library missing) does not cost the rest
                each = " ".join(shlex.quote(r) for r in add.requirements)
                fallback = (f'n=0; for r in {each}; do timeout {ADDON_TIMEOUT} {uv} $TM "$r" '
                            f'&& n=$((n+1)); done; kept="$kept, "{label}" ($n of '
                            f'{len(add.requirements)})"')
            else:
                fallback = f'dropped="$dropped, "{label}'
            lines.append(f'  echo "envfactory: adding "{label}; if {cmd}; then '
                         f'kept="$kept, "{label}; else {fallback}; fi')
        lines.append("fi")
    for cand in plan.minimal:
        attempt(cand, install(cand))
    if installable:
        # Old build backends: build tools of the day in the venv, then no isolation, then
        # the setuptools develop path.
        attempt(InstallSet(label="the project without build isolation"),
                f"{uv} $TM setuptools wheel pytest && {{ {uv} $TM --no-build-isolation -e . ||"
                f" {uv} $TM --no-build-isolation . ; }}")
        attempt(InstallSet(label="setup.py develop"),
                f"[ -f setup.py ] && {uv} $TM setuptools wheel pytest && {VENV}/bin/python"
                " setup.py -q develop")
    lines.append('[ -n "$ok" ] || { echo "envfactory: no dependency set installed" >&2;'
                 " exit 1; }")
    lines.append(
        f'{{ if [ -n "$TM" ]; then echo "# resolved as of ${{TM##* }}"; else '
        f'echo "# resolved: latest"; fi; echo "# python: {pyver}"; '
        f'echo "# set: $ok$kept${{dropped:+ (dropped${{dropped#,}})}}"; }}'
        f" > {RESOLVED}.head")
    return "\n".join(lines)


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree) -> Facts:
    f = Facts(package_manager="pip")
    pyproject = tree.read("pyproject.toml") if tree.has("pyproject.toml") else ""
    doc = read_toml(pyproject)
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
    req_py = project.get("requires-python") or first_match(
        r"""requires-python\s*=\s*["']([^"']+)""", pyproject)
    if not req_py and "poetry" in tool:
        req_py = tool["poetry"].get("dependencies", {}).get("python")
    req_py = req_py or first_match(r"""python_requires\s*=\s*["']([^"']+)""", setup_py) or first_match(
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


@register("python")
class PythonPlugin:
    language = Language.PYTHON
    traits = Traits(
        image_family="python",
        extensions=(".py", ".pyi"),
        build_files=("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini",
                     "noxfile.py", "Pipfile", "environment.yml"),
        test_files=(r"test_\w*\.pyi?", r"\w+_tests?\.pyi?", r"conftest\.py", r"tests?\.py"),
        version_key="python",
        github_names=("Python",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection, *, resolve_date: str | None = _AUTO,
             suite: str | None = None) -> Plan:
        """The plan for a checkout. ``resolve_date``: the day the world is taken as of
        (default: HEAD's commit date; None: today). ``suite``: the Debian suite, so the
        interpreter (default: chosen by era, `repolaunch.timemachine.choose_python`)."""
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
        if suite is None:
            default = tm_mod.SUITE_PYTHON.get(get_settings().debian_suite, "3.11")
            choice = tm_mod.choose_python(repo, date, default=default)
            suite, pyver = choice.suite, choice.version
            notes.append(choice.why)
        else:
            pyver = tm_mod.SUITE_PYTHON.get(suite, "?")
            notes.append(f"Python {pyver} ({suite}), as asked")
        uv_date = tm_mod.resolve_date(date, pyver) if date else None
        if uv_date:
            notes.append(f"time machine: dependencies resolved as of {uv_date} (uv "
                         "--exclude-newer)" + (f"; the commit's {date} predates wheels for "
                                               f"Python {pyver}" if uv_date != date else ""))

        installable = system in ("pyproject", "setuptools")
        deps_plan = install_plan(repo, data, installable=installable, notes=notes)
        notes.append("dependencies: " + deps_plan.describe())
        script = functools.partial(_uv_install_script, deps_plan, installable=installable,
                                   date=uv_date, pyver=pyver, own=project_name(repo) or "")
        freeze = (f"{{ cat {RESOLVED}.head; uv pip freeze --python {VENV}/bin/python; }}"
                  f" > {RESOLVED} && cat {RESOLVED} && uv cache clean -q")
        setup = [
            f"python3 -m venv {TOOLS} && {TOOLS}/bin/pip install -q --disable-pip-version-check uv"
            f" && {TOOLS}/bin/uv --version",
            f"uv venv -q --python /usr/bin/python3 {VENV}",
            script(),
            freeze,
        ]
        # the project with its test extras only, in a fresh venv
        fallback = [f"rm -rf {VENV} && uv venv -q --python /usr/bin/python3 {VENV}",
                    script(narrow=True), freeze]
        notes.append(f"resolved versions: {RESOLVED}")
        if detection.test_framework == "unittest":
            notes.append("unittest suites run under pytest (one report format)")

        runner = detect_runner(repo, REPORT)
        if runner.note:
            notes.append(runner.note)
        deps = ["pyproject.toml", "setup.py", "setup.cfg", "tox.ini", *REQUIREMENT_GLOBS,
                "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock", "pdm.lock"]
        return Plan(
            language=Language.PYTHON,
            image_family="python",
            suite=suite,
            build_system=system,
            test_framework=(runner.name if runner.name != "pytest"
                            else detection.test_framework or "pytest"),
            setup_steps=tuple(setup),
            test_command=runner.test_command,
            report_format=runner.report_format,
            report_path=runner.report_path,
            per_test_command=runner.per_test_command,
            scope_command=runner.per_test_command,  # each runner takes test files too
            check_command=runner.check_command,
            fallback_steps=tuple(fallback),
            env={
                "PATH": PATH,
                "VIRTUAL_ENV": VENV,
                "PYTHONPATH": ":".join(src_roots(repo)),
                "PYTHONDONTWRITEBYTECODE": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "UV_LINK_MODE": "copy",
                **vcs_version_env(repo, notes),
            },
            dependency_files=tuple(deps),
            notes=tuple(notes),
        )
