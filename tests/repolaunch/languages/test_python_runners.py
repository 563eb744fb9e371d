"""The runners that come with a framework: a Django-style tests/runtests.py, SymPy's own
bin/test; pytest for everything else. Each with its report format and a per-test form."""

from __future__ import annotations

import subprocess

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import python as py
from repolaunch.languages.python_runners import detect_runner
from tests.repolaunch.conftest import write_files


def test_pytest_by_default(tmp_path):
    r = detect_runner(write_files(tmp_path, {"tests/test_a.py": "def test_a(): pass\n"}), py.REPORT)
    assert r.name == "pytest" and r.report_format == "junit:pytest"
    assert r.per_test_command.endswith(" {tests}") and "--collect-only" in r.check_command


def test_a_django_style_runner_takes_dotted_labels(tmp_path):
    repo = write_files(tmp_path, {
        "tests/runtests.py": "#!/usr/bin/env python\nimport django\nfrom django.test.utils "
                             "import get_runner\n",
        "setup.py": "from setuptools import setup\nsetup(name='web')\n"})
    r = detect_runner(repo, py.REPORT)
    assert (r.name, r.report_format, r.report_path) == ("django", "unittest", None)
    assert "--verbosity 2 --parallel 1" in r.test_command and r.test_command.endswith("2>&1")
    # the label transform, run by a real shell: files become labels, labels pass through
    cmd = r.per_test_command.replace("python tests/runtests.py --verbosity 2 --parallel 1",
                                     "echo").replace("{tests}",
                                                     "tests/admin_views/tests.py auth.tests")
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.split()
    assert out == ["admin_views.tests", "auth.tests"]
    plan = py.PythonPlugin().plan(repo, Detection(primary=Language.PYTHON), resolve_date=None)
    assert plan.test_framework == "django" and plan.report_format == "unittest"


def test_a_runtests_that_is_not_django_is_pytest(tmp_path):
    repo = write_files(tmp_path, {"tests/runtests.py": "import unittest\nunittest.main()\n"})
    assert detect_runner(repo, py.REPORT).name == "pytest"


def test_sympys_own_runner_before_it_handed_over_to_pytest(tmp_path):
    repo = write_files(tmp_path, {"bin/test": "#!/usr/bin/env python\nimport sympy\n"
                                        "ok = sympy.test(*args, verbose=True)\n",
                            "sympy/__init__.py": ""})
    r = detect_runner(repo, py.REPORT)
    assert (r.name, r.report_format) == ("sympy", "sympy")
    assert r.per_test_command == "python bin/test -C --verbose {tests}"
    write_files(repo, {"sympy/testing/runtests_pytest.py": "import pytest\n"})
    assert detect_runner(repo, py.REPORT).name == "pytest"
