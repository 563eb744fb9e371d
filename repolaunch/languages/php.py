"""PHP: Composer autoloading and PHPUnit, JUnit XML (``--log-junit``), ids
``Namespace\\Class::method`` (``... with data set "name"`` kept).

Composer installs only when composer.json asks for packages beyond PHP itself, its
extensions and PHPUnit (which the image ships, when its version fits the ``phpunit/phpunit`` constraint);
otherwise ``composer dump-autoload`` (offline) writes ``vendor/autoload.php``. When the
install fails (a registry or VCS host out of reach) the fallback is ``composer
dump-autoload --dev``, so ``autoload-dev`` (the tests' namespaces) is included. The test
command re-dumps the autoloader the same way (classmaps change between commits), then
runs the repository's own PHPUnit (``vendor/bin/phpunit``) when it has one, else the
image's. With a phpunit.xml(.dist) PHPUnit reads its configuration; without one the tests
directory is named and the autoloader is the bootstrap. PHPUnit 10's own
``vendor/bin/phpunit`` loads the autoloader by itself, so configurations written for it
may have no ``bootstrap=``: the image's PHPUnit then gets ``--bootstrap
vendor/autoload.php``.

A ``phpunit/phpunit`` constraint that the image's PHPUnit does not satisfy is recorded in
``Plan.notes`` as ``toolchain: phpunit outside constraint ...`` with the Debian suites
whose PHPUnit fits (if any), so the build loop can switch suite.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from envs.config import get_settings
from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, read_json
from repolaunch.diagnose import apt_install_available, rule, suites_towards
from repolaunch.languages import Plan, Traits, register

REPORT = "/tmp/envfactory-phpunit.xml"
_SHIPPED = re.compile(r"^(php|ext-.+|lib-.+|composer-plugin-api|composer-runtime-api|"
                      r"phpunit/phpunit)$", re.I)
_CONFIGS = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
# The PHPUnit Debian ships per suite (the php image's /usr/bin/phpunit); bookworm's is
# what the image probe reports (envs.images versions: phpunit=9.6.7).
PHPUNIT_BY_SUITE = {"bullseye": "9.5.2", "bookworm": "9.6.7", "trixie": "11.5.2"}
# dump-autoload --dev appeared in Composer 2.4 (bullseye ships 2.0): fall back to plain
_DUMP = "composer dump-autoload --dev{q} || composer dump-autoload{q}"


def _vtuple(text: str) -> tuple[int, ...] | None:
    m = re.match(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.(\d+))?", text.strip())
    if not m:
        return None
    return tuple(int(g) for g in m.groups(default="0"))


def _atom(version: tuple[int, ...], atom: str) -> bool:
    atom = re.sub(r"@\w+$", "", atom.strip())  # stability flags (@dev, @stable)
    if atom in ("", "*"):
        return True
    m = re.match(r"^(\^|~|>=|<=|>|<|!=|==|=)?\s*v?([\d.*xX]+)", atom)
    if not m:
        return True  # unknown syntax (dev-master, a branch): do not claim a mismatch
    op, raw = m.group(1) or "=", m.group(2).rstrip(".")
    parts = raw.split(".")
    if any(p in ("*", "x", "X") for p in parts):  # 9.*, 9.6.*
        fixed = tuple(int(p) for p in parts[: [p in ("*", "x", "X") for p in parts].index(True)])
        return version[: len(fixed)] == fixed
    nums = tuple(int(p) for p in parts if p.isdigit())
    if not nums:
        return True
    low = (*nums, 0, 0, 0, 0)[:4]
    if op == "^":
        i = next((k for k, n in enumerate(nums) if n), len(nums) - 1)
        high = (*nums[:i], nums[i] + 1)
        return version >= low and version[: len(high)] < high
    if op == "~":
        keep = nums[:-1] if len(nums) > 1 else nums
        high = (*keep[:-1], keep[-1] + 1)
        return version >= low and version[: len(high)] < high
    v = version[:4]
    return {"=": v[: len(nums)] == nums, "==": v[: len(nums)] == nums,
            "!=": v[: len(nums)] != nums, ">=": v >= low, ">": v > low,
            "<=": v <= low, "<": v < low}[op]


def satisfies(version: str, constraint: str) -> bool:
    """Whether `version` meets a Composer constraint (``^8.5.13 || ^9``, ``>=7 <10``,
    ``~9.6``, ``9.*``). Syntax it does not know counts as satisfied."""
    v = _vtuple(version)
    if v is None:
        return True
    v = (*v, 0, 0, 0, 0)[:4]
    for alt in re.split(r"\s*\|\|?\s*", constraint.strip()):
        alt = re.sub(r"\s+-\s+", " - ", alt)
        if " - " in alt:  # hyphen range
            lo, _, hi = alt.partition(" - ")
            atoms = [">=" + lo, "<=" + hi]
        else:
            atoms = [a for a in re.split(r"\s*,\s*|\s+(?![\d*])", alt) if a]
        if all(_atom(v, a) for a in atoms):
            return True
    return False


def phpunit_constraint(repo: Path) -> str | None:
    doc = _composer(repo)
    for key in ("require-dev", "require"):
        section = doc.get(key)
        if isinstance(section, dict) and isinstance(section.get("phpunit/phpunit"), str):
            return section["phpunit/phpunit"]
    return None


def _suite() -> str:
    try:
        return get_settings().debian_suite
    except Exception:  # settings unreadable: the default suite
        return "bookworm"


def toolchain_note(repo: Path, suite: str | None = None) -> str | None:
    """A ``toolchain:`` note when the image's PHPUnit is outside the repository's
    ``phpunit/phpunit`` constraint, naming the suites whose PHPUnit fits."""
    constraint = phpunit_constraint(repo)
    suite = suite or _suite()
    have = PHPUNIT_BY_SUITE.get(suite)
    if not constraint or not have or satisfies(have, constraint):
        return None
    fits = [s for s, v in PHPUNIT_BY_SUITE.items() if satisfies(v, constraint)]
    if fits:
        where = "suites that fit: " + ", ".join(f"{s} ({PHPUNIT_BY_SUITE[s]})" for s in fits)
    else:
        newer = [s for s, v in PHPUNIT_BY_SUITE.items() if _vtuple(v) > _vtuple(have)]
        wanted_newer = not any(satisfies(f"{n}.99.99", constraint)
                               for n in range(1, _vtuple(have)[0] + 1))
        hint = ("newer" if wanted_newer else "older")
        where = f"no Debian suite fits; the constraint wants a {hint} PHPUnit"
        if wanted_newer and newer:
            where += f" (nearest: {newer[-1]} {PHPUNIT_BY_SUITE[newer[-1]]})"
    return (f"toolchain: phpunit outside constraint {constraint!r}: "
            f"{suite} ships {have}; {where}")


def _composer(repo: Path) -> dict:
    try:
        doc = json.loads((repo / "composer.json").read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def needs_install(repo: Path) -> bool:
    """Whether composer.json requires packages the image does not ship (a PHPUnit outside
    the constraint counts as not shipped: composer may fetch the right one)."""
    doc = _composer(repo)
    for key in ("require", "require-dev"):
        section = doc.get(key)
        if isinstance(section, dict) and any(not _SHIPPED.match(str(k)) for k in section):
            return True
    return toolchain_note(repo) is not None


# Composer packages that are tools, not code the tests load: not looked for in Debian
_TOOLS = re.compile(r"^(phpstan/|vimeo/psalm|psalm/|friendsofphp/php-cs-fixer|squizlabs/|"
                    r"slevomat/|rector/|infection/|roave/|phpmd/|php-coveralls/|phpbench/|"
                    r"bamarni/|ergebnis/composer-normalize|dealerdirect/)")
DEBIAN_AUTOLOADS = "/usr/local/share/envfactory/php-autoloads"
PREPEND = "/tmp/envfactory-prepend.php"
PREPEND_PHP = (
    "<?php $c = getcwd() . '/vendor/autoload.php'; if (is_file($c)) require_once $c; "
    f"foreach ((@file('{DEBIAN_AUTOLOADS}', FILE_IGNORE_NEW_LINES) ?: []) as $f) "
    "if (is_file($f)) require_once $f;\n"
)


def debian_candidates(repo: Path) -> list[list[str]]:
    """Per required Composer package (``vendor/name``), the Debian package names it may
    have: ``php-<vendor>-<name>``; ``php-<name>`` only where vendor and name are one
    (``php-<name>`` of another vendor is often another library)."""
    doc = _composer(repo)
    out: list[list[str]] = []
    for key in ("require", "require-dev"):
        section = doc.get(key)
        if not isinstance(section, dict):
            continue
        for name in section:
            name = str(name).lower()
            if _SHIPPED.match(name) or _TOOLS.match(name) or "/" not in name:
                continue
            vendor, pkg = name.split("/", 1)
            names = [f"php-{vendor}-{pkg}"] if vendor != pkg else [f"php-{pkg}"]
            names = [n.replace("_", "-") for n in names
                     if re.fullmatch(r"[a-z0-9][a-z0-9.+_-]+", n)]
            if names:
                out.append(names)
    return out


def apt_packages_step(repo: Path) -> str | None:
    """Install the Debian packages of the required Composer packages (those Debian has),
    and list their autoloaders in `DEBIAN_AUTOLOADS` for the test command to load."""
    groups = debian_candidates(repo)
    if not groups:
        return None
    return (
        apt_install_available(groups, "Packagist out of reach: installing the packages "
                                      "Debian has")
        + f"; mkdir -p {DEBIAN_AUTOLOADS.rsplit('/', 1)[0]}; "
        f"[ -z \"$OK\" ] || dpkg -L $OK 2>/dev/null | grep '/autoload\\.php$' > {DEBIAN_AUTOLOADS}; "
        "true"
    )


def _has_bootstrap(config: Path) -> bool:
    try:
        text = config.read_text(errors="replace")
    except OSError:
        return False
    return re.search(r"<phpunit\b[^>]*\sbootstrap\s*=", text, re.S) is not None


def _tests_dir(repo: Path) -> str:
    for name in ("tests", "test", "Tests", "Test"):
        if (repo / name).is_dir():
            return name
    return "."


# --------------------------------------------------------------------------- diagnose

# a configuration of a newer PHPUnit's schema fails validation in an older one
@rule(r"No tests found in class|PHPUnit\\Framework\\Attributes|"
      r"Element 'phpunit', attribute '\w+': The attribute '\w+' is not allowed", "test")
def _phpunit_version(m, plan, phase, step):
    if plan.language is Language.PHP:
        yield from suites_towards(plan, "newer", "the tests want a newer PHPUnit")


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree) -> Facts:
    f = Facts()
    composer = read_json(tree.read("composer.json")) if tree.has("composer.json") else {}
    if tree.has("composer.json"):
        f.build_system = f.package_manager = "composer"
        f.cite("composer.json")
        if tree.has("composer.lock"):
            f.extra["lockfile"] = "composer.lock"
    req = composer.get("require") if isinstance(composer.get("require"), dict) else {}
    dev = composer.get("require-dev") if isinstance(composer.get("require-dev"), dict) else {}
    if req.get("php"):
        f.versions["php"] = str(req["php"])
    platform = composer.get("config", {}).get("platform", {}) if isinstance(
        composer.get("config"), dict) else {}
    if isinstance(platform, dict) and platform.get("php") and "php" not in f.versions:
        f.versions["php"] = str(platform["php"])
    if "pestphp/pest" in dev or "pestphp/pest" in req:
        f.test_framework = "pest"
    elif ("phpunit/phpunit" in dev or "phpunit/phpunit" in req
          or any(tree.has(n) for n in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"))):
        f.test_framework = "phpunit"
        f.cite(*(n for n in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
                 if tree.has(n)))
    elif any(re.search(r"Test\.php$", p) for p in tree.with_ext(".php")):
        f.test_framework = "phpunit"
    return f


@register("php")
class PhpPlugin:
    language = Language.PHP
    traits = Traits(
        image_family="php",
        extensions=(".php",),
        build_files=("composer.json",),
        test_files=(r"\w+Test\.php", r"\w+\.phpt"),
        version_key="php",
        github_names=("PHP",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        has_composer = (repo / "composer.json").is_file()
        config = next((c for c in _CONFIGS if (repo / c).is_file()), None)
        setup: list[str] = []
        notes: list[str] = []
        if has_composer and needs_install(repo):
            debs = apt_packages_step(repo)
            fallback = f"( {debs}; {_DUMP.format(q='')} )" if debs else _DUMP.format(q="")
            setup.append(
                "timeout 900 composer install --no-interaction --no-progress --prefer-dist "
                "|| " + fallback
            )
            notes.append("composer install (lockfile versions when composer.lock exists)")
            if debs:
                notes.append("when Packagist is out of reach, the packages Debian has "
                             "(php-<vendor>-<name>) are installed from Debian")
        elif has_composer:
            setup.append("composer dump-autoload")
            notes.append("only PHP, extensions and PHPUnit required: the image's are used")
        if (note := toolchain_note(repo)) is not None:
            notes.append(note + " (when the image's PHPUnit runs the tests)")
        run = [
            f'rm -f "{REPORT}"',
            "if [ -f composer.json ]; then " + _DUMP.format(q=" -q") + " || true; fi",
            "PHPUNIT=phpunit; [ -x vendor/bin/phpunit ] && PHPUNIT=vendor/bin/phpunit",
            # the image's PHPUnit loads what vendor/bin/phpunit would have: the project's
            # autoloader (a repository's own bootstrap may not), and Debian's packages
            # installed in its place
            f"printf %s {shlex.quote(PREPEND_PHP)} > {PREPEND}",
            '[ "$PHPUNIT" = phpunit ] && '
            f'PHPUNIT="php -d auto_prepend_file={PREPEND} $(command -v phpunit)"',
        ]
        args = f'--log-junit "{REPORT}" --do-not-cache-result --colors=never'
        if config is None:
            where = _tests_dir(repo)
            run.append("B=; [ -f vendor/autoload.php ] && B='--bootstrap vendor/autoload.php'")
            tail = f"$PHPUNIT $B {args}"
            target = f" {where}"
        elif not _has_bootstrap(repo / config):
            # written for PHPUnit 10+, whose vendor/bin/phpunit loads the autoloader itself
            run.append('B=; [ "$PHPUNIT" = phpunit ] && [ -f vendor/autoload.php ] '
                       "&& B='--bootstrap vendor/autoload.php'")
            tail = f"$PHPUNIT $B {args}"
            target = ""
            notes.append(f"{config} names no bootstrap: the image's PHPUnit gets "
                         "--bootstrap vendor/autoload.php")
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
