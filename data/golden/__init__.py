"""Golden report fixtures: real framework output for the report parsers' tests.

Each directory ``data/golden/<project>/`` is a small test project (written by this
project, one per test framework and language). For each case (``cases.py``; several cases
may run one project with another command or report format) ``python -m data.golden``
writes the project's files into a sandbox, runs the real test framework on it inside the
language's image (`envs.images`), in an `envs.sandbox.Sandbox` with no network unless the
framework itself must be downloaded (Jest, Mocha, Vitest from npm; JUnit 5 and the Maven
plugins from Maven Central), and stores under ``tests/envs/reports/golden/<case>/``:

- the report exactly as the framework wrote it (``report.xml``, ``report.json``,
  ``stdout.txt`` for reports read from standard output, ...);
- ``meta.json``: the ``envs.reports`` format string, the report's file name, the test
  command's exit code, the framework, the image family, the command, and ``consistent``
  (whether the exit code agrees with the planted failures);
- ``expected.json``: the results the case planted, ``[{"test_id", "status"}]``, written
  from the definitions in ``expected.py``, never from a parser's output. Ids follow the
  format module's convention (see each module's docstring in envs/reports/);
- ``source.txt``: the project's files, for reading without running this script.

Run it with Docker available::

    .venv/bin/python -m data.golden              # every case
    .venv/bin/python -m data.golden --list       # the case names
    .venv/bin/python -m data.golden --only go-test-json --only ruby-rspec-json

Then ``.venv/bin/pytest tests/envs/reports`` checks the parsers against the fixtures
(no Docker needed there). Frameworks print durations and timestamps, so a rerun changes
the report files but not the expectations.

Every file of a project directory is written into the sandbox, with its executable bit
(``__pycache__`` excepted), so try a project in a copy of its directory, not in place.

Choices worth knowing:

- The framework versions are pinned in the projects (``package.json``, ``pom.xml``);
  all work on the image's Node 18 / Maven 3.8 / Java 17. ``rust-cargo/Cargo.lock`` is
  lock file version 3: Debian's cargo (1.65 on bookworm) cannot read the version 4
  newer cargo writes. ``ts-tsc-node-test/types/`` declares what the tests use of
  node:test and node:assert (the image has no @types/node, and the tests need nothing
  from npm).
- Maven Surefire writes one ``TEST-<class>.xml`` per test class (a ``@Nested`` class is a
  class of its own); the case stores them concatenated in file-name order, as
  ``cat target/surefire-reports/TEST-*.xml`` would, which the JUnit parser reads as
  several documents.
- Catch2 v2 (the Debian package) has no way to skip a test at run time and leaves hidden
  (``[.]``) tests out of the report, so its cases have no SKIPPED result.
- ``pytest -rA`` without ``-v`` names skipped tests by file and line only, so that case
  has no SKIPPED result either (the parser warns); the ``-v`` case has them.
"""

from __future__ import annotations

from .cases import CASES, PROJECTS, Case, project_files
from .expected import ERROR, FAILED, PASSED, SKIPPED, STATUSES, WORKDIR, XFAIL
from .run import (
    GOLDEN,
    MAX_REPORT_BYTES,
    ROOT,
    CaseFailed,
    Outcome,
    check_case,
    main,
    run_case,
    select,
    write_case,
)

__all__ = [
    "CASES",
    "ERROR",
    "FAILED",
    "GOLDEN",
    "MAX_REPORT_BYTES",
    "PASSED",
    "PROJECTS",
    "ROOT",
    "SKIPPED",
    "STATUSES",
    "WORKDIR",
    "XFAIL",
    "Case",
    "CaseFailed",
    "Outcome",
    "check_case",
    "main",
    "project_files",
    "run_case",
    "select",
    "write_case",
]
