"""JavaScript and TypeScript detection facts: package manager (by lock file), test runner
(by the test script, expanded through the scripts it runs, then dependencies, config
files, imports of ``node:test``), Node.js and TypeScript versions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from envs.models import Language
from repolaunch.detect import Facts, Tree, all_deps, read_json

# `npm run x`, `yarn [run] x`, `pnpm [run] x` (flags between allowed): another script
_RUN_SCRIPT = re.compile(r"(?<![\w-])(?:npm\s+run(?:-script)?|(?:yarn|pnpm)(?:\s+run)?)\s+"
                         r"(?:-{1,2}[\w-]+\s+)*([\w][\w:.-]*)")


# npm-run-all's commands run the scripts (or script globs, `build:*`) they name
_RUN_ALL = re.compile(r"(?<![\w-])(?:npm-run-all2?|run-s|run-p)((?:\s+[^\s;&|]+)+)")
_RUN_ALL_VALUED = {"--max-parallel", "--npm-path", "--print-label", "-l"}


def _script_glob(pattern: str) -> re.Pattern[str]:
    # npm-run-all's globs: `*` within one `:`-separated part, `**` across parts
    parts = re.split(r"(\*\*|\*)", pattern)
    return re.compile("".join(".*" if p == "**" else "[^:]*" if p == "*" else re.escape(p)
                              for p in parts) + "$")


def expand_scripts(scripts: dict[str, Any], text: str, depth: int = 4) -> str:
    """`text` with every call of another package.json script replaced by that script's own
    text, as a maintainer's `npm test` runs it (``"test": "npm run tests-only"``,
    ``"test": "npm-run-all build test:*"``)."""
    if depth <= 0:
        return text

    def sub(m: re.Match[str]) -> str:
        body = scripts.get(m.group(1))
        if not isinstance(body, str) or m.group(1) == "test":
            return m.group(0)  # not a script (`yarn install`), or the test script itself
        return expand_scripts(scripts, body, depth - 1)

    def run_all(m: re.Match[str]) -> str:
        bodies: list[str] = []
        skip = False
        for word in m.group(1).split():
            word = word.strip("'\"")
            if skip or word.startswith("-"):
                skip = not skip and word in _RUN_ALL_VALUED
                continue
            glob = _script_glob(word)
            for name, body in scripts.items():
                if isinstance(body, str) and name != "test" and glob.match(name):
                    bodies.append(expand_scripts(scripts, body, depth - 1))
        return " ; ".join(bodies) if bodies else m.group(0)

    return _RUN_ALL.sub(run_all, _RUN_SCRIPT.sub(sub, text))


_JS_RUNNERS = (  # (framework, word in scripts.test, dependency names, config-file prefixes)
    ("vitest", r"\bvitest\b", ("vitest",), ("vitest.config.", "vitest.workspace.")),
    ("jest", r"\bjest\b", ("jest", "ts-jest", "babel-jest"), ("jest.config.",)),
    ("mocha", r"\bmocha\b", ("mocha",), (".mocharc",)),
    ("ava", r"\bava\b", ("ava",), ("ava.config.",)),
    ("jasmine", r"\bjasmine\b", ("jasmine",), ()),
    ("tap", r"(^|[\s;&|])(tap|node-tap)\b", ("tap",), (".taprc",)),
    ("tape", r"(^|[\s;&|/])tape\b", ("tape",), ()),
    ("uvu", r"\buvu\b", ("uvu",), ()),
    ("karma", r"(^|[\s;&|/])karma\s+start\b", ("karma",), ("karma.conf.",)),
    ("qunit", r"(^|[\s;&|/])qunit\b", ("qunit", "qunitjs", "qunit-extras"), ()),
    ("node-test", r"\bnode\b[^;&|]*\s--test\b", (), ()),
)


RUNNERS = _JS_RUNNERS


def test_script(pkg: dict[str, Any]) -> str:
    """``scripts.test``, with the scripts it runs expanded in place ("" when it is npm's
    placeholder)."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    script = str(scripts.get("test", ""))
    return "" if "no test specified" in script else expand_scripts(scripts, script)


def workspace_globs(root: Path, pkg: dict[str, Any]) -> list[str]:
    """The workspace package globs: package.json's ``workspaces`` (a list, or Yarn's
    ``{"packages": [...]}``), else pnpm-workspace.yaml's ``packages``."""
    ws = pkg.get("workspaces")
    if isinstance(ws, dict):
        ws = ws.get("packages")
    if isinstance(ws, list):
        return [str(g) for g in ws if isinstance(g, str)]
    try:
        import yaml

        doc = yaml.safe_load((root / "pnpm-workspace.yaml").read_text(encoding="utf-8"))
    except Exception:  # unreadable, not YAML
        return []
    pkgs = doc.get("packages") if isinstance(doc, dict) else None
    return [str(g) for g in pkgs if isinstance(g, str)] if isinstance(pkgs, list) else []


def workspace_tests(root: Path, pkg: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(directory, package.json) of each workspace package with a test script, when the
    root has none of its own: the suites a monorepo's packages run one by one."""
    if test_script(pkg):
        return []
    out: list[tuple[str, dict[str, Any]]] = []
    for glob in workspace_globs(root, pkg):
        if glob.startswith("!") or ".." in glob:
            continue
        for d in sorted(root.glob(glob.rstrip("/"))):
            sub = read_json((d / "package.json").read_text(encoding="utf-8", errors="replace")) \
                if (d / "package.json").is_file() else {}
            if isinstance(sub, dict) and test_script(sub):
                out.append((d.relative_to(root).as_posix(), sub))
    return out


def builds_first(pkg: dict[str, Any], framework: str) -> bool:
    """Whether ``scripts.test`` runs the ``build`` script before its test runner (tests that
    read the build output, ``dist/``, see a patch only once it is built again)."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    build = scripts.get("build")
    word = next((w for fw, w, _, _ in _JS_RUNNERS if fw == framework), None)
    if not isinstance(build, str) or not build.strip() or word is None:
        return False
    script = test_script(pkg)
    body = expand_scripts(scripts, build)
    at, runner = script.find(body), re.search(word, script)
    return at >= 0 and runner is not None and at < runner.start()


def read_facts(tree: Tree, language: Language) -> Facts:
    f = Facts()
    pkg = read_json(tree.read("package.json")) if tree.has("package.json") else {}
    if tree.has("package.json"):
        f.cite("package.json")
    lockfiles = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"),
                 ("bun.lock", "bun"), ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"))
    manager = None
    for name, pm in lockfiles:
        if tree.has(name):
            manager = pm
            f.extra["lockfile"] = name
            f.cite(name)
            break
    declared = str(pkg.get("packageManager", "")).split("@", 1)[0]
    if manager is None and declared in ("npm", "yarn", "pnpm", "bun"):
        manager = declared
    if manager is None and pkg:
        manager = "npm"
    if manager:
        f.build_system = f.package_manager = manager
    tsconfig = next((p for p in ("tsconfig.json", "tsconfig.build.json") if tree.has(p)), None)
    if tsconfig:
        f.extra["tsconfig"] = tsconfig
        f.cite(tsconfig)
    if pkg.get("type") == "module":
        f.extra["module_type"] = "module"
    workspaces = pkg.get("workspaces")
    if workspaces:
        f.extra["workspaces"] = "yes"

    deps = all_deps(pkg)
    engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
    if engines.get("node"):
        f.versions["node"] = str(engines["node"])
    else:
        for name in (".nvmrc", ".node-version"):
            if tree.has(name):
                f.versions["node"] = tree.read(name).strip().splitlines()[0].removeprefix("v")
                break
    if "typescript" in deps:
        f.versions["typescript"] = deps["typescript"]

    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    main_script = test_script(pkg)
    if main_script:
        f.extra["test_script"] = main_script
    else:  # a monorepo's root: the runner its packages' test scripts name
        main_script = " ; ".join(test_script(sub) for _, sub in workspace_tests(tree.root, pkg))
    other_scripts = " ; ".join(str(v) for k, v in scripts.items() if "test" in k and k != "test")
    found = None
    for script in (main_script, other_scripts):
        hits = [(m.start(), fw) for fw, word, _, _ in _JS_RUNNERS
                for m in [re.search(word, script)] if m]
        if hits:
            # a browser suite (karma) is what such a project's tests are written for; a
            # node-side runner beside it runs the few that need no browser
            found = "karma" if any(fw == "karma" for _, fw in hits) else min(hits)[1]
            break
    if found is None:
        for fw, _, dep_names, _ in _JS_RUNNERS:
            if any(d in deps for d in dep_names):
                found = fw
                break
    if found is None:
        for fw, _, _, prefixes in _JS_RUNNERS:
            if prefixes and any(p.rsplit("/", 1)[-1].startswith(prefixes) and "/" not in p
                                for p in tree.files):
                found = fw
                break
    if found is None:
        srcs = [p for p in tree.with_ext(".js", ".mjs", ".cjs", ".ts", ".mts")
                if re.search(r"test", p, re.I)]
        text = "\n".join(tree.read(p, 20_000) for p in srcs[:200])
        if re.search(r"""from\s+['"]node:test['"]|require\(\s*['"]node:test['"]\s*\)""", text):
            found = "node-test"
    f.test_framework = found
    return f


def drop_options(args: list[str], names: set[str] | tuple[str, ...],
                 valued: set[str]) -> list[str]:
    """`args` without the options in `names` (and the value after those in `valued`, unless
    given as ``--opt=value``): the ones envfactory sets itself."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in names:
            skip = "=" not in a and name in valued
            continue
        out.append(a)
    return out
