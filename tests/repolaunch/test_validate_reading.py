"""How runs are read into FAIL_TO_PASS, with the engine left out: each run's output is
canned `go test -json` text, parsed and classified by the real code. (The readings against
real containers are in test_validate.py.)"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from envs.models import EnvSpec, Language, SWETask
from repolaunch import validate as v

TEST_PATCH = """diff --git a/bind/header_test.go b/bind/header_test.go
--- a/bind/header_test.go
+++ b/bind/header_test.go
@@ -1,3 +1,7 @@
 package bind
+
+func TestBindHeader(t *testing.T) {
+\tc.BindHeader(&h)
+}
"""


def _events(pkg: str, results: dict[str, str]) -> list[str]:
    out = [json.dumps({"Action": "run", "Package": pkg, "Test": t}) for t in results]
    out += [json.dumps({"Action": a, "Package": pkg, "Test": t}) for t, a in results.items()]
    out.append(json.dumps({"Action": "pass" if all(a == "pass" for a in results.values())
                           else "fail", "Package": pkg}))
    return out


BEFORE = "\n".join([
    "FAIL\texample.com/gin/bind [build failed]",  # the test patch uses the fix's new API
    *_events("example.com/gin/render", {"TestRenderJSON": "pass"})]) + "\n"
AFTER = "\n".join(
    _events("example.com/gin/bind", {"TestBindHeader": "pass", "TestBindQuery": "pass",
                                     "TestBindForm": "pass"})
    + _events("example.com/gin/render", {"TestRenderJSON": "pass"})) + "\n"


class _Instance:
    """Stands in for a container: the patches apply, the test command prints canned output."""

    def __init__(self) -> None:
        self.fixed = False

    def apply_patch(self, patch: str) -> SimpleNamespace:
        self.fixed = self.fixed or patch == "FIX"
        return SimpleNamespace(applied=True, reason=None)

    def exec(self, command: str, timeout: float | None = None) -> SimpleNamespace:
        if not command.startswith("go test"):  # the verifier's housekeeping (test files reset)
            return SimpleNamespace(stdout=b"", output="", exit_code=0, timed_out=False,
                                   oom_killed=False, duration=0.0)
        text = AFTER if self.fixed else BEFORE
        return SimpleNamespace(stdout=text.encode(), output=text, exit_code=1,
                               timed_out=False, oom_killed=False, duration=0.1)

    def close(self) -> None:
        pass


@pytest.fixture()
def canned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v, "open_instance", lambda spec, **kw: _Instance())


@pytest.mark.parametrize("reading", ["factory", "swebench"])
def test_tests_whose_package_did_not_build_before_are_not_fail_to_pass(canned, reading) -> None:
    """The test patch breaks one package's build before the fix: of that package's tests
    only the one the test patch is about is FAIL_TO_PASS; the others did not run."""
    env = EnvSpec(name="gin", language=Language.GO, base_image="x", image="x",
                  test_command="go test -json ./...", report_format="gotest-json")
    task = SWETask(instance_id="gin-1", repo="gin", base_commit="0" * 40, patch="FIX",
                   test_patch=TEST_PATCH, problem_statement="")
    res = v.validate(task, env, reading=reading, runs_before=1, runs_after=1, confirm_runs=0)
    assert res.verified, res.detail
    assert res.fail_to_pass == ["TestBindHeader"]
    assert sorted(res.did_not_run) == ["TestBindForm", "TestBindQuery"]
    assert res.pass_to_pass == ["TestRenderJSON"]
    assert "2 did not run before" in res.detail
