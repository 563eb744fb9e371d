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


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


TEST_UNIT_REPO = {
    "Gemfile": "source 'https://rubygems.org'\ngemspec\ngem 'rake'\ngem 'minitest'\n"
               "gem 'test-unit'\ngem 'pry'\ngem 'rubocop', '1.0'\ngem 'rspec-pending_for'\n",
    "x.gemspec": "Gem::Specification.new do |s|\n  s.add_dependency 'logger'\n"
                 "  s.add_development_dependency \"activesupport\"\nend\n",
    "Rakefile": "require 'rake/testtask'\nRake::TestTask.new(:test)\n",
    "test/test_x.rb": "require 'test/unit'\nclass TC_X < Test::Unit::TestCase\nend\n",
}


def test_test_unit_is_a_framework_of_its_own(tmp_path):
    repo = _write(tmp_path, TEST_UNIT_REPO)
    for det in ({}, {"test_framework": "test-unit"}):
        plan = get("ruby").plan(repo, Detection(primary=Language.RUBY, **det))
        assert (plan.test_framework, plan.report_format) == ("test-unit", "testunit")
        assert 'rake test TESTOPTS="-v"' in plan.test_command
        assert "ruby-test-unit" in plan.setup_steps[0]
        cmd = plan.per_test_command.format(tests="'TC_X#test_a' 'TC_X::ctx#test: b'")
        assert "-t '/(\\A|::)($T)\\z/'" in cmd and "-n '/\\A($N)\\z/'" in cmd
        reports.format_info(plan.report_format)


def test_rubygems_out_of_reach_installs_debian_packages(tmp_path):
    from repolaunch.languages.ruby import debian_packages, gem_names
    repo = _write(tmp_path, TEST_UNIT_REPO)
    gems = gem_names(repo)
    assert gems == ["rake", "minitest", "test-unit", "pry", "rubocop", "rspec-pending_for",
                    "logger", "activesupport"]
    assert debian_packages(gems) == ["rake", "ruby-minitest", "ruby-test-unit", "pry",
                                     "ruby-rspec-pending-for", "ruby-logger",
                                     "ruby-activesupport"]  # rubocop: a tool, left out
    plan = get("ruby").plan(repo, Detection(primary=Language.RUBY))
    step = plan.setup_steps[-1]
    assert step.startswith("bundle install --local || timeout 900 bundle install || {")
    assert "apt-cache show" in step and "--no-install-recommends" in step
    assert "bundle install --local; }" in step and "using the system gems" in step


def test_minitest_with_test_unit_in_the_gemfile_stays_minitest(tmp_path):
    repo = _write(tmp_path, {**TEST_UNIT_REPO, "test/test_x.rb":
                             "require 'minitest/autorun'\nclass X < Minitest::Test\nend\n"})
    plan = get("ruby").plan(repo, Detection(primary=Language.RUBY))
    assert (plan.test_framework, plan.report_format) == ("minitest", "minitest")
