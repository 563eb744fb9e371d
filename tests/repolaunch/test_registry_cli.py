"""The repolaunch CLI sub-app: `mine`, `registry ls|show|export|import`.

Export writes HF-compatible JSONL (SWE-bench field names, test lists as JSON strings, plus
image, eval script, report format and path, test command, env spec); importing an export
into an empty registry gives identical tasks; the exported eval script, run in a container
of the task's image after the gold patch, makes every FAIL_TO_PASS test pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from data import samples
from envs import reports
from envs.config import reset_settings_cache
from envs.instance import open_instance
from envs.models import EnvSpec, Language, SWETask, TaskKind
from envs.registry import Registry
from envs.sandbox import Sandbox
from repolaunch.cli import app
from repolaunch.pipeline import eval_script, patched_files
from tests.repolaunch.test_validate import share_env_specs

runner = CliRunner()

TEST_PATCH = (
    "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n"
    "+    assert True\n"
    "diff --git a/tests/test_old.py b/tests/test_old.py\n--- a/tests/test_old.py\n"
    "+++ b/tests/test_old.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")


def fake_task(i: int, repo: str = "local/calc", language: Language = Language.PYTHON) -> SWETask:
    spec = EnvSpec(name=f"calc@{i}", language=language, base_image="envfactory/python:abc",
                   image=f"envfactory/env-calc:{i:016d}", checkout="a" * 40,
                   test_command="python -m pytest --junitxml=/tmp/r.xml",
                   report_format="junit:pytest", report_path="/tmp/r.xml",
                   env={"PIP_NO_INDEX": "1"})
    return SWETask(instance_id=f"{repo.replace('/', '__')}-{i}", repo=repo, base_commit="a" * 40,
                   patch="diff --git a/calc.py b/calc.py\n", test_patch=TEST_PATCH,
                   problem_statement=f"Issue {i}: add is wrong\n\nIt \"subtracts\".",
                   hints_text="see ops", created_at="2024-03-01T12:00:00+00:00",
                   FAIL_TO_PASS=[f"tests/test_new.py::test_{i}"],
                   PASS_TO_PASS=["tests/test_old.py::test_a", "tests/test_old.py::test_b[x y]"],
                   language=language, issue_numbers=[i], pr_number=i + 100,
                   kind=TaskKind.BUG_FIX, env_spec=spec)


@pytest.fixture()
def filled(tmp_home: Path) -> list[SWETask]:
    tasks = [fake_task(1), fake_task(2), fake_task(3, repo="local/other", language=Language.GO)]
    with Registry() as reg:
        for t in tasks:
            reg.put_swe_task(t)
    return tasks


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_ls_filters_and_json(filled) -> None:
    res = invoke("registry", "ls", "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["instance_id"] for r in rows] == sorted(t.instance_id for t in filled)
    assert rows[0]["FAIL_TO_PASS"] == 1 and rows[0]["image"].startswith("envfactory/env-calc")
    res = invoke("registry", "ls", "--repo", "local/other", "--json")
    assert [r["instance_id"] for r in json.loads(res.stdout)] == ["local__other-3"]
    res = invoke("registry", "ls", "--language", "go", "--json")
    assert len(json.loads(res.stdout)) == 1
    res = invoke("registry", "ls")
    assert res.exit_code == 0 and "local__calc-1" in res.stdout


def test_show(filled) -> None:
    res = invoke("registry", "show", "local__calc-2", "--json")
    assert res.exit_code == 0
    assert SWETask.model_validate(json.loads(res.stdout)) == filled[1]
    res = invoke("registry", "show", "local__calc-2")
    assert res.exit_code == 0 and "FAIL_TO_PASS" in res.stdout


def test_export_is_swebench_jsonl_and_import_gives_identical_tasks(filled, tmp_path,
                                                                   monkeypatch) -> None:
    out = tmp_path / "export.jsonl"
    res = invoke("registry", "export", "--format", "swebench", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"exported": 3, "format": "swebench", "out": str(out)}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3
    row = rows[0]
    for key in ("instance_id", "repo", "base_commit", "patch", "test_patch",
                "problem_statement", "hints_text", "created_at", "version",
                "environment_setup_commit", "FAIL_TO_PASS", "PASS_TO_PASS", "image",
                "eval_script", "report_format", "report_path", "test_command", "env_spec"):
        assert key in row, key
    assert isinstance(row["FAIL_TO_PASS"], str) and json.loads(row["FAIL_TO_PASS"]) == \
        filled[0].FAIL_TO_PASS
    assert json.loads(row["PASS_TO_PASS"]) == filled[0].PASS_TO_PASS
    assert row["image"] == filled[0].env_spec.image
    assert row["report_format"] == "junit:pytest" and row["report_path"] == "/tmp/r.xml"
    assert row["eval_script"].startswith("#!/bin/bash")
    # stdout form is the same JSONL
    res = invoke("registry", "export")
    assert res.exit_code == 0 and res.stdout == out.read_text()

    # a fresh registry: import the export, the tasks are the same
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "other-home"))
    reset_settings_cache()
    res = invoke("registry", "import", str(out), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["imported"] == 3
    with Registry() as reg:
        again = reg.list_swe_tasks()
    assert again == sorted(filled, key=lambda t: t.instance_id)
    # and exporting the import gives the same bytes
    out2 = tmp_path / "export2.jsonl"
    assert invoke("registry", "export", "--out", str(out2)).exit_code == 0
    assert out2.read_text() == out.read_text()


def test_failures_exit_non_zero_with_one_line(filled, tmp_path) -> None:
    cases = [
        ("registry", "show", "nope", "--json"),
        ("registry", "export", "--format", "parquet"),
        ("registry", "import", str(tmp_path / "missing.jsonl")),
        ("mine", str(tmp_path / "no-such-repo"), "--json"),
        ("mine", str(tmp_path), "--issues", str(tmp_path / "none.jsonl")),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    cases.append(("registry", "import", str(bad)))
    for args in cases:
        res = invoke(*args)
        assert res.exit_code == 2, args  # bad input
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:"), (args, res.stderr)
        if "--json" in args:  # the error as JSON on stdout too
            assert json.loads(res.stdout)["error"]["message"] == lines[0][len("error: "):]
        else:
            assert res.stdout == "", args


def test_eval_script_shape() -> None:
    task = fake_task(1)
    assert patched_files(TEST_PATCH) == [("tests/test_new.py", True),
                                          ("tests/test_old.py", False)]
    script = eval_script(task)
    assert "rm -f -- tests/test_new.py" in script
    assert f"git checkout -q {'a' * 40} -- tests/test_old.py" in script
    assert "export TZ=UTC" in script and "export ENVFACTORY_SEED=0" in script
    assert "export PIP_NO_INDEX=1" in script
    assert script.rstrip().endswith(task.env_spec.test_command)
    assert TEST_PATCH in script


def test_patched_files_reads_every_header_git_writes() -> None:
    """Through `envs.diffs` (unidiff): a quoted name (git quotes non-ASCII ones) is a file
    too; the hand parser matched only `diff --git a/` and missed it."""
    patch = ('diff --git "a/tests/t\\303\\251st.py" "b/tests/t\\303\\251st.py"\n'
             "new file mode 100644\n--- /dev/null\n+++ \"b/tests/t\\303\\251st.py\"\n"
             "@@ -0,0 +1 @@\n+x = 1\n"
             "diff --git a/tests/gone.py b/tests/gone.py\ndeleted file mode 100644\n"
             "--- a/tests/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y = 2\n")
    assert patched_files(patch) == [("tests/t\u00e9st.py", True), ("tests/gone.py", False)]
    assert patched_files("not a diff\n") == []


@pytest.mark.docker
def test_mine_cli_then_exported_eval_script_runs_in_the_image(tmp_home, tmp_path,
                                                              docker_engine) -> None:
    share_env_specs(tmp_home)
    repo = samples.write(samples.get("py-textkit"), tmp_path)
    res = invoke("mine", str(repo), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["verified"] == 1 and data["yield"]["verified"] == 1
    assert data["yield"]["mined commits"] == 6
    assert data["rejected_at_mining"]["docs_only"] == 1
    assert data["rejected_at_validation"] == {"no_fail_to_pass": 1}
    (iid,) = data["verified_ids"]
    res = invoke("mine", str(repo))  # the table form (re-validating: an upsert)
    assert res.exit_code == 0 and "verified" in res.stdout and "yield" in res.stdout

    out = tmp_path / "ds.jsonl"
    assert invoke("registry", "export", "--out", str(out)).exit_code == 0
    row = next(json.loads(x) for x in out.read_text().splitlines())
    assert row["instance_id"] == iid
    task = SWETask.model_validate(row)
    f2p = json.loads(row["FAIL_TO_PASS"])
    # SWE-bench's flow on a fresh container of the image: gold patch, then the eval script.
    spec = EnvSpec.model_validate(row["env_spec"]).model_copy(update={"checkout": None})
    with Sandbox.start(row["image"], workdir=spec.workdir, limits=spec.limits) as sb:
        sb.exec(f"git -c advice.detachedHead=false checkout -qf {task.base_commit}")
        assert sb.apply_patch(task.patch).applied
        sb.put_file("/tmp/eval.sh", row["eval_script"], mode=0o755)
        ran = sb.exec("bash /tmp/eval.sh")
        data_ = sb.get_file(row["report_path"])
    parsed = reports.parse(row["report_format"], data_, exit_code=ran.exit_code)
    status = {r.test_id: r.status.value for r in parsed.results}
    assert all(status.get(t) == "PASSED" for t in f2p), (status, ran.output[-2000:])
    # and without the fix, the eval script shows the FAIL_TO_PASS failing
    with open_instance(spec.model_copy(update={"checkout": task.base_commit})) as sb:
        sb.put_file("/tmp/eval.sh", row["eval_script"], mode=0o755)
        ran = sb.exec("bash /tmp/eval.sh")
        data_ = sb.get_file(row["report_path"])
    parsed = reports.parse(row["report_format"], data_, exit_code=ran.exit_code)
    status = {r.test_id: r.status.value for r in parsed.results}
    assert all(status.get(t) in ("FAILED", "ERROR") for t in f2p), status


def test_mine_cli_github_mode_validates_pull_requests_from_the_api(tmp_home, tmp_path,
                                                                   docker_engine) -> None:
    from tests.repolaunch.mine.github_standin import GitHubStandIn

    share_env_specs(tmp_home)
    with GitHubStandIn.from_sample(samples.get("py-textkit"), tmp_path / "src") as s:
        res = invoke("mine", "--github", s.full_name, "--api-url", s.base_url,
                     "--clone-dir", str(tmp_path / "clones"), "--json")
        assert res.exit_code == 0, res.output
        assert any(r["path"].endswith("/pulls/3") or "/pulls?" in r["path"]
                   for r in s.requests)  # it really asked the API
    data = json.loads(res.stdout)
    assert data["verified"] == 1, data
    (iid,) = data["verified_ids"]
    with Registry() as reg:
        task = reg.get_swe_task(iid)
    assert task is not None and task.pr_number is not None and task.FAIL_TO_PASS
    # the issue's title and body, from the API, are the problem statement
    assert task.issue_numbers and task.problem_statement.strip()
    assert invoke("mine", "--json").exit_code != 0  # neither a path nor --github
