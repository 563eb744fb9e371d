"""Build a repository into a verified environment: layered images and a diagnose-and-retry loop.

Layers: language base image (envs.images) -> env image per repository and dependency
fingerprint (a hash of the plan and of the files that decide the dependencies) -> an
instance, which is the env image plus a checkout at the commit (envs.instance), made without
a new image. A second commit of the same repository with unchanged dependencies reuses the
env image.

The loop: run the plan's setup steps in a build container (network on); when one fails,
diagnose the output (repolaunch.diagnose), snapshot, try the next action, and roll back an
action that did not help. Then commit the env image and run the tests in a fresh container
with the network off; a test failure that names its cause (a missing module, the network)
goes through the same loop. Every attempt is recorded — command, exit code, output tail,
seconds — in the registry as the build transcript.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from envs import images, reports
from envs.config import get_settings
from envs.files import atomic_write
from envs.instance import open_instance
from envs.models import EnvSpec, Limits, RunRecord, RunStatus, TestResult, TestStatus
from envs.sandbox import Sandbox, SandboxError
from envs.verify import record_setup
from repolaunch import diagnose as dx
from repolaunch.build_loop import UNAVAILABLE, Attempt, Builder, Log
from repolaunch.detect import Detection, detect
from repolaunch.languages import Plan
from repolaunch.languages import plan as make_plan
from repolaunch.sources import (
    LaunchError,
    checkout_copy,
    local_source,
    repo_name,
    resolve_commit,
)

__all__ = ["Attempt", "LaunchError", "LaunchResult", "fingerprint", "launch"]

BUILD_LIMITS = Limits(memory="6g", pids=4096, cpus=2.0, timeout=1800)
TEST_LIMITS = Limits(memory="4g", pids=2048, cpus=2.0, timeout=1800)
# apt and package managers need these inside the build container; the test run gets none.
BUILD_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL")
SPEC_LABEL = "envfactory.env_spec"  # the EnvSpec JSON, carried by the env image itself


class LaunchResult(BaseModel):
    repo: str
    commit: str
    detection: Detection
    plan: Plan
    env: EnvSpec | None = None
    cache_hit: bool = False
    ok: bool = False
    failure: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    results: list[TestResult] = Field(default_factory=list)
    transcript: list[Attempt] = Field(default_factory=list)
    transcript_path: str | None = None
    seconds: float = 0.0
    suite: str = ""

    @property
    def tests_found(self) -> int:
        return len(self.results)


# --------------------------------------------------------------------------- fingerprints


def dependency_files(root: Path, globs: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git/") or not path.is_file():
            continue
        if any(fnmatch.fnmatch(rel, g) for g in globs):
            out.append(rel)
    return out


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")


def fingerprint(root: Path, plan: Plan, base_tag: str) -> str:
    """What decides the env image: the base image, the plan, the dependency files' contents.

    The time machine's date is left out: commits with the same dependency files share one
    env image, resolved as of the first of them that was built (SWE-bench's env image per
    version, too); the date it was resolved at is recorded with the environment.
    """
    h = hashlib.sha256()
    h.update(base_tag.encode())
    h.update(_DATE.sub("<date>", plan.model_dump_json(exclude={"notes"})).encode())
    for rel in dependency_files(root, plan.dependency_files):
        h.update(b"\0" + rel.encode() + b"\0" + hashlib.sha256((root / rel).read_bytes()).digest())
    # blobs a partial mirror lacked stand in as empty files in the image's history: once they
    # are recovered, the image is another one
    stand_ins = subprocess.run(["git", "-C", str(root), "for-each-ref", "--format=%(refname)",
                                "refs/replace/"], capture_output=True, text=True).stdout
    if stand_ins.strip():
        h.update(b"\0stand-ins\0" + "".join(sorted(stand_ins.split())).encode())
    return h.hexdigest()


def env_tag(name: str, fp: str) -> str:
    return f"{get_settings().image_prefix}/env-{name}:{fp[:16]}"


# --------------------------------------------------------------------------- the loop


def launch(source: str | Path, *, commit: str | None = None, suite: str | None = None,
           max_steps: int = 8, rebuild: bool = False, run_tests: bool = True,
           probe_tests: list[str] | None = None, log: Log = lambda m: None,
           registry: Any = None) -> LaunchResult:
    """detect -> plan -> build (or reuse) the env image -> run the tests -> report.

    ``suite``: the Debian suite to start from (default: the plan's, by the repository's
    era, else the settings'). ``probe_tests``: test files (repo-relative) the plan's check
    command collects at build time (`probe_paths`)."""
    start = time.monotonic()
    src = local_source(source, log=log)
    name = repo_name(source)
    sha = resolve_commit(src, commit)
    with tempfile.TemporaryDirectory(prefix=f"envfactory-launch-{name}-") as tmp:
        root = checkout_copy(src, sha, Path(tmp) / "repo", log=log)
        detection = detect(root)
        plan = make_plan(root, detection, **({"suite": suite} if suite else {}))
        probe = probe_paths(root, probe_tests or [])
        tried_suites: list[str] = []
        earlier: list[Attempt] = []  # transcripts of the suites tried before, kept
        first_cause = ""
        suite_now = suite or plan.suite or get_settings().debian_suite
        while True:
            if plan.suite not in (None, suite_now):
                plan = make_plan(root, detection, suite=suite_now)
            result = _launch_in_suite(name, root, sha, detection, plan, suite_now, max_steps,
                                      rebuild, run_tests, probe, log)
            result.transcript = _renumber(earlier + result.transcript)
            if result.failure and result.failure.startswith("suite:"):
                new_suite = result.failure.split(":", 1)[1]
                tried_suites.append(suite_now)
                fails = [a for a in result.transcript if a.exit_code != 0]
                first_cause = first_cause or (dx.signature(fails[-1].output_tail) if fails
                                              else "")
                if new_suite in tried_suites:
                    result.failure = (f"{UNAVAILABLE}: no Debian suite fits "
                                      f"(tried {', '.join(tried_suites)})"
                                      + (f": {first_cause}" if first_cause else ""))
                    break
                log(f"switching to Debian {new_suite} (toolchain of another era)")
                earlier = result.transcript
                suite_now = new_suite
                continue
            break
    result.seconds = round(time.monotonic() - start, 1)
    result.transcript_path = str(_save_transcript(result))
    _register(result, registry)
    return result


def _launch_in_suite(name: str, root: Path, sha: str, detection: Detection, plan: Plan,
                     suite: str, max_steps: int, rebuild: bool, run_tests: bool,
                     probe: list[str], log: Log) -> LaunchResult:
    base = images.ensure(plan.image_family, suite=suite, log=log).tag
    fp = fingerprint(root, plan, base)
    tag = env_tag(name, fp)
    result = LaunchResult(repo=name, commit=sha, detection=detection, plan=plan, suite=suite)
    b = Builder(name, root, plan, suite, max_steps, log)
    cache_hit = images.exists(tag) and not rebuild
    spec_path = _spec_path(tag)
    cached = _cached_spec(tag, spec_path) if cache_hit else None
    if cached is not None:
        log(f"env image {tag} exists (dependencies unchanged): reusing it")
        env = cached.model_copy(update={"checkout": sha})
        result.cache_hit = True
        why = _ensure_commit(tag, cached, root, sha, log)
        if why is not None:
            result.failure = why
            return result
    else:
        env, failure = _build_env(b, base, tag, fp, sha, detection, probe)
        result.transcript = b.transcript
        if env is None:
            result.failure = failure
            return result
        spec_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(spec_path, env.model_dump_json(indent=2))
    result.env = env
    result.plan = _as_resolved(b.plan, env)
    if not run_tests:
        result.ok = True
        return result
    results, failure, env = _run_tests(b, env)
    result.env = env
    if failure is None:  # what the tests taught (network, amendments) is kept for reuse
        spec_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(spec_path, env.model_dump_json(indent=2))
    result.transcript = b.transcript
    result.results = results
    result.counts = _counts(results)
    result.failure = failure
    result.ok = failure is None and any(r.status is TestStatus.PASSED for r in results)
    return result


def _as_resolved(plan: Plan, env: EnvSpec) -> Plan:
    """The plan's notes with what the environment really resolved (the time machine may
    have been dropped on the way, or the image built for another commit's day)."""
    got = {k: v for k, v in env.resolved.items() if k.startswith("#")}
    if not got:
        return plan
    notes = [n for n in plan.notes if not n.startswith("time machine: ")]
    notes.append("resolved: " + ", ".join(f"{k.lstrip('#')} {v}" for k, v in sorted(got.items())))
    return plan.model_copy(update={"notes": tuple(notes)})


def _cached_spec(tag: str, spec_path: Path) -> EnvSpec | None:
    """The EnvSpec of an existing env image: from the local file, else from the image's own
    label (so another ENVFACTORY_HOME, or another machine's image, is a cache hit too)."""
    try:
        if spec_path.is_file():
            return EnvSpec.model_validate_json(spec_path.read_text())
        from envs import engine

        label = (engine.client().images.get(tag).labels or {}).get(SPEC_LABEL)
        return EnvSpec.model_validate_json(label) if label else None
    except Exception:  # an unreadable spec means: build again
        return None


def _renumber(attempts: list[Attempt]) -> list[Attempt]:
    return [a.model_copy(update={"step": i}) for i, a in enumerate(attempts, 1)]


def _spec_path(tag: str) -> Path:
    safe = tag.replace("/", "_").replace(":", "@")
    return get_settings().home / "envs" / f"{safe}.json"


def _narrow(b: Builder, sb: Sandbox, check: Callable[[], bool]) -> bool:
    """Rebuild with the plan's narrower setup; whether the check then passes."""
    if not b.plan.fallback_steps:
        return False
    b.log("  the runner does not start with everything installed: narrowing the setup")
    for step in b.plan.fallback_steps:
        if b.run(sb, "setup", step, "narrowed: the runner did not start").exit_code != 0:
            return False
    b.extra_setup.extend(b.plan.fallback_steps)  # the record: what built the image
    return check()


# The check gets minutes, not the tests' half hour.
CHECK_TIMEOUT = 300.0


def probe_paths(root: Path, tests: list[str]) -> list[str]:
    """What the check collects: the test files that exist at the commit; when the test patch
    only adds files (new tests, fixtures), the nearest directory of each that does exist,
    below the root (the tests beside them load what the new ones will)."""
    there = [t for t in tests if (root / t).exists()]
    if there or not tests:
        return there
    out: list[str] = []
    for t in tests:
        p = PurePosixPath(t).parent
        while p.parts and not (root / p).is_dir():
            p = p.parent
        if p.parts and str(p) not in out:
            out.append(str(p))
    return out


def _check_command(plan: Plan, probe: list[str]) -> str | None:
    if not plan.check_command or not probe:
        return None
    return plan.check_command.replace("{tests}", " ".join(shlex.quote(t) for t in probe))


def _run_check(b: Builder, env: EnvSpec, check: str, note: str) -> Any:
    """The check, as the tests will run: a fresh container of the env image just committed,
    network off (a runner that reaches for the network at collection fails here as it would
    there, and fast)."""
    with open_instance(env.model_copy(update={"checkout": None}), network=False) as tb:
        t = time.monotonic()
        res = tb.exec(check, timeout=CHECK_TIMEOUT)
        b.record("check", check, res.exit_code, res.output, time.monotonic() - t, note)
    b.last_output = res.output
    return res


# a check that ran (0) or found nothing to collect (pytest's 5) started the runner
_CHECK_OK = (0, 5)


def _build_env(b: Builder, base: str, tag: str, fp: str, sha: str,
               detection: Detection, probe: list[str]) -> tuple[EnvSpec | None, str | None]:
    b.log(f"building env image {tag} from {base}")
    with Sandbox.start(base, network=True, workdir="/testbed", limits=BUILD_LIMITS,
                       cap_add=BUILD_CAPS, env=b.plan.env) as sb:
        sb.put_dir(b.root, "/testbed")
        for step in b.plan.setup_steps:
            res = b.run(sb, "setup", step)
            if res.exit_code != 0:
                b.log(f"  setup step failed: {dx.signature(res.output)}")
                why = b.fix(sb, res.output, "setup",
                            lambda step=step: b.run(sb, "setup", b.replaced.get(step, step),
                                                    "retry").exit_code == 0,
                            step=step)
                if why is not None:
                    return None, why if why.startswith("suite:") else \
                        f"setup failed: {step[:80]}: {why}"
        # Fresh stat data in the index, so an instance's checkout rewrites no file.
        sb.exec("git update-index -q --refresh >/dev/null 2>&1; true", timeout=300)

        def commit() -> EnvSpec:
            # what the setup changed in the work tree is the environment's, not an agent's
            record_setup(sb, "/testbed")
            resolved = _resolved_versions(sb)
            env = EnvSpec(
                name=f"{b.name}@{fp[:12]}", language=b.plan.language, base_image=base,
                setup_steps=tuple(b.replaced.get(st, st) for st in b.plan.setup_steps)
                + tuple(b.extra_setup),
                test_command=b.plan.test_command, report_format=b.plan.report_format,
                report_path=b.plan.report_path, workdir="/testbed", env=dict(b.plan.env),
                network=b.plan.network_at_test, limits=TEST_LIMITS, image=tag,
                fingerprint=fp, checkout=sha, resolved=resolved)
            _commit(sb, tag, env)
            return env

        env = commit()
        check = _check_command(b.plan, probe)
        if check is not None:
            res = _run_check(b, env, check, "the test runner starts and collects")
            if res.exit_code not in _CHECK_OK:
                b.log(f"  the test runner does not start: {dx.signature(res.output)}")
                why = b.fix(sb, res.output, "setup",
                            lambda: _run_check(b, commit(), check, "retry").exit_code
                            in _CHECK_OK, step=check)
                if why is not None and not why.startswith(("suite:", UNAVAILABLE)) \
                        and _narrow(b, sb, lambda: _run_check(b, commit(), check,
                                                              "narrowed").exit_code
                                    in _CHECK_OK):
                    why = None
                if why is not None:
                    images.remove(tag)  # never a cache hit for an environment that failed
                    return None, why if why.startswith("suite:") else \
                        f"the test runner does not start: {why}"
                env = commit()
    return env, None


def _ensure_commit(tag: str, env: EnvSpec, root: Path, sha: str, log: Log) -> str | None:
    """Make sure the cached env image holds `sha`; None when it does (or now does).

    The image keeps the history it was built with; a later commit with the same
    dependencies (a cache hit) may be newer. Then the repository's history goes in as a
    git bundle and the image is re-committed under the same tag (same dependencies, more
    history), so instances can check the commit out."""
    q = shlex.quote(sha)
    try:
        with Sandbox.start(tag, network=False, workdir=env.workdir, limits=BUILD_LIMITS) as sb:
            if sb.exec(f"git cat-file -e {q}^{{commit}}", timeout=60).exit_code == 0:
                return None
            log(f"env image {tag} lacks commit {sha[:12]}: adding the repository's history")
            with tempfile.TemporaryDirectory(prefix="envfactory-bundle-") as tmp:
                bundle = Path(tmp) / "history.bundle"
                proc = subprocess.run(["git", "-C", str(root), "bundle", "create", "-q",
                                       str(bundle), "--all"], capture_output=True, text=True)
                if proc.returncode != 0:
                    return f"cannot bundle the history of {root}: {proc.stderr.strip()[:200]}"
                sb.put_file("/tmp/envfactory-history.bundle", bundle.read_bytes())
            res = sb.exec("git fetch -q /tmp/envfactory-history.bundle "
                          "'+refs/heads/*:refs/remotes/envfactory/*' '+refs/tags/*:refs/tags/*'"
                          f"; rm -f /tmp/envfactory-history.bundle; git cat-file -e {q}^{{commit}}",
                          timeout=600)
            if res.exit_code != 0:
                return f"commit {sha[:12]} is not in the repository's history"
            _commit(sb, tag, env)
    except SandboxError as exc:
        return f"env image {tag} unusable: {exc}"
    return None


def _commit(sb: Sandbox, tag: str, env: EnvSpec) -> None:
    labels = {SPEC_LABEL: env.model_dump_json(),
              images.LABEL_RECIPE: tag.split("/")[-1].split(":")[0],
              images.LABEL_HASH: env.fingerprint or "", images.LABEL_KIND: "env",
              "envfactory.language": env.language.value,
              "envfactory.sandbox": "", "envfactory.owner": "", "envfactory.created": ""}
    changes = [f"ENV {k}={v}" for k, v in env.env.items()] + ["WORKDIR /testbed"]
    sb.commit(tag, labels=labels, changes=changes)


def _resolved_versions(sb: Sandbox) -> dict[str, str]:
    """What the plan recorded as resolved (name==version lines), if it did."""
    res = sb.exec("cat /opt/envfactory/resolved.txt 2>/dev/null | head -2000", timeout=30)
    out: dict[str, str] = {}
    for line in res.stdout.splitlines():
        line = line.strip()
        if line.startswith("#"):
            # the header the setup wrote from what it really did (the time machine may have
            # been dropped on the way)
            key, _, value = line.lstrip("# ").partition(":")
            if "as of" in line:
                out["#resolved-as-of"] = line.split("as of", 1)[1].strip()
            elif line.startswith("# resolved:"):
                out["#resolved-as-of"] = value.strip()
            elif key in ("python", "set") and value.strip():
                out[f"#{'install-set' if key == 'set' else key}"] = value.strip()
            continue
        if " @ " in line:  # the project itself, or a direct URL: no version to pin
            continue
        if "==" in line:
            k, _, v = line.partition("==")
            out[k.strip()] = v.strip()
    return out


def _run_tests(b: Builder, env: EnvSpec
               ) -> tuple[list[TestResult], str | None, EnvSpec]:
    """Run the tests from the env image (network off unless the plan says so); when the
    output names a cure, apply it to the env image and run again."""
    spec = env.model_copy(update={"network": b.plan.network_at_test})
    while True:
        with open_instance(spec) as sb:
            t = time.monotonic()
            res = sb.exec(spec.test_command)
            b.record("test", spec.test_command, res.exit_code, res.output, time.monotonic() - t)
            data: bytes | str = res.stdout
            if spec.report_path:
                try:
                    data = sb.get_file(spec.report_path)
                except (FileNotFoundError, SandboxError):
                    data = b""
        if res.timed_out:
            return [], f"tests timed out after {spec.limits.timeout:.0f}s", spec
        try:
            results = list(reports.parse(spec.report_format, data,
                                         exit_code=res.exit_code).results)
            why = "no tests found"
        except reports.ReportParseError as exc:
            results, why = [], f"report unreadable: {exc}"
        # what failed says why in the report too (a runner that writes its report to a
        # file prints little): its messages are read with the output
        failed = "\n".join(r.message for r in results if r.message and r.status in (
            TestStatus.FAILED, TestStatus.ERROR))[-20_000:]
        actions = dx.diagnose(f"{res.output}\n{failed}", plan=b.plan, phase="test",
                              tried=b.tried)
        # A run where something passed is done unless it failed for a cure we know (a test
        # module missing a package, a build step the tests read); a run where nothing
        # passed is worth any cure.
        healthy = any(r.status is TestStatus.PASSED for r in results)
        if healthy:
            actions = [a for a in actions
                       if (a.kind == "shell" and "pip install" in a.value) or a.kind == "build"]
            if not actions:
                return results, None, spec
        if not actions or b.actions_used >= b.max_steps:
            if healthy:
                return results, None, spec
            if results:
                return results, f"no test passed: {dx.signature(res.output)}", spec
            return [], f"{why}: {dx.signature(res.output)}", spec
        action = actions[0]
        b.tried.add(action.key)
        b.actions_used += 1
        b.log(f"  diagnose (tests): {action.reason} -> {action.kind} {action.value}")
        if action.kind == "network_at_test":
            b.plan = b.plan.model_copy(update={"network_at_test": True})
            spec = spec.model_copy(update={"network": True})
            b.record("action", "network_at_test=on", 0, "", 0.0, action.reason)
            continue
        if action.kind == "suite":
            return [], f"suite:{action.value}", spec
        if action.kind == "build":  # the tests read what it writes: every run builds first
            before = b.plan
            b.build_first(action.value)
            trial = spec.model_copy(update={"test_command": b.plan.test_command})
            spec_after = _amend_env(b, trial, action)
            if spec_after is trial:  # the build failed: the tests run as they were
                b.plan = before
            else:
                spec = spec_after
            continue
        spec = _amend_env(b, spec, action)


def _amend_env(b: Builder, spec: EnvSpec, action: dx.Action) -> EnvSpec:
    """Apply a setup action to the env image itself (same tag), recording it with the env."""
    assert spec.image
    with Sandbox.start(spec.image, network=True, workdir=spec.workdir, limits=BUILD_LIMITS,
                       cap_add=BUILD_CAPS, env=spec.env) as sb:
        res = b.run(sb, "action", action.value, action.reason)
        if res.exit_code != 0:
            return spec
        b.extra_setup.append(action.value)
        spec = spec.model_copy(update={"setup_steps": (*spec.setup_steps, action.value)})
        _commit(sb, spec.image, spec)
    spec_path = _spec_path(spec.image)
    atomic_write(spec_path, spec.model_copy(update={"network": b.plan.network_at_test})
                         .model_dump_json(indent=2))
    return spec


def _counts(results: list[TestResult]) -> dict[str, int]:
    counts = {s.value.lower(): 0 for s in TestStatus}
    for r in results:
        counts[r.status.value.lower()] += 1
    counts["total"] = len(results)
    return counts


def _save_transcript(result: LaunchResult) -> Path:
    d = get_settings().logs_dir / "launch" / result.repo
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{result.commit[:12]}-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}.json"
    atomic_write(path, json.dumps({
        "repo": result.repo, "commit": result.commit, "ok": result.ok, "failure": result.failure,
        "plan": result.plan.model_dump(mode="json"),
        "transcript": [a.model_dump() for a in result.transcript]}, indent=2))
    return path


def _register(result: LaunchResult, registry: Any) -> None:
    from envs.registry import Registry

    own = registry is None
    reg = registry or Registry()
    try:
        run_id = f"build/{result.repo}/{result.commit[:12]}/{int(time.time())}"
        if result.env is not None:
            reg.put_env(result.env)
        reg.put_run(RunRecord(
            run_id=run_id, kind="build", target=result.repo,
            status=RunStatus.DONE if result.ok else RunStatus.FAILED,
            details={"commit": result.commit, "failure": result.failure,
                     "image": result.env.image if result.env else None,
                     "cache_hit": result.cache_hit, "counts": result.counts,
                     "transcript": result.transcript_path},
            finished_at=datetime.now(timezone.utc)))
        for a in result.transcript:
            reg.add_attempt(run_id, a.step, a.command, a.exit_code, a.output_tail, a.seconds)
    finally:
        if own:
            reg.close()

