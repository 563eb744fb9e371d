"""The Rust sample: a crate that builds offline, and whose tests report, under a real
``cargo test`` in the rust image read by the ``libtest`` parser, exactly what the generator
planted: at HEAD, and before and after each planted fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from data import samples
from envs import reports
from envs.models import Language, TestStatus

SAMPLE = "rust-spanfmt"


def _file_at(sample: samples.SampleRepo, path: str, commit: int) -> str | None:
    content = None
    for c in sample.commits[: commit + 1]:
        if path in c.files:
            content = c.files[path]
    return content


def test_it_is_the_rust_sample():
    assert [s.name for s in samples.all_samples(Language.RUST)] == [SAMPLE]


def test_the_crate_has_no_dependencies_and_a_version_3_lock_file_at_every_commit():
    sample = samples.get(SAMPLE)
    for i in range(len(sample.commits)):
        manifest = _file_at(sample, "Cargo.toml", i)
        lock = _file_at(sample, "Cargo.lock", i)
        assert manifest is not None and lock is not None
        assert manifest.endswith("[dependencies]\n")  # the last table, and empty
        assert 'edition = "2021"' in manifest
        # cargo before 1.78 cannot read a version 4 lock file
        assert re.search(r"^version = 3$", lock, re.M)
        assert lock.count("[[package]]") == 1


def _cargo_test(sb, ref: str, tests_from: str | None = None) -> reports.ParsedReport:
    """`cargo test` at `ref` (with the test files of `tests_from` over it: a test patch)."""
    over = f" && git checkout -q {tests_from} -- tests" if tests_from else ""
    res = sb.exec(f"git checkout -q -f {ref}{over} && cargo test --offline --no-fail-fast",
                  timeout=600)
    report = reports.parse("libtest", res.output, exit_code=res.exit_code)
    assert report.consistent, res.output[-3000:]
    assert not [w for w in report.warning_codes if w != "duplicate"], report.warnings
    return report


@pytest.mark.docker
def test_cargo_reports_what_was_planted(tmp_path: Path, docker_engine) -> None:
    from envs import images
    from envs.sandbox import Sandbox

    sample = samples.get(SAMPLE)
    repo = samples.write(sample, tmp_path / "src")
    shas = samples.commit_shas(repo)
    env = {"CARGO_TERM_COLOR": "never", "CARGO_HOME": "/tmp/cargo"}
    with Sandbox.start(images.ensure("rust").tag, workdir="/src", env=env) as sb:
        sb.put_dir(repo, "/src")
        head = _cargo_test(sb, shas[-1])
        assert {r.test_id: r.status for r in head.results} == sample.expected
        assert sb.exec("git status --porcelain").output.strip() == ""  # the lock file kept

        passed = TestStatus.PASSED
        for p in sample.planted:
            if p.decoy is not None:
                continue
            base, fix = shas[p.commit - 1], shas[p.commit]
            before = {r.test_id: r.status for r in _cargo_test(sb, base, fix).results}
            after = {r.test_id: r.status for r in _cargo_test(sb, fix).results}
            fail_to_pass = {t for t, s in after.items()
                            if s is passed and before.get(t) is not passed}
            pass_to_pass = {t for t, s in after.items() if s is passed and before.get(t) is passed}
            assert fail_to_pass == set(p.fail_to_pass), p
            assert pass_to_pass == set(p.pass_to_pass), p
