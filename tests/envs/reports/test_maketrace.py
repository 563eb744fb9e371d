"""make --trace: a Makefile's test targets are the tests when its recipes print no
per-test lines. Run through GNU make itself, so the trace is make's own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envs import reports

from ._helpers import F, P, statuses

ROOT_MAKEFILE = """\
all:
\t@true
check:
\t$(MAKE) -C tests check
"""
TESTS_MAKEFILE = """\
.PHONY: check test-basic test-dict test-frame
check: test-basic test-dict test-frame
gen: gen.c
\tcp gen.c gen
test-basic: gen
\t@echo compressing; ./gen >/dev/null
test-dict: gen
\t@echo "dictionary"; {dict}
test-frame: gen
\t@echo frames
"""


LZ4_STYLE = """\
Makefile:141: target 'check' does not exist
make -C tests test-essentials
make[1]: Entering directory '/testbed/tests'
Makefile:130: update target 'datagen' due to: datagen.c
cc -o datagen datagen.c
Makefile:249: update target 'test-basic' due to: datagen
./test-basic.sh
make[1]: *** [Makefile:249: test-basic] Error 1
Makefile:253: update target 'test-dict' due to: datagen
./test-dict.sh
make[1]: Target 'test-essentials' not remade because of errors.
make[1]: Leaving directory '/testbed/tests'
make: *** [Makefile:141: check] Error 2
"""
SAMPLES = [("make-trace", LZ4_STYLE)]


def _run(tmp_path: Path, dict_cmd: str) -> tuple[str, int]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "Makefile").write_text(ROOT_MAKEFILE)
    (tmp_path / "tests" / "Makefile").write_text(TESTS_MAKEFILE.format(dict=dict_cmd))
    (tmp_path / "tests" / "gen.c").write_text("#!/bin/sh\n")
    (tmp_path / "tests" / "gen.c").chmod(0o755)
    p = subprocess.run(["make", "--trace", "-k", "check"], cwd=tmp_path, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.stdout, p.returncode


def test_each_test_target_is_a_test_and_a_failing_recipe_fails_it(tmp_path):
    out, rc = _run(tmp_path, "false")
    assert rc != 0
    got = statuses(reports.parse("make-trace", out, exit_code=rc))
    # gen (a build step) is not a test; check only runs the others (a sub-make)
    assert got == {"tests/test-basic": P, "tests/test-dict": F, "tests/test-frame": P}


def test_a_passing_suite_reports_every_test_target(tmp_path):
    out, rc = _run(tmp_path, "true")
    assert rc == 0
    got = statuses(reports.parse("make-trace", out, exit_code=rc))
    assert got == {"tests/test-basic": P, "tests/test-dict": P, "tests/test-frame": P}


def test_per_test_lines_of_the_recipes_win_over_the_targets():
    out = ("Makefile:3: target 'check' does not exist\n./run-tests\n"
           "PASS: parses numbers\nFAIL: parses strings\nmake: *** [Makefile:3: check] Error 1\n")
    got = statuses(reports.parse("make-trace", out, exit_code=2))
    assert got == {"parses numbers": P, "parses strings": F}


def test_old_make_error_lines_without_a_location_fail_the_target():
    out = ("Makefile:5: target 'test-io' does not exist\nsh ./io.sh\n"
           "make: *** [test-io] Error 1\n"
           "Makefile:7: target 'test-mem' does not exist\nsh ./mem.sh\n")
    got = statuses(reports.parse("make-trace", out, exit_code=2))
    assert got == {"test-io": F, "test-mem": P}


def test_a_top_level_make_that_names_its_directory_keeps_the_same_ids(tmp_path):
    out, _ = _run(tmp_path, "false")
    entered = (f"make: Entering directory '{tmp_path}'\n{out}"
               f"make: Leaving directory '{tmp_path}'\n")
    got = statuses(reports.parse("make-trace", entered, exit_code=2))
    assert got == {"tests/test-basic": P, "tests/test-dict": F, "tests/test-frame": P}


def test_a_sub_make_aggregate_and_build_steps_are_not_tests():
    got = statuses(reports.parse("make-trace", LZ4_STYLE, exit_code=2))
    assert got == {"tests/test-basic": F, "tests/test-dict": P}
