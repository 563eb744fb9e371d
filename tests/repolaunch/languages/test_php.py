"""PHP plug-in: plan shapes without Docker, and every PHP sample's per-test results at HEAD
equal what its generator planted (setup with network, tests with network off)."""

from __future__ import annotations

import json

import pytest

from data import samples
from envs import reports
from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import get, php
from repolaunch.languages.php import needs_install
from tests.repolaunch.conftest import statuses
from tests.repolaunch.languages.test_c import check_selection_and_instance

PHP_SAMPLES = [s.name for s in samples.all_samples(Language.PHP)]


def _plan(tmp_path, name, **det):
    repo = samples.write(samples.get(name), tmp_path)
    return get("php").plan(repo, Detection(primary=Language.PHP, **det)), repo


def test_at_least_two_php_samples():
    found = samples.all_samples(Language.PHP)
    assert len(found) >= 2
    assert any(c.files.get("phpunit.xml") for s in found for c in s.commits)


def test_plan_with_phpunit_xml(tmp_path):
    plan, _ = _plan(tmp_path, "php-money", build_system="composer", test_framework="phpunit")
    assert plan.language is Language.PHP and plan.image_family == "php"
    assert plan.report_format == "junit:phpunit" and plan.report_path
    assert plan.setup_steps == ("composer dump-autoload",)  # nothing beyond PHPUnit required
    assert "--log-junit" in plan.test_command and "--bootstrap" not in plan.test_command
    assert "dump-autoload" in plan.test_command  # classmaps change between commits
    assert "--filter" in plan.per_test_command and "{tests}" in plan.per_test_command
    assert set(plan.dependency_files) == {"composer.json", "composer.lock"}
    assert plan.env["COMPOSER_ALLOW_SUPERUSER"] == "1"
    reports.format_info(plan.report_format)


def test_plan_without_phpunit_xml_names_the_tests_dir(tmp_path):
    plan, _ = _plan(tmp_path, "php-slugify")
    assert "--bootstrap vendor/autoload.php" in plan.test_command
    assert plan.test_command.rstrip().endswith(" tests")


def test_other_packages_mean_composer_install(tmp_path):
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require": {"php": ">=8", "ext-json": "*", "monolog/monolog": "^3"}}))
    assert needs_install(tmp_path)
    plan = get("php").plan(tmp_path, Detection(primary=Language.PHP))
    assert plan.setup_steps[0].startswith("timeout 900 composer install")
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require": {"php": ">=8"}, "require-dev": {"phpunit/phpunit": "^9"}}))
    assert not needs_install(tmp_path)


def test_per_test_command_formats(tmp_path):
    for name in PHP_SAMPLES:
        plan, _ = _plan(tmp_path / name, name)
        assert "{" not in plan.test_command and "}" not in plan.test_command
        assert plan.per_test_command.format(tests="'A\\\\B::c'")


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", PHP_SAMPLES)
def test_sample_results_equal_what_was_planted(plan_runner, name):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    want = {k: v.value for k, v in sample.expected.items()}
    assert got == want, f"{name}: {run.test.output[-3000:]}"


@pytest.mark.docker
@pytest.mark.slow
def test_per_test_command_and_an_older_commit(docker_engine, tmp_path):
    ns = "Acme\\Money\\Tests\\"
    check_selection_and_instance(
        samples.get("php-money"), tmp_path,
        [f'{ns}MoneyTest::testRejectsInvalid with data set "no currency"',
         f"{ns}AllocationTest::testAllocatesNegativeAmounts",
         f"{ns}AllocationTest::testConvertsCurrencies"])
    check_selection_and_instance(
        samples.get("php-slugify"), tmp_path / "b",
        ["SlugifyTest::testExamples with data set #1", "TruncateTest::testCutsLongText"])


@pytest.mark.parametrize("version, constraint, ok", [
    ("9.6.7", "^10.3", False), ("11.5.2", "^10.3", False), ("10.5.1", "^10.3", True),
    ("9.6.7", "^4.8.35 || ^5.7 || ^6.0 || ^8.5.13", False),
    ("8.5.20", "^4.8.35 || ^5.7 || ^6.0 || ^8.5.13", True),
    ("9.6.7", "^9", True), ("9.6.7", ">=7 <10", True), ("9.6.7", ">=8.5,<10", True),
    ("9.6.7", "~9.6", True), ("9.6.7", "~9.5.0", False), ("9.6.7", "9.*", True),
    ("9.6.7", "^9.5 | ^10", True), ("11.5.2", "^9.5 | ^10", False),
    ("9.6.7", "dev-main", True), ("9.6.7", "*", True), ("9.6.7", "^0.3", False),
])
def test_composer_constraints(version, constraint, ok):
    from repolaunch.languages.php import satisfies
    assert satisfies(version, constraint) is ok


def test_phpunit_outside_the_constraint_is_noted(tmp_path):
    from repolaunch.languages.php import toolchain_note
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require-dev": {"phpunit/phpunit": "^10.3"}}))
    note = toolchain_note(tmp_path, "bookworm")
    assert note.startswith("toolchain: phpunit outside constraint '^10.3': bookworm ships 9.6")
    assert "newer" in note and "trixie" in note
    assert needs_install(tmp_path)  # composer may fetch a PHPUnit that fits
    plan = get("php").plan(tmp_path, Detection(primary=Language.PHP))
    assert any(n.startswith("toolchain: phpunit") for n in plan.notes)
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require-dev": {"phpunit/phpunit": "^6.0 || ^8.5.13"}}))
    assert "older" in toolchain_note(tmp_path, "bookworm")
    assert toolchain_note(tmp_path, "bullseye")  # 9.5 is outside too
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require-dev": {"phpunit/phpunit": "^11"}}))
    assert "suites that fit: trixie" in toolchain_note(tmp_path, "bookworm")
    assert toolchain_note(tmp_path, "trixie") is None


def test_install_fallback_dumps_autoload_dev_and_config_without_bootstrap(tmp_path):
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require": {"psr/log": "^3"}, "autoload-dev": {"psr-4": {"T\\": "test/"}}}))
    (tmp_path / "phpunit.xml.dist").write_text('<phpunit colors="true"><testsuites/></phpunit>')
    plan = get("php").plan(tmp_path, Detection(primary=Language.PHP))
    # Packagist out of reach: Debian's php-psr-log, then the autoloader dumped
    assert "|| ( echo 'envfactory: Packagist out of reach" in plan.setup_steps[0]
    assert "for p in php-psr-log; do" in plan.setup_steps[0]
    assert plan.setup_steps[0].endswith(
        "; composer dump-autoload --dev || composer dump-autoload )")
    assert "composer dump-autoload --dev -q" in plan.test_command
    assert ('[ "$PHPUNIT" = phpunit ] && [ -f vendor/autoload.php ] '
            "&& B='--bootstrap vendor/autoload.php'") in plan.test_command
    assert "$PHPUNIT $B --log-junit" in plan.test_command
    (tmp_path / "phpunit.xml.dist").write_text(
        '<phpunit\n  bootstrap="tests/bootstrap.php"><testsuites/></phpunit>')
    plan = get("php").plan(tmp_path, Detection(primary=Language.PHP))
    assert "--bootstrap" not in plan.test_command
    # the repository's bootstrap does not load vendor/autoload.php (vendor/bin/phpunit
    # would): the image's PHPUnit gets it, and Debian's autoloaders, prepended
    assert ('[ "$PHPUNIT" = phpunit ] && PHPUNIT="php -d auto_prepend_file='
            '/tmp/envfactory-prepend.php $(command -v phpunit)"') in plan.test_command


def test_debian_stands_in_for_packagist_by_vendor_and_name_and_skips_tools(tmp_path):
    (tmp_path / "composer.json").write_text(json.dumps(
        {"require": {"php": ">=8.1", "ext-json": "*", "psr/log": "^3",
                     "monolog/monolog": "^3"},
         "require-dev": {"phpstan/phpstan": "^1", "phpunit/phpunit": "^10",
                         "symfony/var_dumper": "^6"}}))
    assert php.debian_candidates(tmp_path) == [
        ["php-psr-log"], ["php-monolog"], ["php-symfony-var-dumper"]]
