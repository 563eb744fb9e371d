"""The Java plug-in: the Plan's shape (no Docker), every Java sample built and tested in
real containers with results equal to what its generator planted, and a planted task's
FAIL_TO_PASS failing before its fix and passing after."""

from __future__ import annotations

import re

import pytest

from data import samples
from envs.models import Language, TestStatus
from repolaunch import languages
from repolaunch.detect import Detection
from repolaunch.languages import java
from tests.repolaunch.conftest import before_and_after, detection_of, statuses

JAVA_SAMPLES = [s.name for s in samples.all_samples(Language.JAVA)]
# every planted task that is no decoy: (sample, commit index)
REAL_TASKS = [(s.name, p.commit) for s in samples.all_samples(Language.JAVA)
              for p in s.planted if p.decoy is None]


def test_plugin_registered():
    assert "java" in languages.names()
    assert isinstance(languages.get("java"), java.JavaPlugin)


@pytest.mark.parametrize("name", JAVA_SAMPLES)
def test_plan_shape(name, tmp_path):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    plan = languages.get("java").plan(repo, detection_of(sample))
    assert plan.language is Language.JAVA and plan.image_family == "java"
    assert plan.build_system == sample.build_system
    assert plan.test_framework == sample.test_framework
    assert plan.report_format == "junit:java" and plan.report_path == java.REPORT
    assert java.REPORT in plan.test_command and "{tests}" in plan.per_test_command
    assert plan.setup_steps and not plan.network_at_test
    assert not any(sample.name in s for s in (*plan.setup_steps, plan.test_command))
    # the exit code survives the report collection, and a "0 with failures" becomes 1
    assert plan.test_command.endswith("exit $rc")


def test_maven_plan(tmp_path):
    repo = samples.write(samples.get("java-money"), tmp_path)
    plan = java.JavaPlugin().plan(repo, Detection(primary=Language.JAVA))
    assert plan.build_system == "maven" and plan.test_framework == "junit5"
    assert "clean test" in plan.setup_steps[0] and " -o " not in plan.setup_steps[0]
    assert "mvn" in plan.test_command and " -o " in plan.test_command  # offline at test time
    assert "clean test" in plan.test_command  # stale classes of another commit go
    assert "-Dtest=" in plan.per_test_command
    assert "pom.xml" in plan.dependency_files


def test_scope_is_the_test_patch_classes_and_everything_without_one(tmp_path):
    """SWE-bench runs the test patch's test classes: Surefire's -Dtest with each .java
    file's class; no Java file among the files, the whole suite."""
    import subprocess

    from repolaunch.validate import scoped_command

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mvn").write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in -Dtest=*) echo "$a";; '
                              'esac; done; echo ran\n')
    (fake / "mvn").chmod(0o755)
    (tmp_path / "pom.xml").write_text("<project></project>")
    plan = java.JavaPlugin().plan(tmp_path, Detection(primary=Language.JAVA))

    def run(files):
        env = {"PATH": f"{fake}:/usr/bin:/bin"}
        return subprocess.run(["sh", "-c", scoped_command(plan.scope_command, files)],
                              cwd=tmp_path, env=env, capture_output=True, text=True).stdout

    assert run(["src/test/java/a/FooTest.java", "src/test/java/b/BarIT.java",
                "src/test/resources/x.txt"]) == "-Dtest=BarIT,FooTest\nran\n"
    assert run(["src/test/resources/x.txt"]) == "ran\n"


def test_javac_plan(tmp_path):
    repo = samples.write(samples.get("java-roman"), tmp_path)
    assert java.junit_flavors(repo) == {"junit4"}
    plan = java.JavaPlugin().plan(repo, Detection(primary=Language.JAVA))
    assert plan.build_system == "javac" and plan.test_framework == "junit4"
    fetch = plan.setup_steps[0]
    for jar in (java.CONSOLE_JAR, "junit-4.13.2.jar", "hamcrest-core-1.3.jar"):
        assert jar in fetch
    assert "sha1sum -c" in fetch and java.CENTRAL in fetch
    assert "javac" in plan.test_command and f"rm -rf {java.BUILD}" in plan.test_command
    assert "--scan-class-path" in plan.test_command
    assert "--select-method" in plan.per_test_command


def test_build_system_fallbacks(tmp_path):
    (tmp_path / "build.gradle").write_text("plugins { id 'java' }\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ATest.java").write_text(
        "import org.junit.jupiter.api.Test;\nclass ATest { @Test void a() {} }\n")
    plan = java.JavaPlugin().plan(tmp_path, Detection(primary=Language.JAVA))
    assert plan.build_system == "gradle" and plan.test_framework == "junit5"
    assert "gradle" in plan.test_command and "--offline" in plan.test_command
    (tmp_path / "build.gradle").unlink()
    plan = java.JavaPlugin().plan(tmp_path, Detection(primary=Language.JAVA))
    assert plan.build_system == "javac"
    # Ant: the build's own targets, by their usual names, in build.xml or a file it imports
    (tmp_path / "build.xml").write_text(
        '<project default="dist"><import file="scripts/tests.ant.xml"/>'
        '<target name="dist"/><target name="compile"/></project>')
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "tests.ant.xml").write_text(
        '<project><target name="test.compile"/><target name="test" depends="x"/></project>')
    plan = java.JavaPlugin().plan(tmp_path, Detection(primary=Language.JAVA))
    assert plan.build_system == "ant" and plan.setup_steps[-1] == "ant -noinput test.compile"
    assert "ant -noinput test;" in plan.test_command
    (tmp_path / "build.xml").unlink()
    plan = java.JavaPlugin().plan(tmp_path, Detection(primary=Language.JAVA))
    assert plan.build_system == "javac"
    assert "junit-4.13.2" not in plan.setup_steps[0]  # JUnit 5 only


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name", JAVA_SAMPLES)
def test_sample_head_matches_expected(name, plan_runner):
    sample = samples.get(name)
    run = plan_runner(sample)
    got = statuses(run.report)
    assert got == {k: v.value for k, v in sample.expected.items()}, run.test.output[-3000:]
    assert run.report.consistent
    assert run.test.exit_code != 0  # every sample has an intentionally failing test


@pytest.mark.docker
@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("name,index", REAL_TASKS)
def test_planted_fix_fails_before_and_passes_after(name, index, plan_runner):
    sample = samples.get(name)
    task = next(p for p in sample.planted if p.commit == index)
    before, after = before_and_after(sample, task.commit)
    got_before = statuses(plan_runner(before).report)
    got_after = statuses(plan_runner(after).report)
    for test_id in task.fail_to_pass:
        assert got_before.get(test_id) in ("FAILED", "ERROR"), got_before
        assert got_after.get(test_id) == "PASSED", got_after
    for test_id in task.pass_to_pass:
        assert got_before.get(test_id) == got_after.get(test_id) == "PASSED"
    assert set(got_after) == set(task.fail_to_pass) | set(task.pass_to_pass)


def test_maven_without_surefire_gets_a_junit5_capable_one(tmp_path):
    repo = samples.write(samples.get("java-money"), tmp_path)
    assert not java.default_surefire_too_old(repo)  # the sample pins Surefire 3.0.0-M5
    pom = (repo / "pom.xml").read_text()
    (repo / "pom.xml").write_text(re.sub(r"\s*<build>.*</build>", "", pom, flags=re.S))
    assert java.default_surefire_too_old(repo)
    plan = java.JavaPlugin().plan(repo, Detection(primary=Language.JAVA))
    assert java.SUREFIRE in plan.setup_steps[0] and java.SUREFIRE in plan.test_command
    assert "clean test-compile" in plan.test_command


@pytest.mark.parametrize("name", [s.name for s in samples.all_samples(Language.JAVA)])
def test_sample_history(name):
    """A real history: >= 4 commits, dates rising over more than one year, every issue a
    commit message references described, every real task with a FAIL_TO_PASS."""
    sample = samples.get(name)
    dates = [c.date for c in sample.commits]
    assert len(dates) >= 4 and dates == sorted(dates) and dates[0][:4] < dates[-1][:4]
    described = {i.number for i in sample.issues}
    for planted in sample.planted:
        assert 0 < planted.commit < len(sample.commits)
        assert set(planted.issues) <= described
        if planted.decoy is None:
            assert planted.fail_to_pass and set(planted.fail_to_pass).isdisjoint(
                planted.pass_to_pass)
    for index, commit in enumerate(sample.commits):
        refs = {int(n) for n in re.findall(r"Fixes #(\d+)", commit.message)}
        planted = [p for p in sample.planted if p.commit == index]
        assert refs == (set(planted[0].issues) if planted else set()), commit.message
    statuses_at_head = set(sample.expected.values())
    assert {TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED} <= statuses_at_head


SNAPSHOT_PARENT = (
    "[FATAL] Non-resolvable parent POM for com.example:core:2.20.0-SNAPSHOT: Could not "
    "transfer artifact com.example:base:pom:2.20.0-SNAPSHOT from/to central-snapshots "
    "(https://snapshots.example.org/repo): transfer failed: Unknown host snapshots.example.org")
POM = """<project>
  <parent>
    <groupId>com.example</groupId><artifactId>base</artifactId>
    <version>2.20.0-SNAPSHOT</version>
  </parent>
  <artifactId>core</artifactId><version>2.20.0-SNAPSHOT</version>
</project>
"""


@pytest.mark.parametrize(("served", "pinned"), [
    (["2.19.0", "2.20.0", "2.20.1", "2.21.0-rc1"], "2.20.0"),  # that version's release
    (["2.18.3", "2.19.2", "3.0.0"], "2.19.2"),  # not released yet: the newest before it
])
def test_a_snapshot_parent_out_of_reach_becomes_its_release(tmp_path, served, pinned):
    """A project between releases asks for its parent's next SNAPSHOT, which only a snapshot
    repository serves: the parent is pinned to a release Maven Central serves, the project's
    own version left alone."""
    import subprocess

    from repolaunch.diagnose import diagnose

    plan = languages.get("java").plan(tmp_path, Detection(primary=Language.JAVA))
    (action,) = [a for a in diagnose(SNAPSHOT_PARENT, plan=plan, phase="setup")
                 if "SNAPSHOT" in a.reason]
    assert action.kind == "shell" and "com/example/base/maven-metadata.xml" in action.value
    # Maven Central answered by a stand-in curl that prints the metadata
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    versions = "".join(f"<version>{v}</version>" for v in served)
    (bin_dir / "curl").write_text(f"#!/bin/sh\necho '<metadata><versioning><versions>"
                                  f"{versions}</versions></versioning></metadata>'\n")
    (bin_dir / "curl").chmod(0o755)
    (tmp_path / "pom.xml").write_text(POM)
    res = subprocess.run(["sh", "-c", action.value], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    pom = (tmp_path / "pom.xml").read_text()
    assert f"<version>{pinned}</version>\n  </parent>" in pom
    assert "<artifactId>core</artifactId><version>2.20.0-SNAPSHOT</version>" in pom
    # another language's failure is not read as one
    py = languages.get("python").plan(tmp_path, Detection(primary=Language.PYTHON))
    assert not [a for a in diagnose(SNAPSHOT_PARENT, plan=py, phase="setup")
                if "SNAPSHOT" in a.reason]
