"""envs/files.py: whole files written atomically, input rows read with file:line errors, and
the one state file every resumable flow keeps."""

from __future__ import annotations

import json
import os
import threading

import pytest
from pydantic import BaseModel

from envs.errors import UserError
from envs.files import StateFile, atomic_write, input_key, read_jsonl, row_error


def test_atomic_write_replaces_whole_files_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "report.json"
    atomic_write(target, "old")
    os.chmod(target, 0o600)
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o600  # the mode it had survives
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_atomic_write_that_fails_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    atomic_write(target, "kept")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "lost")
    assert target.read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_read_jsonl_gives_each_row_its_line(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl(f) == [(f"{f}:1", {"a": 1}), (f"{f}:3", {"a": 2})]
    arr = tmp_path / "rows.json"
    arr.write_text('[{"a": 1}, {"a": 2}]')
    assert [w for w, _ in read_jsonl(arr)] == [f"{arr}[1]", f"{arr}[2]"]


@pytest.mark.parametrize(("text", "where", "words"), [
    ('{"a": 1}\n{"a": \n', ":2", "not valid JSON"),
    ('{"a": 1}\n7\n', ":2", "expected a JSON object, got int"),
    (b"\xff\xfe{x\n", ":1", "not valid JSON"),
    ("[1, 2]", "", "item 1 is not a JSON object"),
])
def test_read_jsonl_names_the_bad_row(tmp_path, text, where, words):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(UserError) as info:
        read_jsonl(f)
    assert str(info.value).startswith(f"{f}{where}: ") and words in str(info.value)


def test_read_jsonl_of_a_missing_file_or_a_folder(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        read_jsonl(tmp_path / "none.jsonl")
    with pytest.raises(UserError, match="is a directory"):
        read_jsonl(tmp_path)


def test_row_error_names_where_field_and_value():
    class Row(BaseModel):
        n: int

    try:
        Row.model_validate({"n": "many"})
    except ValueError as exc:
        err = row_error("f.jsonl:4", exc, {"n": "many"})
    assert str(err).startswith("f.jsonl:4: n: 'many': ")
    assert (err.where, err.field, err.value) == ("f.jsonl:4", "n", "many")


def test_input_key_changes_with_any_input():
    assert input_key("i", "patch") == input_key("i", "patch")
    assert input_key("i", "patch") != input_key("i", "patch2")
    assert input_key({"b": 1, "a": 2}) == input_key({"a": 2, "b": 1})


def test_state_file_repairs_a_torn_tail_and_keeps_the_next_record(tmp_path):
    path = tmp_path / "state.jsonl"
    s = StateFile(path)
    s.put("a", {"v": 1})
    with path.open("ab") as fh:  # an interrupted run's half line
        fh.write(b'{"key": "b", "v"')
    again = StateFile(path)
    assert again.repaired == 1 and set(again.records) == {"a"}
    again.put("c", {"v": 3})
    third = StateFile(path)
    assert set(third.records) == {"a", "c"} and third.repaired == 0
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_the_latest_record_of_a_key_wins_and_infra_failures_are_redone(tmp_path):
    path = tmp_path / "state.jsonl"
    infra = StateFile(path, retry=lambda r: r["kind"] == "infra")
    infra.put("x", {"kind": "infra"})
    infra.put("y", {"kind": "done"})
    resumed = StateFile(path, retry=lambda r: r["kind"] == "infra")
    assert resumed.done("x") is None  # retried
    assert resumed.done("y")["kind"] == "done"
    resumed.put("x", {"kind": "done"})
    assert StateFile(path, retry=lambda r: r["kind"] == "infra").done("x")["kind"] == "done"


def test_state_written_under_other_settings_is_refused(tmp_path):
    path = tmp_path / "state.jsonl"
    StateFile(path, settings={"limit": 5}).put("a", {"v": 1})
    assert set(StateFile(path, settings={"limit": 5}).records) == {"a"}
    with pytest.raises(UserError, match="other settings"):
        StateFile(path, settings={"limit": 6})


def test_concurrent_puts_write_whole_lines(tmp_path):
    path = tmp_path / "state.jsonl"
    s = StateFile(path)

    def put(k: int) -> None:
        for i in range(50):
            s.put(f"{k}-{i}", {"payload": "x" * 500})

    threads = [threading.Thread(target=put, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    again = StateFile(path)
    assert len(again) == 200 and again.repaired == 0
