"""RepoLaunch builds: layered images, cache hits, instances without new images, and the
diagnose-and-retry loop, on real containers."""

from __future__ import annotations

from pathlib import Path

import pytest

from data import samples
from envs.instance import open_instance
from envs.registry import Registry
from repolaunch import build

pytestmark = pytest.mark.docker


def _git(path: Path, *args: str, date: str | None = None) -> str:
    return samples._git(path, *args, date=date)


@pytest.fixture()
def c_repo(tmp_path, docker_engine, tmp_home):
    return samples.write(samples.get("c-strutil"), tmp_path)


def test_launch_builds_and_matches_what_the_generator_planted(c_repo):
    sample = samples.get("c-strutil")
    result = build.launch(c_repo)
    assert result.ok, result.failure
    assert {r.test_id: r.status for r in result.results} == sample.expected
    assert result.env is not None and result.env.image and result.env.checkout == result.commit
    assert Path(result.transcript_path).is_file()
    with Registry() as reg:
        assert reg.get_env(result.env.name) is not None
        runs = reg.list_runs(kind="build", target=result.repo)
        assert runs and reg.list_attempts(runs[-1].run_id)


def test_second_launch_is_a_cache_hit(c_repo):
    first = build.launch(c_repo)
    again = build.launch(c_repo)
    assert again.cache_hit and again.env.image == first.env.image
    assert not [a for a in again.transcript if a.phase == "setup"]  # nothing was rebuilt
    assert again.counts == first.counts


def test_a_commit_with_unchanged_dependencies_reuses_the_env_image(c_repo):
    head = build.launch(c_repo)
    shas = samples.commit_shas(c_repo)
    deps = head.plan.dependency_files
    same = [s for s in shas[:-1]
            if _git(c_repo, "diff", "--name-only", s, shas[-1], "--", *deps).strip() == ""]
    assert same, "the sample should have an earlier commit with the same dependencies"
    older = build.launch(c_repo, commit=same[0])
    assert older.cache_hit and older.env.image == head.env.image
    assert older.env.checkout == same[0]


def test_an_instance_adds_little_disk(c_repo):
    head = build.launch(c_repo)
    first = samples.commit_shas(c_repo)[1]
    spec = head.env.model_copy(update={"checkout": first})
    with open_instance(spec) as sb:
        assert sb.exec("git rev-parse HEAD").stdout.strip() == first
        added = sb.disk_usage()
    assert added <= 10 * 2**20, f"an instance added {added} bytes"


def _write_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init", date="2024-03-01T00:00:00+00:00")
    return root


ZLIB_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(zcheck C)
enable_testing()
add_executable(zcheck zcheck.c)
target_link_libraries(zcheck z)
add_test(NAME compresses COMMAND zcheck)
"""
ZLIB_C = """#include <zlib.h>
#include <string.h>
int main(void) {
  unsigned char out[128]; uLongf n = sizeof out;
  const char *s = "hello hello hello";
  return compress(out, &n, (const unsigned char *)s, strlen(s)) == Z_OK ? 0 : 1;
}
"""


@pytest.mark.network
def test_a_missing_header_is_diagnosed_and_installed(tmp_path, docker_engine, tmp_home):
    repo = _write_repo(tmp_path / "zcheck", {"CMakeLists.txt": ZLIB_CMAKE, "zcheck.c": ZLIB_C})
    # rebuild: an env image from an earlier run (it carries its spec) would be a cache hit
    result = build.launch(repo, rebuild=True)
    assert result.ok, (result.failure, [(a.phase, a.command[:60]) for a in result.transcript])
    assert [r.test_id for r in result.results] == ["compresses"]
    actions = [a for a in result.transcript if a.phase == "action"]
    assert actions and "zlib1g-dev" in actions[0].command
    assert any("zlib1g-dev" in s for s in result.env.setup_steps)  # recorded with the env


# configure needs `bc`; once it has it, the build shows that zlib's header is missing too
CHAIN_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(zcheck C)
execute_process(COMMAND sh -c "echo 1+1 | bc" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${err}")
endif()
enable_testing()
add_executable(zcheck zcheck.c)
target_link_libraries(zcheck z)
add_test(NAME compresses COMMAND zcheck)
"""


@pytest.mark.network
def test_a_failure_that_moves_on_after_a_fix_is_diagnosed_again(tmp_path, docker_engine,
                                                                 tmp_home):
    """The first diagnosis (a missing command) helps but is not enough: the step now fails
    on a missing header, which gets its own package; both stay in the environment."""
    repo = _write_repo(tmp_path / "chain", {"CMakeLists.txt": CHAIN_CMAKE, "zcheck.c": ZLIB_C})
    result = build.launch(repo, rebuild=True)
    assert result.ok, (result.failure, [(a.phase, a.command[:60]) for a in result.transcript])
    actions = [a.command for a in result.transcript if a.phase == "action"]
    assert len(actions) == 2 and actions[0].endswith(" bc") and "zlib1g-dev" in actions[1]
    assert not [a for a in result.transcript if a.phase == "rollback"]
    steps = " ".join(result.env.setup_steps)
    assert " bc" in steps and "zlib1g-dev" in steps


def test_a_repo_with_no_tests_fails_with_a_reason(tmp_path, docker_engine, tmp_home):
    repo = _write_repo(tmp_path / "notests", {
        "pyproject.toml": "[project]\nname = 'nothing'\nversion = '0.1'\n",
        "nothing/__init__.py": "X = 1\n"})
    result = build.launch(repo)
    assert not result.ok
    assert result.failure and "no tests" in result.failure.lower()


def test_bad_sources_are_one_line_errors(tmp_path, tmp_home):
    with pytest.raises(build.LaunchError, match="no such path"):
        build.launch(tmp_path / "missing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(build.LaunchError, match="not a git repository"):
        build.launch(tmp_path / "plain")


def test_the_check_probes_the_directories_of_tests_that_are_all_new(tmp_path):
    """A test patch that only adds files (new tests, fixtures) still gets a check: the
    nearest directory of each that exists, never the root; files that exist are taken alone."""
    from repolaunch.build import probe_paths

    (tmp_path / "pkg" / "test" / "fixtures").mkdir(parents=True)
    (tmp_path / "pkg" / "test" / "a.test.js").write_text("")
    new = ["pkg/test/fixtures/misc/x/input.js", "pkg/test/fixtures/misc/y/input.js"]
    assert probe_paths(tmp_path, new) == ["pkg/test/fixtures"]
    assert probe_paths(tmp_path, [*new, "pkg/test/a.test.js"]) == ["pkg/test/a.test.js"]
    assert probe_paths(tmp_path, ["brand_new.js"]) == []
