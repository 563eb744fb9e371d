"""Ruby plug-in: plan shapes without Docker, and every Ruby sample's per-test results at HEAD
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

RUBY_SAMPLES = [s.name for s in samples.all_samples(Language.RUBY)]


def _plan(tmp_path, name, **det):
    repo = samples.write(samples.get(name), tmp_path)
    return get("ruby").plan(repo, Detection(primary=Language.RUBY, **det))


def test_minitest_and_rspec_samples():
    found = samples.all_samples(Language.RUBY)
    assert {s.test_framework for s in found} >= {"minitest", "rspec"}


def test_rspec_plan_shape(tmp_path):
    plan = _plan(tmp_path, "ruby-wordwrap")  # no hints: .rspec and spec/ decide
    assert plan.language is Language.RUBY and plan.image_family == "ruby"
    assert (plan.build_system, plan.test_framework) == ("bundler", "rspec")
    assert plan.report_format == "rspec-json" and plan.report_path
    assert "bundle install --local" in plan.setup_steps[0]
    assert "bundle check" in plan.test_command and "--format json" in plan.test_command
    assert '-e "$s"' in plan.per_test_command and "{tests}" in plan.per_test_command
    assert "Gemfile.lock" in plan.dependency_files and "*.gemspec" in plan.dependency_files
    reports.format_info(plan.report_format)


def test_minitest_rake_plan_shape(tmp_path):
    plan = _plan(tmp_path, "ruby-roman", build_system="rake", test_framework="minitest")
    assert (plan.build_system, plan.test_framework) == ("rake", "minitest")
    assert plan.report_format == "minitest" and plan.report_path is None
    assert plan.setup_steps == ()  # no Gemfile: the system gems
    assert 'rake test TESTOPTS="-v"' in plan.test_command
    assert "'--name=/^($N)" in plan.per_test_command


def test_minitest_without_rakefile_loads_the_files(tmp_path):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "x_test.rb").write_text("require 'minitest/autorun'\n")
    plan = get("ruby").plan(tmp_path, Detection(primary=Language.RUBY))
    assert plan.test_framework == "minitest" and "rake" not in plan.test_command
    assert "Dir.glob" in plan.test_command and plan.test_command.endswith("-- -v")


def test_per_test_command_formats(tmp_path):
    for name in RUBY_SAMPLES:
        plan = _plan(tmp_path / name, name)
        assert plan.per_test_command.format(tests="'A#test_b'")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", RUBY_SAMPLES)
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
        samples.get("ruby-roman"), tmp_path,
        ["RomanTest#test_subtractive", "RangeTest#test_rejects_non_canonical",
         "RangeTest#test_unicode_numerals"])
    check_selection_and_instance(
        samples.get("ruby-wordwrap"), tmp_path / "b",
        ["WordWrap.wrap breaks lines at the width",
         "WordWrap.wrap hyphenates words longer than the width"])
