"""C plug-in: plan shapes without Docker, and every C sample's per-test results at HEAD
equal what its generator planted (setup with network, tests with network off)."""

from __future__ import annotations

import shlex

import pytest

from data import samples
from envs import images, reports
from envs.models import Language
from envs.sandbox import Sandbox
from repolaunch.detect import Detection
from repolaunch.languages import get
from tests.repolaunch.conftest import SETUP_LIMITS, statuses

C_SAMPLES = [s.name for s in samples.all_samples(Language.C)]


def _plan(tmp_path, name, **det):
    repo = samples.write(samples.get(name), tmp_path)
    detection = Detection(primary=Language.C, **det)
    return get("c").plan(repo, detection), repo


def test_at_least_two_c_samples_with_different_build_systems():
    found = samples.all_samples(Language.C)
    assert len(found) >= 2
    assert len({s.build_system for s in found}) >= 2
    assert len({s.test_framework for s in found}) >= 2


def test_cmake_plan_shape(tmp_path):
    plan, _ = _plan(tmp_path, "c-strutil", build_system="cmake", test_framework="ctest")
    assert plan.language is Language.C and plan.image_family == "cpp"
    assert plan.build_system == "cmake" and plan.test_framework == "ctest"
    assert plan.report_format == "junit:name" and plan.report_path
    assert "--output-junit" in plan.test_command and "cmake --build" in plan.test_command
    assert "{tests}" in plan.per_test_command and "{tests}" not in plan.test_command
    assert "ctest" in plan.per_test_command and " -R " in plan.per_test_command
    assert "CMakeLists.txt" in plan.dependency_files
    assert plan.setup_steps and not plan.network_at_test
    reports.format_info(plan.report_format)  # a registered format


def test_plan_without_detection_hints_reads_the_files(tmp_path):
    plan, _ = _plan(tmp_path, "c-kvconf")  # Detection says only "plain"
    assert plan.build_system == "autotools" and plan.report_format == "automake"
    assert plan.report_path is None
    assert "make -k" in plan.test_command and "check" in plan.test_command
    assert "autoreconf" in plan.test_command  # a checkout may have removed configure
    assert 'TESTS="$(echo {tests})"' in plan.per_test_command
    assert "configure.ac" in plan.dependency_files


def test_plain_makefile_falls_back_to_its_check_target(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "Makefile").write_text("all:\n\tcc -o x x.c\ncheck: all\n\t./x\n")
    (repo / "x.c").write_text("int main(void){return 0;}\n")
    plan = get("c").plan(repo, Detection(primary=Language.C))
    assert plan.build_system == "make" and plan.report_format == "make-trace"
    assert "make --trace -k check" in plan.test_command


def test_scripts_have_no_braces_but_the_placeholder(tmp_path):
    for name in C_SAMPLES:
        plan, _ = _plan(tmp_path / name, name)
        assert "{" not in plan.test_command and "}" not in plan.test_command
        assert plan.per_test_command.replace("{tests}", "").count("{") == 0
        assert plan.per_test_command.format(tests="'a b'")  # str.format works too


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", C_SAMPLES)
def test_sample_results_equal_what_was_planted(plan_runner, name):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    want = {k: v.value for k, v in sample.expected.items()}
    assert got == want, f"{name}: {run.test.output[-3000:]}"


def run_in_env(sample: samples.SampleRepo, dest, ids: list[str], commit: int):
    """Set the sample up at HEAD (network on), then in that env, network off: the
    per-test command with `ids`, and the full test command after checking out `commit`
    the way an instance does. Returns (selected statuses, statuses at the commit)."""
    repo = samples.write(sample, dest)
    shas = samples.commit_shas(repo)
    det = Detection(primary=sample.language, build_system=sample.build_system,
                    test_framework=sample.test_framework)
    plan = get(det.primary).plan(repo, det)
    selected = plan.per_test_command.replace("{tests}", " ".join(shlex.quote(i) for i in ids))
    outcomes = []
    with Sandbox.start(images.ensure(plan.image_family).tag, network=True, workdir="/testbed",
                       limits=SETUP_LIMITS) as sb:
        sb.put_dir(repo, "/testbed")
        for step in plan.setup_steps:
            res = sb.exec(step, env=plan.env)
            assert res.exit_code == 0, res.output[-3000:]
        snap = sb.snapshot()
        with Sandbox.start(snap.ref, network=False, workdir="/testbed",
                           limits=SETUP_LIMITS) as tb:
            for cmd in (selected,
                        f"git checkout -q -f {shas[commit]} && git clean -fdq\n"
                        + plan.test_command):
                res = tb.exec(cmd, env=plan.env)
                data: bytes | str = res.stdout
                if plan.report_path:
                    try:
                        data = tb.get_file(plan.report_path)
                    except FileNotFoundError:
                        data = b""
                report = reports.parse(plan.report_format, data, exit_code=res.exit_code)
                outcomes.append((statuses(report), res.output[-3000:]))
    return outcomes


def check_selection_and_instance(sample: samples.SampleRepo, dest, ids: list[str]) -> None:
    task = next(p for p in sample.planted if p.decoy is None)
    (selected, out1), (at_commit, out2) = run_in_env(sample, dest, ids, task.commit)
    assert selected == {i: sample.expected[i].value for i in ids}, out1
    for test_id in (*task.fail_to_pass, *task.pass_to_pass):
        assert at_commit.get(test_id) == "PASSED", (test_id, out2)


@pytest.mark.docker
@pytest.mark.slow
def test_per_test_command_and_an_older_commit(docker_engine, tmp_path):
    check_selection_and_instance(samples.get("c-kvconf"), tmp_path,
                                 ["tests/test_values", "tests/test_escapes"])
    check_selection_and_instance(samples.get("c-strutil"), tmp_path / "b",
                                 ["parse_int_negative", "upper_locale"])


def _tcl_harness(repo):
    """The layout of a Tcl-harness project: a Makefile, ``runtest`` running
    ``tests/test_helper.tcl``, test units under ``tests/unit`` and helpers beside them."""
    (repo / "tests" / "unit" / "type").mkdir(parents=True)
    (repo / "tests" / "support").mkdir()
    (repo / "Makefile").write_text("all:\n\t@true\n")
    (repo / "runtest").write_text("#!/bin/sh\nexec tclsh tests/test_helper.tcl \"$@\"\n")
    (repo / "tests" / "test_helper.tcl").write_text("# the harness\n")
    (repo / "tests" / "unit" / "type" / "zset.tcl").write_text(
        'start_server {} {\n    test "ZADD basics" {\n    }\n}\n')
    (repo / "tests" / "support" / "util.tcl").write_text("proc helper {} {}\n")


def test_a_tcl_harness_is_detected_and_read_from_its_console(tmp_path):
    from repolaunch.detect import detect

    _tcl_harness(tmp_path)
    (tmp_path / "server.c").write_text("int main(void) { return 0; }\n")
    det = detect(tmp_path)
    assert det.primary is Language.C and det.test_framework == "tcl"
    plan = get("c").plan(tmp_path, det)
    assert plan.report_format == "tcltest" and plan.report_path is None
    assert "./runtest --durable" in plan.test_command and "tclsh" in plan.setup_steps[0]
    assert "--only" in plan.per_test_command
    assert plan.per_test_command.format(tests="'a b'")


def test_tcl_scope_is_one_unit_per_test_file_and_helpers_are_not_units(tmp_path):
    import subprocess

    from repolaunch.validate import scoped_command

    _tcl_harness(tmp_path)
    (tmp_path / "runtest").write_text('#!/bin/sh\nprintf "%s|" "$@"\n')  # says its arguments
    (tmp_path / "runtest").chmod(0o755)
    plan = get("c").plan(tmp_path, Detection(primary=Language.C, build_system="make",
                                             test_framework="tcl"))
    files = ["tests/unit/type/zset.tcl", "tests/support/util.tcl", "src/t_zset.c"]
    out = subprocess.run(["sh", "-c", scoped_command(plan.scope_command, files)],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "--durable|--single|unit/type/zset|"


def test_a_submodule_that_cannot_be_fetched_gets_debians_copy_of_the_library(tmp_path):
    """A library vendored as a git submodule (unreachable here, so its directory is
    empty) is installed from Debian instead, by the submodule's name; a fetched one is
    left alone."""
    from repolaunch.languages.c import empty_submodules

    (tmp_path / "modules" / "oniguruma").mkdir(parents=True)
    (tmp_path / "vendor" / "fetched").mkdir(parents=True)
    (tmp_path / "vendor" / "fetched" / "x.c").write_text("")
    (tmp_path / ".gitmodules").write_text(
        '[submodule "modules/oniguruma"]\n\tpath = modules/oniguruma\n'
        "\turl = https://github.com/kkos/oniguruma.git\n"
        '[submodule "vendor/fetched"]\n\tpath = vendor/fetched\n'
        "\turl = https://example.org/fetched\n")
    (tmp_path / "configure.ac").write_text("AC_INIT([x], [1])\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    assert empty_submodules(tmp_path) == [("modules/oniguruma", "oniguruma")]
    plan = get("c").plan(tmp_path, Detection(primary=Language.C))
    assert "oniguruma" in plan.setup_steps[0] and "apt-get install" in plan.setup_steps[0]
    assert any("modules/oniguruma" in n for n in plan.notes)


def test_a_dependency_cmake_cannot_fetch_gets_debians_package_of_it(tmp_path):
    """FetchContent clones from a host out of reach: the action installs Debian's package
    of the library the URL names (strictly: installing nothing is not a fix)."""
    from repolaunch.diagnose import diagnose

    (tmp_path / "CMakeLists.txt").write_text("project(x CXX)\n")
    plan = get("cpp").plan(tmp_path, Detection(primary=Language.CPP))
    out = ("fatal: unable to access 'https://github.com/catchorg/Catch2.git/': Could not "
           "resolve host: github.com\nCMake Error at catch2-subbuild/catch2-populate-prefix/"
           "tmp/catch2-populate-gitclone.cmake:31 (message):\n  Failed to clone repository: "
           "'https://github.com/catchorg/Catch2.git'\n")
    actions = [a for a in diagnose(out, plan=plan, phase="setup") if "catch2" in a.value]
    assert actions and actions[0].kind == "shell" and actions[0].value.endswith("exit $rc")
    assert "for n in catch2;" in actions[0].value
    # when that package is older than the version asked for, a newer suite's package next
    after = [a for a in diagnose(out, plan=plan, phase="setup") if a.kind == "suite"]
    assert after and after[0].value == "trixie" and "catch2" in after[0].reason
    archive = "error: downloading 'https://github.com/google/googletest/archive/v1.14.0.zip' failed"
    assert any("for n in googletest;" in a.value
               for a in diagnose(archive, plan=plan, phase="setup"))
    # another language's setup is not touched by it
    py = get("python").plan(tmp_path, Detection(primary=Language.PYTHON))
    assert not any("catch2" in a.value for a in diagnose(out, plan=py, phase="setup"))


@pytest.mark.docker
@pytest.mark.network
def test_the_library_step_finds_debians_development_package(docker_engine):
    from repolaunch.build import BUILD_CAPS, BUILD_LIMITS
    from repolaunch.languages.c import system_library_step

    with Sandbox.start(images.ensure("cpp").tag, network=True, limits=BUILD_LIMITS,
                       cap_add=BUILD_CAPS) as sb:
        res = sb.exec(system_library_step(["oniguruma", "no-such-library-here", "catch2"]))
        assert "oniguruma -> Debian libonig-dev" in res.output, res.output[-2000:]
        # no -dev package: the package of exactly that name (a header-only library)
        assert "catch2 -> Debian catch2" in res.output
        assert "no Debian package for library no-such-library-here" in res.output
        assert sb.exec("test -f /usr/include/oniguruma.h").exit_code == 0
