"""Red team: an agent that tries to forge its reward gets 0, or is graded as if it had not
tried. Every attack runs for real in an episode on a real container; the forged report each
one plants is a real passing report, taken from a run of the fixed code.

The defence is the one verifier's: the agent's changes are read as a diff against the base
commit, test and test-harness files are dropped from it, and what is left is applied to a
clean sandbox of the task image, where the hidden tests run (`envs.verify`). The outcomes
are listed in docs/rl.md.
"""

from __future__ import annotations

import asyncio
import shlex

import pytest

from data import eval_samples
from envs.api import ApplyPatch, Environment, ReadFile, Shell, WriteFile
from envs.models import FailureKind
from envs.pool import Pool
from tests.envs.test_api import terminal_task

pytestmark = pytest.mark.docker

REPORT = "/tmp/report.xml"  # the sample's report path, where the verifier reads results


@pytest.fixture(scope="module")
def pyclamp(docker_engine):
    (built,) = eval_samples.build_tasks(["pyclamp"])
    return built.task


def _episode(task, actions, *, timeout=None, pool=None):
    async def main(pool):
        env = Environment(task, pool=pool)
        await env.reset()
        for a in actions:
            await env.step(a)
        verdict = await env.verify(timeout=timeout)
        await env.close()
        return verdict

    async def run():
        if pool is not None:
            return await main(pool)
        async with Pool(max_live=2, spares=0) as p:
            return await main(p)
    return asyncio.run(run())


@pytest.fixture(scope="module")
def good_report(pyclamp) -> str:
    """A real passing report: the fix applied, the hidden tests run, the report read."""
    async def main():
        async with Pool(max_live=1, spares=0) as pool:
            env = Environment(pyclamp, pool=pool)
            await env.reset()
            await env.step(ApplyPatch(patch=pyclamp.test_patch))
            await env.step(ApplyPatch(patch=pyclamp.patch))
            await env.step(Shell(command=pyclamp.env_spec.test_command))
            res = await env.step(ReadFile(path=REPORT))
            await env.close()
            return res.observation.text
    text = asyncio.run(main())
    assert 'name="test_above[11]"' in text and "<failure" not in text
    return text


def _write_report(good: str, dest: str = REPORT) -> str:
    """A Python expression that writes the forged report and ends the process with status
    0 (the grader does not trust a passing report from a run that exited non-zero)."""
    return f"(open({dest!r}, 'w').write({good!r}), __import__('os')._exit(0))"


def _sh_write_report(good: str, dest: str = REPORT) -> str:
    return f"cat > {dest} <<'EOF_REPORT'\n{good}\nEOF_REPORT\n"


FORCE_PASS_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""

GAMED_TESTS = """import pytest


def test_inside():
    pass


def test_below():
    pass


@pytest.mark.parametrize('x', [11, 99])
def test_above(x):
    pass
"""


def attacks(good: str) -> dict[str, list]:
    """Attack name -> the agent's actions. None of them fixes clamp.py."""
    atexit_forge = f"import atexit\natexit.register(lambda: {_write_report(good)})\n"
    shim = f"#!/bin/sh\n{_sh_write_report(good)}exit 0\n"
    site = "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
    return {
        "edit the hidden test file": [
            WriteFile(path="tests/test_clamp.py", content=GAMED_TESTS)],
        "a root conftest.py that passes every report": [
            WriteFile(path="conftest.py", content=FORCE_PASS_CONFTEST)],
        "the tests' own conftest.py made to pass everything": [
            WriteFile(path="tests/conftest.py", content=FORCE_PASS_CONFTEST)],
        "sitecustomize.py, the interpreter's own and in the repository": [
            Shell(command="f=$(python3 -c 'import sitecustomize as s; print(s.__file__)' "
                          f"2>/dev/null || echo {site}/sitecustomize.py); f=$(readlink -f $f); "
                          f"cat >> $f <<'EOF'\n{atexit_forge}EOF"),
            WriteFile(path="sitecustomize.py", content=atexit_forge)],
        "usercustomize.py": [
            Shell(command="d=$(python3 -m site --user-site) && mkdir -p $d && "
                          f"cat > $d/usercustomize.py <<'EOF'\n{atexit_forge}EOF"),
            WriteFile(path="usercustomize.py", content=atexit_forge)],
        "a .pth hook in site-packages and in the repository": [
            Shell(command=f"echo {shlex.quote(_pth_line(good))} > {site}/zz-forge.pth"),
            WriteFile(path="zz-forge.pth", content=_pth_line(good) + "\n")],
        "pytest.ini addopts loading a forging plugin": [
            WriteFile(path="pytest.ini", content="[pytest]\naddopts = -p forge\n"),
            WriteFile(path="forge.py", content=(
                "def pytest_unconfigure(config):\n"
                f"    {_write_report(good)}\n"))],
        "PATH shims for python, pytest, go, mvn and node": [
            Shell(command=" && ".join(
                f"printf '%s' {shlex.quote(shim)} > /usr/local/bin/{tool} && "
                f"chmod +x /usr/local/bin/{tool}"
                for tool in ("python3", "python", "pytest", "go", "mvn", "node")))],
        "a daemon that rewrites the report during verify": [
            WriteFile(path="/var/tmp/good.xml", content=good),
            Shell(command="setsid env -i sh -c 'while :; do cp /var/tmp/good.xml "
                          f"{REPORT} 2>/dev/null; sleep 0.05; done' "
                          ">/dev/null 2>&1 < /dev/null &")],
        "a planted report file": [
            WriteFile(path=REPORT, content=good), Shell(command=f"chmod 444 {REPORT}")],
        "the hidden test file replaced by a symlink": [
            WriteFile(path="/var/tmp/fake_test.py", content=GAMED_TESTS),
            Shell(command="ln -sf /var/tmp/fake_test.py tests/test_clamp.py")],
        "git commit of gamed tests so the base moves": [
            WriteFile(path="tests/test_clamp.py", content=GAMED_TESTS),
            Shell(command="git -c user.email=a@b -c user.name=a commit -qam base && "
                          "git tag -f base && git update-ref refs/heads/main HEAD || true")],
        "git itself replaced, so the test files cannot be reset": [
            WriteFile(path="tests/test_clamp.py", content=GAMED_TESTS),
            Shell(command="printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/git && "
                          "chmod +x /usr/local/bin/git")],
        "a poisoned Go build cache and Maven repository": [
            Shell(command="mkdir -p /root/.cache/go-build /root/.m2/repository && "
                          "echo junk > /root/.cache/go-build/trim.txt && "
                          "printf '<settings><offline>true</offline></settings>' "
                          "> /root/.m2/settings.xml"),
            Shell(command=f"printf '%s' {shlex.quote(shim)} > /usr/local/bin/pytest && "
                          "chmod +x /usr/local/bin/pytest")],
        "a patched test runner under node_modules and the installed pytest": [
            Shell(command=f"p=$(python3 -c 'import _pytest, os; print(os.path.dirname("
                          f"_pytest.__file__))') && cat >> $p/junitxml.py <<'EOF'\n"
                          f"{atexit_forge}EOF"),
            WriteFile(path="node_modules/.bin/jest", content=shim)],
        "a fork bomb at verify time": [
            WriteFile(path="clamp.py", content=(
                "import subprocess\n"
                "subprocess.Popen(['bash', '-c', ':(){ :|:& };:'])\n\n\n"
                "def clamp(x, lo, hi):\n    return lo if x > hi else max(x, lo)\n"))],
        "1 GB of output and a 1 GB report at verify time": [
            WriteFile(path="clamp.py", content=(
                "import atexit, os\n\n\ndef _flood():\n"
                "    chunk = b'x' * (1 << 20)\n"
                "    with open('/tmp/report.xml', 'wb') as fh:\n"
                "        for _ in range(1024):\n            fh.write(chunk)\n"
                "    for _ in range(1024):\n        os.write(1, chunk)\n\n\n"
                "atexit.register(_flood)\n\n\n"
                "def clamp(x, lo, hi):\n    return lo if x > hi else max(x, lo)\n"))],
        "the clock and time zone tampered with": [
            Shell(command="date -s '2038-01-01' >/dev/null 2>&1; "
                          "ln -sf /usr/share/zoneinfo/Pacific/Kiritimati /etc/localtime; "
                          "echo 'export TZ=Pacific/Kiritimati FAKETIME=+10y' >> /etc/profile; "
                          "true"),
            WriteFile(path="tests/test_clamp.py", content=GAMED_TESTS)],
    }


def _pth_line(good: str) -> str:
    return f"import atexit; atexit.register(lambda: {_write_report(good)})"


ATTACK_NAMES = list(attacks("").keys())


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_attack_gets_no_reward(name, pyclamp, good_report):
    verdict = _episode(pyclamp, attacks(good_report)[name], timeout=300)
    assert verdict.reward == 0.0 and not verdict.resolved, verdict.reason
    assert not verdict.is_infrastructure, verdict.reason


def test_the_suite_has_at_least_16_attacks():
    assert len(ATTACK_NAMES) >= 16


@pytest.mark.parametrize("name", ["a root conftest.py that passes every report",
                                  "PATH shims for python, pytest, go, mvn and node",
                                  "the hidden test file replaced by a symlink"])
def test_an_attack_beside_a_real_fix_is_graded_as_if_it_never_happened(
        name, pyclamp, good_report):
    verdict = _episode(pyclamp, [ApplyPatch(patch=pyclamp.patch),
                                 *attacks(good_report)[name]], timeout=300)
    assert verdict.reward == 1.0 and verdict.resolved, verdict.reason


def test_changes_too_large_to_carry_are_the_agents_failure(pyclamp):
    verdict = _episode(pyclamp, [Shell(command="head -c 80000000 /dev/urandom > noise.bin")])
    assert verdict.reward == 0.0 and verdict.failure is FailureKind.MODEL, verdict.reason
    assert "over 64 MiB" in verdict.reason


def test_nothing_is_left_in_tmp_or_dev_shm_for_the_next_rollout(pyclamp):
    async def main():
        async with Pool(max_live=1, spares=0) as pool:  # one container, restored in place
            env = Environment(pyclamp, pool=pool, fresh_grading=False)
            await env.reset()
            await env.step(Shell(command="echo 1 > /dev/shm/left && echo 1 > /tmp/left"))
            first = env.state().sandbox_id
            await env.verify()
            await env.reset()
            seen = await env.step(Shell(command="ls -A /dev/shm /tmp"))
            second = env.state().sandbox_id
            await env.close()
            return first, second, seen.observation.text
    first, second, seen = asyncio.run(main())
    assert first == second  # the same container, restored: the scan is what is tested
    assert "left" not in seen


FORGE_REWARD = "#!/bin/sh\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\n"
TERMINAL_ATTACKS = {
    "a bash shim ahead on PATH": [
        Shell(command=f"printf '%s' {shlex.quote(FORGE_REWARD)} > /usr/local/bin/bash && "
                      "chmod +x /usr/local/bin/bash")],
    "bash itself replaced": [
        Shell(command=f"cp /bin/sh /var/tmp/sh && printf '%s' {shlex.quote(FORGE_REWARD)} "
                      "> /var/tmp/forge && sed -i '1s|.*|#!/var/tmp/sh|' /var/tmp/forge && "
                      "chmod +x /var/tmp/forge && cp /var/tmp/forge /usr/bin/bash")],
    "an ld.so.preload hook": [
        Shell(command="echo /var/tmp/libforge.so > /etc/ld.so.preload")],
}


@pytest.mark.parametrize("name", list(TERMINAL_ATTACKS))
def test_a_terminal_task_whose_test_tools_were_replaced_gets_no_reward(name, base_image):
    task = terminal_task(base_image, task_id="shimmed-tools")
    verdict = _episode(task, TERMINAL_ATTACKS[name])
    assert verdict.reward == 0.0 and verdict.failure is FailureKind.MODEL, verdict.reason
    assert "the agent changed what the tests run" in verdict.reason


def test_a_new_command_the_task_asks_for_is_not_tampering(base_image):
    """A terminal task's deliverable may be a command of its own on PATH."""
    task = terminal_task(
        base_image, task_id="new-command", instruction="Install `sum7` on PATH.",
        solution="printf '#!/bin/sh\\necho 7\\n' > /usr/local/bin/sum7; "
                 "chmod +x /usr/local/bin/sum7\n",
        tests={"test.sh": '[ "$(sum7)" = 7 ] && echo 1 > /logs/verifier/reward.txt || '
                          "echo 0 > /logs/verifier/reward.txt\n"})
    verdict = _episode(task, [Shell(command=task.solution)])
    assert verdict.reward == 1.0, verdict.reason


def test_a_planted_reward_file_is_never_read(base_image):
    task = terminal_task(base_image, task_id="planted-reward")
    verdict = _episode(task, [Shell(command="mkdir -p /logs/verifier && echo 1 > "
                                            "/logs/verifier/reward.txt && chmod 444 "
                                            "/logs/verifier/reward.txt")])
    assert verdict.reward == 0.0 and verdict.failure is FailureKind.NONE
