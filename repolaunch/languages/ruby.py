"""Ruby: RSpec (JSON reporter, ids = full descriptions), minitest and test-unit (verbose
text, ids ``Class#test_name``), through Bundler when the Gemfile resolves, else the system
gems. minitest or test-unit is decided by the test files themselves (``require
'test/unit'`` / ``Test::Unit::TestCase`` against ``Minitest::Test`` / ``require
'minitest/...'``): a Gemfile often lists both.

Setup resolves the Gemfile from installed gems first (``bundle install --local``: the image
ships rake, minitest and rspec), then from the network; when neither works the tests still
run against the system gems. The test command decides at run time (``bundle check``), so
an instance at another commit, whose checkout may have removed an untracked Gemfile.lock,
behaves the same way. minitest runs through the Rakefile's test task when there is one,
else by loading ``test/**/*_test.rb`` and ``test/**/test_*.rb`` directly; test-unit the
same, with ``-v`` (its verbose, per-test output) and selection by ``-t``/``-n`` regexps.

When RubyGems cannot be reached, the gems the Gemfile and gemspecs name are installed from
Debian (``ruby-<gem>``, a few under other names; those Debian lacks are skipped), then
``bundle install --local`` is tried again; failing that the tests run on the system gems.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, first_match
from repolaunch.diagnose import apt_action, apt_install_available, rule
from repolaunch.languages import Plan, Traits, register

REPORT = "/tmp/envfactory-rspec.json"
_FRAMEWORKS = {"rspec": "rspec", "minitest": "minitest", "test-unit": "test-unit",
               "testunit": "test-unit", "test_unit": "test-unit"}
_TEST_UNIT = re.compile(r"""require\s*\(?\s*['"]test/unit['"]|Test::Unit::TestCase""")
_MINITEST = re.compile(r"""require\s*\(?\s*['"]minitest(/[\w/]+)?['"]|Mini[Tt]est::(Test|Spec)\b|"""
                       r"MiniTest::Unit::TestCase")
# Debian packages named otherwise than ruby-<gem>; None: nothing to install for it
_DEBS: dict[str, str | None] = {
    "pry": "pry", "rake": "rake", "bundler": None, "rubocop": "rubocop",
    "rspec": "ruby-rspec", "test-unit": "ruby-test-unit", "minitest": "ruby-minitest",
    "activesupport": "ruby-activesupport", "nokogiri": "ruby-nokogiri",
}
# development tools no test needs: not worth an install
_TOOLS = re.compile(r"^(rubocop.*|standard|guard.*|danger.*|benchmark-.*|yard|rdoc|"
                    r"redcarpet|github-markup|kramdown.*|bump|gem-release|"
                    r"byebug|debug|pry-.*|overcommit|reek|rufo|solargraph)$")
_BUNDLE = 'X=; if [ -f Gemfile ] && bundle check >/dev/null 2>&1; then X="bundle exec"; fi'
# test files, loaded in a stable order, for repositories without a rake test task
_LOAD = ("ruby -Ilib -Itest -e 'Dir.glob(%w[test/**/*_test.rb test/**/test_*.rb])"
         ".uniq.sort.each do |f| require File.expand_path(f) end'")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def unit_framework(repo: Path) -> str | None:
    """'test-unit' or 'minitest' as the files under test/ use them; None when they say
    neither (or both equally)."""
    tu = mt = 0
    files = sorted((repo / "test").rglob("*.rb")) if (repo / "test").is_dir() else []
    for path in files[:300]:
        text = _read(path)[:200_000]
        tu += bool(_TEST_UNIT.search(text))
        mt += bool(_MINITEST.search(text))
    if tu != mt:
        return "test-unit" if tu > mt else "minitest"
    return None


def scan_framework(repo: Path) -> str:
    if (repo / ".rspec").is_file() or (repo / "spec").is_dir():
        return "rspec"
    gems = _read(repo / "Gemfile") + "".join(_read(p) for p in sorted(repo.glob("*.gemspec")))
    if re.search(r"""["']rspec(-core)?["']""", gems) and not (repo / "test").is_dir():
        return "rspec"
    found = unit_framework(repo)
    if found:
        return found
    if re.search(r"""["']test-unit["']""", gems) and not re.search(r"minitest", gems):
        return "test-unit"
    return "minitest"


def gem_names(repo: Path) -> list[str]:
    """The gems the Gemfile and the top-level gemspecs name, in order, once each."""
    text = _read(repo / "Gemfile")
    names = re.findall(r"""(?m)^\s*gem\s*\(?\s*['"]([\w.-]+)['"]""", text)
    for spec in sorted(repo.glob("*.gemspec")):
        names += re.findall(r"""add_(?:runtime_|development_)?dependency\s*\(?\s*['"]([\w.-]+)['"]""",
                            _read(spec))
    return list(dict.fromkeys(names))


def debian_packages(gems: list[str]) -> list[str]:
    """Debian's packages for these gems: ``ruby-<gem>`` (``_`` as ``-``, lower case) unless
    `_DEBS` says otherwise; development-only tools left out."""
    out: list[str] = []
    for gem in gems:
        key = gem.lower()
        if _TOOLS.match(key):
            continue
        pkg = _DEBS[key] if key in _DEBS else "ruby-" + key.replace("_", "-")
        if pkg and re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", pkg):
            out.append(pkg)
    return list(dict.fromkeys(out))


def apt_gems_step(repo: Path) -> str | None:
    """Install Debian's packages of the repository's gems (those Debian has), one apt call
    for all and, should that fail, one per package."""
    pkgs = debian_packages(gem_names(repo))
    if not pkgs:
        return None
    return apt_install_available([[p] for p in pkgs],
                                 "RubyGems out of reach: installing the gems Debian packages")


def has_rake_test_task(repo: Path) -> bool:
    text = _read(repo / "Rakefile") or _read(repo / "rakefile") or _read(repo / "Rakefile.rb")
    return bool(re.search(r"Rake::TestTask|Minitest::TestTask|task\s*\(?\s*:test\b", text))


# --------------------------------------------------------------------------- diagnose

# Ruby gems the registry cannot give are often packaged by Debian as ruby-<name>.
RUBY_DEBS = {"pry": "pry", "rake": "rake", "rspec": "ruby-rspec", "byebug": "ruby-byebug",
             "simplecov": "ruby-simplecov", "rack/test": "ruby-rack-test",
             "active_support": "ruby-activesupport", "activesupport": "ruby-activesupport"}


@rule(r"cannot load such file -- ([\w/.-]+) \(LoadError\)")
def _ruby_load_error(m, plan, phase, step):
    if plan.language is not Language.RUBY:
        return
    lib = m.group(1)
    top = lib.split("/")[0]
    pkg = RUBY_DEBS.get(lib) or RUBY_DEBS.get(top) or f"ruby-{top.replace('_', '-')}"
    yield apt_action(pkg, f"missing Ruby library {lib}")


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree) -> Facts:
    f = Facts()
    gemspecs = [p for p in tree.files if p.endswith(".gemspec") and "/" not in p]
    gemfile = tree.read("Gemfile") if tree.has("Gemfile") else ""
    spec_text = "\n".join(tree.read(p) for p in gemspecs)
    if gemfile:
        f.build_system = f.package_manager = "bundler"
        f.cite("Gemfile")
        if tree.has("Gemfile.lock"):
            f.extra["lockfile"] = "Gemfile.lock"
    elif gemspecs:
        f.build_system, f.package_manager = "gemspec", "gem"
        f.cite(gemspecs[0])
    elif tree.has("Rakefile"):
        f.build_system, f.package_manager = "rake", "gem"
        f.cite("Rakefile")
    if tree.has("Rakefile"):
        f.extra["rakefile"] = "Rakefile"
    v = first_match(r"""(?m)^\s*ruby\s+['"]([^'"]+)['"]""", gemfile)
    if v:
        f.versions["ruby"] = v
    elif tree.has(".ruby-version"):
        f.versions["ruby"] = tree.read(".ruby-version").strip().splitlines()[0].removeprefix(
            "ruby-")
    elif (rv := first_match(r"required_ruby_version\s*=\s*['\"]([^'\"]+)", spec_text)):
        f.versions["ruby"] = rv
    deps = gemfile + "\n" + spec_text
    rb = tree.with_ext(".rb")
    specs = [p for p in rb if p.endswith("_spec.rb")]
    tests = [p for p in rb if re.search(r"(^|/)(test_[^/]+|[^/]+_test)\.rb$", p)]
    rake = tree.read("Rakefile") if tree.has("Rakefile") else ""
    if tree.has(".rspec") or (specs and (re.search(r"rspec", deps) or len(specs) >= len(tests))):
        f.test_framework = "rspec"
        f.cite(".rspec" if tree.has(".rspec") else specs[0])
    elif (unit := _ruby_unit_framework(tree, rb)):
        f.test_framework = unit  # the test files say which (a Gemfile often lists both)
    elif re.search(r"test-unit|test/unit", deps + rake) and not re.search(r"minitest", deps):
        f.test_framework = "test-unit"
    elif tests or re.search(r"minitest|Rake::TestTask", deps + rake):
        f.test_framework = "minitest"
    return f


def _ruby_unit_framework(tree: Tree, rb: list[str]) -> str | None:
    """'test-unit' or 'minitest' by what the files under test/ require and subclass."""
    tu = mt = 0
    for p in [p for p in rb if p.startswith("test/")][:300]:
        text = tree.read(p, 200_000)
        tu += bool(re.search(r"""require\s*\(?\s*['"]test/unit['"]|Test::Unit::TestCase""", text))
        mt += bool(re.search(r"""require\s*\(?\s*['"]minitest(/[\w/]+)?['"]|"""
                             r"Mini[Tt]est::(Test|Spec)\b|MiniTest::Unit::TestCase", text))
    if tu == mt:
        return None
    return "test-unit" if tu > mt else "minitest"


@register("ruby")
class RubyPlugin:
    language = Language.RUBY
    traits = Traits(
        image_family="ruby",
        extensions=(".rb", ".rake"),
        build_files=("Gemfile", "Rakefile", ".rspec"),
        test_files=(r"\w+_spec\.rb", r"\w+_test\.rb", r"test_\w+\.rb", r"spec_helper\.rb",
                    r"test_helper\.rb", r"rails_helper\.rb", r"tests?\.rb"),
        version_key="ruby",
        github_names=("Ruby",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        declared = _FRAMEWORKS.get((detection.test_framework or "").lower())
        framework = declared or scan_framework(repo)
        has_gemfile = (repo / "Gemfile").is_file()
        setup: list[str] = []
        notes = ["bundler only when the Gemfile resolves offline or from the network"]
        if framework == "test-unit":
            setup.append(
                "ruby -e 'require \"test/unit\"' 2>/dev/null || { apt-get update -qq && "
                "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                "--no-install-recommends ruby-test-unit; } || true"
            )
        if has_gemfile:
            apt = apt_gems_step(repo)
            fallback = f"{{ {apt}; bundle install --local; }} || " if apt else ""
            setup.append(
                "bundle install --local || timeout 900 bundle install || " + fallback +
                "echo 'envfactory: the Gemfile does not resolve; using the system gems'"
            )
            if apt:
                notes.append("RubyGems out of reach: the gems' Debian packages (ruby-<gem>)")
        env = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        if framework == "rspec":
            base = [f'rm -f "{REPORT}"', _BUNDLE]
            run = f'$X rspec --no-color --format progress --format json --out "{REPORT}"'
            test = [*base, run]
            # rspec -e takes one description each: repeat the flag for every id
            per_test = [
                *base,
                'set --; for s in {tests}; do set -- "$@" -e "$s"; done',
                f'{run} "$@"',
            ]
            fmt, report_path = "rspec-json", REPORT
            build = "bundler" if has_gemfile else "plain"
        elif framework == "test-unit":
            test, per_test, build = self._test_unit(repo, has_gemfile)
            fmt, report_path = "testunit", None
        else:
            select = (
                "N=$(for s in {tests}; do printf '%s\\n' \"$s\"; done "
                "| sed 's/[][\\\\.*^$+?()|/]/\\\\&/g' | paste -sd'|' -)"
            )
            if has_rake_test_task(repo):
                test = [_BUNDLE, '$X rake test TESTOPTS="-v"']
                per_test = [_BUNDLE, select, "$X rake test TESTOPTS=\"-v '--name=/^($N)\\$/'\""]
                build = "rake"
            else:
                test = [_BUNDLE, f"$X {_LOAD} -- -v"]
                per_test = [_BUNDLE, select, f"$X {_LOAD} -- -v -n \"/^($N)\\$/\""]
                build = "bundler" if has_gemfile else "plain"
            fmt, report_path = "minitest", None
        return Plan(
            language=Language.RUBY,
            image_family="ruby",
            build_system=build,
            test_framework=framework,
            setup_steps=tuple(setup),
            test_command="\n".join(test),
            report_format=fmt,
            report_path=report_path,
            per_test_command="\n".join(per_test),
            env=env,
            dependency_files=("Gemfile", "Gemfile.lock", "*.gemspec", ".ruby-version"),
            notes=tuple(notes),
        )

    @staticmethod
    def _test_unit(repo: Path, has_gemfile: bool) -> tuple[list[str], list[str], str]:
        """test-unit: ``-v`` prints one line per test. ``-n`` with a regexp matches method
        names only (and several ``-n`` must all match), so selection is one ``-t`` regexp
        (the classes, last ``::`` part) and one ``-n`` regexp (the methods): a chosen
        method name in another chosen class runs too, which the id lookup ignores."""
        esc = r"sed 's/[][\\.*^$+?(){{}}|/]/\\&/g'"
        select = (
            "I=$(for s in {tests}; do printf '%s\\n' \"$s\"; done)\n"
            f"T=$(printf '%s\\n' \"$I\" | sed 's/#.*//; s/.*:://' | {esc} "
            "| sort -u | paste -sd'|' -)\n"
            f"N=$(printf '%s\\n' \"$I\" | sed 's/^[^#]*#//' | {esc} | paste -sd'|' -)"
        )
        if has_rake_test_task(repo):
            # TESTOPTS goes through the shell again: single-quote the regexps
            quote = ("T=$(printf '%s' \"$T\" | sed \"s/'/'\\\\\\\\''/g\"); "
                     "N=$(printf '%s' \"$N\" | sed \"s/'/'\\\\\\\\''/g\")")
            test = [_BUNDLE, '$X rake test TESTOPTS="-v"']
            per_test = [_BUNDLE, select, quote,
                        "$X rake test TESTOPTS=\"-v -t '/(\\A|::)($T)\\z/' "
                        "-n '/\\A($N)\\z/'\""]
            return test, per_test, "rake"
        test = [_BUNDLE, f"$X {_LOAD} -- -v"]
        per_test = [_BUNDLE, select,
                    f'$X {_LOAD} -- -v -t "/(\\A|::)($T)\\z/" -n "/\\A($N)\\z/"']
        return test, per_test, "bundler" if has_gemfile else "plain"
