"""C++ plug-in: plan shapes without Docker, and every C++ sample's per-test results at HEAD
equal what its generator planted (setup with network, tests with network off)."""

from __future__ import annotations

import pytest

from data import samples
from envs import reports
from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import get
from tests.repolaunch.conftest import statuses
from tests.repolaunch.languages.test_c import check_selection_and_instance

CPP_SAMPLES = [s.name for s in samples.all_samples(Language.CPP)]


def _plan(tmp_path, name, **det):
    repo = samples.write(samples.get(name), tmp_path)
    return get("cpp").plan(repo, Detection(primary=Language.CPP, **det))


def test_at_least_two_cpp_samples_with_different_build_systems_and_frameworks():
    found = samples.all_samples(Language.CPP)
    assert len(found) >= 2
    assert len({s.build_system for s in found}) >= 2
    assert len({s.test_framework for s in found}) >= 2
    assert any("TEST_P(" in text for s in found for c in s.commits
               for text in c.files.values() if text)


def test_gtest_plan_shape(tmp_path):
    plan = _plan(tmp_path, "cpp-geom")  # no hints: CMakeLists.txt and the sources decide
    assert plan.language is Language.CPP and plan.image_family == "cpp"
    assert (plan.build_system, plan.test_framework) == ("cmake", "gtest")
    assert plan.report_format == "junit:gtest" and plan.report_path
    assert "GTEST_OUTPUT=" in plan.test_command and "cmake --build" in plan.test_command
    assert "GTEST_FILTER" in plan.per_test_command and "{tests}" in plan.per_test_command
    assert "CMakeLists.txt" in plan.dependency_files
    reports.format_info(plan.report_format)


def test_doctest_makefile_plan_shape(tmp_path):
    plan = _plan(tmp_path, "cpp-ringbuf", build_system="make", test_framework="doctest")
    assert (plan.build_system, plan.test_framework) == ("make", "doctest")
    assert plan.report_format == "doctest-xml" and plan.report_path
    assert "-r=xml" in plan.test_command and "make -k" in plan.test_command
    assert "-tc=" in plan.per_test_command and "{tests}" in plan.per_test_command
    assert "Makefile" in plan.dependency_files
    reports.format_info(plan.report_format)


def test_catch2_is_found_from_the_sources(tmp_path):
    repo = tmp_path / "r"
    (repo / "tests").mkdir(parents=True)
    (repo / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(x CXX)\nfind_package(Catch2 REQUIRED)\n"
        "add_executable(t tests/t.cpp)\ntarget_link_libraries(t Catch2::Catch2)\n")
    (repo / "tests" / "t.cpp").write_text(
        '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\nTEST_CASE("a") {}\n')
    plan = get("cpp").plan(repo, Detection(primary=Language.CPP))
    assert (plan.build_system, plan.test_framework, plan.report_format) == (
        "cmake", "catch2", "catch2-xml")
    assert "-r xml" in plan.test_command


def test_scripts_have_no_braces_but_the_placeholder(tmp_path):
    for name in CPP_SAMPLES:
        plan = _plan(tmp_path / name, name)
        assert "{" not in plan.test_command and "}" not in plan.test_command
        assert plan.per_test_command.replace("{tests}", "").count("{") == 0
        assert plan.per_test_command.format(tests="'a b'")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", CPP_SAMPLES)
def test_sample_results_equal_what_was_planted(plan_runner, name):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    want = {k: v.value for k, v in sample.expected.items()}
    assert got == want, f"{name}: {run.test.output[-3000:]}"


@pytest.mark.docker
@pytest.mark.slow
def test_per_test_command_and_an_older_commit(docker_engine, tmp_path):
    check_selection_and_instance(
        samples.get("cpp-geom"), tmp_path,
        ["Ranges/ClampTest.ReturnsExpected/1", "Vec2Test.NormalizeZeroVector",
         "Vec2Test.LongDoublePrecision"])
    check_selection_and_instance(
        samples.get("cpp-ringbuf"), tmp_path / "b",
        ["push and pop", "push and pop > fifo order", "push and pop > single element",
         "zero capacity is kept"])


def test_cmake_options_that_switch_tests_on_are_set(tmp_path):
    """A project whose tests hide behind its own option (googletest's gtest_build_tests,
    fmt's FMT_TEST) gets it switched on; other options are left alone."""
    from repolaunch.languages.c import cmake_test_switches

    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(x CXX)\n"
        'option(gtest_build_tests "Build all of gtest\'s own tests." OFF)\n'
        'option(FMT_TEST "Generate the test target." ${FMT_MASTER_PROJECT})\n'
        'option(BUILD_SHARED_LIBS "shared" OFF)\noption(FMT_DOC "docs" ON)\n'
        "option(BUILD_TESTING \"ctest's own\" ON)\n"
        'cmake_dependent_option(YAML_CPP_BUILD_TESTS\n  "Enable tests" OFF\n  "BUILD_TESTING" OFF)\n')
    assert cmake_test_switches(tmp_path) == \
        " -Dgtest_build_tests=ON -DFMT_TEST=ON -DYAML_CPP_BUILD_TESTS=ON"
    det = Detection(primary=Language.CPP, build_system="cmake", test_framework="gtest")
    plan = get("cpp").plan(tmp_path, det)
    assert "-Dgtest_build_tests=ON -DFMT_TEST=ON -DYAML_CPP_BUILD_TESTS=ON" in plan.setup_steps[0]
    assert "-Dgtest_build_tests=ON" in plan.test_command


def _two_ctest_tests(repo):
    """A CMake project with one ctest test per test file, as CMake projects often name a
    test after its source; `beta` fails."""
    (repo / "test").mkdir(parents=True)
    (repo / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(x CXX)\nenable_testing()\n"
        "foreach(t alpha-test beta-test)\n  add_executable(${t} test/${t}.cc)\n"
        "  add_test(NAME ${t} COMMAND ${t})\nendforeach()\n")
    (repo / "test" / "alpha-test.cc").write_text("int main() { return 0; }\n")
    (repo / "test" / "beta-test.cc").write_text("int main() { return 1; }\n")


@pytest.mark.docker
@pytest.mark.slow
def test_scope_runs_the_ctest_tests_named_as_the_files_and_all_when_none_is(
        docker_engine, tmp_path):
    """SWE-bench's C++ instances run the test named after the test patch's file
    (`ctest -R format-test` for test/format-test.cc); a file no test is named after (one
    binary for all files) runs everything."""
    from envs import images
    from envs.sandbox import Sandbox
    from repolaunch.validate import scoped_command

    _two_ctest_tests(tmp_path)
    plan = get("cpp").plan(tmp_path, Detection(primary=Language.CPP, build_system="cmake",
                                               test_framework="ctest"))
    assert "{tests}" in plan.scope_command
    with Sandbox.start(images.ensure(plan.image_family).tag, network=False,
                       workdir="/testbed") as sb:
        sb.put_dir(tmp_path, "/testbed")
        got = {}
        for files in (["test/alpha-test.cc"], ["test/nothing_test.cc"]):
            res = sb.exec(scoped_command(plan.scope_command, files), env=plan.env)
            report = reports.parse(plan.report_format, sb.get_file(plan.report_path),
                                   exit_code=res.exit_code)
            got[files[0]] = statuses(report)
    assert got["test/alpha-test.cc"] == {"alpha-test": "PASSED"}
    assert got["test/nothing_test.cc"] == {"alpha-test": "PASSED", "beta-test": "FAILED"}
