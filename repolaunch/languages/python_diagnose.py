"""Python's diagnose rules: a missing module gets its distribution (as of the day the
environment was resolved), code of another era moves the interpreter's suite, an option the
pytest configuration passes brings its plug-in, a too-old runner is upgraded, and the
time machine is dropped when nothing matches as of the commit date."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from repolaunch.diagnose import Action, rule, suites_towards
from repolaunch.languages import Plan

# Python import name -> distribution name, where they differ.
MODULE_DISTS = {
    "yaml": "PyYAML", "PIL": "Pillow", "cv2": "opencv-python-headless", "sklearn": "scikit-learn",
    "bs4": "beautifulsoup4", "dateutil": "python-dateutil", "dotenv": "python-dotenv",
    "jwt": "PyJWT", "OpenSSL": "pyOpenSSL", "Crypto": "pycryptodome", "serial": "pyserial",
    "attr": "attrs", "google.protobuf": "protobuf", "magic": "python-magic", "zmq": "pyzmq",
    "gi": "PyGObject", "MySQLdb": "mysqlclient", "psycopg2": "psycopg2-binary", "usb": "pyusb",
    "skimage": "scikit-image", "lxml": "lxml", "docx": "python-docx", "Levenshtein": "Levenshtein",
    "pkg_resources": "setuptools", "setuptools": "setuptools", "hypothesis": "hypothesis",
    "mock": "mock", "nose": "nose", "toml": "toml", "tomli": "tomli", "pytest_mock": "pytest-mock",
    "pytest_asyncio": "pytest-asyncio", "pytest_cov": "pytest-cov", "xdist": "pytest-xdist",
}

# The day the environment's dependencies were resolved as of, written by its setup (empty
# or absent: today's); a package a diagnosis adds comes from the same day.
AS_OF_FILE = "/opt/envfactory/as-of"


def pip_install(spec: str) -> str:
    """Install into the environment's own interpreter, as of the day its dependencies were
    resolved: with uv into $VIRTUAL_ENV where there is one (a uv venv has no pip), else
    with pip."""
    q = shlex.quote(spec)
    return (f'if [ -n "${{VIRTUAL_ENV:-}}" ] && command -v uv >/dev/null; then '
            f'd=$(cat {AS_OF_FILE} 2>/dev/null); uv pip install --python "$VIRTUAL_ENV/bin/python"'
            f' ${{d:+--exclude-newer "$d"}} {q}; else python -m pip install -q {q}; fi')


@rule(r"No module named '([\w.]+)'")
def _missing_module(m, plan, phase, step):
    if plan.language.value != "python":
        return
    module = m.group(1)
    top = module.split(".")[0]
    dist = MODULE_DISTS.get(module) or MODULE_DISTS.get(top) or top.replace("_", "-")
    yield Action("shell", pip_install(dist), f"missing Python module {module}")


def _python_suites(plan: Plan, direction: str, *, sure: bool = True) -> Iterable[Action]:
    """Suite actions towards an older (or newer) interpreter than the plan's. When the
    direction is `sure`, no suite here going that way is said with an 'unavailable' note
    (the build then fails as toolchain_unavailable unless another action fixes it)."""
    for action in suites_towards(plan, direction, f"the code wants a {direction} Python"):
        if sure or action.kind != "unavailable":
            yield action


@rule(r"requires a different Python|Requires-Python|python_requires|"
      r"Python (?:3\.\d+|version) (?:is )?(?:required|not supported)", "setup,test")
def _python_version(m, plan, phase, step):
    if plan.language.value == "python":
        yield from _python_suites(plan, "older", sure=False)
        yield from _python_suites(plan, "newer", sure=False)


# Code (or a pinned dependency) older than the interpreter: names the standard library
# dropped (collections' ABC aliases in 3.10; distutils, imp, asynchat in 3.12; inspect's
# formatargspec and asyncio.coroutine in 3.11), and old pytest/py on a new interpreter.
@rule(r"cannot import name '(?:Mapping|MutableMapping|Sequence|MutableSequence|Iterable|"
      r"Callable|Set|MutableSet|Hashable|OrderedDict)' from 'collections'|"
      r"module 'collections' has no attribute '\w+'|"
      r"No module named '(?:distutils|imp|asynchat|asyncore|smtpd)'|"
      r"cannot import name 'formatargspec' from 'inspect'|"
      r"module 'asyncio' has no attribute 'coroutine'|"
      r"'HTMLParser' object has no attribute 'unescape'|"
      r"required field \"lineno\" missing|AttributeError: __spec__|"
      r"module 'configparser' has no attribute 'SafeConfigParser'", "setup,test")
def _python_too_new(m, plan, phase, step):
    if plan.language.value == "python":
        yield from _python_suites(plan, "older")


# Code (or a dependency) newer than the interpreter: standard-library names it does not
# have yet, syntax it cannot parse.
@rule(r"cannot import name '\w+' from '(?:typing|collections\.abc|functools|itertools|"
      r"contextlib|dataclasses|enum|zoneinfo|importlib\.metadata)'|"
      r"No module named '(?:tomllib|zoneinfo|graphlib)'|"
      r"SyntaxError: (?:invalid syntax|expected ':')\s*$", "setup,test")
def _python_too_old(m, plan, phase, step):
    if plan.language.value == "python":
        yield from _python_suites(plan, "newer")


# An option the project's pytest configuration passes, and the plug-in that defines it.
PYTEST_OPTION_PLUGINS = {
    "--cov": "pytest-cov", "--cov-report": "pytest-cov", "--no-cov": "pytest-cov",
    "-n": "pytest-xdist", "--numprocesses": "pytest-xdist", "--dist": "pytest-xdist",
    "--timeout": "pytest-timeout", "--reruns": "pytest-rerunfailures",
    "--mpl": "pytest-mpl", "--benchmark-skip": "pytest-benchmark",
    "--benchmark-disable": "pytest-benchmark", "--remote-data": "pytest-remotedata",
    "--doctest-rst": "pytest-doctestplus", "--doctest-plus": "pytest-doctestplus",
    "--flake8": "pytest-flake8", "--mypy": "pytest-mypy", "--isort": "pytest-isort",
    "--black": "pytest-black", "--pep8": "pytest-pep8", "--randomly-seed": "pytest-randomly",
    "--hypothesis-profile": "hypothesis", "--strict-config": "pytest>=6.2",
    "--import-mode": "pytest>=6", "--asyncio-mode": "pytest-asyncio",
    "--junit-prefix": "pytest", "--forked": "pytest-forked", "--instafail": "pytest-instafail",
}


@rule(r"error: unrecognized arguments: ((?:-\S+(?:[= ]\S+)? ?)+)", "setup,test")
def _pytest_option(m, plan, phase, step):
    if plan.language.value != "python":
        return
    for opt in re.findall(r"(-{1,2}[\w-]+)", m.group(1)):
        dist = PYTEST_OPTION_PLUGINS.get(opt)
        if dist:
            yield Action("shell", pip_install(dist), f"the pytest configuration passes {opt}")


@rule(r"PluginValidationError|pluggy\.\S*Error|"
      r"module 'pytest' has no attribute '\w+'|cannot import name '\w+' from '_pytest", "setup,test")
def _old_runner(m, plan, phase, step):
    if plan.language.value == "python":
        yield Action("shell", pip_install("pytest>=6.2.5"),
                     "the test runner is too old for its plug-ins")


@rule(r"No solution found when resolving|because there are no versions of|"
      r"no matching distribution", "setup")
def _uv_time_machine(m, plan, phase, step):
    if "--exclude-newer" in step:
        yield Action("replace", re.sub(r"\s*--exclude-newer(?:-package)?[= ]\S+", "", step),
                     "nothing matches the dependencies as of the commit date")
