"""Hand-made SWE tasks for the evaluation harness, in a few languages, written by this project.

Each task is a tiny repository with a planted bug, the test that shows it (`test_patch`) and
the fix (`patch`); the diffs are made by real git from the files below, so they apply the way
a model's patch would. `build_tasks()` writes the repositories, builds one image per task
(language image + the checkout at /testbed) and returns the SWETasks with their EnvSpecs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from envs import images
from envs.gitcmd import git
from envs.models import EnvSpec, Language, Limits, SWETask, TaskKind


@dataclass(frozen=True)
class Sample:
    name: str
    language: Language
    base: dict[str, str]  # files at the base commit
    tests: dict[str, str]  # files the test patch adds or changes
    fix: dict[str, str]  # files the gold patch changes
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    test_command: str
    report_format: str
    report_path: str | None = None
    loop: dict[str, str] = field(default_factory=dict)  # a "fix" that never terminates
    problem: str = ""
    warm: str = ""  # run once at image build: fills build caches, as a real env image would


SAMPLES: list[Sample] = [
    Sample(
        name="pyclamp",
        language=Language.PYTHON,
        base={
            "clamp.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                        "    if x > hi:\n        return lo\n    return x\n",
            "tests/test_clamp.py": "from clamp import clamp\n\n\ndef test_inside():\n"
                                   "    assert clamp(5, 0, 10) == 5\n\n\ndef test_below():\n"
                                   "    assert clamp(-1, 0, 10) == 0\n",
            "tests/conftest.py": "import sys, os\nsys.path.insert(0, os.path.dirname("
                                 "os.path.dirname(__file__)))\n",
        },
        tests={
            "tests/test_clamp.py": "import pytest\n\nfrom clamp import clamp\n\n\n"
                                   "def test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\n"
                                   "def test_below():\n    assert clamp(-1, 0, 10) == 0\n\n\n"
                                   "@pytest.mark.parametrize('x', [11, 99])\n"
                                   "def test_above(x):\n    assert clamp(x, 0, 10) == 10\n",
        },
        fix={
            "clamp.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                        "    if x > hi:\n        return hi\n    return x\n",
        },
        loop={
            "clamp.py": "def clamp(x, lo, hi):\n    while True:\n        pass\n",
        },
        fail_to_pass=("tests/test_clamp.py::test_above[11]", "tests/test_clamp.py::test_above[99]"),
        pass_to_pass=("tests/test_clamp.py::test_inside", "tests/test_clamp.py::test_below"),
        test_command="python3 -m pytest -p no:cacheprovider -q -rA --junitxml=/tmp/report.xml "
                     "tests",
        report_format="junit",
        report_path="/tmp/report.xml",
        problem="clamp(x, lo, hi) returns lo for values above hi; it should return hi.",
    ),
    Sample(
        name="gowords",
        language=Language.GO,
        base={
            "go.mod": "module example.com/words\n\ngo 1.19\n",
            "words.go": "package words\n\nimport \"strings\"\n\n"
                        "// Count counts the words of s.\nfunc Count(s string) int {\n"
                        "\treturn len(strings.Split(s, \" \"))\n}\n",
            "words_test.go": "package words\n\nimport \"testing\"\n\n"
                             "func TestCount(t *testing.T) {\n"
                             "\tif Count(\"a b\") != 2 {\n\t\tt.Fatal(\"a b\")\n\t}\n}\n",
        },
        tests={
            "words_test.go": "package words\n\nimport \"testing\"\n\n"
                             "func TestCount(t *testing.T) {\n"
                             "\tif Count(\"a b\") != 2 {\n\t\tt.Fatal(\"a b\")\n\t}\n}\n\n"
                             "func TestSpaces(t *testing.T) {\n"
                             "\tfor _, c := range []struct{ name, in string; want int }{\n"
                             "\t\t{\"double\", \"a  b\", 2}, {\"edges\", \" a \", 1}} {\n"
                             "\t\tt.Run(c.name, func(t *testing.T) {\n"
                             "\t\t\tif got := Count(c.in); got != c.want {\n"
                             "\t\t\t\tt.Fatalf(\"%q: %d\", c.in, got)\n\t\t\t}\n\t\t})\n\t}\n}\n",
        },
        fix={
            "words.go": "package words\n\nimport \"strings\"\n\n"
                        "// Count counts the words of s.\nfunc Count(s string) int {\n"
                        "\treturn len(strings.Fields(s))\n}\n",
        },
        loop={
            "words.go": "package words\n\n// Count never returns.\nfunc Count(s string) int {\n"
                        "\tfor {\n\t}\n}\n",
        },
        fail_to_pass=("TestSpaces", "TestSpaces/double", "TestSpaces/edges"),
        pass_to_pass=("TestCount",),
        test_command="go test -json ./... > /tmp/report.json",
        warm="go test -count=1 ./... >/dev/null 2>&1; true",
        report_format="gotest-json",
        report_path="/tmp/report.json",
        problem="Count miscounts words separated by several spaces.",
    ),
    Sample(
        name="jsslug",
        language=Language.JAVASCRIPT,
        base={
            "package.json": '{"name": "slug", "version": "1.0.0", "type": "commonjs"}\n',
            "slug.js": "function slug(s) {\n  return s.toLowerCase().replace(' ', '-');\n}\n"
                       "module.exports = { slug };\n",
            "test/slug.test.js": "const test = require('node:test');\n"
                                 "const assert = require('node:assert');\n"
                                 "const { slug } = require('../slug');\n\n"
                                 "test('one word', () => assert.strictEqual(slug('Hi'), 'hi'));\n",
        },
        tests={
            "test/slug.test.js": "const test = require('node:test');\n"
                                 "const assert = require('node:assert');\n"
                                 "const { slug } = require('../slug');\n\n"
                                 "test('one word', () => assert.strictEqual(slug('Hi'), 'hi'));\n"
                                 "test('many words', () => "
                                 "assert.strictEqual(slug('A b C'), 'a-b-c'));\n",
        },
        fix={
            "slug.js": "function slug(s) {\n  return s.toLowerCase().split(/\\s+/).join('-');\n}\n"
                       "module.exports = { slug };\n",
        },
        loop={
            "slug.js": "function slug(s) {\n  for (;;) {}\n}\nmodule.exports = { slug };\n",
        },
        fail_to_pass=("many words",),
        pass_to_pass=("one word",),
        test_command="node --test test/ > /tmp/report.tap",
        report_format="tap",
        report_path="/tmp/report.tap",
        problem="slug() only replaces the first space.",
    ),
]


def get(name: str) -> Sample:
    for s in SAMPLES:
        if s.name == name:
            return s
    raise KeyError(f"unknown sample task {name!r}; known: {', '.join(s.name for s in SAMPLES)}")


# git's whole environment for the task repositories: a fixed author and date, so the same
# files give the same commits everywhere
_GIT_ENV = {"GIT_AUTHOR_NAME": "envfactory", "GIT_AUTHOR_EMAIL": "samples@envfactory.local",
            "GIT_COMMITTER_NAME": "envfactory", "GIT_COMMITTER_EMAIL": "samples@envfactory.local",
            "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
            "PATH": "/usr/bin:/bin:/usr/local/bin"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _diff_for(root: Path, files: dict[str, str]) -> str:
    """The diff that turns the checkout into one with `files` written, made by git."""
    _write(root, files)
    git("add", "-A", cwd=root, env=_GIT_ENV)
    diff = git("diff", "--cached", "HEAD", cwd=root, env=_GIT_ENV)
    git("reset", "-q", "--hard", "HEAD", cwd=root, env=_GIT_ENV)
    git("clean", "-qfd", cwd=root, env=_GIT_ENV)
    return diff


@dataclass(frozen=True)
class BuiltSample:
    sample: Sample
    task: SWETask
    loop_patch: str  # a patch whose code never terminates
    bad_patch: str  # a patch that does not apply


def build_tasks(names: list[str] | None = None, *, log: Callable[[str], None] = lambda m: None
                ) -> list[BuiltSample]:
    out = []
    for sample in SAMPLES if names is None else [get(n) for n in names]:
        out.append(_build_one(sample, log))
    return out


def _build_one(sample: Sample, log: Callable[[str], None]) -> BuiltSample:
    with tempfile.TemporaryDirectory(prefix=f"envfactory-{sample.name}-") as tmp:
        root = Path(tmp) / "testbed"
        root.mkdir()
        git("init", "-q", "-b", "main", cwd=root, env=_GIT_ENV)
        _write(root, sample.base)
        git("add", "-A", cwd=root, env=_GIT_ENV)
        git("commit", "-q", "-m", "base", cwd=root, env=_GIT_ENV)
        base_commit = git("rev-parse", "HEAD", cwd=root, env=_GIT_ENV).strip()
        test_patch = _diff_for(root, sample.tests)
        patch = _diff_for(root, sample.fix)
        loop_patch = _diff_for(root, sample.loop) if sample.loop else ""
        files = {
            f"testbed/{p.relative_to(root)}": p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()
        }
    lang_image = images.ensure(images.image_for(sample.language), log=log).tag
    dockerfile = f"FROM {lang_image}\nCOPY testbed/ /testbed/\nWORKDIR /testbed\n"
    if sample.warm:
        dockerfile += f"RUN {sample.warm}\n"
    tag = images.build_context(f"sample-{sample.name}", dockerfile, files, kind="task", log=log)
    spec = EnvSpec(name=f"sample-{sample.name}", language=sample.language, base_image=lang_image,
                   test_command=sample.test_command, report_format=sample.report_format,
                   report_path=sample.report_path, workdir="/testbed", image=tag,
                   limits=Limits(memory="1g", pids=256, timeout=120))
    task = SWETask(
        instance_id=f"envfactory__{sample.name}-1", repo=f"envfactory/{sample.name}",
        base_commit=base_commit, patch=patch, test_patch=test_patch,
        problem_statement=sample.problem, created_at="2024-01-01T00:00:00Z",
        FAIL_TO_PASS=list(sample.fail_to_pass), PASS_TO_PASS=list(sample.pass_to_pass),
        language=sample.language, kind=TaskKind.BUG_FIX, env_spec=spec)
    bad = ("diff --git a/nowhere.txt b/nowhere.txt\n--- a/nowhere.txt\n+++ b/nowhere.txt\n"
           "@@ -1,2 +1,2 @@\n-this line\n+is not there\n context\n")
    return BuiltSample(sample=sample, task=task, loop_patch=loop_patch, bad_patch=bad)
