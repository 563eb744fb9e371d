"""Ruby: RSpec (JSON reporter, ids = full descriptions) and minitest (verbose text, ids
``Class#test_name``), through Bundler when the Gemfile resolves, else the system gems.

Setup resolves the Gemfile from installed gems first (``bundle install --local``: the image
ships rake, minitest and rspec), then from the network; when neither works the tests still
run against the system gems. The test command decides at run time (``bundle check``), so
an instance at another commit, whose checkout may have removed an untracked Gemfile.lock,
behaves the same way. minitest runs through the Rakefile's test task when there is one,
else by loading ``test/**/*_test.rb`` and ``test/**/test_*.rb`` directly.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import Plan, register

REPORT = "/tmp/envfactory-rspec.json"
_FRAMEWORKS = {"rspec": "rspec", "minitest": "minitest", "test-unit": "minitest",
               "testunit": "minitest", "test_unit": "minitest"}
_BUNDLE = 'X=; if [ -f Gemfile ] && bundle check >/dev/null 2>&1; then X="bundle exec"; fi'
# test files, loaded in a stable order, for repositories without a rake test task
_LOAD = ("ruby -Ilib -Itest -e 'Dir.glob(%w[test/**/*_test.rb test/**/test_*.rb])"
         ".uniq.sort.each do |f| require File.expand_path(f) end'")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def scan_framework(repo: Path) -> str:
    if (repo / ".rspec").is_file() or (repo / "spec").is_dir():
        return "rspec"
    gems = _read(repo / "Gemfile") + "".join(_read(p) for p in sorted(repo.glob("*.gemspec")))
    if re.search(r"""["']rspec(-core)?["']""", gems) and not (repo / "test").is_dir():
        return "rspec"
    return "minitest"


def has_rake_test_task(repo: Path) -> bool:
    text = _read(repo / "Rakefile") or _read(repo / "rakefile") or _read(repo / "Rakefile.rb")
    return bool(re.search(r"Rake::TestTask|Minitest::TestTask|task\s*\(?\s*:test\b", text))


@register("ruby")
class RubyPlugin:
    language = Language.RUBY

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        declared = _FRAMEWORKS.get((detection.test_framework or "").lower())
        framework = declared or scan_framework(repo)
        has_gemfile = (repo / "Gemfile").is_file()
        setup: tuple[str, ...] = ()
        if has_gemfile:
            setup = (
                "bundle install --local || timeout 900 bundle install || "
                "echo 'envfactory: the Gemfile does not resolve; using the system gems'",
            )
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
            setup_steps=setup,
            test_command="\n".join(test),
            report_format=fmt,
            report_path=report_path,
            per_test_command="\n".join(per_test),
            env=env,
            dependency_files=("Gemfile", "Gemfile.lock", "*.gemspec", ".ruby-version"),
            notes=("bundler only when the Gemfile resolves offline or from the network",),
        )
