"""TypeScript: the JavaScript plan, plus a compile step where the runner needs JavaScript.

Vitest and Jest (with ts-jest or babel) run ``.ts`` tests themselves: no build step. Node's
test runner and Mocha run compiled JavaScript, so the test command first removes the
tsconfig's ``outDir`` (outputs of files deleted since the last build would otherwise still
run: the build directory is git-ignored and survives ``git checkout -f && git clean -fd``),
then compiles with the repository's own ``tsc`` (``node_modules/.bin/tsc``), or the image's
``tsc`` when the repository has none. Type errors do not stop the run (``tsc`` still emits),
they are reported on stderr. Node's runner is pointed at ``outDir`` unless ``scripts.test``
names its own paths. A ``scripts.test`` that has node load ``.ts`` itself (``--import tsx``,
``--loader ts-node/esm``, ``-r ts-node/register``, ``--experimental-strip-types``) needs no
compile step either.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree
from repolaunch.languages import Plan, Traits, register
from repolaunch.languages.javascript import (
    framework,
    make_plan,
    package_json,
    read_facts,
    script_args,
    strip_jsonc,
)

NEEDS_BUILD = ("node-test", "mocha")
_LOADER_FLAGS = ("--import", "--loader", "--experimental-loader", "--require", "-r")
_TS_LOADERS = ("tsx", "ts-node", "@swc-node/register", "esbuild-register", "@esbuild-kit")


def loads_typescript(args: list[str]) -> bool:
    """Whether the runner's own arguments make node load ``.ts`` files itself."""
    for i, a in enumerate(args):
        if a in ("--experimental-strip-types", "--experimental-transform-types"):
            return True
        name, eq, value = a.partition("=")
        if name not in _LOADER_FLAGS:
            continue
        value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        if value.startswith(_TS_LOADERS):
            return True
    return False


def tsconfig_path(repo: Path, detection: Detection) -> str | None:
    rel = detection.extra.get("tsconfig") or "tsconfig.json"
    return rel if (repo / rel).is_file() else None


def out_dir(repo: Path, tsconfig: str) -> str | None:
    """compilerOptions.outDir, relative to the repo root and inside it (else None)."""
    try:
        doc = json.loads(strip_jsonc((repo / tsconfig).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    opts = doc.get("compilerOptions") if isinstance(doc, dict) else None
    out = opts.get("outDir") if isinstance(opts, dict) else None
    if not isinstance(out, str) or not out.strip():
        return None
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(tsconfig), out))
    if rel in (".", "") or rel.startswith("..") or rel.startswith("/"):
        return None
    return rel


def build_command(tsconfig: str, outdir: str | None) -> str:
    tsc = "if [ -x ./node_modules/.bin/tsc ]; then T=./node_modules/.bin/tsc; else T=tsc; fi"
    clean = f"rm -rf {shlex.quote(outdir)} && " if outdir else ""
    return (f"{tsc}; {clean}$T -p {shlex.quote(tsconfig)} "
            f"|| echo 'envfactory: tsc reported errors' >&2")


@register("typescript")
class TypeScriptPlugin:
    language = Language.TYPESCRIPT
    traits = Traits(
        image_family="node",
        extensions=(".ts", ".tsx", ".mts", ".cts"),
        build_files=("tsconfig.json",),
        # index.test-d.ts: tsd's type tests
        test_files=(r"[\w.-]+\.(test|spec|e2e|test-d)\.(ts|tsx|mts|cts)", r"tests?\.(ts|mts)"),
        version_key="node",
        github_names=("TypeScript",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree, self.language)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        pkg = package_json(repo)
        fw = framework(detection, pkg)
        tsconfig = tsconfig_path(repo, detection)
        build = ""
        outdir = None
        if fw in NEEDS_BUILD and tsconfig and not loads_typescript(script_args(pkg, fw)):
            outdir = out_dir(repo, tsconfig)
            build = build_command(tsconfig, outdir)
        plan = make_plan(repo, detection, Language.TYPESCRIPT, build=build)
        if fw == "node-test" and outdir and not _has_script_paths(pkg):
            plan = plan.model_copy(update={
                "test_command": f"{plan.test_command} {shlex.quote(outdir)}",
                "per_test_command": f"{plan.per_test_command} {shlex.quote(outdir)}",
            })
        if build:
            plan = plan.model_copy(update={
                "notes": (*plan.notes, f"compiled with tsc -p {tsconfig} before the tests"),
            })
        return plan


def _has_script_paths(pkg: dict) -> bool:
    return any(not a.startswith("-") for a in script_args(pkg, "node-test"))
