"""How a Python project runs its tests, when not with plain pytest: the runners that ship with
a test framework and drive it from a script in the repository.

- ``pytest`` (default): pytest runs pytest and unittest suites alike; JUnit XML report.
- ``django``: a ``tests/runtests.py`` built on Django's test runner (Django itself and the
  apps that test the same way). Test files become dotted labels relative to ``tests/``
  (``tests/admin_views/tests.py`` -> ``admin_views.tests``), run with ``--verbosity 2
  --parallel 1`` so one line per test comes out in order; read as ``unittest`` text.
- ``sympy``: a ``bin/test`` that drives SymPy's own framework (``sympy.testing.runtests`` /
  ``sympy.utilities.runtests``, before it handed over to pytest), run ``-C --verbose`` on
  the files; read as ``sympy`` text.

Each gives the suite command, the per-test template (``{tests}`` is replaced by the quoted
files or ids) and a check command the build runs to see the runner start.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class Runner(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    test_command: str
    per_test_command: str
    check_command: str
    report_format: str
    report_path: str | None = None
    note: str = ""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# files -> dotted labels relative to tests/ ("tests/a/tests.py" -> "a.tests"); a label that
# is already dotted passes through
_LABELS = ("$(for t in {tests}; do printf '%s\\n' \"$t\" | sed -e 's#^tests/##' -e 's#\\.py$##'"
           " -e 's#/#.#g'; done)")


def detect_runner(repo: Path, report: str) -> Runner:
    """The runner for a checkout; ``report`` is where the pytest runner writes its XML."""
    runtests = repo / "tests" / "runtests.py"
    if runtests.is_file() and re.search(r"(?m)^\s*(?:from|import) django\b", _read(runtests)):
        base = "python tests/runtests.py --verbosity 2 --parallel 1"
        return Runner(
            name="django", test_command=f"{base} 2>&1",
            per_test_command=f"{base} {_LABELS} 2>&1",
            check_command="python tests/runtests.py --help >/dev/null",
            report_format="unittest",
            note="tests/runtests.py drives Django's test runner: test files run as dotted "
                 "labels, read from its verbose output")
    bin_test = _read(repo / "bin" / "test")
    if re.search(r"sympy\.(?:testing|utilities)\.runtests\b|\bsympy\.test\(", bin_test) \
            and not (repo / "sympy" / "testing" / "runtests_pytest.py").is_file():
        base = "python bin/test -C --verbose"
        return Runner(
            name="sympy", test_command=base, per_test_command=f"{base} {{tests}}",
            check_command=f"{base} {{tests}} -k __envfactory_collects_only__",
            report_format="sympy",
            note="bin/test drives SymPy's own test framework, read from its verbose output")
    base = (f"mkdir -p /tmp/envfactory && rm -f {report} && python -m pytest -rA"
            f" -p no:cacheprovider -o junit_family=xunit1 --junitxml={report}")
    return Runner(name="pytest", test_command=base, per_test_command=base + " {tests}",
                  check_command="python -m pytest --collect-only -q -p no:cacheprovider {tests}",
                  report_format="junit:pytest", report_path=report)
