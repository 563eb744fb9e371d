"""JavaScript's and TypeScript's diagnose rules (registered on import; the package loads every
module): Node.js by era, node-gyp's toolchain, a native module of another era, a missing
build step, npm's time machine off, a lock file out of step."""

from __future__ import annotations

import re

from envs.models import Language
from repolaunch.diagnose import Action, apt_action, rule, suites_towards
from repolaunch.languages.javascript import UNBUILT

# Node.js by era: errors that say the runtime is older (or newer) than the code's.

@rule(r"ERR_REQUIRE_ESM|Invalid regular expression flags|"
      r"SyntaxError: Unexpected token '(?:\?\?=?|\?\.|\|\|=|&&=|#)'|"
      r"npm ERR! code EBADENGINE|The engine \"node\" is incompatible with this module|"
      r"Unsupported engine .*required: \{ node:|"
      r"ReferenceError: (?:crypto|structuredClone|fetch) is not defined|"
      r"ERR_UNKNOWN_BUILTIN_MODULE|No such built-in module: node:|"
      r"The requested module 'node:[\w/]+' does not provide an export named", "setup,test")
def _node_too_old(m, plan, phase, step):
    if plan.language in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        yield from suites_towards(plan, "newer", "the code wants a newer Node.js")


@rule(r"error:0308010C:digital envelope routines::unsupported|"
      r"ERR_OSSL_EVP_UNSUPPORTED", "setup,test")
def _node_too_new(m, plan, phase, step):
    if plan.language in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        yield from suites_towards(plan, "older", "the code wants an older Node.js "
                                  "(OpenSSL 3 rejects its hashing)")


# node-gyp (a native npm module built from source) names what it misses its own way.
@rule(r"gyp ERR! stack Error: not found: ([\w.+-]+)|gyp ERR! (?:find Python|stack Error: "
      r"Can't find Python)|gyp ERR! stack Error: `(make|g\+\+|gcc|cc)` failed")
def _node_gyp(m, plan, phase, step):
    what = m.group(1) or m.group(2) or "Python"
    yield apt_action("python3 make g++", f"node-gyp builds a native module and misses {what}")


# A native module of another era fails to compile against this Node's V8 (NAN's headers,
# `v8::` members that were removed): an older Node builds it, as its authors did.
@rule(r"(?:nan|node|v8)[\w/.-]*\.h:\d+:\d+: error:|error: [^\n]*\bv8::\w+", "setup")
def _native_module_era(m, plan, phase, step):
    if plan.language in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        yield from suites_towards(plan, "older", "a native npm module does not compile "
                                  "against this Node.js (its V8 API is newer)")


@rule(UNBUILT, "setup,test")
def _build_step(m, plan, phase, step):
    if plan.language.value in ("javascript", "typescript"):
        yield Action("build", build_command(plan), "a build step is missing (the tests read "
                     "what it writes: every test run builds first)")


def build_command(plan) -> str:
    """The root's ``build`` script; at a workspace root without one, every package's, as
    the manager runs them (pnpm in dependency order; npm by its ``workspaces``). A package
    that does not build (a docs site) does not stop the others or the tests: what stays
    unbuilt shows in the tests that need it."""
    m = re.search(r"npx --yes pnpm@[\w.-]+", " ".join(plan.setup_steps))
    pnpm = m.group(0) if m else "npx --yes pnpm"
    return ("if node -e \"process.exit((require('./package.json').scripts || {}).build ? 0 : 1)\"; "
            "then npm run build; "
            f"elif [ -f pnpm-workspace.yaml ]; then {pnpm} -r --no-bail --if-present run build "
            "|| true; else npm run build --workspaces --if-present || true; fi")


@rule(r"ETARGET|No matching version found for|notarget", "setup")
def _npm_time_machine(m, plan, phase, step):
    # The registry's dates are not always publication dates (mirrors): resolve today's world.
    if "--before" in step:
        yield Action("replace", re.sub(r"\s*--before[= ]\S+", "", step),
                     "nothing matches the dependencies as of the commit date")


# A committed lockfile out of step with package.json (it happens on real branches): npm ci
# refuses it; npm install honours what still agrees, and the committed lockfile is put back
# (a rewritten one would show in every diff).
@rule(r"npm ERR! code EUSAGE|`npm ci` can only install packages when your package\.json and "
      r"package-lock\.json", "setup")
def _lock_out_of_step(m, plan, phase, step):
    if step.startswith("npm ci"):
        flags = step.removeprefix("npm ci")
        yield Action("replace", f"npm install{flags} && {{ git checkout -- package-lock.json "
                     "2>/dev/null; git checkout -- npm-shrinkwrap.json 2>/dev/null; true; }",
                     "package-lock.json is out of step with package.json")
