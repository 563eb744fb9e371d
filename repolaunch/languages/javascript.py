"""JavaScript: npm / yarn / pnpm setup, and node's test runner, Jest, Mocha or Vitest.

Setup (network on): ``npm ci`` when a package-lock is committed; otherwise ``npm install``
resolved as of the checked-out commit's date (``--before``, npm's time machine) and without
writing a package-lock into the tree (a stray lockfile would show up in every diff). yarn and
pnpm lockfiles are installed frozen through ``npx`` (no corepack in Debian's Node 18).

Test command (network off): the framework's own binary from ``node_modules/.bin`` with the
repository's own arguments from ``scripts.test`` (paths, ``--config``), plus a structured
reporter writing to `REPORT_DIR`:

- node's runner: ``node --test --test-reporter=tap --test-reporter-destination=FILE``;
- Jest: ``--ci --json --outputFile=FILE``;
- Vitest: ``run --reporter=json --outputFile=FILE``;
- Mocha: ``--reporter json --reporter-option output=FILE``.

The per-test template turns test ids (``suite > test``) into the runner's name filter: a
regex of the full names for Jest / Vitest / Mocha (``-t`` / ``--grep``), of the leaf names
for node's runner (``--test-name-pattern`` matches a test's own name).

The plan relies on nothing outside the tree but ``node_modules`` (and, for TypeScript, the
build output), which the repository's ``.gitignore`` keeps through ``git clean -fd``.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import Plan, register

REPORT_DIR = "/tmp/envfactory-tests"
FRAMEWORKS = ("node-test", "jest", "vitest", "mocha")
DEPENDENCY_FILES = ("package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
                    "pnpm-lock.yaml", ".npmrc", ".yarnrc", ".yarnrc.yml", ".nvmrc",
                    "*/package.json", "packages/*/package.json")
ENV = {
    "CI": "true",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
}
_SHELL_OPS = {"&&", "||", ";", "|", "&"}

# Turns shell-quoted test ids into a runner's name regex (printed on stdout).
_PATTERN_JS = (
    "const e=s=>s.replace(/[.*+?^${}()|[\\]\\\\\\/]/g,'\\\\$&');"
    "const leaf=process.env.EF_LEAF==='1';"
    "const ids=process.argv.slice(1).map(i=>leaf?i.split(' > ').pop():i.split(' > ').join(' '));"
    "process.stdout.write((leaf?'^(?:':'(?:^| )(?:')+ids.map(e).join('|')+')$')"
)


def package_json(repo: Path) -> dict[str, Any]:
    try:
        doc = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def commit_date(repo: Path) -> str | None:
    """The checked-out commit's committer date in UTC (``2024-05-01T12:00:00Z``), or None."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%cI"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    try:
        when = datetime.fromisoformat(out.stdout.strip())
    except ValueError:
        return None
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def setup_steps(repo: Path, detection: Detection) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(steps, notes) for installing the dependencies."""
    flags = "--no-audit --no-fund"
    if (repo / "package-lock.json").is_file() or (repo / "npm-shrinkwrap.json").is_file():
        return (f"npm ci {flags}",), ("npm ci: the committed lockfile pins every version",)
    if (repo / "pnpm-lock.yaml").is_file():
        return ("npx --yes pnpm@8 install --frozen-lockfile",), ("pnpm-lock.yaml pins versions",)
    if (repo / "yarn.lock").is_file():
        return ("npx --yes yarn@1 install --frozen-lockfile --ignore-engines --non-interactive",), \
            ("yarn.lock pins versions",)
    if not (repo / "package.json").is_file():
        return (), ("no package.json: nothing to install",)
    date = commit_date(repo)
    before = f" --before={date}" if date else ""
    notes = (f"no lockfile: npm resolves as of the commit date {date}",) if date else (
        "no lockfile and no git date: npm resolves as of today",)
    return (f"npm install{before} --no-package-lock {flags}",), notes


def framework(detection: Detection, pkg: dict[str, Any]) -> str:
    fw = detection.test_framework or ""
    if fw in FRAMEWORKS:
        return fw
    deps = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})}
    for name in ("vitest", "jest", "mocha"):
        if name in deps:
            return name
    return "node-test"


def script_args(pkg: dict[str, Any], runner: str) -> list[str]:
    """The arguments ``scripts.test`` passes to `runner` (its paths, --config, ...)."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    script = str(scripts.get("test", ""))
    try:
        words = shlex.split(script)
    except ValueError:
        return []
    if runner == "node-test":
        idx = next((i for i, w in enumerate(words) if w == "--test"), None)
        if idx is None or "node" not in words[:idx]:
            return []
        start = idx + 1
    else:
        idx = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == runner), None)
        if idx is None:
            return []
        start = idx + 1
    out: list[str] = []
    for w in words[start:]:
        if w in _SHELL_OPS or w.startswith((">", "<", "2>")):
            break
        out.append(w)
    return _drop_reporting(out, runner)


_REPORT_FLAGS = {  # flags we set ourselves (with their values)
    "node-test": ("--test-reporter", "--test-reporter-destination"),
    "jest": ("--json", "--outputFile", "--watch", "--watchAll", "--coverage", "--ci",
             "--reporters", "--silent"),
    "vitest": ("--reporter", "--outputFile", "--watch", "--coverage", "--ui"),
    "mocha": ("--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--watch",
              "-w"),
}
_TAKES_VALUE = {"--test-reporter", "--test-reporter-destination", "--outputFile", "--reporters",
                "--reporter", "-R", "--reporter-option", "--reporter-options", "-O"}


def _drop_reporting(args: list[str], runner: str) -> list[str]:
    drop = _REPORT_FLAGS[runner]
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in drop:
            skip = "=" not in a and name in _TAKES_VALUE
            continue
        if runner == "vitest" and a in ("run", "watch", "dev"):
            continue
        out.append(a)
    return out


def _bin(name: str) -> str:
    return f"./node_modules/.bin/{name}"


def runner_commands(fw: str, args: list[str], report: str) -> tuple[str, str, str]:
    """(test command, per-test template, report format) for a framework."""
    rest = " ".join(shlex.quote(a) for a in args)
    rest = f" {rest}" if rest else ""
    pattern = f"node -e {shlex.quote(_PATTERN_JS)} --"
    if fw == "node-test":
        base = (f"node --test --test-reporter=tap "
                f"--test-reporter-destination={report}")
        return (f"{base}{rest}",
                f'P=$(EF_LEAF=1 {pattern} {{tests}}) && {base} --test-name-pattern="$P"{rest}',
                "tap")
    if fw == "jest":
        base = f"{_bin('jest')} --ci --json --outputFile={report}"
        return f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} -t "$P"{rest}', "jest-json"
    if fw == "vitest":
        base = f"{_bin('vitest')} run --reporter=json --outputFile={report}"
        return (f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} -t "$P"{rest}',
                "vitest-json")
    if fw == "mocha":
        base = f"{_bin('mocha')} --reporter json --reporter-option output={report}"
        return (f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} --grep "$P"{rest}',
                "mocha-json")
    raise ValueError(f"unsupported JavaScript test framework {fw!r}; known: {FRAMEWORKS}")


def make_plan(repo: Path, detection: Detection, language: Language,
              build: str = "") -> Plan:
    pkg = package_json(repo)
    fw = framework(detection, pkg)
    ext = "tap" if fw == "node-test" else "json"
    report = f"{REPORT_DIR}/report.{ext}"
    args = script_args(pkg, fw)
    test, per_test, fmt = runner_commands(fw, args, report)
    prelude = f"rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR} && "
    if build:
        prelude += f"{{ {build}; }} && "
    steps, notes = setup_steps(repo, detection)
    engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
    if engines.get("node"):
        notes = (*notes, f"engines.node {engines['node']}; the image has Node 18")
    manager = detection.package_manager or detection.build_system
    if manager not in ("npm", "yarn", "pnpm"):
        manager = "npm"
    return Plan(
        language=language,
        image_family="node",
        build_system=manager,
        test_framework=fw,
        setup_steps=steps,
        test_command=prelude + test,
        report_format=fmt,
        report_path=report,
        per_test_command=prelude + per_test,
        env=dict(ENV),
        dependency_files=DEPENDENCY_FILES,
        notes=notes,
    )


@register("javascript")
class JavaScriptPlugin:
    language = Language.JAVASCRIPT

    def plan(self, repo: Path, detection: Detection) -> Plan:
        return make_plan(Path(repo), detection, Language.JAVASCRIPT)


def strip_jsonc(text: str) -> str:
    """tsconfig is JSON with comments and trailing commas."""
    out = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text,
                 flags=re.S)
    return re.sub(r",(\s*[}\]])", r"\1", out)
