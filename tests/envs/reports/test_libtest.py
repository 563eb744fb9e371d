"""Rust's libtest output, as `cargo test` prints it (the shapes captured from cargo 1.95 and
1.63; the crates are made up)."""

from __future__ import annotations

import re

from envs import reports

from ._helpers import F, P, S, statuses

# cargo test --no-fail-fast 2>&1: three binaries, in the order cargo runs them
MULTI_BINARY = """\
   Compiling inikit v0.3.0 (/testbed)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.84s
     Running unittests src/lib.rs (target/debug/deps/inikit-5f0c2a1e9b7d3c44)

running 7 tests
test parser::tests::parses_section_header ... ok
test parser::tests::rejects_unclosed_section - should panic ... ok
test tests::map_syntax_and_ignored_suffix_work_together ... ok
test tests::test_x ... FAILED
test value::tests::parses_booleans ... ok
test value::tests::slow_roundtrip ... ignored
test value::tests::windows_paths ... ignored, needs a Windows host

failures:

---- tests::test_x stdout ----
reading [core]

thread 'tests::test_x' (4121) panicked at src/lib.rs:88:9:
assertion `left == right` failed: key outside a section
  left: None
 right: Some("core")
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::test_x

test result: FAILED. 4 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
     Running tests/roundtrip.rs (target/debug/deps/roundtrip-0d9e8b7a6c5f4e3d)

running 2 tests
test roundtrip_preserves_comments ... ok
test roundtrip_of_empty_file ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests inikit

running 4 tests
test src/lib.rs - parse (line 12) ... ok
test src/lib.rs - Ini::get (line 40) - compile ... ok
test src/lib.rs - Ini (line 25) - compile fail ... ok
test src/value.rs - value::Value::as_bool (line 9) ... FAILED

failures:

---- src/value.rs - value::Value::as_bool (line 9) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (4180) panicked at src/value.rs:6:1:
assertion failed: Value::from("yes").as_bool().unwrap()
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace



failures:
    src/value.rs - value::Value::as_bool (line 9)

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.35s

error: doctest failed, to rerun pass `--doc`
error: 2 targets failed:
    `--lib`
    `--doc`
"""

# cargo test -- --test-threads=1 --nocapture: the name is printed before the test runs,
# so what the test prints (not captured now) splits its line
INTERLEAVED = """\
     Running tests/cli.rs (target/debug/deps/cli-77aa31c0f2b9e8d1)

running 4 tests
test prints_help ... usage: inikit [FILE]
ok
test noisy_failure ... reading config.ini

thread 'noisy_failure' (5210) panicked at tests/cli.rs:30:5:
expected an error for line 3
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
FAILED
test quiet ... ok
test status_on_a_later_line ... progress: 50%
progress: 100%
ok

failures:

failures:
    noisy_failure

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s

error: test failed, to rerun pass `--test cli`
"""

# a binary whose test files do not compile: cargo runs nothing at all
COMPILE_ERROR = """\
   Compiling inikit v0.3.0 (/testbed)
error[E0425]: cannot find function `parse_strict` in this scope
 --> tests/strict.rs:5:13
  |
5 |     let v = parse_strict("a = 1");
  |             ^^^^^^^^^^^^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `inikit` (test "strict") due to 1 previous error
"""

# rustc 1.63 and cargo 1.65 (Debian bookworm's): the panic message inside the "panicked at"
# line, no thread id
OLD_CARGO = """\
   Compiling inikit v0.3.0 (/testbed)
    Finished test [unoptimized + debuginfo] target(s) in 0.90s
     Running unittests src/lib.rs (target/debug/deps/inikit-1c5e0c2a11b8f4c0)

running 2 tests
test tests::parses_empty ... ok
test tests::parses_comment ... FAILED

failures:

---- tests::parses_comment stdout ----
thread 'tests::parses_comment' panicked at 'assertion failed: `(left == right)`
  left: `1`,
 right: `0`', src/lib.rs:40:9
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::parses_comment

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
"""

# (not COMPILE_ERROR: a sample must have results, see test_properties)
SAMPLES = [("libtest", MULTI_BINARY), ("libtest", INTERLEAVED), ("libtest", OLD_CARGO)]


def test_ids_and_statuses_across_binaries():
    report = reports.parse("libtest", MULTI_BINARY, exit_code=101)
    assert statuses(report) == {
        "parser::tests::parses_section_header": P,
        "parser::tests::rejects_unclosed_section": P,  # "- should panic" is not in the id
        "tests::map_syntax_and_ignored_suffix_work_together": P,
        "tests::test_x": F,
        "value::tests::parses_booleans": P,
        "value::tests::slow_roundtrip": S,
        "value::tests::windows_paths": S,
        "roundtrip_preserves_comments": P,
        "roundtrip_of_empty_file": P,
        "src/lib.rs - parse (line 12)": P,
        "src/lib.rs - Ini::get (line 40)": P,  # a no_run doc-test: "- compile" is its mode
        "src/lib.rs - Ini (line 25)": P,
        "src/value.rs - value::Value::as_bool (line 9)": F,
    }
    assert report.consistent
    assert report.warnings == ()  # --no-fail-fast: every binary ran


def test_ids_are_what_swebench_multilingual_keys_on():
    """Its cargo parser: ``test (\\S+) ... (ok|FAILED|ignored)`` (doc-tests, whose names
    have spaces, are kept whole here)."""
    swebench = re.compile(r"test (\S+) \.\.\. (ok|FAILED|ignored)")
    theirs = {m.group(1) for m in swebench.finditer(MULTI_BINARY)}
    ours = {t for t in statuses(reports.parse("libtest", MULTI_BINARY)) if " " not in t}
    # theirs misses the should_panic test, whose line goes on after the name
    assert ours - {"parser::tests::rejects_unclosed_section"} == theirs


def test_a_failure_message_is_the_panic_without_the_backtrace():
    report = reports.parse("libtest", MULTI_BINARY, exit_code=101)
    message = report.by_id["tests::test_x"].message
    assert message.startswith("reading [core]\n\nthread 'tests::test_x' (4121) panicked")
    assert "key outside a section" in message and 'right: Some("core")' in message
    doc = report.by_id["src/value.rs - value::Value::as_bool (line 9)"].message
    assert "assertion failed: Value::from" in doc
    assert report.by_id["value::tests::windows_paths"].message == "needs a Windows host"
    assert report.by_id["tests::map_syntax_and_ignored_suffix_work_together"].message is None


def test_a_backtrace_is_left_out_of_the_message():
    text = MULTI_BINARY.replace(
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        "stack backtrace:\n   0: __rustc::rust_begin_unwind\n   1: inikit::tests::test_x\n",
        1,
    )
    message = reports.parse("libtest", text).by_id["tests::test_x"].message
    assert message.endswith('right: Some("core")')


def test_a_status_after_the_tests_own_output():
    report = reports.parse("libtest", INTERLEAVED, exit_code=101)
    assert statuses(report) == {
        "prints_help": P,
        "noisy_failure": F,
        "quiet": P,
        "status_on_a_later_line": P,
    }
    # no ---- stdout ---- block: the message is what the test printed before its status
    message = report.by_id["noisy_failure"].message
    assert message.startswith("reading config.ini\n\nthread 'noisy_failure' (5210) panicked")
    assert "expected an error for line 3" in message
    # no --no-fail-fast: had there been binaries after this one, they would not have run
    assert report.warning_codes == ("bail-out",)


def test_a_status_lost_in_output_comes_from_the_failures_list():
    text = INTERLEAVED.replace("backtrace\nFAILED\n", "backtraceFAILED\n")
    text = text.replace("usage: inikit [FILE]\nok\n", "usage: inikit [FILE]ok\n")
    got = statuses(reports.parse("libtest", text, exit_code=101))
    assert got["noisy_failure"] == F  # listed under failures:
    assert "expected an error" in reports.parse("libtest", text).by_id["noisy_failure"].message
    assert got["prints_help"] == P  # the binary finished and does not list it


def test_a_binary_that_does_not_compile_has_no_results_and_a_warning():
    report = reports.parse("libtest", COMPILE_ERROR, exit_code=101)
    assert report.results == ()
    assert report.warning_codes == ("package-failed",)
    assert 'could not compile `inikit` (test "strict")' in report.warnings[0]
    assert report.consistent  # the failed build explains exit 101; no result is graded


def test_older_cargo_and_libtest():
    report = reports.parse("libtest", OLD_CARGO, exit_code=101)
    assert statuses(report) == {"tests::parses_empty": P, "tests::parses_comment": F}
    assert "left: `1`" in report.by_id["tests::parses_comment"].message
    assert report.warning_codes == ("bail-out",)


def test_a_name_in_two_binaries_is_one_id_with_the_worst_status():
    text = (
        "     Running tests/a.rs (target/debug/deps/a-1)\n\nrunning 1 test\n"
        "test smoke ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured;"
        " 0 filtered out; finished in 0.00s\n\n"
        "     Running tests/b.rs (target/debug/deps/b-2)\n\nrunning 1 test\n"
        "test smoke ... FAILED\n\nfailures:\n\n---- smoke stdout ----\nboom\n\n\nfailures:\n"
        "    smoke\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured;"
        " 0 filtered out; finished in 0.00s\n\nerror: 1 target failed:\n    `--test b`\n"
    )
    report = reports.parse("libtest", text, exit_code=101)
    assert statuses(report) == {"smoke": F}
    assert report.by_id["smoke"].message == "boom"
    assert report.warning_codes == ("duplicate",)


def test_stdout_alone_still_separates_the_binaries():
    """Without cargo's stderr (no "Running" lines) each "running N tests" starts a binary."""
    only_stdout = "\n".join(
        line
        for line in MULTI_BINARY.split("\n")
        if not line.startswith(("   ", "    ", "     ", "error:"))
        or line.startswith("    tests::")
        or line.startswith("    src/")
    )
    assert statuses(reports.parse("libtest", only_stdout)) == statuses(
        reports.parse("libtest", MULTI_BINARY)
    )


def test_cargo_stopping_at_the_first_failing_binary_is_a_bail_out():
    fail_fast = MULTI_BINARY[: MULTI_BINARY.index("     Running tests/roundtrip.rs")]
    report = reports.parse("libtest", fail_fast, exit_code=101)
    assert "roundtrip_of_empty_file" not in statuses(report)
    assert report.warning_codes == ("bail-out",)
    assert "unittests src/lib.rs" in report.warnings[0]


def test_a_crashed_binary_fails_the_test_it_was_running():
    crash = (
        "     Running tests/ffi.rs (target/debug/deps/ffi-3b1)\n\nrunning 3 tests\n"
        "test loads ... ok\ntest aborts ... error: test failed, to rerun pass `--test ffi`\n\n"
        "Caused by:\n  process didn't exit successfully: `/testbed/target/debug/deps/ffi-3b1"
        " --test-threads=1` (signal: 6, SIGABRT: process abort signal)\n"
    )
    report = reports.parse("libtest", crash, exit_code=101)
    assert statuses(report) == {"loads": P, "aborts": F}
    assert report.warning_codes == ("package-failed", "bail-out")
    assert "crashed" in report.warnings[0]


def test_a_crash_with_parallel_tests_names_no_test_but_warns():
    crash = (
        "     Running tests/ffi.rs (target/debug/deps/ffi-3b1)\n\nrunning 2 tests\n"
        "error: test failed, to rerun pass `--test ffi`\n\nCaused by:\n"
        "  process didn't exit successfully: `/testbed/target/debug/deps/ffi-3b1`"
        " (signal: 6, SIGABRT: process abort signal)\n"
    )
    report = reports.parse("libtest", crash, exit_code=101)
    assert report.results == ()
    assert report.warning_codes[0] == "package-failed"
    # the crash explains the exit code, so the rest of the report stays trusted; the
    # crashed binary's own tests have no result, which grading counts as not passing
    assert report.consistent and report.part_failed


def test_show_output_successes_are_not_failures():
    text = (
        "running 1 test\ntest tests::prints ... ok\n\nsuccesses:\n\n"
        "---- tests::prints stdout ----\nhello\n\n\nsuccesses:\n    tests::prints\n\n"
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out;"
        " finished in 0.00s\n"
    )
    report = reports.parse("libtest", text, exit_code=0)
    assert statuses(report) == {"tests::prints": P}
    assert report.by_id["tests::prints"].message is None


def test_captured_output_that_looks_like_libtest_is_not_a_result():
    """A failing test that ran cargo itself: its captured output is not this run's."""
    text = MULTI_BINARY.replace(
        "reading [core]\n", "test fake_inner ... ok\nrunning 9 tests\nreading [core]\n", 1
    )
    got = statuses(reports.parse("libtest", text, exit_code=101))
    assert "fake_inner" not in got
    assert got == statuses(reports.parse("libtest", MULTI_BINARY, exit_code=101))


def test_ansi_colours_are_ignored():
    # cargo --color always: terminfo's sgr0 ends each colour with ESC ( B ESC [ m
    coloured = (
        "\x1b[1m\x1b[92m     Running\x1b[0m tests/cli.rs (target/debug/deps/cli-1)\n\n"
        "running 2 tests\ntest a ... \x1b[32mok\x1b(B\x1b[m\n"
        "test b ... \x1b[31mFAILED\x1b(B\x1b[m\n\nfailures:\n    b\n\n"
        "test result: \x1b[31mFAILED\x1b(B\x1b[m. 1 passed; 1 failed; 0 ignored; 0 measured;"
        " 0 filtered out; finished in 0.00s\n"
    )
    report = reports.parse("libtest", coloured, exit_code=101)
    assert statuses(report) == {"a": P, "b": F}
    assert report.warnings == ()


def test_benches_and_report_time():
    text = (
        "running 3 tests\n"
        "test parse_small   ... bench:         312.40 ns/iter (+/- 11.02)\n"
        "test parse_large   ... bench:      41,200.00 ns/iter (+/- 950.10)\n"
        "test tests::timed ... ok <0.125s>\n\n"
        "test result: ok. 1 passed; 0 failed; 0 ignored; 2 measured; 0 filtered out;"
        " finished in 2.10s\n"
    )
    report = reports.parse("libtest", text, exit_code=0)
    assert statuses(report) == {"parse_small": P, "parse_large": P, "tests::timed": P}
    assert report.by_id["tests::timed"].duration == 0.125


def test_a_summary_counting_more_tests_than_were_read_is_a_warning():
    text = (
        "running 3 tests\ntest a ... ok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored;"
        " 0 measured; 0 filtered out; finished in 0.00s\n"
    )
    report = reports.parse("libtest", text)
    assert statuses(report) == {"a": P}
    assert report.warning_codes == ("truncated",)


def test_output_cut_while_a_test_ran():
    text = "running 2 tests\ntest a ... ok\ntest b ... still going"
    report = reports.parse("libtest", text)
    assert statuses(report) == {"a": P}  # b's outcome is unknown
    assert report.warning_codes == ("truncated",)


def test_anything_else_is_an_empty_report_not_an_error():
    for data in (b"", b"\x00\xff\xfe garbage", "PASSED tests/test_x.py::test_y\n",
                 "=== RUN TestX\n--- PASS: TestX (0.00s)\n", "test ...\ntest  ... ok\n"):
        report = reports.parse("libtest", data, exit_code=1)
        assert report.results == ()
