"""Diagnose a failed setup or test run from its output, and propose the next action.

Rules, no LLM: output signatures, each mapping to actions. Here are the ones every language
shares (a missing header, library, pkg-config module or command gets its Debian package;
tests that reach for the network), and the primitives (`rule`, `Action`, `apt_action`,
`suites_towards`); each language's own rules (its toolchain's era, its package manager's
time machine, its runner's plug-ins) live in its module under `repolaunch.languages` and
register with `@rule` when it loads. The build loop (repolaunch/build.py) tries the
actions one by one and rolls back those that do not help.
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
    # "shell" (run in the build container), "suite", "network_at_test", "setup", "build"
    # (a setup step whose output the tests read: every test run repeats it), or
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
_Rule = Callable[[re.Match[str], Plan, str, str], Iterable[Action]]
_RULES: list[tuple[re.Pattern[str], str, _Rule]] = []


def rule(pattern: str, phases: str = "setup,test"):
    def deco(fn: _Rule) -> _Rule:
        _RULES.append((re.compile(pattern, re.MULTILINE), phases, fn))
        return fn

    return deco


def apt_action(pkg: str, why: str) -> Action:
    """Install a Debian package in the build container."""
    return Action("shell", f"apt-get update -qq && apt-get install -y -qq --no-install-recommends "
                  f"{pkg}", why)


def apt_install_available(groups: list[list[str]], banner: str) -> str:
    """Shell: of each group of Debian package names (alternatives), the first apt knows;
    all installed in one apt call and, should that fail, one by one. ``$OK`` holds the
    names after it; it never fails (what Debian lacks is left out)."""
    pick = " ".join(
        "for p in " + " ".join(g) + '; do if apt-cache show "$p" >/dev/null 2>&1; then '
        'OK="$OK $p"; break; fi; done;' for g in groups)
    return (
        f"echo {shlex.quote('envfactory: ' + banner)}; "
        f"apt-get update -qq >/dev/null 2>&1; OK=; {pick} "
        'echo "envfactory: from Debian:$OK"; '
        "[ -z \"$OK\" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
        "--no-install-recommends $OK >/dev/null 2>&1 || for p in $OK; do "
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        '"$p" >/dev/null 2>&1 || echo "envfactory: apt could not install $p"; done; true'
    )


@rule(r"fatal error: ([\w/.+-]+\.h(?:pp)?|[\w/]+/[\w]+): No such file or directory")
def _missing_header(m, plan, phase, step):
    header = m.group(1)
    pkg = HEADER_PACKAGES.get(header) or HEADER_PACKAGES.get(header.split("/")[-1])
    if pkg:
        yield apt_action(pkg, f"missing header {header}")


@rule(r"(?:cannot find|unable to find library) -l([\w+.-]+)")
def _missing_lib(m, plan, phase, step):
    lib = m.group(1)
    yield apt_action(f"lib{lib}-dev", f"missing library -l{lib}")


@rule(r"Package '?([\w+.-]+)'?,? (?:was not found in the pkg-config search path|not found)")
def _missing_pc(m, plan, phase, step):
    name = m.group(1)
    base = name[3:] if name.startswith("lib") else name
    yield apt_action(f"lib{base}-dev", f"pkg-config cannot find {name}")


@rule(r"(?:^|\s)(?:sh: \d+: |bash: |/bin/sh: \d+: )?([\w.+-]+): (?:command )?not found")
def _missing_command(m, plan, phase, step):
    cmd = m.group(1)
    if cmd in COMMAND_PACKAGES:
        yield apt_action(COMMAND_PACKAGES[cmd], f"missing command {cmd}")


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
