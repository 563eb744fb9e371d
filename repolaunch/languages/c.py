"""C (and, through `NativePlugin`, C++): CMake, autotools, meson or a plain Makefile.

The build happens in the test command as well as in setup: an instance at another commit is
the env image plus a checkout, so the test command reconfigures and rebuilds incrementally
(CMake and meson build out of tree, in `BUILD_DIR`, which a checkout never touches;
autotools builds in tree, regenerating `configure` / `Makefile` when a checkout removed
them).

What the test command reports, by test framework:

- GoogleTest: every test binary writes JUnit XML through ``GTEST_OUTPUT=xml:<dir>/`` while
  ctest (or, with no ctest tests, each binary found) runs; ``junit:gtest``.
- Catch2 / doctest: the test binaries (found among the built executables by strings only
  those frameworks link in) are run with their XML reporters; ``catch2-xml`` / ``doctest-xml``.
- otherwise with CMake: ``ctest --output-junit``; ``junit:name`` (the ctest test names).
- autotools: ``make check`` output (``PASS: tests/foo``); ``automake``.
- meson: meson's own JUnit log; ``junit:name``.
- a plain Makefile with a ``check`` / ``test`` target: its output, read as ``plain`` lines,
  and else its test targets as ``make --trace`` names them (``make-trace``).

No script here contains a brace besides ``{tests}``: a caller may substitute with
``str.format`` as well as ``str.replace``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, first_match
from repolaunch.diagnose import Action, rule, suites_towards
from repolaunch.languages import Plan, Traits, register

BUILD_DIR = "/var/tmp/envfactory/build"
REPORT = "/tmp/envfactory-report.xml"
XML_DIR = "/tmp/envfactory-xml"
_SKIP_DIRS = {".git", "node_modules", "vendor", "third_party", "external", "build"}
_SOURCE_EXT = {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".ipp"}
_MAX_SCAN_BYTES = 4_000_000

# Strings that only binaries linking the framework contain: its command-line options, or
# (linked to a shared library, as Debian's Catch2 3 is) its namespace's mangled prefix.
MARKERS = {"gtest": ("gtest_filter",), "catch2": ("list-test-names-only", "_ZN5Catch"),
           "doctest": ("dt-abort-after",)}

_FRAMEWORK_ALIASES = {
    "gtest": "gtest", "googletest": "gtest", "google-test": "gtest", "gmock": "gtest",
    "catch": "catch2", "catch2": "catch2", "doctest": "doctest", "ctest": "ctest",
    "automake": "automake", "make-check": "automake", "meson": "meson", "tcl": "tcl",
}
_BUILD_ALIASES = {
    "cmake": "cmake", "autotools": "autotools", "autoconf": "autotools", "automake": "autotools",
    "configure": "autotools", "meson": "meson", "make": "make", "makefile": "make",
}


def _iter_files(repo: Path):
    stack = [repo]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.is_dir() and not p.is_symlink():
                if p.name not in _SKIP_DIRS and not p.name.startswith("."):
                    stack.append(p)
            elif p.is_file():
                yield p


def scan_framework(repo: Path) -> str | None:
    """The test framework the sources and build files name, if any."""
    found: set[str] = set()
    budget = _MAX_SCAN_BYTES
    for p in _iter_files(repo):
        if p.suffix.lower() not in _SOURCE_EXT and p.name not in (
            "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "Makefile.am",
            "meson.build", "configure.ac",
        ) and p.suffix != ".cmake":
            continue
        try:
            text = p.read_text(errors="replace")[:200_000]
        except OSError:
            continue
        budget -= len(text)
        if re.search(r"gtest/gtest\.h|gmock/gmock\.h|\bGTest\b|\bgtest_main\b|-lgtest", text):
            found.add("gtest")
        if re.search(r"catch2/catch|[\"<]catch\.hpp|\bCatch2\b", text):
            found.add("catch2")
        if re.search(r"doctest/doctest\.h|[\"<]doctest\.h|\bdoctest\b", text):
            found.add("doctest")
        if budget <= 0:
            break
    for name in ("gtest", "catch2", "doctest"):
        if name in found:
            return name
    return None


def scan_build_system(repo: Path) -> str:
    if (repo / "CMakeLists.txt").is_file():
        return "cmake"
    if any((repo / n).is_file() for n in ("configure.ac", "configure.in", "Makefile.am")):
        return "autotools"
    if (repo / "meson.build").is_file():
        return "meson"
    if (repo / "configure").is_file():
        return "autotools"
    if _makefile(repo):
        return "make"
    return "make"


def _makefile(repo: Path) -> Path | None:
    for n in ("GNUmakefile", "makefile", "Makefile"):
        if (repo / n).is_file():
            return repo / n
    return None


def make_targets(repo: Path) -> set[str]:
    mk = _makefile(repo)
    if mk is None:
        return set()
    try:
        text = mk.read_text(errors="replace")
    except OSError:
        return set()
    return set(re.findall(r"(?m)^([A-Za-z0-9_.-]+)\s*:(?!=)", text))


def _find_binaries(where: str, markers: tuple[str, ...]) -> str:
    """Shell: the executables under `where` that contain one of `markers`, one a line,
    sorted."""
    pattern = " ".join(f"-e '{m}'" for m in markers)
    return (
        f"find {where} -name .git -prune -o -path '*/CMakeFiles' -prune -o -type f -perm -u+x "
        f"! -name '*.so' ! -name '*.so.*' ! -name '*.sh' ! -name '*.py' -print0 2>/dev/null "
        f"| xargs -0 -r grep -l -a {pattern} 2>/dev/null | sort"
    )


def _run_xml_binaries(where: str, framework: str, select: str = "") -> list[str]:
    """Shell lines: run every Catch2/doctest binary with its XML reporter into XML_DIR."""
    if framework == "catch2":
        run = f'"$t" -r xml -o "{XML_DIR}/$n.xml" {select}'
    else:
        run = f'"$t" -r=xml --out="{XML_DIR}/$n.xml" {select}'
    return [
        "i=0; rc=0",
        f"for t in $({_find_binaries(where, MARKERS[framework])}); do",
        '  i=$((i+1)); n="$i-$(basename "$t")"',
        f"  {run.rstrip()} || rc=1",
        "done",
        f'[ "$i" -gt 0 ] || echo "envfactory: no {framework} test binary was built" >&2',
        '[ "$i" -gt 0 ] || rc=1',
        f'cat "{XML_DIR}"/*.xml > "{REPORT}" 2>/dev/null',
        "exit $rc",
    ]


def _regex_alternation(var: str) -> list[str]:
    """Shell: `var`= an anchored alternation ``^(a|b)$`` of the selected ids, escaped."""
    return [
        f"{var}=$(for s in {{tests}}; do printf '%s\\n' \"$s\"; done "
        "| sed 's/[][\\\\.*^$+?()|]/\\\\&/g' | paste -sd'|' -)",
        f'{var}="^($' + var + ')$"',
    ]


# A CMake option that switches a project's own tests on: BUILD_TESTS, FOO_TEST,
# gtest_build_tests, ENABLE_TESTING, FOO_ENABLE_TESTS (CTest's BUILD_TESTING is always set)
_TEST_OPTION = re.compile(r"(?i)^(?:\w+_)?(?:build_|enable_)?test(?:s|ing)?(?:_enabled?)?$")
_OPTION = re.compile(r"\b(?:cmake_dependent_)?option\s*\(\s*([A-Za-z_][\w-]*)\s", re.I)


def cmake_test_switches(repo: Path) -> str:
    """``-D<option>=ON`` for every option of the top CMake files that switches tests on."""
    files = [repo / "CMakeLists.txt", *sorted((repo / "cmake").glob("*.cmake"))]
    names: list[str] = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _OPTION.finditer(text):
            if _TEST_OPTION.match(m.group(1)) and m.group(1) not in names \
                    and m.group(1) != "BUILD_TESTING":
                names.append(m.group(1))
    return "".join(f" -D{n}=ON" for n in names)


_BUILD_ALL = 'cmake --build "$B" --parallel "$(nproc)" -- -k 0'
_BUILD_FAILED = 'echo "envfactory: build failed" >&2'


def _cmake_files() -> list[str]:
    """Shell: scope a CMake build to the test files given: the ctest tests named as the
    files are (``test/format-test.cc`` is ctest's ``format-test``, the way CMake projects
    name a test after its source), and only their targets built. When no ctest test has
    such a name, `R` is empty and everything is built and run."""
    return [
        "T=$(for f in {tests}; do basename \"$f\" | sed 's/[.][^.]*$//'; done | sort -u)",
        "R=$(printf '%s\\n' $T | sed 's/[][\\\\.*^$+?()|]/\\\\&/g' | paste -sd'|' -)",
        '[ -n "$T" ] && R="^($R)\\$"',
        'if [ -n "$T" ] && ctest --test-dir "$B" -N -R "$R" | grep -q "Total Tests: [1-9]"; then',
        f'  {_BUILD_ALL.replace(" -- ", " --target $T -- ")} > "$B/envfactory-build.log" 2>&1 || '
        f'if grep -q "unknown target" "$B/envfactory-build.log"; then {_BUILD_ALL} || '
        f'{_BUILD_FAILED}; else tail -40 "$B/envfactory-build.log"; {_BUILD_FAILED}; fi',
        f"else R=; {_BUILD_ALL} || {_BUILD_FAILED}",
        "fi",
    ]


def _cmake(framework: str, selected: bool, switches: str = "", files: bool = False) -> list[str]:
    head = [
        f'B={BUILD_DIR}; rm -rf "{REPORT}" "{XML_DIR}"; mkdir -p "{XML_DIR}" "$B"',
        'G=; [ -f "$B/CMakeCache.txt" ] || G="-G Ninja"',
        f'cmake -S . -B "$B" $G -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON{switches} '
        '|| exit 1',
        *(_cmake_files() if files else [f"{_BUILD_ALL} || {_BUILD_FAILED}", "R="]),
    ]
    quoted_b = '"$B"'
    if framework == "gtest":
        lines = list(head)
        if selected:
            lines.append("F=$(for s in {tests}; do printf '%s:' \"$s\"; done)")
            lines.append('export GTEST_FILTER="$F"')
        lines += [
            'set --; [ -z "$R" ] || set -- -R "$R"',
            f'GTEST_OUTPUT="xml:{XML_DIR}/" ctest --test-dir "$B" '
            f'--output-junit "{XML_DIR}/ctest.junit" "$@"; rc=$?',
            f'if ! ls "{XML_DIR}"/*.xml >/dev/null 2>&1; then rc=0',
            f"  for t in $({_find_binaries(quoted_b, MARKERS['gtest'])}); do",
            f'    "$t" --gtest_output="xml:{XML_DIR}/" || rc=1',
            "  done",
            "fi",
            f'cat "{XML_DIR}"/*.xml > "{REPORT}" 2>/dev/null',
            "exit $rc",
        ]
        return lines
    if framework in ("catch2", "doctest"):
        return head + _run_xml_binaries('"$B"', framework, _select_args(framework, selected))
    lines = list(head)
    if selected:
        lines += _regex_alternation("R")
    lines += ['set --; [ -z "$R" ] || set -- -R "$R"',
              f'ctest --test-dir "$B" --output-junit "{REPORT}" "$@"']
    return lines


def _select_args(framework: str, selected: bool) -> str:
    if not selected:
        return ""
    if framework == "catch2":
        return "{tests}"
    # doctest: test cases by name (a subcase id "case > sub" selects its case), comma-joined;
    # without -nss doctest reports every test case the filter left out as skipped
    return (
        "-nss -tc=\"$(for s in {tests}; do printf '%s\\n' \"$s\"; done "
        "| sed 's/ > .*//' | sort -u | paste -sd, -)\""
    )


def _autotools(selected: bool) -> list[str]:
    select = ' TESTS="$(echo {tests})"' if selected else ""
    return [
        "if [ ! -x configure ]; then autoreconf -fi || exit 1; fi",
        "if [ ! -f Makefile ]; then ./configure || exit 1; fi",
        f'make -k -j"$(nproc)" check{select}',
    ]


def _meson(selected: bool) -> list[str]:
    select = " {tests}" if selected else ""
    return [
        f'B={BUILD_DIR}; rm -f "{REPORT}"',
        'if [ ! -f "$B/build.ninja" ]; then meson setup "$B" || exit 1; fi',
        f'meson test -C "$B"{select}; rc=$?',
        f'cp "$B/meson-logs/testlog.junit.xml" "{REPORT}" 2>/dev/null',
        "exit $rc",
    ]


def _make(framework: str, targets: set[str], selected: bool) -> tuple[list[str], str]:
    """A plain Makefile: (script lines, report format)."""
    target = "check" if "check" in targets else "test" if "test" in targets else ""
    if framework in ("catch2", "doctest"):
        lines = [f'rm -rf "{REPORT}" "{XML_DIR}"; mkdir -p "{XML_DIR}"', 'make -k -j"$(nproc)"']
        if target:  # the test binary may be built only by the test target
            lines.append(
                f"[ -n \"$({_find_binaries('.', MARKERS[framework])})\" ] "
                f"|| make -k {target} >/dev/null 2>&1"
            )
        return lines + _run_xml_binaries(".", framework, _select_args(framework, selected)), ""
    if framework == "gtest":
        lines = [f'rm -rf "{REPORT}" "{XML_DIR}"; mkdir -p "{XML_DIR}"', 'make -k -j"$(nproc)"']
        if selected:
            lines.append("export GTEST_FILTER=$(for s in {tests}; do printf '%s:' \"$s\"; done)")
        if target:
            lines.append(f'GTEST_OUTPUT="xml:{XML_DIR}/" make -k {target}; rc=$?')
        else:
            lines.append("rc=0")
        lines += [
            f'if ! ls "{XML_DIR}"/*.xml >/dev/null 2>&1; then rc=0',
            f"  for t in $({_find_binaries('.', MARKERS['gtest'])}); do",
            f'    "$t" --gtest_output="xml:{XML_DIR}/" || rc=1',
            "  done",
            "fi",
            f'cat "{XML_DIR}"/*.xml > "{REPORT}" 2>/dev/null',
            "exit $rc",
        ]
        return lines, ""
    select = ' TESTS="$(echo {tests})"' if selected else ""
    # --trace names each target whose recipe runs: the test targets are the tests when
    # the recipes print no per-test lines of their own
    return [f"make --trace -k {target or 'all'}{select}"], "make-trace"


def _tcl(scope: str = "") -> list[str]:
    """A Tcl harness (``runtest`` drives ``tests/test_helper.tcl``): rebuild, then run.

    ``scope`` "files": each test file that declares tests is one ``--single`` unit (its path
    under ``tests/`` without ``.tcl``), as the harness's maintainers and SWE-bench run one
    unit; helper files among them are not units. ``scope`` "ids": ``--only NAME`` each.
    ``--durable``: a failing test does not stop the run."""
    lines = ['make -j"$(nproc)" >/dev/null 2>&1 || make 2>&1 | tail -40', "set --"]
    if scope == "files":
        lines += [
            'for f in {tests}; do case "$f" in tests/*.tcl)',
            "  grep -qE '^[[:space:]]*test[[:space:]]' \"$f\" 2>/dev/null || continue",
            "  set -- \"$@\" --single \"$(printf '%s' \"$f\" | sed 's|^tests/||; s|[.]tcl$||')\";;",
            "esac; done",
        ]
    elif scope == "ids":
        lines.append('for s in {tests}; do set -- "$@" --only "$s"; done')
    return [*lines, 'TERM=dumb ./runtest --durable "$@"']


_SUBMODULE = re.compile(r"(?ms)^\[submodule\s+\"[^\"]*\"\](.*?)(?=^\[|\Z)")


def empty_submodules(repo: Path) -> list[tuple[str, str]]:
    """(path, library name) of each git submodule whose directory the checkout left empty
    (its repository cannot be fetched here); the name is the URL's last part, lowercased,
    without ``.git``."""
    try:
        text = (repo / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for m in _SUBMODULE.finditer(text):
        path = first_match(r"(?m)^\s*path\s*=\s*(\S+)", m.group(1))
        url = first_match(r"(?m)^\s*url\s*=\s*(\S+)", m.group(1)) or path or ""
        where = repo / path if path else None
        if where is None or (where.is_dir() and any(where.iterdir())):
            continue
        name = library_name(url)
        if name:
            out.append((path, name))
    return out


def library_name(url: str) -> str:
    """A library's name from its repository URL: the last part, lowercased, without
    ``.git`` ("" when that is no plausible package name)."""
    name = re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1]).lower()
    return name if re.fullmatch(r"[a-z0-9][a-z0-9+.-]{2,}", name) else ""


def system_library_step(names: list[str], strict: bool = False) -> str:
    """Shell: for each library name, Debian's development package of the same library,
    installed when there is one: a ``-dev`` package that apt finds for the name and whose
    own name holds the name's first four letters (oniguruma: libonig-dev, zlib:
    zlib1g-dev), the shortest such name first; else a package of exactly that name
    (header-only libraries: catch2). `strict`: fail when one has none (an action that
    installed nothing did not help)."""
    words = " ".join(shlex.quote(n) for n in names)
    return (
        "apt-get update -qq >/dev/null 2>&1; rc=0; "
        f"for n in {words}; do k=$(printf '%s' \"$n\" | sed 's/^lib//' | cut -c1-4); "
        "p=$(apt-cache search \"$n\" 2>/dev/null | awk '{print $1}' | grep -- '-dev$' "
        "| grep -F -- \"$k\" | awk '{print length, $0}' | sort -n | head -1 | cut -d' ' -f2); "
        '[ -n "$p" ] || ! apt-cache show "$n" >/dev/null 2>&1 || p=$n; '
        'if [ -n "$p" ]; then echo "envfactory: library $n -> Debian $p"; '
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        '"$p" >/dev/null || { echo "envfactory: apt could not install $p"; rc=1; }; '
        'else echo "envfactory: no Debian package for library $n"; rc=1; fi; done; '
        + ("exit $rc" if strict else "true")
    )


# CMake's FetchContent / ExternalProject clones or downloads a dependency from a host out of
# reach: Debian's package of the same library, which the project's find_package (commonly
# tried before fetching) then finds.
@rule(r"Failed to clone repository: '([^']+)'|"
      r"error: downloading '([^']+)' failed", "setup")
def _fetched_dependency(m, plan, phase, step):
    if plan.language not in (Language.C, Language.CPP):
        return
    name = library_name(re.sub(r"(/archive/.*|/releases/.*|\.(zip|tar\.gz|tgz))$", "",
                               m.group(1) or m.group(2)))
    if name:
        yield Action("shell", system_library_step([name], strict=True),
                     f"CMake fetches {name} from a host out of reach; Debian's package of it")
        # the package is there but older than the version find_package asks for (Catch2 3
        # against bookworm's 2.13): a newer suite's package
        yield from suites_towards(plan, "newer",
                                  f"Debian's {name} is older than the one CMake asks for")


# C and C++ share their build files; which of the two a repository is, the detector decides.
NATIVE_BUILD_FILES = ("CMakeLists.txt", "meson.build", "configure.ac", "configure.in",
                      "Makefile.am", "configure", "Makefile", "GNUmakefile", "makefile")


class NativePlugin:
    """C and C++ share build systems and test tooling; the subclasses fix the language."""

    language: Language = Language.C

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree, self.language)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        build = _BUILD_ALIASES.get((detection.build_system or "").lower()) or scan_build_system(repo)
        if build == "cmake" and not (repo / "CMakeLists.txt").is_file():
            build = scan_build_system(repo)
        declared = _FRAMEWORK_ALIASES.get((detection.test_framework or "").lower())
        framework = declared if declared in MARKERS else scan_framework(repo) or declared
        notes: list[str] = []
        setup: list[str]
        report_path: str | None = REPORT
        scope: list[str] = []
        if framework == "tcl":
            fmt, report_path = "tcltest", None
            setup = [
                "command -v tclsh >/dev/null || (apt-get update && "
                "apt-get install -y --no-install-recommends tcl)",
                'make -j"$(nproc)"',
            ]
            test, per_test, scope = _tcl(), _tcl("ids"), _tcl("files")
            deps = ("Makefile", "makefile", "GNUmakefile", "*.mk", "runtest")
            notes.append("a Tcl test harness (runtest): its [ok]:/[err]: lines are read")
        elif build == "cmake":
            fmt = {"gtest": "junit:gtest", "catch2": "catch2-xml", "doctest": "doctest-xml"}.get(
                framework or "", "junit:name"
            )
            framework = framework if framework in MARKERS else "ctest"
            switches = cmake_test_switches(repo)
            if switches:
                notes.append(f"CMake options that switch tests on:{switches}")
            setup = [
                f"mkdir -p {BUILD_DIR} && cmake -S . -B {BUILD_DIR} -G Ninja "
                f"-DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON{switches}",
                f'cmake --build {BUILD_DIR} --parallel "$(nproc)"',
            ]
            test = _cmake(framework, False, switches)
            per_test = _cmake(framework, True, switches)
            if framework in ("gtest", "ctest"):  # catch2/doctest binaries run as they are
                scope = _cmake(framework, False, switches, files=True)
            deps = ("CMakeLists.txt", "**/CMakeLists.txt", "cmake/*.cmake", "*.cmake")
        elif build == "autotools":
            framework, fmt, report_path = "automake", "automake", None
            setup = [
                "if [ ! -x configure ]; then autoreconf -fi; fi",
                "./configure",
                'make -j"$(nproc)"',
            ]
            test, per_test = _autotools(False), _autotools(True)
            deps = ("configure.ac", "configure.in", "**/Makefile.am", "m4/*.m4")
            notes.append("make check output is read as automake PASS:/FAIL: lines")
        elif build == "meson":
            fmt, framework = "junit:name", framework or "meson"
            setup = [
                "command -v meson >/dev/null || "
                "(apt-get update && apt-get install -y --no-install-recommends meson)",
                f"meson setup {BUILD_DIR}",
                f"meson compile -C {BUILD_DIR}",
            ]
            test, per_test = _meson(False), _meson(True)
            deps = ("meson.build", "**/meson.build", "meson_options.txt", "subprojects/*.wrap")
        else:
            build = "make"
            targets = make_targets(repo)
            setup = ['make -j"$(nproc)"']
            test, fmt_override = _make(framework or "", targets, False)
            per_test, _ = _make(framework or "", targets, True)
            if fmt_override == "make-trace":
                fmt, report_path, framework = "make-trace", None, framework or "make"
                notes.append("no structured report: the make target's output is read as "
                             "text, and else its test targets (make --trace) are the tests")
            else:
                fmt = {"gtest": "junit:gtest", "catch2": "catch2-xml"}.get(
                    framework or "", "doctest-xml"
                )
            deps = ("Makefile", "makefile", "GNUmakefile", "*.mk")
        missing = empty_submodules(repo)
        if missing:  # a submodule cannot be fetched here: the system's copy of the library
            setup = [system_library_step([n for _, n in missing]), *setup]
            notes.append("submodules not fetched, Debian's package of the same library "
                         "instead: " + ", ".join(p for p, _ in missing))
        return Plan(
            language=self.language,
            image_family="cpp",
            build_system=build,
            test_framework=framework or "ctest",
            setup_steps=tuple(setup),
            test_command="\n".join(test),
            report_format=fmt,
            report_path=report_path,
            per_test_command="\n".join(per_test),
            scope_command="\n".join(scope),
            env={"GTEST_COLOR": "no", "CLICOLOR": "0", "CTEST_OUTPUT_ON_FAILURE": "1"},
            dependency_files=(*deps, "conanfile.txt", "conanfile.py", "vcpkg.json"),
            notes=tuple(notes),
        )


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree, language: Language) -> Facts:
    f = Facts()
    cmake_files = tree.named("CMakeLists.txt")
    cmake = "\n".join(tree.read(p) for p in cmake_files if p.count("/") <= 3)
    makefile = next((n for n in ("GNUmakefile", "makefile", "Makefile") if tree.has(n)), None)
    make_text = tree.read(makefile) if makefile else ""
    if tree.has("CMakeLists.txt"):
        f.build_system = "cmake"
        f.cite("CMakeLists.txt")
        v = first_match(r"cmake_minimum_required\s*\(\s*VERSION\s+([\d.]+)", cmake, re.I)
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
    std = first_match(r"CMAKE_CXX_STANDARD\s+(\d+)", cmake) or first_match(
        r"-std=(?:c|gnu)\+\+(\w+)", cmake + make_text)
    if std:
        f.versions["cxx_standard"] = std
    cstd = first_match(r"CMAKE_C_STANDARD\s+(\d+)", cmake) or first_match(
        r"-std=(?:c|gnu)(\d\w)\b", cmake + make_text)
    if cstd:
        f.versions["c_standard"] = cstd

    srcs = tree.with_ext(".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hh")
    test_srcs = [p for p in srcs if re.search(r"test", p, re.I)] or srcs
    includes = "\n".join(tree.read(p, 20_000) for p in test_srcs[:300])
    low = cmake.lower()
    runner = tree.read("runtest", 4_000) if tree.has("runtest") else ""
    if tree.has("tests/test_helper.tcl") and re.search(r"tclsh|test_helper\.tcl", runner):
        f.test_framework = "tcl"  # a Tcl harness: runtest runs tests/test_helper.tcl
        f.cite("runtest")
    elif re.search(r"find_package\s*\(\s*gtest|gtest_discover_tests|gtest::|\bgtest(_main)?\b|"
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


@register("c")
class CPlugin(NativePlugin):
    language = Language.C
    traits = Traits(
        image_family="cpp",
        extensions=(".c",),
        build_files=NATIVE_BUILD_FILES,
        test_files=(r"test_\w+\.[ch]", r"\w+_tests?\.[ch]", r"tests?\.c"),
        github_names=("C",),
    )
