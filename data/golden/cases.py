"""The golden cases: which project each runs, in which image, with which command.

A project is a directory ``data/golden/<project>/`` holding its files as they are written
into the sandbox; several cases may run the same project (with another command or report
format). What each case must report is in ``expected.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import expected as x
from .expected import WORKDIR

PROJECTS = Path(__file__).resolve().parent

# Left out of a project's files: what Python writes next to sources it imports.
_SKIPPED_DIRS = frozenset({"__pycache__"})
_SKIPPED_SUFFIXES = (".pyc",)


def project_files(project: str) -> dict[str, tuple[bytes, int]]:
    """The files of ``data/golden/<project>/``: {relative POSIX path: (bytes, mode)}, the
    mode 0o755 for a file executable on disk and 0o644 otherwise."""
    root = PROJECTS / project
    if not root.is_dir():
        raise FileNotFoundError(f"no golden project {project!r} at {root}")
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (
            not path.is_file()
            or _SKIPPED_DIRS.intersection(rel.parts[:-1])
            or path.name.endswith(_SKIPPED_SUFFIXES)
        ):
            continue
        mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
        files[rel.as_posix()] = (path.read_bytes(), mode)
    return files


def _npm_pin(project: str, package: str) -> str:
    """The version of ``package`` the project's package.json pins."""
    doc = json.loads((PROJECTS / project / "package.json").read_text(encoding="utf-8"))
    return doc["devDependencies"][package]


@dataclass(frozen=True)
class Case:
    name: str  # the directory under tests/envs/reports/golden/
    language: str
    framework: str
    image: str  # envs.images family
    format: str  # envs.reports format string
    project: str  # the directory under data/golden/ written to WORKDIR
    command: str  # the test command; its exit code is recorded
    report: str  # the stored report's file name
    expected: x.Expected  # (status, test_id), as planted
    report_path: str | None = None  # where the command writes it (None: its stdout)
    setup: tuple[str, ...] = ()  # build steps before the command; each must succeed
    collect: str | None = None  # a shell step after the command that writes report_path
    network: bool = False
    options: dict[str, str] | None = None
    note: str = ""

    @property
    def expected_list(self) -> list[dict[str, str]]:
        return [{"test_id": tid, "status": st} for st, tid in self.expected]

    @property
    def tree(self) -> dict[str, tuple[bytes, int]]:
        """The project's files with their modes, as written into the sandbox."""
        return project_files(self.project)

    @property
    def files(self) -> dict[str, str]:
        """The project's files as text, relative to WORKDIR."""
        return {path: data.decode("utf-8") for path, (data, _) in self.tree.items()}


PYTEST = "python3 -m pytest -p no:cacheprovider"
CXX = "g++ -std=c++17 -O0"
NPM_INSTALL = "npm install --no-audit --no-fund --loglevel=error"
PHPUNIT = "phpunit --colors=never --do-not-cache-result"

CASES: list[Case] = [
    Case(
        name="python-pytest-junit",
        language="python",
        framework="pytest",
        image="python",
        format="junit:pytest",
        project="python-pytest",
        command=f"{PYTEST} --junitxml=report.xml tests",
        report="report.xml",
        report_path="report.xml",
        expected=x.pytest_expected(skipped=True),
    ),
    Case(
        name="python-pytest-rA",
        language="python",
        framework="pytest",
        image="python",
        format="pytest",
        project="python-pytest",
        command=f"{PYTEST} -rA tests",
        report="stdout.txt",
        expected=x.pytest_expected(skipped=False),
        note="without -v, skipped tests are named by file:line only; none is expected",
    ),
    Case(
        name="python-pytest-rA-verbose",
        language="python",
        framework="pytest",
        image="python",
        format="pytest",
        project="python-pytest",
        command=f"{PYTEST} -rA -v tests",
        report="stdout.txt",
        expected=x.pytest_expected(skipped=True),
    ),
    Case(
        name="java-junit5-surefire",
        language="java",
        framework="JUnit 5 (Maven Surefire)",
        image="java",
        format="junit:java",
        project="java-junit5",
        command="mvn -B -ntp test",
        report="report.xml",
        report_path="/tmp/report.xml",
        collect="cat $(ls target/surefire-reports/TEST-*.xml | LC_ALL=C sort) > /tmp/report.xml",
        expected=x.JAVA,
        network=True,
        note="target/surefire-reports/TEST-*.xml concatenated in file-name order",
    ),
    Case(
        name="go-test-json",
        language="go",
        framework="go test",
        image="go",
        format="gotest-json",
        project="go-test",
        command="go test -json ./...",
        report="report.json",
        expected=x.GO,
    ),
    Case(
        name="go-test-verbose",
        language="go",
        framework="go test",
        image="go",
        format="gotest",
        project="go-test",
        command="go test -v ./...",
        report="stdout.txt",
        expected=x.GO,
    ),
    Case(
        name="c-ctest-junit",
        language="c",
        framework="CTest",
        image="cpp",
        format="junit:ctest",
        project="c-ctest",
        setup=("cmake -S . -B build -G Ninja >/dev/null", "cmake --build build >/dev/null"),
        command=f"ctest --test-dir build --output-junit {WORKDIR}/report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=x.CTEST,
    ),
    Case(
        name="c-automake-check",
        language="c",
        framework="automake (make check)",
        image="cpp",
        format="automake",
        project="c-automake",
        setup=(
            "chmod +x tests/*.sh",
            "autoreconf -fi >/dev/null 2>&1",
            "./configure -q",
            "make -s >/dev/null",
        ),
        command="make check",
        report="stdout.txt",
        expected=x.AUTOMAKE,
    ),
    Case(
        name="cpp-gtest-xml",
        language="cpp",
        framework="GoogleTest",
        image="cpp",
        format="junit:gtest",
        project="cpp-gtest",
        setup=(f"{CXX} -o calc_test calc_test.cc -lgtest -lgtest_main -pthread",),
        command="./calc_test --gtest_output=xml:report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=x.GTEST,
    ),
    Case(
        name="cpp-catch2-xml",
        language="cpp",
        framework="Catch2 v2",
        image="cpp",
        format="catch2-xml",
        project="cpp-catch2",
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test -r xml -o report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=x.CATCH2_XML,
    ),
    Case(
        name="cpp-catch2-junit",
        language="cpp",
        framework="Catch2 v2",
        image="cpp",
        format="junit:catch2",
        project="cpp-catch2",
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test -r junit -o report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=x.CATCH2_JUNIT,
    ),
    Case(
        name="cpp-doctest-xml",
        language="cpp",
        framework="doctest",
        image="cpp",
        format="doctest-xml",
        project="cpp-doctest",
        setup=(f"{CXX} -o calc_test calc_test.cpp",),
        command="./calc_test --reporters=xml --out=report.xml",
        report="report.xml",
        report_path="report.xml",
        expected=x.DOCTEST,
    ),
    Case(
        name="js-node-test-tap",
        language="javascript",
        framework="node:test",
        image="node",
        format="tap",
        project="js-node-test",
        command="node --test --test-reporter=tap test/",
        report="report.tap",
        expected=x.NODE_TAP,
    ),
    Case(
        name="js-jest-json",
        language="javascript",
        framework=f"Jest {_npm_pin('js-jest', 'jest')}",
        image="node",
        format="jest-json",
        project="js-jest",
        setup=(NPM_INSTALL,),
        command="npx jest --ci --json --outputFile=report.json",
        report="report.json",
        report_path="report.json",
        expected=x.JEST,
        network=True,
    ),
    Case(
        name="js-mocha-json",
        language="javascript",
        framework=f"Mocha {_npm_pin('js-mocha', 'mocha')}",
        image="node",
        format="mocha-json",
        project="js-mocha",
        setup=(NPM_INSTALL,),
        command="npx mocha --reporter json",
        report="report.json",
        expected=x.MOCHA,
        network=True,
    ),
    Case(
        name="ts-vitest-json",
        language="typescript",
        framework=f"Vitest {_npm_pin('ts-vitest', 'vitest')}",
        image="node",
        format="vitest-json",
        project="ts-vitest",
        setup=(NPM_INSTALL,),
        command="npx vitest run --reporter=json --outputFile=report.json",
        report="report.json",
        report_path="report.json",
        expected=x.VITEST,
        network=True,
    ),
    Case(
        name="ts-tsc-node-test-tap",
        language="typescript",
        framework="node:test (compiled by tsc)",
        image="node",
        format="tap",
        project="ts-tsc-node-test",
        setup=("tsc -p tsconfig.json",),
        command="node --test --test-reporter=tap dist/test/",
        report="report.tap",
        expected=x.TS_TAP,
    ),
    Case(
        name="php-phpunit-junit",
        language="php",
        framework="PHPUnit 9",
        image="php",
        format="junit:phpunit",
        project="php-phpunit",
        command=f"{PHPUNIT} --log-junit report.xml tests",
        report="report.xml",
        report_path="report.xml",
        expected=x.PHPUNIT_JUNIT,
    ),
    Case(
        name="php-phpunit-testdox",
        language="php",
        framework="PHPUnit 9",
        image="php",
        format="phpunit-testdox",
        project="php-phpunit",
        command=f"{PHPUNIT} --testdox tests",
        report="stdout.txt",
        expected=x.PHPUNIT_TESTDOX,
    ),
    Case(
        name="ruby-minitest-verbose",
        language="ruby",
        framework="minitest",
        image="ruby",
        format="minitest",
        project="ruby-minitest",
        command="ruby -Ilib -Itest test/calculator_test.rb -v --seed 1",
        report="stdout.txt",
        expected=x.MINITEST,
    ),
    Case(
        name="ruby-rspec-json",
        language="ruby",
        framework="RSpec 3",
        image="ruby",
        format="rspec-json",
        project="ruby-rspec",
        command="rspec --format json --out report.json",
        report="report.json",
        report_path="report.json",
        expected=x.RSPEC,
    ),
    Case(
        name="ruby-rspec-json-load-error",
        language="ruby",
        framework="RSpec 3",
        image="ruby",
        format="rspec-json",
        project="ruby-rspec-load-error",  # ruby-rspec plus spec/broken_spec.rb
        command="rspec --format json --out report.json",
        report="report.json",
        report_path="report.json",
        expected=x.RSPEC_LOAD_ERROR,
    ),
    Case(
        name="rust-cargo-test",
        language="rust",
        framework="cargo test (libtest)",
        image="rust",
        format="libtest",
        project="rust-cargo",
        # cargo names each test binary on stderr, libtest prints the results on stdout
        command="cargo test --no-fail-fast 2>&1",
        report="stdout.txt",
        expected=x.RUST,
    ),
    Case(
        name="rust-cargo-test-nocapture",
        language="rust",
        framework="cargo test (libtest)",
        image="rust",
        format="libtest",
        project="rust-cargo",
        # one thread: libtest names a test before it runs, so its output splits the line
        command="cargo test --no-fail-fast -- --test-threads=1 --nocapture 2>&1",
        report="stdout.txt",
        expected=x.RUST,
    ),
]
