"""SWE-bench-style import: reading the instance forms, finding repositories under both
layouts (a clone and a bare mirror), one-line errors that do not stop the run, and — with
Docker — envfactory's own FAIL_TO_PASS agreeing with a sample's planted one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from data import samples
from repolaunch.importer import (
    InstanceError,
    Launched,
    agreement,
    files_under_test,
    import_instances,
    read_instances,
)
from repolaunch.mine import mine


def planted_rows(sample: samples.SampleRepo, repo: Path, full_name: str) -> list[dict]:
    """SWE-bench rows for the sample's planted real tasks, from the local miner's candidates.
    PASS_TO_PASS holds, as SWE-bench's does, only tests of the files the test patch touches."""
    shas = samples.commit_shas(repo)
    cands = {c.base_commit: c for c in mine(repo).candidates}
    rows = []
    for p in sample.planted:
        if p.decoy is not None:
            continue
        c = cands[shas[p.commit - 1]]
        row = c.to_swebench() | {"repo": full_name,
                                 "instance_id": f"{full_name.replace('/', '__')}-{c.pr_number}"}
        row["FAIL_TO_PASS"] = json.dumps(list(p.fail_to_pass))
        scoped = files_under_test(row["test_patch"])
        row["PASS_TO_PASS"] = json.dumps([t for t in p.pass_to_pass
                                          if t.split("::")[0] in scoped])
        rows.append(row)
    return rows


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture()
def layout(tmp_path: Path):
    """py-textkit as a clone at repos/acme/textkit and a bare mirror at repos/zed__textkit.git."""
    sample = samples.get("py-textkit")
    src = samples.write(sample, tmp_path / "src")
    repos = tmp_path / "repos"
    (repos / "acme").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(src), str(repos / "acme" / "textkit")], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(repos / "zed__textkit.git")],
                   check=True)
    return SimpleNamespace(sample=sample, src=src, repos=repos)


def test_reads_json_string_and_list_forms(tmp_path: Path) -> None:
    base = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40,
            "version": "1.0", "environment_setup_commit": "x", "image": "ignored",
            "eval_script": "ignored", "difficulty": "<15 min fix"}
    path = write_jsonl(tmp_path / "i.jsonl", [
        base | {"FAIL_TO_PASS": '["t1", "t2"]', "PASS_TO_PASS": "[]"},
        base | {"instance_id": "a__b-2", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["t3"]},
        "{not json",
        {"instance_id": "a__b-3", "repo": "a/b"},
    ])
    rows = list(read_instances(path))
    assert rows[0][1].FAIL_TO_PASS == ["t1", "t2"] and rows[0][1].PASS_TO_PASS == []
    assert rows[1][1].FAIL_TO_PASS == ["t1"] and rows[1][1].PASS_TO_PASS == ["t3"]
    assert rows[2][0] == "line 3" and rows[2][1].startswith("not JSON")
    assert rows[3][0] == "a__b-3" and "base_commit" in rows[3][1]
    arr = tmp_path / "i.json"
    arr.write_text(json.dumps([base | {"FAIL_TO_PASS": '["t"]'}]))
    assert next(read_instances(arr))[1].FAIL_TO_PASS == ["t"]


def test_agreement_relations() -> None:
    assert agreement(["a"], ["a"]).relation == "exact"
    assert agreement([], []).relation == "exact"
    assert agreement(["a"], ["a", "b"]).relation == "subset"
    assert agreement(["a", "b"], ["a"]).relation == "superset"
    assert agreement(["a", "c"], ["a", "b"]).model_dump() == {
        "relation": "overlap", "ours": 2, "theirs": 2, "both": 1,
        "only_ours": ["c"], "only_theirs": ["b"]}
    assert agreement(["c"], ["b"]).relation == "disjoint"


def test_finds_repos_under_both_layouts_and_reports_missing_ones(layout, tmp_path: Path) -> None:
    rows = planted_rows(layout.sample, layout.src, "acme/textkit")[:1]
    mirror_row = rows[0] | {"repo": "zed/textkit", "instance_id": "zed__textkit-3"}
    missing = rows[0] | {"repo": "nobody/absent", "instance_id": "nobody__absent-3"}
    bad_commit = rows[0] | {"instance_id": "acme__textkit-x", "base_commit": "f" * 40}
    path = write_jsonl(tmp_path / "i.jsonl", [rows[0], mirror_row, missing, bad_commit])
    lines: list[str] = []
    report = import_instances(path, repos=layout.repos, build=False,
                              clone_base=(tmp_path / "nowhere").as_uri(),
                              cache=tmp_path / "cache", log=lines.append)
    by = {r.instance_id: r for r in report.instances}
    assert by["acme__textkit-3"].status == "found"
    assert by["acme__textkit-3"].repo_path == str(layout.repos / "acme" / "textkit")
    assert by["zed__textkit-3"].status == "found"
    assert by["zed__textkit-3"].repo_path == str(layout.repos / "zed__textkit.git")
    err = by["nobody__absent-3"]
    assert err.status == "error" and "\n" not in err.error
    assert err.error.startswith(f"not under {layout.repos}; clone of ")
    assert "base commit ffffffffffff is not in" in by["acme__textkit-x"].error
    assert report.summary()["found"] == 2 and report.summary()["error"] == 2
    assert any(line.startswith("nobody__absent-3: error (repo_unavailable): ") for line in lines)
    assert by["acme__textkit-x"].cause == "commit_unavailable"


def test_without_repos_dir_it_clones_once_into_the_cache(layout, tmp_path: Path) -> None:
    rows = planted_rows(layout.sample, layout.src, "acme/textkit")
    path = write_jsonl(tmp_path / "i.jsonl", rows + rows)
    remote = tmp_path / "remote"  # plays https://github.com: <base>/owner/name.git
    subprocess.run(["git", "clone", "-q", "--bare", str(layout.src),
                    str(remote / "acme" / "textkit.git")], check=True)
    lines: list[str] = []
    report = import_instances(path, build=False, clone_base=remote.as_uri(),
                              cache=tmp_path / "cache", log=lines.append)
    assert sum(line.startswith("cloning ") for line in lines) == 1
    assert [r.status for r in report.instances] == ["found"] * 2 * len(rows)
    assert {r.repo_path for r in report.instances} == {str(tmp_path / "cache" / "acme__textkit.git")}


def test_agreement_is_reported_from_the_validator(layout, tmp_path: Path) -> None:
    """The flow with stand-ins for launch and validate: what they get, what is reported."""
    rows = planted_rows(layout.sample, layout.src, "acme/textkit")
    f2p = json.loads(rows[0]["FAIL_TO_PASS"])
    rows.append(rows[0] | {"instance_id": "acme__textkit-3b",
                           "FAIL_TO_PASS": json.dumps([*f2p, "tests/x.py::extra"])})
    path = write_jsonl(tmp_path / "i.jsonl", rows)
    seen: list = []

    def launcher(repo, commit, log, reg, *, probe):
        seen.append(("launch", Path(repo).name, commit, probe))
        return Launched(env=SimpleNamespace(image="img", resolved={}), image="img",
                        per_test_command="pytest {tests}")

    def validator(task, env, **kw):
        seen.append(("validate", task.instance_id, task.FAIL_TO_PASS, task.env_spec, kw))
        return SimpleNamespace(verified=True, reason=None, detail="", fail_to_pass=f2p,
                               pass_to_pass=json.loads(rows[0]["PASS_TO_PASS"]), task=task,
                               runs=[SimpleNamespace(counts={"total": 3})])

    report = import_instances(path, repos=layout.repos, launcher=launcher, validator=validator)
    assert [r.status for r in report.instances] == ["agree", "disagree"]
    assert [r.cause for r in report.instances] == [None, "fail_to_pass_missing"]
    assert report.instances[1].fail_to_pass.relation == "subset"
    assert report.instances[1].fail_to_pass.only_theirs == ["tests/x.py::extra"]
    assert report.causes() == {"fail_to_pass_missing": 1}
    # the file's test lists are not handed to validation; SWE-bench's scope and reading are
    validations = [s for s in seen if s[0] == "validate"]
    assert all(v[2] == [] and v[3] is None for v in validations)
    files = files_under_test(rows[0]["test_patch"])
    assert all(v[4]["scope"] == files and v[4]["reading"] == "swebench" for v in validations)
    assert ("launch", "textkit", rows[0]["base_commit"], files) in seen


def test_a_resumed_run_skips_finished_instances(layout, tmp_path: Path) -> None:
    rows = planted_rows(layout.sample, layout.src, "acme/textkit")[:1]
    path = write_jsonl(tmp_path / "i.jsonl", rows)
    state = tmp_path / "state.jsonl"
    calls: list[str] = []

    def launcher(repo, commit, log, reg, *, probe):
        calls.append(commit)
        raise InstanceError("build failed: boom", "env_build_failed")

    first = import_instances(path, repos=layout.repos, launcher=launcher, state=state)
    assert first.instances[0].cause == "env_build_failed" and len(calls) == 1
    with state.open("a") as fh:
        fh.write('{"instance_id": "torn')  # an interrupted write
    again = import_instances(path, repos=layout.repos, launcher=launcher, state=state)
    assert len(calls) == 1 and again.instances[0].cause == "env_build_failed"

    def infra(repo, commit, log, reg, *, probe):
        calls.append(commit)
        raise InstanceError("build failed: engine gone")  # infrastructure: tried again

    state.unlink()
    import_instances(path, repos=layout.repos, launcher=infra, state=state)
    import_instances(path, repos=layout.repos, launcher=infra, state=state)
    assert len(calls) == 3
    assert [json.loads(line)["cause"] for line in state.read_text().splitlines()] == [
        "infrastructure", "infrastructure"]


def test_a_build_that_needs_an_era_not_here_has_its_own_cause() -> None:
    from repolaunch.importer import _launch_cause

    assert _launch_cause("setup failed: uv pip install: toolchain unavailable: the code "
                         "wants a Python older than 3.9") == "toolchain_unavailable"
    assert _launch_cause("toolchain unavailable: no Debian suite fits (tried bookworm, "
                         "bullseye)") == "toolchain_unavailable"
    assert _launch_cause("setup failed: uv pip install: No matching distribution") \
        == "env_build_failed"
    assert _launch_cause("the test runner does not start: E   ImportError") == "runner_failed"


def test_test_files_are_what_swebench_runs() -> None:
    patch = ("diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n"
             "+++ b/tests/test_a.py\n@@ -1 +1 @@\n-x\n+y\n"
             "diff --git a/tests/data/case.json b/tests/data/case.json\nnew file mode 100644\n"
             "--- /dev/null\n+++ b/tests/data/case.json\n@@ -0,0 +1 @@\n+{}\n"
             "diff --git a/tests/test_old.py b/tests/test_old.py\ndeleted file mode 100644\n"
             "--- a/tests/test_old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
             "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
             "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_x(): pass\n")
    assert files_under_test(patch) == ["tests/test_a.py", "tests/test_new.py"]


@pytest.mark.docker
def test_planted_task_agrees_with_envfactory(layout, tmp_path: Path, tmp_home, docker_engine) -> None:
    rows = planted_rows(layout.sample, layout.src, "zed/textkit")
    row = next(r for r in rows if r["instance_id"].endswith("-3"))
    path = write_jsonl(tmp_path / "i.jsonl", [row])
    report = import_instances(path, repos=layout.repos, log=print)
    r = report.instances[0]
    assert r.status == "agree", r.model_dump_json(indent=1)
    assert r.fail_to_pass.relation == "exact" and r.pass_to_pass.relation == "exact"


@pytest.mark.docker
def test_an_import_killed_mid_run_leaves_no_sandbox(layout, tmp_path: Path, tmp_home,
                                                    docker_engine) -> None:
    """SIGTERM (a `timeout`, a scheduler) unwinds like Ctrl-C: the sandboxes go with it."""
    import signal
    import sys
    import time

    from envs import engine
    from envs.sandbox import LABEL, OWNER_LABEL

    rows = planted_rows(layout.sample, layout.src, "zed/textkit")
    path = write_jsonl(tmp_path / "i.jsonl", rows)
    proc = subprocess.Popen([sys.executable, "-m", "envfactory.cli", "import", str(path),
                             "--repos", str(layout.repos)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    api = engine.client().api

    def mine() -> list:
        return [c for c in api.containers(all=True, filters={"label": f"{LABEL}=1"})
                if (c.get("Labels") or {}).get(OWNER_LABEL, "").endswith(f":{proc.pid}")]

    deadline = time.monotonic() + 600
    while not mine() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert mine(), "the import never started a sandbox"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) != 0
    assert mine() == []


def test_a_registry_out_of_reach_is_named_as_its_own_cause() -> None:
    from repolaunch.build import Attempt
    from repolaunch.importer import _unreachable

    def step(out: str, code: int = 1) -> Attempt:
        return Attempt(step=1, phase="setup", command="install", exit_code=code,
                       output_tail=out, seconds=1.0)

    yarn = ("➤ YN0035: │ x@npm:0.9.0: The remote server failed to provide the requested resource\n"
            "➤ YN0035: │   Response Code: 404 (Not Found)\n"
            "➤ YN0035: │   Request URL: https://registry.npmjs.org/x/-/x-0.9.0.tgz\n")
    composer = ("curl error 6 while downloading https://repo.packagist.org/packages.json: "
                "Could not resolve host: repo.packagist.org\n")
    bundler = ("Could not fetch specs from https://rubygems.org/ due to underlying error "
               "<Failed to open TCP connection to rubygems.org:443 (getaddrinfo: Name or "
               "service not known)>\n")
    assert _unreachable([step("ok", 0), step(yarn)]) == "registry.npmjs.org"
    assert _unreachable([step(composer)]) == "repo.packagist.org"
    assert _unreachable([step(bundler)]) == "rubygems.org"
    assert _unreachable([step("Could not reach host index.rubygems.org. Check your network")]) \
        == "index.rubygems.org"
    git_gem = ("Git error: command `git clone --bare --no-hardlinks --quiet -- "
               "https://github.com/o/spec.git /var/lib/gems/x` in directory /testbed has failed.")
    assert _unreachable([step(git_gem)]) == "github.com"
    maven = ("[ERROR] Non-resolvable parent POM for x: transfer failed for https://central."
             "sonatype.com/repository/maven-snapshots/a.pom: Unknown host central.sonatype.com")
    assert _unreachable([step(maven)]) == "central.sonatype.com"
    ant = ("[get] Getting: https://projectlombok.org/downloads/ivyplusplus.jar\n"
           "[get] Can't get https://projectlombok.org/downloads/ivyplusplus.jar to /t/lib/x.jar"
           "\nBUILD FAILED\n/t/build.xml:113: java.net.UnknownHostException: projectlombok.org")
    assert _unreachable([step(ant)]) == "projectlombok.org"
    assert _unreachable([step("error: could not compile `x`\n")]) is None


def test_a_setup_that_fell_back_past_an_unreachable_registry_names_it(tmp_path: Path) -> None:
    """`composer install || composer dump-autoload` exits 0 without the packages: when the
    tests then report nothing, the cause is the registry, not the runner."""
    from repolaunch.importer import _unreachable, _unreachable_in_build

    fell_back = {"step": 1, "phase": "setup", "command": "composer install || dump-autoload",
                 "exit_code": 0, "output_tail": "In RemoteFilesystem.php line 476:\n"
                 "  php_network_getaddresses: getaddrinfo for repo.packagist.org failed\n"}
    assert _unreachable([fell_back]) is None  # only a failed step, by default
    assert _unreachable([fell_back], failed_only=False) == "repo.packagist.org"
    (tmp_path / "build.json").write_text(json.dumps({"transcript": [fell_back]}))
    assert _unreachable_in_build(tmp_path) == "repo.packagist.org"
    assert _unreachable_in_build(tmp_path / "absent") is None
