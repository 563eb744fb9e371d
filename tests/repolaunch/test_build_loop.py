"""The diagnose-and-retry loop on a real build container: an added setup step that fails on
its own has its own failure diagnosed, and stays, in order, once it passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from envs.models import Language
from envs.sandbox import Sandbox
from repolaunch import build, diagnose
from repolaunch.build_loop import Builder, rebuild_unless_only_tests_changed
from repolaunch.diagnose import Action
from repolaunch.languages import Plan

pytestmark = [pytest.mark.docker, pytest.mark.network]

BUILD_STEP = "make -f /tmp/build.mk && test -f /tmp/built"


@pytest.fixture(params=["setup", "build"])
def needs_a_build_step(request, monkeypatch):
    """A rule of this test's own: its signature asks for a build step that runs `make`
    (once at setup, or, "build", before every test run too)."""
    def build_missing(m, plan, phase, step):
        yield Action(request.param, BUILD_STEP, "a build step is missing")

    rules = list(diagnose._RULES)
    rules.insert(0, (diagnose.re.compile(r"^the build output is missing$", diagnose.re.M),
                     "setup", build_missing))
    monkeypatch.setattr(diagnose, "_RULES", rules)
    return request.param


def test_a_setup_step_that_fails_on_its_own_is_diagnosed_in_turn(needs_a_build_step,
                                                                    base_image):
    plan = Plan(language=Language.C, image_family="base", build_system="make",
                test_framework="", setup_steps=(), test_command="run-tests",
                per_test_command="run-tests {tests}", report_format="tap")
    b = Builder("loop", Path("."), plan, None, 8, lambda m: None)
    with Sandbox.start(base_image, network=True, workdir="/tmp", limits=build.BUILD_LIMITS,
                       cap_add=build.BUILD_CAPS) as sb:
        sb.put_file("/tmp/build.mk", "all:\n\ttouch /tmp/built\n")
        assert sb.exec("command -v make").exit_code != 0  # the base image has no make
        check = "test -f /tmp/built || { echo 'the build output is missing'; exit 1; }"
        first = b.run(sb, "setup", check)
        assert first.exit_code == 1
        why = b.fix(sb, first.output, "setup",
                    lambda: b.run(sb, "setup", check, "retry").exit_code == 0, step=check)
        assert why is None, [(a.phase, a.command, a.output_tail[-200:]) for a in b.transcript]
        # make came first (its own diagnosis), then the build step that needed it
        assert len(b.extra_setup) == 2
        assert "apt-get install" in b.extra_setup[0] and b.extra_setup[0].endswith(" make")
        assert b.extra_setup[1] == BUILD_STEP
    if needs_a_build_step == "build":  # the tests read what it writes: built before each run
        again = rebuild_unless_only_tests_changed(BUILD_STEP)
        assert b.plan.test_command == f"{{ {again}; }} && run-tests"
        assert b.plan.per_test_command == f"{{ {again}; }} && run-tests {{tests}}"
        assert b.plan.scope_command == ""
    else:
        assert b.plan.test_command == "run-tests"


def test_a_build_before_the_tests_is_skipped_when_only_tests_changed(base_image):
    """The image holds the build of its own tree; a test patch alone does not change it, a
    patch to the code does, and an image with no record of its tree always builds."""
    from envs.verify import record_setup

    git = "git -c user.name=t -c user.email=t@t"
    cmd = rebuild_unless_only_tests_changed("echo BUILT")
    with Sandbox.start(base_image, workdir="/w") as sb:
        sb.exec(f"mkdir -p /w/src /w/pkg/test && cd /w && git init -q && echo 1 > src/a.js && "
                f"echo t > pkg/test/x.js && {git} add . && {git} commit -qm c")
        assert "BUILT" in sb.exec(cmd).output  # no record of the setup's tree
        record_setup(sb, "/w")
        sb.exec("echo t2 > pkg/test/x.js && echo n > src/new.spec.js")
        res = sb.exec(cmd)
        assert res.exit_code == 0 and "BUILT" not in res.output, res.output
        assert "not built again" in res.output
        sb.exec("echo 2 > src/a.js")
        assert "BUILT" in sb.exec(cmd).output
