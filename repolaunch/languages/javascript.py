"""JavaScript: npm / yarn / pnpm setup, and node's test runner, Jest, Mocha, Vitest, AVA,
node-tap or tape.

Setup (network on): ``npm ci`` when a package-lock is committed; otherwise ``npm install``
resolved as of the checked-out commit's date (``--before``, npm's time machine) and without
writing a package-lock into the tree (a stray lockfile would show up in every diff). yarn and
pnpm lockfiles are installed frozen through ``npx`` (no corepack in Debian's Node 18).

Test command (network off): the framework's own binary from ``node_modules/.bin`` with the
repository's own arguments from ``scripts.test`` (paths, ``--config``), plus a structured
reporter writing to `REPORT_DIR`:

- node's runner: ``node --test --test-reporter=tap --test-reporter-destination=FILE``;
- Jest: ``--ci --json --outputFile=FILE --passWithNoTests``;
- Vitest: ``run --reporter=json --outputFile=FILE --passWithNoTests`` (a tree or a filter
  with no test files is not a failure; a data module matching the runner's file pattern is
  left out by the report parser);
- Mocha: ``--reporter json --reporter-option output=FILE``;
- AVA: ``--tap``, node-tap: ``--reporter=tap``, tape (TAP is all it prints): stdout into FILE.

A runner ``scripts.test`` names that none of these is gets node's runner anyway, and a
plan note that says so. Words of ``scripts.test`` that are unquoted globs (``test/*.ts``)
stay unquoted, so the shell expands them as it does for ``npm test`` (node 18 does not
expand globs itself).

The per-test template turns test ids (``suite > test``) into the runner's name filter: a
regex of the full names for Jest / Vitest / Mocha (``-t`` / ``--grep``), of the leaf names
for node's runner (``--test-name-pattern`` matches a test's own name), of the top-level
names for node-tap (``--grep`` filters level by level), one ``--match`` per title for AVA;
tape has no name filter (no per-test template).

``engines.node`` is checked against the Node.js of each Debian suite (`NODE_BY_SUITE`); a
range the default suite's Node does not meet gets a plan note naming the suite that fits. A
range newer than every suite's Node gets the oldest major that meets it from the npm
registry, where Node.js's own builds are published (`REGISTRY_NODE`).

The plan relies on nothing outside the tree but ``node_modules`` (and, for TypeScript, the
build output), which the repository's ``.gitignore`` keeps through ``git clean -fd``.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from envs.gitcmd import commit_date
from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree
from repolaunch.languages import (
    Plan,
    Traits,
    javascript_served,  # noqa: F401  registers its rule
    register,
)
from repolaunch.languages import javascript_karma as karma
from repolaunch.languages import javascript_qunit as qunit
from repolaunch.languages.javascript_detect import (
    RUNNERS,
    builds_first,
    drop_options,
    expand_scripts,
    read_facts,
    test_script,
    workspace_tests,
)
from repolaunch.languages.javascript_node import (  # noqa: F401  public here too
    NODE_BY_SUITE,
    REGISTRY_NODE,
    REGISTRY_NODE_DIR,
    engines_note,
    locked_runner_engines,
    node_range_fits,
    node_suites,
    registry_node_major,
    registry_node_step,
)

REPORT_DIR = "/tmp/envfactory-tests"
FRAMEWORKS = ("node-test", "jest", "vitest", "mocha", "ava", "tap", "tape", "karma", "qunit")
# Runners detection knows that have no plan here (they get node's runner and a note).
UNPLANNED = ("jasmine", "uvu")
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
    # browsers for end-to-end tools download from hosts out of reach here (GitHub, Google's
    # storage), and a postinstall that cannot fetch one fails the whole install
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "CYPRESS_INSTALL_BINARY": "0",
}
_SHELL_OPS = {"&&", "||", ";", "|", "&"}

# Turns shell-quoted test ids into a runner's name regex (printed on stdout).
_PATTERN_JS = (
    "const e=s=>s.replace(/[.*+?^${}()|[\\]\\\\\\/]/g,'\\\\$&');"
    "const leaf=process.env.EF_LEAF==='1',top=process.env.EF_TOP==='1';"
    "const ids=process.argv.slice(1).map(i=>leaf?i.split(' > ').pop():"
    "top?i.split(' > ')[0]:i.split(' > ').join(' '));"
    "process.stdout.write((leaf||top?'^(?:':'(?:^| )(?:')+ids.map(e).join('|')+')$')"
)


def package_json(repo: Path) -> dict[str, Any]:
    try:
        doc = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


# Yarn 2+ ("berry") as such a repository needs it: its lock file may be rewritten (a lock of
# another day), packages laid out in node_modules (the runners are called from there), the
# npm registry (berry's default host is not the one that answers here), no telemetry.
BERRY_ENV = ("YARN_ENABLE_IMMUTABLE_INSTALLS=false YARN_NODE_LINKER=node-modules "
             "YARN_NPM_REGISTRY_SERVER=https://registry.npmjs.org YARN_ENABLE_TELEMETRY=0 "
             "YARN_ENABLE_GLOBAL_CACHE=false")


def yarn_berry(repo: Path) -> str | None:
    """The command that runs the repository's own Yarn 2+ (its ``yarnPath`` release, else
    the version ``packageManager`` names, from npm), or None for Yarn 1 / no Yarn."""
    try:
        rc = (repo / ".yarnrc.yml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        rc = ""
    path = re.search(r"(?m)^yarnPath:\s*['\"]?([^'\"\s]+)", rc)
    if path and (repo / path.group(1)).is_file() and ".." not in path.group(1):
        return f"node {shlex.quote(path.group(1))}"
    manager = str(package_json(repo).get("packageManager") or "")
    m = re.match(r"yarn@(\d+)\.([\w.+-]+)", manager)
    if m and int(m.group(1)) >= 2:
        return f"npx --yes -p @yarnpkg/cli-dist@{m.group(1)}.{m.group(2).split('+')[0]} yarn"
    try:
        head = (repo / "yarn.lock").read_text(encoding="utf-8", errors="replace")[:2000]
    except OSError:
        head = ""
    if rc or "__metadata:" in head:
        return "npx --yes -p @yarnpkg/cli-dist yarn"
    return None


def yarn_on_path(berry: str) -> str:
    """A setup step: `yarn` on PATH runs the repository's own Yarn 2+ (as corepack would),
    unless the image has one."""
    run = f'node "$(pwd)"/{berry[len("node "):]}' if berry.startswith("node ") else berry
    return ("command -v yarn >/dev/null || { printf '#!/bin/sh\\nexec env %s %s \"$@\"\\n' "
            f"'{BERRY_ENV}' \"{run.replace(chr(34), chr(92) + chr(34))}\" > /usr/local/bin/yarn "
            "&& chmod +x /usr/local/bin/yarn; }")


def setup_steps(repo: Path, detection: Detection) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(steps, notes) for installing the dependencies."""
    flags = "--no-audit --no-fund"
    if (repo / "package-lock.json").is_file() or (repo / "npm-shrinkwrap.json").is_file():
        return (f"npm ci {flags}",), ("npm ci: the committed lockfile pins every version",)
    if (repo / "pnpm-lock.yaml").is_file():
        # the pnpm the repository names (packageManager), else 8; a lock file of another
        # pnpm's format is re-resolved rather than refused
        m = re.match(r"pnpm@(\d+(?:\.[\w.-]+)?)", str(package_json(repo).get("packageManager") or ""))
        pnpm = f"npx --yes pnpm@{m.group(1).split('+')[0] if m else '8'}"
        return (f"{pnpm} install --frozen-lockfile || {pnpm} install --no-frozen-lockfile",), \
            ("pnpm-lock.yaml pins versions",)
    berry = yarn_berry(repo) if (repo / "yarn.lock").is_file() else None
    if berry:
        return (f"{BERRY_ENV} {berry} install", yarn_on_path(berry)), \
            ("yarn.lock of Yarn 2+: the repository's own Yarn installs it, and is `yarn` on "
             "PATH for the scripts that call it (a build step)",)
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
    if fw not in UNPLANNED:
        for name in ("vitest", "jest", "mocha", "ava", "tap", "tape", "karma", "qunit"):
            if name in deps:
                return name
    return "node-test"


def workspace_args(repo: Path, pkg: dict[str, Any], fw: str) -> tuple[list[str], list[str]]:
    """(arguments, package directories) for a monorepo root without a test script: the
    test paths each package's script gives `fw` (directories, test files), under the
    package's directory, or the directory itself; options are the packages' own."""
    word = next((w for f, w, _, _ in RUNNERS if f == fw), None)
    args: list[str] = []
    dirs: list[str] = []
    for d, sub in workspace_tests(repo, pkg):
        if word is None or not re.search(word, test_script(sub)):
            continue
        dirs.append(d)
        paths = [a for a in script_args(sub, fw) if not a.startswith("-") and (
            (repo / d / a).is_dir() or
            ((repo / d / a).is_file() and re.search(r"test|spec", a, re.I)
             and not re.search(r"config|rc\.|\.json$", a, re.I)))]
        args.extend(f"{d}/{a.rstrip('/')}" for a in paths) if paths else args.append(d)
    return args, dirs


def karma_script(pkg: dict[str, Any]) -> str:
    """``scripts.test`` expanded, or else the first script that starts karma."""
    script = test_script(pkg)
    if karma.karma_words(script):
        return script
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    expanded = (expand_scripts(scripts, v) for v in scripts.values() if isinstance(v, str))
    return next((text for text in expanded if karma.karma_words(text)), "")


def framework_notes(detection: Detection, pkg: dict[str, Any], fw: str) -> tuple[str, ...]:
    """A note when node's runner stands in for a runner ``scripts.test`` names."""
    if fw != "node-test":
        return ()
    script = test_script(pkg)
    named = detection.test_framework or ""
    if named in UNPLANNED:
        return (f"scripts.test runs {named}, which has no plan here; trying node --test",)
    if script and not re.search(r"\bnode\b[^;&|]*\s--test\b", script):
        return (f"scripts.test ({script[:120]!r}) names no test runner envfactory knows; "
                "trying node --test",)
    return ()


class ShellWord(str):
    """A word of ``scripts.test`` whose shell text is kept as written (an unquoted glob)."""

    raw: str

    def __new__(cls, value: str, raw: str) -> ShellWord:
        word = super().__new__(cls, value)
        word.raw = raw
        return word


_GLOB = frozenset("*?[")
_RAW_SAFE = re.compile(r"[A-Za-z0-9_\-./=:,@%+*?\[\]!^~{}]")


def split_script(script: str) -> list[str]:
    """``shlex.split`` that keeps words with unquoted glob characters as `ShellWord`."""
    words: list[str] = []
    value: list[str] = []
    raw: list[str] = []
    glob = False
    safe = True  # every unquoted character is harmless outside the script's own context
    in_word = False
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n":
            if in_word:
                text = "".join(value)
                words.append(ShellWord(text, "".join(raw)) if glob and safe else text)
                value, raw, glob, safe, in_word = [], [], False, True, False
            i += 1
            continue
        in_word = True
        if c == "'":
            end = script.find("'", i + 1)
            if end < 0:
                raise ValueError("no closing quotation")
            value.append(script[i + 1:end])
            raw.append(script[i:end + 1])
            i = end + 1
        elif c == '"':
            j = i + 1
            chunk: list[str] = []
            while j < n and script[j] != '"':
                if script[j] == "\\" and j + 1 < n and script[j + 1] in '"\\$`\n':
                    chunk.append(script[j + 1])
                    j += 2
                    continue
                if script[j] in "$`":
                    safe = False
                chunk.append(script[j])
                j += 1
            if j >= n:
                raise ValueError("no closing quotation")
            value.append("".join(chunk))
            raw.append(script[i:j + 1])
            i = j + 1
        elif c == "\\":
            if i + 1 >= n:
                raise ValueError("no escaped character")
            value.append(script[i + 1])
            raw.append(script[i:i + 2])
            i += 2
        else:
            glob = glob or c in _GLOB
            safe = safe and bool(_RAW_SAFE.fullmatch(c))
            value.append(c)
            raw.append(c)
            i += 1
    if in_word:
        text = "".join(value)
        words.append(ShellWord(text, "".join(raw)) if glob and safe else text)
    return words


def script_args(pkg: dict[str, Any], runner: str) -> list[str]:
    """The arguments ``scripts.test`` passes to `runner` (its paths, --config, ...)."""
    script = test_script(pkg)
    try:
        words = split_script(script)
    except ValueError:
        return []
    before: list[str] = []
    if runner == "node-test":
        idx = next((i for i, w in enumerate(words) if w == "--test"), None)
        node = next((i for i in range((idx or 0) - 1, -1, -1)
                     if words[i].rsplit("/", 1)[-1] == "node"), None)
        if idx is None or node is None or any(w in _SHELL_OPS for w in words[node:idx]):
            return []
        before = words[node + 1:idx]  # node's own options: --import tsx, --loader, ...
        start = idx + 1
    else:
        idx = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == runner), None)
        if idx is None:
            return []
        start = idx + 1
    out: list[str] = list(before)
    for w in words[start:]:
        if w in _SHELL_OPS or w.startswith((">", "<", "2>")):
            break
        out.append(w)
    return _drop_reporting(out, runner)


_REPORT_FLAGS = {  # flags we set ourselves (with their values)
    "node-test": ("--test-reporter", "--test-reporter-destination"),
    "jest": ("--json", "--outputFile", "--watch", "--watchAll", "--coverage", "--ci",
             "--reporters", "--silent", "--passWithNoTests"),
    "vitest": ("--reporter", "--outputFile", "--watch", "--coverage", "--ui",
               "--passWithNoTests"),
    "mocha": ("--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--watch",
              "-w"),
    "ava": ("--tap", "-t", "--verbose", "-v", "--watch", "-w", "--reset-cache"),
    "tap": ("--reporter", "-R", "--reporter-file", "--reporter-arg", "--watch", "-w",
            "--coverage-report", "--show-full-coverage"),
    "tape": (),
}
_TAKES_VALUE = {"--test-reporter", "--test-reporter-destination", "--outputFile", "--reporters",
                "--reporter", "-R", "--reporter-option", "--reporter-options", "-O",
                "--reporter-file", "--reporter-arg", "--coverage-report"}


def _drop_reporting(args: list[str], runner: str) -> list[str]:
    out = drop_options(args, _REPORT_FLAGS[runner], _TAKES_VALUE)
    return [a for a in out if a not in ("run", "watch", "dev")] if runner == "vitest" else out


def _bin(name: str) -> str:
    return f"./node_modules/.bin/{name}"


def shell_words(args: list[str]) -> str:
    """`args` as shell text: quoted, but a `ShellWord` (an unquoted glob) as written."""
    return " ".join(a.raw if isinstance(a, ShellWord) else shlex.quote(a) for a in args)


# Prints a "--match 'title'" word per test id for AVA (ids end in the title; AVA prefixes
# the file, "file › title", when it runs several).
_AVA_MATCH_JS = (
    "const q=s=>\"'\"+s.replace(/'/g,\"'\\\\''\")+\"'\";"
    "process.stdout.write(process.argv.slice(1).map(i=>'--match '+q(i.split(' > ').pop()"
    ".split(' \u203a ').pop())).join(' '))"
)


def runner_commands(fw: str, args: list[str], report: str) -> tuple[str, str, str]:
    """(test command, per-test template, report format) for a framework."""
    rest = shell_words(args)
    rest = f" {rest}" if rest else ""
    pattern = f"node -e {shlex.quote(_PATTERN_JS)} --"
    if fw == "node-test":
        base = (f"node --test --test-reporter=tap "
                f"--test-reporter-destination={report}")
        return (f"{base}{rest}",
                f'P=$(EF_LEAF=1 {pattern} {{tests}}) && {base} --test-name-pattern="$P"{rest}',
                "tap")
    if fw == "jest":
        base = f"{_bin('jest')} --ci --json --outputFile={report} --passWithNoTests"
        return f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} -t "$P"{rest}', "jest-json"
    if fw == "vitest":
        base = f"{_bin('vitest')} run --reporter=json --outputFile={report} --passWithNoTests"
        return (f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} -t "$P"{rest}',
                "vitest-json")
    if fw == "mocha":
        base = f"{_bin('mocha')} --reporter json --reporter-option output={report}"
        return (f"{base}{rest}", f'P=$({pattern} {{tests}}) && {base} --grep "$P"{rest}',
                "mocha-json")
    if fw == "ava":
        base = f"{_bin('ava')} --tap"
        match = f"node -e {shlex.quote(_AVA_MATCH_JS)} --"
        return (f"{base}{rest} > {report}",
                f'M=$({match} {{tests}}) && eval "set -- $M" && {base} "$@"{rest} > {report}',
                "tap")
    if fw == "tap":
        base = f"{_bin('tap')} --reporter=tap"
        return (f"{base}{rest} > {report}",
                f'P=$(EF_TOP=1 {pattern} {{tests}}) && {base} --grep="$P"{rest} > {report}',
                "tap")
    if fw == "tape":
        return f"{_bin('tape')}{rest} > {report}", "", "tap"
    raise ValueError(f"unsupported JavaScript test framework {fw!r}; known: {FRAMEWORKS}")


_SCRIPT_EXT = "*.js|*.jsx|*.mjs|*.cjs|*.ts|*.tsx|*.mts|*.cts|*.vue|*.svelte"


# A fixture's directory (test/fixtures/x/input.js): the tests are the files beside it.
_FIXTURE_DIR = r"s#^\(.*/\)\(__fixtures__\|fixtures\|fixture\)/.*#\1#p"


def scope_command(fw: str, args: list[str], report: str) -> str:
    """SWE-bench's scope for Jest and Vitest: the test patch's script files as path filters
    after the project's own arguments; a fixture (under a ``fixtures/`` directory) stands
    for the directory that holds its fixtures directory, whose test files read it. A scope
    that selects no test (outside the runner's test match) runs the whole suite instead.
    Other runners: "" (the whole suite)."""
    if fw not in ("jest", "vitest"):
        return ""
    test, _, _ = runner_commands(fw, args, report)
    return (f'F=$(for f in {{tests}}; do d=$(printf "%s\\n" "$f" | sed -n {shlex.quote(_FIXTURE_DIR)}); '
            'if [ -n "$d" ]; then [ -d "$d" ] && printf "%s\\n" "$d"; '
            f'else case "$f" in {_SCRIPT_EXT}) '
            '[ -f "$f" ] && printf "%s\\n" "$f";; esac; fi; done | sort -u); rc=1; '
            f'if [ -n "$F" ]; then {test} $F; rc=$?; fi; '
            f"if ! grep -q '\"numTotalTests\": *[1-9]' {report} 2>/dev/null; then "
            f"rm -f {report}; {test}; rc=$?; fi; exit $rc")


def make_plan(repo: Path, detection: Detection, language: Language,
              build: str = "") -> Plan:
    pkg = package_json(repo)
    fw = framework(detection, pkg)
    ext = "tap" if fw in ("node-test", "ava", "tap", "tape", "qunit") else "json"
    report = f"{REPORT_DIR}/report.{ext}"
    args = script_args(pkg, fw) if fw not in ("karma", "qunit") else []
    env = dict(ENV)
    steps, notes = setup_steps(repo, detection)
    if not test_script(pkg) and fw not in ("karma", "qunit", "tape"):
        args, dirs = workspace_args(repo, pkg, fw)
        if dirs:
            notes = (*notes, f"the workspace root has no test script: {fw} runs its packages' "
                     f"tests from the root ({', '.join(dirs)})")
    if fw == "karma":
        # a test script that runs mocha too (node-side tests) runs both, reports merged
        mocha = script_args(pkg, "mocha") if re.search(r"\bmocha\b", test_script(pkg)) \
            else None
        test, scope, note = (
            karma.with_mocha(repo, karma_script(pkg), mocha, shell_words, report, REPORT_DIR)
            if mocha is not None else
            karma.commands(repo, karma_script(pkg), report, REPORT_DIR))
        per_test, fmt = "", "mocha-json"
        steps, notes = (*steps, karma.SETUP_STEP), (*notes, note)
        env["CHROME_BIN"] = karma.CHROME_BIN
    elif fw == "qunit":
        test, note = qunit.commands(test_script(pkg), report)
        per_test, scope, fmt, notes = "", "", "tap", (*notes, note)
    else:
        test, per_test, fmt = runner_commands(fw, args, report)
        scope = scope_command(fw, args, report)
    prelude = f"rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR} && "
    if builds_first(pkg, fw):  # as `npm test` does: the tests read what the build writes
        build = f"npm run build && {build}" if build else "npm run build"
        notes = (*notes, "scripts.test builds first: so does every test run")
    if build:
        prelude += f"{{ {build}; }} && "
    notes = (*notes, *framework_notes(detection, pkg, fw))
    if fw in ("tape", "qunit"):
        notes = (*notes, f"{fw} has no test-id filter: no per-test command")
    engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
    if engines.get("node"):
        notes = (*notes, engines_note(str(engines["node"])))
        major = registry_node_major(str(engines["node"]))
        if major is not None:
            steps = (registry_node_step(major), *steps)
            env["npm_config_nodedir"] = REGISTRY_NODE_DIR  # node-gyp: its headers, no download
            notes = (*notes, f"Node.js {major} from the npm registry ({REGISTRY_NODE}): "
                     "newer than every Debian suite's")
    locked = locked_runner_engines(repo, fw)
    if locked:
        version, spec = locked
        note = engines_note(spec)
        if "fits (suite:" in note or "no Debian suite" in note:
            notes = (*notes, note.replace("engines.node", f"{fw} {version} (locked) needs node",
                                          1))
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
        per_test_command=prelude + per_test if per_test else "",
        scope_command=prelude + scope if scope else "",
        check_command=unbuilt_check(prelude + per_test) if per_test else "",
        env=env,
        dependency_files=DEPENDENCY_FILES,
        notes=notes,
    )


# --------------------------------------------------------------------------- the build check
# The tests import what a build step writes (a monorepo's packages/*/lib, a dist/): seen
# at build time by the check (`unbuilt_check`, on the test patch's files), else in a test run.
UNBUILT = (r"Cannot find module '[^']*/(?:dist|build|lib|out)/[^']*'|"
           r"Error: Cannot find module '\.\./(?:dist|build|lib)|"
           # Vite: a workspace package whose entry (package.json main/exports) is built
           r"Failed to resolve entry for package \"[^\"]+\"")


def unbuilt_check(per_test: str) -> str:
    """The check at build time: the test files run (pass or fail, as they may at the base
    commit); it fails only when they cannot load what a build step writes."""
    log = f"{REPORT_DIR}-check.log"
    grep = UNBUILT.replace("\\.", "[.]").replace("(?:", "(")
    # the lines that say so come last, where the diagnosis reads (the tail may not hold them)
    return (f"( {per_test} ) > {log} 2>&1; tail -c 20000 {log}; "
            f"! grep -m3 -E {shlex.quote(grep)} {log}")


@register("javascript")
class JavaScriptPlugin:
    language = Language.JAVASCRIPT
    traits = Traits(
        image_family="node",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        build_files=("package.json",),
        # a root test.js is the whole suite of many small packages (ava, node:test, xo style)
        test_files=(r"[\w.-]+\.(test|spec|e2e)\.(js|jsx|mjs|cjs)", r"[\w.-]+_test\.(js|mjs)",
                    r"tests?\.(js|mjs|cjs)"),
        version_key="node",
        github_names=("JavaScript",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree, self.language)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        return make_plan(Path(repo), detection, Language.JAVASCRIPT)


def strip_jsonc(text: str) -> str:
    """tsconfig is JSON with comments and trailing commas."""
    out = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text,
                 flags=re.S)
    return re.sub(r",(\s*[}\]])", r"\1", out)
