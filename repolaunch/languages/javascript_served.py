"""npm packages a lock file pins at a version the registry does not serve.

A registry can lack a version a lock file of another day pinned (unpublished since, or a
mirror that holds only some versions): the install fails on a 404 for the tarball, and no
suite or Node version helps. The package is pinned instead to the nearest version the
registry does serve (the lowest above in the same major, else the highest below, else the
nearest of another major) through the package manager's own override field (`resolutions`
for Yarn, `pnpm.overrides`, npm's `overrides`), the install runs, and package.json and the
lock files are put back as committed (an override left in them would show in every diff;
the installed modules stay).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from envs.models import Language
from repolaunch.diagnose import Action, rule

# A tarball GET answered 404, in each client's words: npm (`npm ERR! 404 Not Found - GET`,
# `npm error 404`), pnpm (`ERR_PNPM_FETCH_404 GET`), Yarn 1 (`"<url>: Request failed
# \"404 Not Found\""`), Yarn 2+ (`Response Code: 404`, then the method, then the URL).
_URL = r"(https?://[^\s\"']+/-/[^\s\"'/]+\.tgz)"
TARBALL_404 = (rf"404 Not Found - GET {_URL}|ERR_PNPM_FETCH_404\s+GET {_URL}|"
               rf"\"{_URL}: Request failed \\?\"404|"
               rf"Response Code: 404[^\n]*\n[^\n]*\n[^\n]*Request URL: {_URL}")
_LOCKS = ("package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
          "pnpm-lock.yaml")


def unserved(text: str) -> list[tuple[str, str, str]]:
    """(registry, package, version) of every tarball the output says was a 404."""
    found: dict[tuple[str, str, str], None] = {}
    for m in re.finditer(TARBALL_404, text):
        url = next(g for g in m.groups() if g)
        left, _, tail = url.partition("/-/")
        parts = left.split("/")
        scoped = len(parts) > 4 and parts[-2].replace("%40", "@").startswith("@")
        name = "/".join(parts[-2:]) if scoped else parts[-1]
        name = name.replace("%40", "@").replace("%2f", "/").replace("%2F", "/")
        registry = "/".join(parts[:-2] if scoped else parts[:-1])
        base = name.rsplit("/", 1)[-1] + "-"
        version = tail[: -len(".tgz")]
        if version.startswith(base):
            found[(registry, name, version[len(base):])] = None
    return list(found)


# Runs in the build container (network on): the nearest served version of each package,
# written as an override into package.json.
_PIN = r"""import json, os, re, sys, urllib.parse, urllib.request

def key(v):
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", v)
    return tuple(int(x) for x in m.groups()) if m else None

def nearest(wanted, served):
    w = key(wanted)
    vs = sorted((key(v), v) for v in served if key(v) and "-" not in v and v != wanted)
    same = [x for x in vs if x[0][0] == w[0]]
    for pool in (same, vs):
        above = [v for k, v in pool if k > w]
        below = [v for k, v in pool if k < w]
        if above or below:
            return above[0] if above else below[-1]
    return None

pj = json.load(open("package.json", encoding="utf-8"))
if os.path.exists("pnpm-lock.yaml"):
    field = pj.setdefault("pnpm", {}).setdefault("overrides", {})
elif os.path.exists("yarn.lock"):
    field = pj.setdefault("resolutions", {})
else:
    field = pj.setdefault("overrides", {})
args = sys.argv[1:]
for registry, name, wanted in zip(args[::3], args[1::3], args[2::3]):
    url = registry + "/" + urllib.parse.quote(name, safe="@")
    try:
        doc = json.load(urllib.request.urlopen(url, timeout=60))
    except Exception as exc:
        sys.exit("envfactory: cannot read the versions of %s: %s" % (name, exc))
    pick = nearest(wanted, doc.get("versions") or {})
    if not pick:
        sys.exit("envfactory: the registry serves no other version of %s" % name)
    field[name] = pick
    print("envfactory: %s %s is not served; pinned to %s" % (name, wanted, pick))
with open("package.json", "w", encoding="utf-8") as fh:
    json.dump(pj, fh, indent=2)
    fh.write("\n")
"""


def pin_and_install(step: str, missing: list[tuple[str, str, str]]) -> str:
    """The install step, run with the unserved versions overridden, the committed
    package.json and lock files put back after it."""
    args = " ".join(shlex.quote(x) for triple in missing for x in triple)
    restore = "; ".join(f"git checkout -q -- {f} 2>/dev/null" for f in _LOCKS)
    return (f"python3 - {args} <<'ENVFACTORY_PIN'\n{_PIN}ENVFACTORY_PIN\n"
            f"(\n{step}\n)\nrc=$?; {restore}; exit $rc")


@rule(TARBALL_404, "setup")
def _version_not_served(m: re.Match[str], plan, phase: str, step: str) -> Iterator[Action]:
    if plan.language not in (Language.JAVASCRIPT, Language.TYPESCRIPT):
        return
    missing = unserved(m.string)
    if "ENVFACTORY_PIN" in step:  # pinned before: keep those pins, add the new ones
        head, _, rest = step.partition(" <<'ENVFACTORY_PIN'\n")
        before = shlex.split(head.removeprefix("python3 - "))
        step = rest.split("ENVFACTORY_PIN\n(\n", 1)[1].rsplit("\n)\nrc=$?", 1)[0]
        triples = zip(before[::3], before[1::3], before[2::3], strict=True)
        known = {n: (r, n, v) for r, n, v in triples}
        fresh = [t for t in missing if t[1] not in known]
        missing = [*known.values(), *fresh] if fresh else []
    if missing:
        names = ", ".join(f"{n} {v}" for _, n, v in missing[:5])
        yield Action("replace", pin_and_install(step, missing),
                     f"the registry does not serve {names}: the nearest version it does")
