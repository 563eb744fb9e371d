"""Rust, the language added as one module: detection, era, the cargo runner, diagnoses."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from envs.models import Language
from repolaunch import languages
from repolaunch.detect import detect
from repolaunch.diagnose import diagnose
from repolaunch.languages import rust
from repolaunch.mine.git import FileRole, classify_path
from tests.repolaunch.conftest import write_files

MANIFEST = '[package]\nname = "units"\nversion = "0.1.0"\nedition = "2021"\n'


def _crate(root: Path, manifest: str = MANIFEST, lock: str | None = "version = 3\n") -> Path:
    files = {"Cargo.toml": manifest, "src/lib.rs": "pub fn f() -> u8 { 1 }\n" * 20,
             "tests/io.rs": "#[test]\nfn reads() {}\n"}
    if lock is not None:
        files["Cargo.lock"] = lock
    write_files(root, files)
    return root


def test_the_language_is_one_registered_module(tmp_path: Path) -> None:
    assert "rust" in languages.names()
    assert languages.from_github("Rust") is Language.RUST
    assert languages.extension_map()[".rs"] is Language.RUST
    assert classify_path("src/parser_tests.rs") is FileRole.TEST
    assert classify_path("src/parser.rs") is FileRole.CODE
    det = detect(_crate(tmp_path))
    assert det.primary is Language.RUST
    assert (det.build_system, det.package_manager, det.test_framework) == \
        ("cargo", "cargo", "libtest")
    assert det.extra["lockfile"] == "Cargo.lock"


def test_the_toolchain_follows_the_lock_file_and_the_manifest(tmp_path: Path) -> None:
    def suite(name: str, manifest: str = MANIFEST, lock: str | None = "version = 3\n"):
        repo = _crate(tmp_path / name, manifest, lock)
        return languages.plan(repo, detect(repo)).suite

    assert suite("locked") is None  # the project's own era: the default suite
    assert suite("unlocked", lock=None) == "trixie"  # crates as of today: today's rustc
    assert suite("lock4", lock="version = 4\n") == "trixie"
    assert suite("msrv", MANIFEST + 'rust-version = "1.74"\n') == "trixie"
    assert suite("ed2024", MANIFEST.replace("2021", "2024")) == "trixie"
    repo = tmp_path / "locked"
    assert languages.plan(repo, detect(repo), suite="bullseye").suite == "bullseye"


def test_the_plan_fetches_and_compiles_at_build_and_runs_offline(tmp_path: Path) -> None:
    repo = _crate(tmp_path)
    plan = languages.plan(repo, detect(repo))
    assert plan.image_family == "rust" and plan.report_format == "libtest"
    assert any(s.rstrip().endswith("cargo fetch; fi") for s in plan.setup_steps)
    assert any(s.startswith("cargo test") and s.endswith("--no-run") for s in plan.setup_steps)
    assert "--offline" in plan.check_command
    assert plan.env["RUSTFLAGS"] == "-Awarnings"
    assert plan.per_test_command == f"{rust.RUNNER} {{tests}}"


def _fake_cargo(tmp_path: Path) -> dict[str, str]:
    """A `cargo` that records where it ran and with what."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    cargo = bindir / "cargo"
    cargo.write_text('#!/bin/sh\necho "cargo@$(pwd):$*" >> "$CARGO_LOG"\n')
    cargo.chmod(cargo.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}",
            "CARGO_LOG": str(tmp_path / "calls")}


def _run_runner(ws: Path, env: dict[str, str], *args: str) -> list[str]:
    runner = ws.parent / "cargo-tests"
    runner.write_text(rust._RUNNER_SOURCE)
    subprocess.run([sys.executable, str(runner), *args], cwd=ws, env=env, check=True,
                   capture_output=True)
    log = Path(env["CARGO_LOG"])
    calls = log.read_text().splitlines()
    log.unlink()
    return [c.replace(str(ws), "WS") for c in calls]


def test_the_runner_maps_test_files_to_targets_of_their_own_package(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_files(ws, {
        "Cargo.toml": '[workspace]\nmembers = ["core", "cli"]\n',
        "core/Cargo.toml": MANIFEST, "core/src/lib.rs": "", "core/tests/io.rs": "",
        "core/tests/net/main.rs": "",
        "cli/Cargo.toml": MANIFEST.replace("units", "cli"), "cli/src/main.rs": "",
    })
    env = _fake_cargo(tmp_path)
    base = "test --offline --no-fail-fast"
    assert _run_runner(ws, env) == [f"cargo@WS:{base} --workspace"]
    assert _run_runner(ws, env, "core/tests/io.rs", "core/tests/net/main.rs",
                       "cli/src/main.rs", "core/tests/data/case.json") == [
        f"cargo@WS/core:{base} --test io --test net",
        f"cargo@WS/cli:{base} --lib --bins",
    ]
    # names (the ids libtest prints) are exact filters
    assert _run_runner(ws, env, "tests::parses", "reads") == [
        f"cargo@WS:{base} --workspace -- tests::parses reads --exact"]


def test_the_runner_gives_a_test_file_the_features_and_cfgs_it_requires(
        tmp_path: Path) -> None:
    """A test file that compiles its tests only under ``#![cfg(...)]`` runs with what that
    asks for: the package's declared features, and custom cfgs through RUSTFLAGS; negated
    conditions, built-in cfgs and undeclared features are not asked for."""
    ws = tmp_path / "ws"
    write_files(ws, {
        "Cargo.toml": MANIFEST + '[features]\nfull = ["rt"]\nrt = []\n',
        "src/lib.rs": "",
        "tests/metrics.rs": '#![warn(unused)]\n#![cfg(all(feature = "full", my_unstable, '
                            'not(target_os = "wasi"), not(miri)))]\n#![cfg(feature = "gone")]\n',
        "tests/plain.rs": "#[test]\nfn a() {}\n",
        "tests/spread.rs": '#![cfg(all(\n    feature = "rt",\n    my_unstable,\n'
                           '    not(target_os = "wasi"),\n))]\n',
    })
    env = _fake_cargo(tmp_path)
    (tmp_path / "bin" / "cargo").write_text(  # says the RUSTFLAGS it ran with too
        '#!/bin/sh\necho "cargo@$(pwd):$* [$RUSTFLAGS]" >> "$CARGO_LOG"\n')
    env["RUSTFLAGS"] = "-Awarnings"
    base = "test --offline --no-fail-fast"
    assert _run_runner(ws, env, "tests/metrics.rs") == [
        f"cargo@WS:{base} --test metrics --features full [-Awarnings --cfg my_unstable]"]
    assert _run_runner(ws, env, "tests/plain.rs") == [f"cargo@WS:{base} --test plain [-Awarnings]"]
    assert _run_runner(ws, env, "tests/spread.rs") == [  # an attribute over several lines
        f"cargo@WS:{base} --test spread --features rt [-Awarnings --cfg my_unstable]"]


def test_toolchain_errors_move_the_era(tmp_path: Path) -> None:
    repo = _crate(tmp_path)
    plan = languages.plan(repo, detect(repo)).model_copy(update={"suite": "bookworm"})
    too_old = ("error: package `tokio v1.38.0` cannot be built because it requires rustc 1.70 "
               "or newer, while the currently active rustc version is 1.63.0\n")
    assert [(a.kind, a.value) for a in diagnose(too_old, plan=plan, phase="setup")] == \
        [("suite", "trixie")]
    on_trixie = plan.model_copy(update={"suite": "trixie"})
    assert [a.kind for a in diagnose(too_old, plan=on_trixie, phase="setup")] == ["unavailable"]
    crate_breaks = ("error[E0282]: type annotations needed for `Box<_>`\n"
                    "  --> /opt/envfactory/cargo/registry/src/index.crates.io-6f17d22bba15001f/"
                    "time-0.3.20/src/format_description/parse/mod.rs:83:9\n")
    assert [(a.kind, a.value) for a in diagnose(crate_breaks, plan=on_trixie, phase="setup")] \
        == [("suite", "bookworm"), ("suite", "bullseye")]
    # the project's own code failing is not the toolchain's era
    own = "error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n"
    assert diagnose(own, plan=on_trixie, phase="setup") == []
    # a crate too new for the newest rustc here (a feature not stable yet) steps down a
    # release instead: crates resolved today cannot be helped by an older toolchain
    too_new = ("error[E0658]: `let` expressions in this position are unstable\n"
               "   --> /opt/envfactory/cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
               "ar_archive_writer-0.5.1/src/archive_writer.rs:591:20\n")
    (action,) = diagnose(too_new, plan=on_trixie, phase="setup")
    assert action.kind == "shell" and "ar_archive_writer 0.5.1" in action.value
    assert "cargo" in action.value and "--precise" in action.value


ITOA_LOCK = ('version = 3\n\n[[package]]\nname = "itoa"\nversion = "1.0.9"\n'
             'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
             'checksum = "af150ab688ff2122fcef229be89cb50dd66af9e01a4ff320cc137eecc9bacc38"\n\n'
             '[[package]]\nname = "units"\nversion = "0.1.0"\ndependencies = [\n "itoa",\n]\n')
ITOA_MANIFEST = MANIFEST + '\n[dependencies]\nitoa = "=1.0.9"\n'


def test_locked_crates_are_vendored_for_the_default_toolchain(tmp_path: Path) -> None:
    """cargo before 1.68 asks GitHub for crates.io's index, which cannot be reached here: the
    crates a lock file pins are vendored from static.crates.io, so the project's own era's
    toolchain (the default suite) builds it; a build that still wants the index (a lock
    file the manifest outgrew) moves to trixie."""
    repo = _crate(tmp_path / "deps", ITOA_MANIFEST, ITOA_LOCK)
    plan = languages.plan(repo, detect(repo))
    assert plan.suite is None and "vendored" in plan.notes[0]
    assert any(rust.VENDOR in step for step in plan.setup_steps)
    on_bookworm = plan.model_copy(update={"suite": "bookworm"})
    out = "error: failed to fetch\nCaused by:\n  Unable to update registry `crates-io`\n"
    assert [(a.kind, a.value) for a in diagnose(out, plan=on_bookworm, phase="setup")] == \
        [("suite", "trixie")]
    # a locked crate too new for this rustc: the project wants a newer toolchain
    too_new = ("error[E0658]: use of unstable library feature\n"
               "  --> /opt/envfactory/cargo/vendor/itoa-1.0.9/src/lib.rs:1:1\n")
    assert [(a.kind, a.value) for a in diagnose(too_new, plan=on_bookworm, phase="setup")] \
        == [("suite", "trixie")]


def test_the_vendor_script_reads_every_lock_format(tmp_path: Path) -> None:
    body = rust._VENDOR_SOURCE
    probe = body.split("home = ")[0] + "\nprint(sorted(pins.items()))\n"
    sha = "a" * 64
    v1 = ('[[package]]\nname = "units"\nversion = "0.1.0"\n\n[[package]]\nname = "memchr"\n'
          'version = "2.0.1"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n'
          '\n[[package]]\nname = "own"\nversion = "0.2.0"\n'
          'source = "git+https://github.com/x/own#abc"\n\n[metadata]\n'
          f'"checksum memchr 2.0.1 (registry+https://github.com/rust-lang/crates.io-index)" = "{sha}"\n')
    for lock, want in ((v1, [(("memchr", "2.0.1"), sha)]),
                       (ITOA_LOCK, [(("itoa", "1.0.9"), ITOA_LOCK.split('checksum = "')[1][:64])])):
        (tmp_path / "Cargo.lock").write_text(lock)
        out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == repr(want)
    (tmp_path / "Cargo.lock").write_text('version = 3\n\n[[package]]\nname = "units"\n'
                                         'version = "0.1.0"\n')
    none = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True)
    assert none.returncode == 3  # nothing to vendor: cargo fetches (nothing) itself


@pytest.mark.docker
@pytest.mark.network
def test_a_locked_crate_with_a_registry_dependency_builds_on_the_default_suite(
        tmp_path: Path, docker_engine, tmp_home) -> None:
    from repolaunch import build

    repo = _crate(tmp_path / "itoa", ITOA_MANIFEST, ITOA_LOCK)
    write_files(repo, {"src/lib.rs": "pub fn f() -> u8 { 1 }\n",
                       "tests/io.rs": "#[test]\nfn formats() {\n"
                                      "    assert_eq!(itoa::Buffer::new().format(42u8), \"42\");\n}\n"})
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "crate"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    result = build.launch(repo)
    assert result.ok, result.failure
    assert result.plan.suite in (None, "bookworm")
    assert {r.test_id: r.status.value for r in result.results} == {"formats": "PASSED"}
    from envs.instance import open_instance

    with open_instance(result.env) as sb:  # the crate came from the vendored directory
        assert "envfactory-vendor" in sb.exec(f"cat {rust.CARGO_HOME}/config.toml").stdout
        assert sb.exec(f"test -f {rust.CARGO_HOME}/vendor/itoa-1.0.9/Cargo.toml").exit_code == 0


def test_the_step_down_finds_what_needs_a_crate_in_the_lock_file(tmp_path: Path) -> None:
    """When no earlier release of a too-new crate fits what depends on it, the step-down
    tries those registry dependents (read from Cargo.lock), never the project itself."""
    script = rust.step_down("ar_archive_writer", "0.5.1")
    body = script.split("<<'ENVFACTORY_PY'\n", 1)[1].rsplit("ENVFACTORY_PY", 1)[0]
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n\n[[package]]\nname = "ar_archive_writer"\nversion = "0.5.1"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n\n'
        '[[package]]\nname = "psm"\nversion = "0.1.31"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        'dependencies = [\n "ar_archive_writer",\n "cc",\n]\n\n'
        '[[package]]\nname = "other"\nversion = "1.0.0"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        'dependencies = [\n "ar_archive_writer 0.4.2",\n]\n\n'
        '[[package]]\nname = "units"\nversion = "0.1.0"\ndependencies = [\n "ar_archive_writer",\n]\n')
    probe = body.split("def step(")[0] + "\nprint(dependents(sys.argv[1], sys.argv[2]))\n"
    out = subprocess.run([sys.executable, "-c", probe, "ar_archive_writer", "0.5.1"],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[('psm', '0.1.31')]"
