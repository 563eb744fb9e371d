"""`envs.diffs`, the one reader of unified diffs (unidiff): git's own output of every kind
of change, plain diffs, and what a text that is not a diff does, strict and tolerant."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from envs import diffs
from envs.diffs import FileDiff, PatchError


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "core.quotePath=true", *args], check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def git_diff(tmp_path_factory) -> str:
    """`git diff --binary` of a commit that changes files every way git can."""
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q")
    files = {"plain.txt": b"a\nb\n", "my file.txt": b"x\n", "x b/y": b"y\n", "t\u00e9st.py": b"z\n",
             "img.png": b"\x89PNG\0\1", "old.py": b"old\n" * 5, "gone.txt": b"gone\n",
             "mode.sh": b"m\n", "nonl.txt": b"nonl", "dash.txt": b"--- x\n"}
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    changed = {"plain.txt": b"a\nB\n", "my file.txt": b"x2\n", "x b/y": b"y2\n",
               "t\u00e9st.py": b"z2\n", "img.png": b"\x89PNG\0\2\3", "nonl.txt": b"nonl2",
               "dash.txt": b"--- y\n+++ z\n", "empty.txt": b"", "new.bin": b"\0\1"}
    for name, data in changed.items():
        (repo / name).write_bytes(data)
    git(repo, "mv", "old.py", "new.py")
    git(repo, "rm", "-q", "gone.txt")
    (repo / "mode.sh").chmod(0o755)
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached", "--binary", "--full-index", "-M")


def test_every_kind_of_change_git_writes(git_diff):
    files = {f.path: f for f in diffs.parse(git_diff)}
    assert "".join(f.text for f in diffs.parse(git_diff)) == git_diff  # byte for byte
    assert sorted(files) == sorted(["plain.txt", "my file.txt", "x b/y", "t\u00e9st.py",
                                    "img.png", "new.py", "gone.txt", "mode.sh", "nonl.txt",
                                    "dash.txt", "empty.txt", "new.bin"])
    assert (files["plain.txt"].added, files["plain.txt"].removed) == (1, 1)
    # a content line "---"/"+++" stays content; "\ No newline" is no line
    assert (files["dash.txt"].added, files["dash.txt"].removed) == (2, 1)
    assert (files["nonl.txt"].added, files["nonl.txt"].removed) == (1, 1)
    assert files["img.png"].binary and files["new.bin"].binary and files["new.bin"].is_new
    assert files["new.py"].is_rename and files["new.py"].paths == ("old.py", "new.py")
    assert files["gone.txt"].is_deleted and files["gone.txt"].path == "gone.txt"
    assert files["empty.txt"].is_new and files["empty.txt"].added == 0
    assert files["mode.sh"].paths == ("mode.sh",) and not files["mode.sh"].binary
    assert files["t\u00e9st.py"].text.startswith('diff --git "a/t\\303\\251st.py"')  # unquoted
    # "diff --git a/x b/y b/x b/y" is ambiguous: the "---"/"+++" lines name the file
    assert files["x b/y"].source == files["x b/y"].target == "x b/y"
    assert diffs.paths(git_diff) == sorted({*files, "old.py"})


def test_plain_diffs_and_what_precedes_the_first_file():
    plain = ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
             "Index: y\n=====\n--- y.orig\n+++ y\n@@ -1,2 +1,2 @@\n-c\n+d\n\n")
    x, y = diffs.parse(plain)
    assert (x.path, y.source, y.target) == ("x", "y.orig", "y")
    assert y.text.startswith("Index: y\n") and x.text + y.text == plain
    assert (y.added, y.removed) == (1, 1)  # an empty line in a hunk is an empty context line
    # before a plain diff's "---" line, what follows the file before is this one's ("Index:")
    mail = "From abc Mon Sep 17 00:00:00 2001\nSubject: fix\n\n---\n x | 2 +-\n\n"
    (f,) = diffs.parse(mail + plain.split("Index")[0])
    assert f.text == mail + plain.split("Index")[0]
    # before git's first "diff --git" line it is no file's (a mail's header, a message)
    part = "diff --git a/x b/x\n" + plain.split("Index")[0]
    (f,) = diffs.parse(mail + part)
    assert f.text == part
    binary = "Binary files a/p.png and b/p.png differ\n"
    (b,) = diffs.parse(binary)
    assert b.binary and b.path == "p.png" and b.text == binary


def test_text_that_is_not_a_diff():
    assert diffs.parse("") == [] and diffs.parse("just prose\n") == []
    good = "diff --git a/b.py b/b.py\nnew file mode 100644\n--- /dev/null\n+++ b/b.py\n" \
           "@@ -0,0 +1 @@\n+z\n"
    short = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n-x\n+y\n"
    with pytest.raises(PatchError, match=r"^not a unified diff: line 7: ") as exc:
        diffs.parse(short + good)
    assert isinstance(exc.value, ValueError) and "\n" not in str(exc.value)
    with pytest.raises(PatchError, match="line 6: Hunk is shorter"):
        diffs.parse(short)
    with pytest.raises(PatchError):
        diffs.paths(short)
    # tolerant: each "diff --git" part alone; one that does not read is named by its header
    a, b = diffs.parse(short + good, strict=False)
    assert a == FileDiff(source="a.py", target="a.py", text=short)
    assert (b.path, b.is_new, b.added, b.text) == ("b.py", True, 1, good)
    assert diffs.paths(short + good, strict=False) == ["a.py", "b.py"]
    assert diffs.parse("--- a\n+++ b\n@@ -1 +1 @@\n", strict=False) == []  # no git header
