"""Karma: browser test suites, run headless in Debian's Chromium.

Karma has no reporter that writes a file of per-test results, and the repository's own
reporters print for people. The test command therefore starts karma with a small
configuration of envfactory's own (written into `REPORT_DIR` at test time, never into the
tree) that loads the repository's configuration, then:

- adds an inline reporter that writes every spec's result in mocha's JSON shape
  (``titlePath`` = the describe blocks and the test's title), so ids read
  ``render() > should ...`` as SWE-bench's karma parser writes them;
- runs Chrome headless without its sandbox (a container's root cannot have one) through
  `karma-chrome-launcher` when the repository has it, the binary from ``CHROME_BIN``;
- resolves the repository's ``basePath`` against its own configuration's folder (the
  wrapper lives elsewhere);
- for SWE-bench's scope (``EF_KARMA_FILES``, the test patch's files), replaces each
  ``files`` entry that matches one of them by those files alone, keeping its options
  (preprocessors are keyed by pattern and still apply); entries that match none (polyfills,
  setup) stay. When no entry matches any, the whole suite runs.

Chromium comes from Debian at setup (the hosts browser downloads use are out of reach).
The environment the repository's script sets for karma (``cross-env COVERAGE=true ...``)
is kept. Karma has no name filter that every configuration leaves alone (some reuse
``--grep`` for files): no per-test command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

from repolaunch.languages.javascript_detect import drop_options

CHROME_BIN = "/usr/bin/chromium"
CONFIG_NAMES = ("karma.conf.js", "karma.conf.cjs", ".config/karma.conf.js", "karma.config.js")
SETUP_STEP = ("command -v chromium >/dev/null || (apt-get update -qq && "
              "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
              "chromium)")
# options envfactory sets itself (with the value they take, if any)
_DROP = {"--reporters": True, "--browsers": True, "--single-run": False,
         "--no-single-run": False, "--watch": False, "--auto-watch": False,
         "--no-auto-watch": False, "--log-level": True, "--colors": False, "--no-colors": False}
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_ENV_RUNNERS = ("cross-env", "cross-env-shell", "env")
_SHELL_OPS = {"&&", "||", ";", "|", "&"}

# The wrapper configuration (CommonJS; karma requires it). EF_KARMA_CONF: the repository's
# configuration, EF_KARMA_REPORT: where results go, EF_KARMA_FILES: the scope.
WRAPPER_JS = r"""
const path = require('path'), fs = require('fs');
const conf = path.resolve(process.env.EF_KARMA_CONF);
const from = p => require(require.resolve(p, {paths: [process.cwd()]}));
let base = require(conf);
if (base && typeof base !== 'function' && typeof base.default === 'function') base = base.default;
function Reporter() {
  const out = {passes: [], failures: [], pending: []}, seen = new Set();
  this.onSpecComplete = (browser, r) => {
    const titlePath = [...(r.suite || []), r.description];
    const key = titlePath.join('\u0000');
    if (seen.has(key)) return;
    seen.add(key);
    const t = {title: r.description, fullTitle: titlePath.join(' '), titlePath,
               duration: r.time || 0, err: {}};
    if (r.skipped || r.pending) out.pending.push(t);
    else if (r.success) out.passes.push(t);
    else { t.err = {message: (r.log || []).join('\n') || 'failed'}; out.failures.push(t); }
  };
  this.onRunComplete = () => fs.writeFileSync(process.env.EF_KARMA_REPORT, JSON.stringify(out));
}
function scoped(files, basePath) {
  const want = (process.env.EF_KARMA_FILES || '').split(/\s+/).filter(Boolean)
    .map(f => path.resolve(process.cwd(), f));
  if (!want.length) return files;
  let mm;
  try { mm = from('minimatch'); } catch (e) { return files; }
  const match = typeof mm === 'function' ? mm : mm.minimatch;
  const expand = typeof mm.braceExpand === 'function' ? mm.braceExpand
    : (match.braceExpand || (p => [p]));
  let any = false;
  const out = [];
  for (const entry of files) {
    const pattern = typeof entry === 'string' ? entry : entry && entry.pattern;
    if (typeof pattern !== 'string') { out.push(entry); continue; }
    const abs = path.isAbsolute(pattern);  // `{a,}/test` expands to `/test` too: not a root
    const globs = expand(pattern).map(p => path.normalize(abs ? p : path.join(basePath, p)));
    const hits = want.filter(f => globs.some(g => match(f, g, {dot: true})));
    if (!hits.length) { out.push(entry); continue; }
    any = true;
    for (const f of hits) out.push(typeof entry === 'string' ? f : {...entry, pattern: f});
  }
  if (process.env.EF_KARMA_CLAIMED) {  // the files karma runs: another runner leaves them
    const mine = want.filter(f => out.some(e => (typeof e === 'string' ? e : e.pattern) === f));
    fs.writeFileSync(process.env.EF_KARMA_CLAIMED,
                     mine.map(f => path.relative(process.cwd(), f) + '\n').join(''));
  }
  if (!any && process.env.EF_KARMA_SCOPE_ONLY === '1') {
    // another runner holds the scope's files: nothing of karma's to run
    fs.writeFileSync(process.env.EF_KARMA_REPORT, '{"passes":[],"failures":[],"pending":[]}');
    process.exit(0);
  }
  return any ? out : files;
}
module.exports = function (config) {
  base(config);
  const basePath = path.resolve(path.dirname(conf), config.basePath || '');
  const plugins = (config.plugins && config.plugins.length ? config.plugins : ['karma-*'])
    .concat([{'reporter:envfactory-json': ['type', Reporter]}]);
  const set = {basePath, plugins, reporters: ['progress', 'envfactory-json'],
               singleRun: true, autoWatch: false,
               files: scoped(config.files || [], basePath)};
  let chrome = false;
  try { require.resolve('karma-chrome-launcher', {paths: [process.cwd()]}); chrome = true; }
  catch (e) { chrome = false; }
  if (chrome) {
    set.customLaunchers = Object.assign({}, config.customLaunchers, {EnvfactoryChrome: {
      base: 'Chrome', flags: ['--headless', '--no-sandbox', '--disable-gpu',
        '--disable-dev-shm-usage', '--remote-debugging-port=9222']}});
    set.browsers = ['EnvfactoryChrome'];
  }
  config.set(set);
};
"""


def karma_words(script: str) -> list[str] | None:
    """The words of the first karma command in `script`: the environment it sets
    (``NAME=VALUE``) then ``karma`` and its arguments; None when the script runs no karma."""
    try:  # `;` and `&&` are words even when glued to one (`--single-run;`)
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    idx = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == "karma"), None)
    if idx is None:
        return None
    start = idx
    while start > 0 and words[start - 1] not in _SHELL_OPS:
        start -= 1
    env = [w for w in words[start:idx] if _ENV_WORD.match(w)]
    rest: list[str] = []
    for w in words[idx + 1:]:
        if w in _SHELL_OPS:
            break
        rest.append(w)
    return [*env, "karma", *rest]


def config_file(repo: Path, args: list[str]) -> str | None:
    """The configuration ``karma start`` is given, else the first that karma would find."""
    after = args[1:] if args and args[0] == "start" else []
    for a in after:
        if not a.startswith("-"):
            return a if (repo / a).is_file() else None
    return next((n for n in CONFIG_NAMES if (repo / n).is_file()), None)


def commands(repo: Path, script: str, report: str, report_dir: str,
             claimed: str = "") -> tuple[str, str, str]:
    """(test command, scope command, note) for a repository whose tests karma runs.
    The scope command takes ``{tests}`` (the test patch's files). `claimed`: a file where
    the scope writes the files karma runs; those it does not list then run nothing
    (another runner has them), rather than the whole suite."""
    words = karma_words(script) or ["karma", "start"]
    k = words.index("karma")
    env, args = words[:k], words[k + 1:]
    conf = config_file(repo, args) or "karma.conf.js"
    after = args[1:] if args and args[0] == "start" else args
    extra = [a for a in drop_options(after, set(_DROP), {k for k, v in _DROP.items() if v})
             if a != conf]
    wrapper = f"{report_dir}/karma.envfactory.cjs"
    write = f"printf %s {shlex.quote(WRAPPER_JS)} > {wrapper}"
    run_env = " ".join([*(shlex.quote(e) for e in env), f"CHROME_BIN={CHROME_BIN}",
                        f"EF_KARMA_CONF={shlex.quote(conf)}", f"EF_KARMA_REPORT={report}"])
    karma = (f"{run_env} ./node_modules/.bin/karma start {wrapper} --single-run"
             + (f" {' '.join(shlex.quote(a) for a in extra)}" if extra else ""))
    test = f"{write} && {karma}"
    mine = f"EF_KARMA_CLAIMED={claimed} " if claimed else ""
    only = " EF_KARMA_SCOPE_ONLY=1" if claimed else ""
    scope = f'{write} && {mine}EF_KARMA_FILES="$(printf "%s " {{tests}})"{only} {karma}'
    note = f"karma ({conf}) in headless Chromium without its sandbox; results from an inline reporter"
    return test, scope, note



# mocha's options that take a value (the words after them are not test paths)
_MOCHA_VALUED = {"--require", "-r", "--ui", "-u", "--timeout", "-t", "--slow", "-s", "--grep",
                 "-g", "--fgrep", "-f", "--file", "--config", "--extension", "--ignore",
                 "--exclude", "--spec", "--reporter", "-R", "--reporter-option", "-O",
                 "--package", "--retries", "--jobs", "-j", "--node-option", "-n"}
# Merges the runners' mocha-shaped reports (argv: the output, then the inputs).
_MERGE_JS = ("const fs=require('fs');const o={passes:[],failures:[],pending:[]};"
             "for(const f of process.argv.slice(2)){let d;try{d=JSON.parse("
             "fs.readFileSync(f,'utf8'))}catch(e){continue}for(const k in o)"
             "o[k].push(...(d[k]||[]))}fs.writeFileSync(process.argv[1],JSON.stringify(o))")


def mocha_paths(args: list[str]) -> tuple[list[str], list[str]]:
    """(options, test paths) of mocha's arguments."""
    opts: list[str] = []
    paths: list[str] = []
    take = False
    for a in args:
        if take:
            opts.append(a)
            take = False
        elif a.startswith("-"):
            opts.append(a)
            take = "=" not in a and a in _MOCHA_VALUED
        else:
            paths.append(a)
    return opts, paths


def with_mocha(repo: Path, script: str, mocha_args: list[str], words: Callable[[list[str]], str],
               report: str, report_dir: str) -> tuple[str, str, str]:
    """(test, scope, note) running mocha beside karma, as a test script that runs both
    does; each writes its own report, merged into `report`. In the scope, mocha gets the
    files under its own test paths that karma did not claim (none: it does not run);
    `words` renders arguments as shell text."""
    opts, paths = mocha_paths(mocha_args)
    mocha_report, karma_report = f"{report_dir}/mocha.json", f"{report}.karma"
    claimed = f"{report_dir}/karma-claimed"
    karma_test, karma_scope, note = commands(repo, script, karma_report, report_dir, claimed)
    mocha = (f"./node_modules/.bin/mocha --reporter json --reporter-option "
             f"output={mocha_report}")
    merge = f"node -e {shlex.quote(_MERGE_JS)} {report} {mocha_report} {karma_report}"
    all_args = words(mocha_args)
    test = (f"{{ rc=0; {mocha}{' ' + all_args if all_args else ''} || rc=1; "
            f"{karma_test} || rc=1; {merge}; exit $rc; }}")
    cases = "|".join(shlex.quote(p.rstrip("/")) + "/*" if "*" not in p
                     else p.replace("**/", "*") for p in paths) or "*"
    # karma first: a file both runners would take is karma's (its ids are SWE-bench's)
    scope = (f"{{ rc=0; touch {claimed}; {karma_scope} || rc=1; "
             f'F=$(for f in {{tests}}; do case "$f" in {cases}) [ -f "$f" ] && '
             f'printf "%s\\n" "$f";; esac; done | grep -vxF -f {claimed}); '
             f'if [ -n "$F" ]; then {mocha} {words(opts)} $F || rc=1; fi; '
             f"{merge}; exit $rc; }}")
    return test, scope, f"{note}; mocha runs beside it, as scripts.test has it"
