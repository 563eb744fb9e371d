"""Diagnose a failed setup or test run from its output, and propose the next action.

Rules that know each ecosystem, no LLM: a table of output signatures, each mapping to an
action — install the Debian package that provides a missing header, library or command;
pip-install a missing Python module; move to the Debian suite whose toolchain fits the
repository's era; let the tests use the network; run a missing build step. The build loop
(repolaunch/build.py) tries the actions one by one and rolls back those that do not help.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from envs.config import get_settings
from repolaunch.languages import Plan


@dataclass(frozen=True)
class Action:
    # "shell" (run in the build container), "suite", "network_at_test", "setup", or
    # "unavailable" (a note: what is needed cannot be had here)
    kind: str
    value: str
    reason: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.value}"


# Header (as in `#include <...>`) -> the Debian package that ships it.
HEADER_PACKAGES = {
    "zlib.h": "zlib1g-dev", "openssl/ssl.h": "libssl-dev", "openssl/crypto.h": "libssl-dev",
    "ffi.h": "libffi-dev", "curl/curl.h": "libcurl4-openssl-dev", "yaml.h": "libyaml-dev",
    "sqlite3.h": "libsqlite3-dev", "libxml/parser.h": "libxml2-dev",
    "libxml/xmlversion.h": "libxml2-dev", "libxslt/xslt.h": "libxslt1-dev",
    "bzlib.h": "libbz2-dev", "lzma.h": "liblzma-dev", "zstd.h": "libzstd-dev",
    "readline/readline.h": "libreadline-dev", "png.h": "libpng-dev", "jpeglib.h": "libjpeg-dev",
    "gmp.h": "libgmp-dev", "mpfr.h": "libmpfr-dev", "uv.h": "libuv1-dev", "pcre.h": "libpcre3-dev",
    "pcre2.h": "libpcre2-dev", "expat.h": "libexpat1-dev", "ncurses.h": "libncurses-dev",
    "curses.h": "libncurses-dev", "Python.h": "python3-dev", "gtest/gtest.h": "libgtest-dev",
    "gmock/gmock.h": "libgmock-dev", "fmt/core.h": "libfmt-dev", "fmt/format.h": "libfmt-dev",
    "nlohmann/json.hpp": "nlohmann-json3-dev", "catch2/catch.hpp": "catch2",
    "doctest/doctest.h": "doctest-dev", "doctest.h": "doctest-dev", "Eigen/Dense": "libeigen3-dev",
    "eigen3/Eigen/Dense": "libeigen3-dev", "boost/version.hpp": "libboost-dev",
    "event2/event.h": "libevent-dev", "jansson.h": "libjansson-dev", "cjson/cJSON.h": "libcjson-dev",
    "check.h": "check", "cmocka.h": "libcmocka-dev", "CUnit/CUnit.h": "libcunit1-dev",
    "criterion/criterion.h": "libcriterion-dev", "spdlog/spdlog.h": "libspdlog-dev",
    "benchmark/benchmark.h": "libbenchmark-dev", "gflags/gflags.h": "libgflags-dev",
    "glog/logging.h": "libgoogle-glog-dev", "tbb/tbb.h": "libtbb-dev", "uuid/uuid.h": "uuid-dev",
    "systemd/sd-daemon.h": "libsystemd-dev", "magic.h": "libmagic-dev", "pthread.h": "libc6-dev",
}
# Missing command -> the Debian package that provides it.
COMMAND_PACKAGES = {
    "autoreconf": "autoconf", "autoconf": "autoconf", "automake": "automake", "aclocal": "automake",
    "libtoolize": "libtool", "pkg-config": "pkg-config", "bison": "bison", "flex": "flex",
    "yacc": "bison", "gettext": "gettext", "msgfmt": "gettext", "swig": "swig",
    "protoc": "protobuf-compiler", "cmake": "cmake", "ninja": "ninja-build", "make": "make",
    "gcc": "gcc", "g++": "g++", "cc": "gcc", "c++": "g++", "git": "git", "wget": "wget",
    "zip": "zip", "unzip": "unzip", "xz": "xz-utils", "bzip2": "bzip2", "rsync": "rsync",
    "sqlite3": "sqlite3", "jq": "jq", "perl": "perl", "m4": "m4", "patch": "patch",
    "meson": "meson", "doxygen": "doxygen", "gperf": "gperf", "help2man": "help2man",
    "makeinfo": "texinfo", "valgrind": "valgrind", "file": "file", "bc": "bc", "xxd": "xxd",
}
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

_Rule = Callable[[re.Match[str], Plan, str, str], Iterable[Action]]
_RULES: list[tuple[re.Pattern[str], str, _Rule]] = []


def rule(pattern: str, phases: str = "setup,test"):
    def deco(fn: _Rule) -> _Rule:
        _RULES.append((re.compile(pattern, re.MULTILINE), phases, fn))
        return fn

    return deco


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


def _apt(pkg: str, why: str) -> Action:
    return Action("shell", f"apt-get update -qq && apt-get install -y -qq --no-install-recommends "
                  f"{pkg}", why)


@rule(r"fatal error: ([\w/.+-]+\.h(?:pp)?|[\w/]+/[\w]+): No such file or directory")
def _missing_header(m, plan, phase, step):
    header = m.group(1)
    pkg = HEADER_PACKAGES.get(header) or HEADER_PACKAGES.get(header.split("/")[-1])
    if pkg:
        yield _apt(pkg, f"missing header {header}")


@rule(r"(?:cannot find|unable to find library) -l([\w+.-]+)")
def _missing_lib(m, plan, phase, step):
    lib = m.group(1)
    yield _apt(f"lib{lib}-dev", f"missing library -l{lib}")


@rule(r"Package '?([\w+.-]+)'?,? (?:was not found in the pkg-config search path|not found)")
def _missing_pc(m, plan, phase, step):
    name = m.group(1)
    base = name[3:] if name.startswith("lib") else name
    yield _apt(f"lib{base}-dev", f"pkg-config cannot find {name}")


@rule(r"(?:^|\s)(?:sh: \d+: |bash: |/bin/sh: \d+: )?([\w.+-]+): (?:command )?not found")
def _missing_command(m, plan, phase, step):
    cmd = m.group(1)
    if cmd in COMMAND_PACKAGES:
        yield _apt(COMMAND_PACKAGES[cmd], f"missing command {cmd}")


# node-gyp (a native npm module built from source) names what it misses its own way.
@rule(r"gyp ERR! stack Error: not found: ([\w.+-]+)|gyp ERR! (?:find Python|stack Error: "
      r"Can't find Python)|gyp ERR! stack Error: `(make|g\+\+|gcc|cc)` failed")
def _node_gyp(m, plan, phase, step):
    what = m.group(1) or m.group(2) or "Python"
    yield _apt("python3 make g++", f"node-gyp builds a native module and misses {what}")


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


@rule(r"invalid (?:target|source) release: (\d+)|release version (\d+) not supported|"
      r"class file version (\d+)")
def _java_version(m, plan, phase, step):
    yield Action("suite", "trixie", "the repository wants a newer JDK (21)")


@rule(r"npm ERR! code EBADENGINE|The engine \"node\" is incompatible|"
      r"SyntaxError: Unexpected token '(?:\?\?=|\|\|=|&&=|#)'|"
      r"ReferenceError: (?:crypto|structuredClone|fetch) is not defined")
def _node_version(m, plan, phase, step):
    yield Action("suite", "trixie", "the repository wants a newer Node.js (20)")


@rule(r"go: go\.mod requires go >= ([\d.]+)|go\.mod requires go ([\d.]+)|"
      r"invalid go version '([\d.]+)'|unknown directive: toolchain")
def _go_version(m, plan, phase, step):
    yield Action("suite", "trixie", "the module wants a newer Go (1.22+)")


NETWORK = re.compile(r"Temporary failure in name resolution|Could not resolve host|getaddrinfo "
                     r"(?:ENOTFOUND|EAI_AGAIN)|Network is unreachable|UnknownHostException|"
                     r"dial tcp: lookup|Failed to establish a new connection|"
                     r"<urlopen error \[Errno -?\d+\]")


def needs_network(output: str) -> bool:
    """Whether a run's output shows it reaching for a network it did not have."""
    return NETWORK.search(output[-2_000_000:]) is not None


@rule(NETWORK.pattern, "test")
def _network(m, plan, phase, step):
    yield Action("network_at_test", "on", "the tests need the network")


@rule(r"Cannot find module '[^']*/(?:dist|build|lib|out)/[^']*'|"
      r"Error: Cannot find module '\.\./(?:dist|build|lib)", "test")
def _build_step(m, plan, phase, step):
    if plan.language.value in ("javascript", "typescript"):
        yield Action("setup", "npm run build --if-present", "a build step is missing")


@rule(r"ETARGET|No matching version found for|notarget", "setup")
def _npm_time_machine(m, plan, phase, step):
    # The registry's dates are not always publication dates (mirrors): resolve today's world.
    if "--before" in step:
        yield Action("replace", re.sub(r"\s*--before[= ]\S+", "", step),
                     "nothing matches the dependencies as of the commit date")


@rule(r"No solution found when resolving|because there are no versions of|"
      r"no matching distribution", "setup")
def _uv_time_machine(m, plan, phase, step):
    if "--exclude-newer" in step:
        yield Action("replace", re.sub(r"\s*--exclude-newer(?:-package)?[= ]\S+", "", step),
                     "nothing matches the dependencies as of the commit date")


@rule(r"Detected Maven Version: \S+ is not in the allowed range|"
      r"requires Maven version|Maven \d[\d.]* or (?:newer|later) is required", "setup,test")
def _maven_version(m, plan, phase, step):
    yield Action("suite", "trixie", "the project wants a newer Maven (3.9)")


@rule(r"No tests found in class|PHPUnit\\Framework\\Attributes", "test")
def _phpunit_version(m, plan, phase, step):
    if plan.language.value == "php":
        yield Action("suite", "trixie", "the tests want a newer PHPUnit (11)")


# Ruby gems the registry cannot give are often packaged by Debian as ruby-<name>.
RUBY_DEBS = {"pry": "pry", "rake": "rake", "rspec": "ruby-rspec", "byebug": "ruby-byebug",
             "simplecov": "ruby-simplecov", "rack/test": "ruby-rack-test",
             "active_support": "ruby-activesupport", "activesupport": "ruby-activesupport"}


@rule(r"cannot load such file -- ([\w/.-]+) \(LoadError\)")
def _ruby_load_error(m, plan, phase, step):
    if plan.language.value != "ruby":
        return
    lib = m.group(1)
    top = lib.split("/")[0]
    pkg = RUBY_DEBS.get(lib) or RUBY_DEBS.get(top) or f"ruby-{top.replace('_', '-')}"
    yield _apt(pkg, f"missing Ruby library {lib}")


def suites_towards(plan: Plan, direction: str, why: str) -> Iterable[Action]:
    """Suite actions towards an older (or newer) toolchain than the plan's suite, nearest
    first, for any language (the reason names the suite); an 'unavailable' note when no
    suite here goes that way."""
    from repolaunch import timemachine as tm

    here = plan.suite or get_settings().debian_suite
    step = tm.older_suite if direction == "older" else tm.newer_suite
    nxt = step(here)
    if nxt is None:
        yield Action("unavailable", f"{plan.language.value}-{direction}",
                     f"{why}, and no Debian suite {direction} than {here} can be had here")
    while nxt is not None:
        yield Action("suite", nxt, f"{why} (Debian {nxt})")
        nxt = step(nxt)


def diagnose(output: str, *, plan: Plan, phase: str, tried: set[str] = frozenset(),
             step: str = "") -> list[Action]:
    """Candidate actions for a failure of `step`, most specific first, none already tried."""
    from repolaunch import languages

    languages.names()  # language modules register their own rules when they load
    seen: set[str] = set(tried)
    out: list[Action] = []
    tail = output[-200_000:]  # the cause is near the end; a 1 GB log is not read whole
    for pattern, phases, fn in _RULES:
        if phase not in phases.split(","):
            continue
        for m in pattern.finditer(tail):
            for action in fn(m, plan, phase, step):
                if action.key not in seen:
                    seen.add(action.key)
                    out.append(action)
    return out


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[\d+m")
_SIGNATURES = (
    r"fatal error: .*", r"No module named '[^']+'", r"cannot find -l\S+",
    r"cannot load such file -- \S+", r"PHP Fatal error: .*", r"Fatal error: .*",
    r"\[ERROR\] (?:Rule \d+:.*|Detected .*|Failed to execute goal .*)",
    r"npm ERR! code \S+(?:\nnpm ERR! .*)?", r"Exception in thread \"main\" .*",
    r"\S+: (?:command )?not found", r"error: .*", r"Error: .*", r"ERROR: .*", r"FAILED.*",
)


def signature(output: str) -> str:
    """A one-line name for what went wrong, for transcripts and reports."""
    text = _ANSI.sub("", output[-200_000:])
    for pattern in _SIGNATURES:
        m = re.search(pattern, text)
        if m:
            return " ".join(m.group(0).split())[:200]
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"
