"""Diagnose rules: an output signature names the next action."""

from __future__ import annotations

from envs.models import Language
from repolaunch.diagnose import diagnose, signature
from repolaunch.languages import Plan
from repolaunch.languages.python_diagnose import AS_OF_FILE, pip_install


def plan(lang: Language = Language.C) -> Plan:
    return Plan(language=lang, image_family="cpp", build_system="make", test_framework="x",
                test_command="make check", report_format="automake")


def kinds(actions):
    return [(a.kind, a.value) for a in actions]


def test_missing_header_installs_its_debian_package():
    out = "src/a.c:1:10: fatal error: zlib.h: No such file or directory\n"
    (action,) = diagnose(out, plan=plan(), phase="setup")
    assert action.kind == "shell" and action.value.endswith("zlib1g-dev")


def test_nested_header_path():
    out = "x.cc:2:10: fatal error: openssl/ssl.h: No such file or directory"
    assert diagnose(out, plan=plan(), phase="setup")[0].value.endswith("libssl-dev")


def test_missing_library_and_command():
    out = "/usr/bin/ld: cannot find -lsqlite3\nsh: 1: autoreconf: not found\n"
    values = [a.value for a in diagnose(out, plan=plan(), phase="setup")]
    assert any(v.endswith("libsqlite3-dev") for v in values)
    assert any(v.endswith(" autoconf") for v in values)


def test_missing_python_module_maps_import_to_distribution():
    out = "ModuleNotFoundError: No module named 'yaml'\n"
    (action,) = diagnose(out, plan=plan(Language.PYTHON), phase="test")
    # into the environment's venv with uv, as of the day it was resolved; else with pip
    assert action.value == pip_install("PyYAML")
    assert "uv pip install" in action.value and AS_OF_FILE in action.value
    assert action.value.endswith("else python -m pip install -q PyYAML; fi")


def test_python_rules_follow_the_interpreter_era():
    """Code older than the interpreter moves to an older suite, never the one it is on; an
    option the pytest configuration passes brings its plug-in."""
    old_code = "ImportError: cannot import name 'Mapping' from 'collections'\n"
    on_bookworm = plan(Language.PYTHON).model_copy(update={"suite": "bookworm"})
    actions = diagnose(old_code, plan=on_bookworm, phase="setup")
    assert [(a.kind, a.value) for a in actions] == [("suite", "bullseye")]
    on_bullseye = on_bookworm.model_copy(update={"suite": "bullseye"})
    # no suite here is older: a note, so the build can fail as toolchain_unavailable
    assert [(a.kind, a.value) for a in diagnose(old_code, plan=on_bullseye, phase="setup")] \
        == [("unavailable", "python-older")]
    new_code = "ImportError: cannot import name 'ParamSpec' from 'typing'\n"
    actions = diagnose(new_code, plan=on_bullseye, phase="setup")
    assert [(a.kind, a.value) for a in actions] == [("suite", "bookworm"), ("suite", "trixie")]
    opts = "pytest: error: unrecognized arguments: --cov=pkg --timeout=30\n"
    values = [a.value for a in diagnose(opts, plan=on_bookworm, phase="setup")]
    assert values == [pip_install("pytest-cov"), pip_install("pytest-timeout")]


def test_python_module_rule_is_python_only():
    out = "No module named 'yaml'"
    assert diagnose(out, plan=plan(Language.C), phase="setup") == []


def test_wrong_toolchain_era_moves_suite():
    java = diagnose("error: invalid target release: 21", plan=plan(Language.JAVA), phase="setup")
    assert kinds(java) == [("suite", "trixie")]
    py = diagnose("ERROR: Package 'x' requires a different Python: 3.11.2 not in '<3.10'",
                  plan=plan(Language.PYTHON), phase="setup")
    assert ("suite", "bullseye") in kinds(py)


def test_network_needed_only_counts_at_test_time():
    out = "socket.gaierror: [Errno -3] Temporary failure in name resolution"
    assert kinds(diagnose(out, plan=plan(), phase="test")) == [("network_at_test", "on")]
    assert diagnose(out, plan=plan(), phase="setup") == []


def test_tried_actions_are_not_proposed_again():
    out = "fatal error: zlib.h: No such file or directory"
    first = diagnose(out, plan=plan(), phase="setup")
    assert diagnose(out, plan=plan(), phase="setup", tried={first[0].key}) == []


def test_huge_logs_are_read_from_the_tail():
    out = "x" * 5_000_000 + "\nfatal error: zlib.h: No such file or directory\n"
    assert diagnose(out, plan=plan(), phase="setup")


def test_signature_is_one_line():
    assert signature("a\nb\nfatal error: foo.h: No such file or directory\nc") == \
        "fatal error: foo.h: No such file or directory"
    assert signature("") == "no output"


def test_a_time_machine_that_finds_nothing_falls_back_to_today():
    step = "npm install --before=2021-01-01T00:00:00Z --no-audit"
    out = "npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for jest@^29.7.0."
    (action,) = diagnose(out, plan=plan(Language.JAVASCRIPT), phase="setup", step=step)
    assert action.kind == "replace" and action.value == "npm install --no-audit"
    step = "uv pip install --exclude-newer 2019-01-01T00:00:00Z -e ."
    out = "  x No solution found when resolving dependencies:"
    (action,) = diagnose(out, plan=plan(Language.PYTHON), phase="setup", step=step)
    assert action.value == "uv pip install -e ."


def test_node_gyp_gets_its_toolchain():
    """An old native npm module builds from source: node-gyp's own words for a missing
    make, compiler or Python bring python3, make and g++."""
    plan_js = plan(Language.JAVASCRIPT)
    for out in ("gyp ERR! stack Error: not found: make\n", "gyp ERR! find Python\n",
                "gyp ERR! stack Error: `make` failed with exit code: 2\n"):
        (action,) = diagnose(out, plan=plan_js, phase="setup")
        assert action.value.endswith("install -y -qq --no-install-recommends python3 make g++")


def test_java_code_older_than_the_jdk_compiles_at_the_lowest_level_it_has():
    out = ("[ERROR] COMPILATION ERROR :\n[ERROR] Source option 6 is no longer supported. "
           "Use 7 or later.\n[ERROR] Target option 6 is no longer supported. Use 7 or later.\n")
    (action,) = diagnose(out, plan=plan(Language.JAVA), phase="setup")
    assert action.kind == "shell" and ".mvn/maven.config" in action.value
    assert "-Dmaven.compiler.source=7" in action.value
    assert diagnose(out, plan=plan(Language.GO), phase="setup") == []


def test_a_phpunit_configuration_of_a_newer_schema_moves_to_a_newer_suite():
    out = ("  Line 9:\n  - Element 'phpunit', attribute 'displayDetailsOnSkippedTests': "
           "The attribute 'displayDetailsOnSkippedTests' is not allowed.\n")
    on_bookworm = plan(Language.PHP).model_copy(update={"suite": "bookworm"})
    assert kinds(diagnose(out, plan=on_bookworm, phase="test")) == [("suite", "trixie")]
