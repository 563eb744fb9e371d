"""PHP: Composer autoloading and PHPUnit, JUnit XML (``--log-junit``), ids
``Namespace\\Class::method`` (``... with data set "name"`` kept).

Composer installs only when composer.json asks for packages beyond PHP itself, its
extensions and PHPUnit (which the image ships); otherwise ``composer dump-autoload``
(offline) writes ``vendor/autoload.php``. The test command re-dumps the autoloader
(classmaps change between commits), then runs the repository's own PHPUnit
(``vendor/bin/phpunit``) when it has one, else the image's. With a phpunit.xml(.dist)
PHPUnit reads its configuration; without one the tests directory is named and the
autoloader is the bootstrap.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import Plan, register

REPORT = "/tmp/envfactory-phpunit.xml"
_SHIPPED = re.compile(r"^(php|ext-.+|lib-.+|composer-plugin-api|composer-runtime-api|"
                      r"phpunit/phpunit)$", re.I)
_CONFIGS = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")


def _composer(repo: Path) -> dict:
    try:
        doc = json.loads((repo / "composer.json").read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def needs_install(repo: Path) -> bool:
    """Whether composer.json requires packages the image does not ship."""
    doc = _composer(repo)
    for key in ("require", "require-dev"):
        section = doc.get(key)
        if isinstance(section, dict) and any(not _SHIPPED.match(str(k)) for k in section):
            return True
    return False


def _tests_dir(repo: Path) -> str:
    for name in ("tests", "test", "Tests", "Test"):
        if (repo / name).is_dir():
            return name
    return "."


@register("php")
class PhpPlugin:
    language = Language.PHP

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        has_composer = (repo / "composer.json").is_file()
        config = next((c for c in _CONFIGS if (repo / c).is_file()), None)
        setup: list[str] = []
        notes: list[str] = []
        if has_composer and needs_install(repo):
            setup.append(
                "timeout 900 composer install --no-interaction --no-progress --prefer-dist "
                "|| composer dump-autoload"
            )
            notes.append("composer install (lockfile versions when composer.lock exists)")
        elif has_composer:
            setup.append("composer dump-autoload")
            notes.append("only PHP, extensions and PHPUnit required: the image's are used")
        run = [
            f'rm -f "{REPORT}"',
            "if [ -f composer.json ]; then composer dump-autoload -q || true; fi",
            "PHPUNIT=phpunit; [ -x vendor/bin/phpunit ] && PHPUNIT=vendor/bin/phpunit",
        ]
        args = f'--log-junit "{REPORT}" --do-not-cache-result --colors=never'
        if config is None:
            where = _tests_dir(repo)
            run.append("B=; [ -f vendor/autoload.php ] && B='--bootstrap vendor/autoload.php'")
            tail = f"$PHPUNIT $B {args}"
            target = f" {where}"
        else:
            tail = f"$PHPUNIT {args}"
            target = ""
        test = [*run, tail + target]
        select = (
            "F=$(for s in {tests}; do printf '%s\\n' \"$s\"; done "
            "| sed 's/[][\\\\.*^$+?()|]/\\\\&/g' | paste -sd'|' -)"
        )
        per_test = [*run, select, f'{tail} --filter "^($F)\\$"{target}']
        return Plan(
            language=Language.PHP,
            image_family="php",
            build_system="composer" if has_composer else "plain",
            test_framework="phpunit",
            setup_steps=tuple(setup),
            test_command="\n".join(test),
            report_format="junit:phpunit",
            report_path=REPORT,
            per_test_command="\n".join(per_test),
            env={"COMPOSER_ALLOW_SUPERUSER": "1", "COMPOSER_NO_INTERACTION": "1"},
            dependency_files=("composer.json", "composer.lock"),
            notes=tuple(notes),
        )
