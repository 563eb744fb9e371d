"""Bad input, across every command: exactly one line on stderr that names what is wrong,
exit code 2, no traceback, nothing built. Under --json the same error is a JSON object on
stdout. Each case runs the installed `envfactory` as a user would; none needs the engine,
since the checks that cost nothing come before any engine or image work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).with_name("envfactory"))

ROW = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "",
       "test_patch": "", "problem_statement": "x", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bad-input")
    (d / "notgit").mkdir()
    repo = d / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (d / "f2p_int.jsonl").write_text(json.dumps({**ROW, "FAIL_TO_PASS": 5}) + "\n")
    (d / "no_commit.jsonl").write_text(json.dumps({k: v for k, v in ROW.items()
                                                   if k != "base_commit"}) + "\n")
    (d / "good.jsonl").write_text(json.dumps(ROW) + "\n")
    (d / "torn.jsonl").write_text(json.dumps(ROW) + "\n{\"instance_id\": \"x\", \n")
    (d / "array_item.jsonl").write_text("[1, 2]\n")
    (d / "not_object.jsonl").write_text("[1]\n".replace("[1]", "42"))
    (d / "nonutf8.jsonl").write_bytes(b"\xff\xfe{broken\n")
    (d / "no_id.jsonl").write_text(json.dumps({"model_patch": ""}) + "\n")
    (d / "bad_patch_type.jsonl").write_text(
        json.dumps({"instance_id": "o__r-1", "model_patch": 7}) + "\n")
    return d


def cli(*args: str, home: Path, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ENVFACTORY_HOME": str(home),
                               "ENVFACTORY_DB_URL": "", **(env or {})})


# (arguments, words the one line must hold). `{d}` is the inputs folder.
CASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    # global options and the grammar
    (("--sandbox-pids", "abc", "doctor"), ("--sandbox-pids", "'abc'", "integer")),
    (("--workers", "many", "tasks", "ls"), ("--workers", "'many'")),
    (("--db-url", "notaurl://", "tasks", "ls"), ("--db-url", "notaurl")),
    (("frobnicate",), ("No such command", "frobnicate")),
    (("gc", "--older-than", "abc"), ("--older-than",)),
    (("runs", "eval", "gold", "--bogus"), ("No such option", "--bogus")),
    # the main job
    (("run", "-s", "cobol", "--no-mine", "--synth", "0"), ("unknown sample 'cobol'",
                                                           "py-textkit")),
    (("run", "--suite", "sid", "--no-samples"), ("unknown Debian suite 'sid'", "bookworm")),
    # images
    (("images", "build", "cobol"), ("unknown image 'cobol'", "python")),
    (("images", "build", "base", "--suite", "sid"), ("--suite", "'sid'")),
    (("images", "build", "base", "--ca-bundle", "{d}/missing.pem"), ("missing.pem",
                                                                     "cannot be read")),
    # environments
    (("envs", "launch", "{d}/missing"), ("missing", "no such path")),
    (("envs", "launch", "{d}/repo", "--commit", "deadbeef"), ("deadbeef", "not found")),
    (("envs", "launch", "{d}/repo", "--suite", "sid"), ("--suite", "'sid'")),
    (("envs", "check", "no-such-task"), ("no-such-task",)),
    (("envs", "serve"), ("--token", "required")),
    # tasks
    (("tasks", "mine", "{d}/notgit"), ("notgit", "not a git repository")),
    (("tasks", "mine", "{d}/missing"), ("missing", "no such repository")),
    (("tasks", "mine", "{d}/repo", "--issues", "{d}/none.jsonl"), ("--issues", "none.jsonl")),
    (("tasks", "mine", "--github", "a/b/c"), ("--github", "'a/b/c'", "OWNER/NAME")),
    (("tasks", "mine", "{d}/repo", "--limit", "0"), ("--limit",)),
    (("tasks", "ls", "--kind", "cobol"), ("unknown task kind 'cobol'", "terminal")),
    (("tasks", "show", "nope"), ("no task 'nope'",)),
    (("tasks", "export", "--format", "parquet"), ("unknown export format 'parquet'",
                                                  "swebench", "harbor")),
    (("tasks", "export", "--format", "harbor"), ("--out", "directory")),
    (("tasks", "import", "{d}/f2p_int.jsonl"), ("f2p_int.jsonl:1", "FAIL_TO_PASS", "5",
                                                 "list")),
    (("tasks", "import", "{d}/torn.jsonl"), ("torn.jsonl:2", "not valid JSON")),
    (("tasks", "import", "{d}/not_object.jsonl"), ("not_object.jsonl:1", "JSON object")),
    (("tasks", "import", "{d}/missing.jsonl"), ("missing.jsonl", "no such file")),
    (("tasks", "import", "{d}/notgit", "{d}/good.jsonl"), ("directories", "JSONL")),
    (("tasks", "import", "{d}/good.jsonl", "--build", "--repos", "{d}/nowhere"),
     ("--repos", "nowhere")),
    (("tasks", "synth", "--families", "cobol"), ("unknown task family 'cobol'",
                                                 "dedupe-lines")),
    (("tasks", "synth", "--n", "0"), ("--n", "at least 1")),
    # runs
    (("runs", "eval", "{d}/missing.jsonl", "-d", "{d}/good.jsonl"), ("missing.jsonl",
                                                                     "no such file")),
    (("runs", "eval", "gold", "-d", "{d}/f2p_int.jsonl"), ("f2p_int.jsonl:1", "FAIL_TO_PASS")),
    (("runs", "eval", "gold", "-d", "{d}/no_commit.jsonl"), ("no_commit.jsonl:1",
                                                             "base_commit")),
    (("runs", "eval", "gold", "-d", "{d}/notgit"), ("notgit", "directory")),
    (("runs", "eval", "{d}/nonutf8.jsonl", "-d", "{d}/good.jsonl"), ("nonutf8.jsonl:1",
                                                                      "JSON")),
    (("runs", "eval", "{d}/no_id.jsonl", "-d", "{d}/good.jsonl"), ("no_id.jsonl:1",
                                                                   "instance_id")),
    (("runs", "eval", "{d}/bad_patch_type.jsonl", "-d", "{d}/good.jsonl"),
     ("bad_patch_type.jsonl:1", "model_patch", "7")),
    (("runs", "eval", "gold", "-d", "{d}/good.jsonl", "--executor", "cobol"),
     ("unknown executor 'cobol'", "celery")),
    (("runs", "eval", "gold"), ("no tasks",)),
    (("runs", "show", "nope"), ("no run 'nope'",)),
    # the queue worker and the policy
    (("worker", "--concurrency", "0"), ("--concurrency",)),
    (("policy", "train", "--recipe", "cobol"), ("unknown recipe 'cobol'", "bundled")),
    (("policy", "serve", "--model", "cobol"), ("unknown policy model 'cobol'", "smollm2")),
    (("policy", "eval", "--adapter", "no-equals-sign"), ("--adapter", "NAME=PATH")),
    # the last release's spellings say the same
    (("eval", "gold", "-d", "{d}/f2p_int.jsonl"), ("f2p_int.jsonl:1", "FAIL_TO_PASS")),
    (("registry", "import", "{d}/f2p_int.jsonl"), ("f2p_int.jsonl:1", "FAIL_TO_PASS")),
    (("mine", "{d}/notgit"), ("not a git repository",)),
    (("synth", "export", "/tmp/x", "--format", "foo"), ("unknown export format 'foo'",)),
    (("import", "{d}/missing.jsonl"), ("missing.jsonl", "no such file")),
]


def _args(args: tuple[str, ...], d: Path) -> list[str]:
    return [a.replace("{d}", str(d)) for a in args]


@pytest.mark.parametrize(("args", "words"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(args, words, inputs, tmp_path):
    proc = cli(*_args(args, inputs), home=tmp_path / "home")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("error: ") and "Traceback" not in proc.stderr
    assert "internal error" not in lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert proc.stdout == ""


def test_there_are_at_least_30_cases_over_every_noun():
    assert len(CASES) >= 30
    firsts = {a[0] for a, _ in CASES if not a[0].startswith("--")}
    assert {"run", "images", "envs", "tasks", "runs", "worker", "policy"} <= firsts


@pytest.mark.parametrize("args", [
    ("tasks", "import", "{d}/f2p_int.jsonl", "--json"),
    ("runs", "eval", "gold", "-d", "{d}/f2p_int.jsonl", "--json"),
    ("tasks", "ls", "--kind", "x", "--json"),
    ("gc", "--frob", "--json"),
])
def test_under_json_the_error_is_a_json_object_on_stdout(args, inputs, tmp_path):
    proc = cli(*_args(args, inputs), home=tmp_path / "home")
    assert proc.returncode == 2
    data = json.loads(proc.stdout)
    assert data["ok"] is False and data["exit_code"] == 2
    assert data["error"]["message"] and data["error"]["kind"] in ("bad_input", "usage")
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1


def test_a_row_error_names_file_line_field_and_value_in_json(inputs, tmp_path):
    proc = cli("tasks", "import", str(inputs / "f2p_int.jsonl"), "--json",
               home=tmp_path / "home")
    error = json.loads(proc.stdout)["error"]
    assert error["where"] == f"{inputs / 'f2p_int.jsonl'}:1"
    assert error["field"] == "FAIL_TO_PASS" and error["value"] == 5


def test_a_bad_import_leaves_the_registry_as_it_was(inputs, tmp_path):
    home = tmp_path / "home"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, "instance_id": "o__r-2",
                                                          "FAIL_TO_PASS": 5}) + "\n")
    assert cli("tasks", "import", str(mixed), home=home).returncode == 2
    listed = cli("tasks", "ls", "--json", home=home)
    assert json.loads(listed.stdout) == []  # the good first row did not land alone


def test_debug_shows_the_traceback(inputs, tmp_path):
    proc = cli("--debug", "tasks", "import", str(inputs / "f2p_int.jsonl"),
               home=tmp_path / "home")
    assert proc.returncode == 2 and "Traceback" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: ")


def test_a_real_bug_is_not_dressed_up_as_bad_input(tmp_path):
    # A command that crashes on a bug: exit 70, the line says so and where the traceback is.
    code = ("import typer\nfrom envs.clikit import command, run_app\napp = typer.Typer()\n"
            "@app.command()\n@command\ndef boom():\n    {}['missing']\n"
            "@app.command()\ndef other():\n    pass\nrun_app(app, ['boom'])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "ENVFACTORY_HOME": str(tmp_path)}, timeout=60)
    assert proc.returncode == 70
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert line.startswith("error: internal error: KeyError") and "a bug" in line
    crash = Path(line.rsplit("traceback in ", 1)[1].rstrip(")"))
    assert "Traceback" in crash.read_text()


def test_version_flag():
    proc = subprocess.run([EXE, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("envfactory ")
