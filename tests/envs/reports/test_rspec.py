"""rspec --format json."""

from __future__ import annotations

import json

import pytest

from envs import reports
from envs.reports import ReportParseError

from ._helpers import E, F, P, S, statuses


def _ex(n, desc, full, status, **extra):
    return {
        "id": f"./spec/rubocop/cop/style_spec.rb[1:{n}]",
        "description": desc,
        "full_description": full,
        "status": status,
        "file_path": "./spec/rubocop/cop/style_spec.rb",
        "line_number": 10 + n,
        "run_time": 0.0012,
        "pending_message": extra.pop("pending_message", None),
        **extra,
    }


RSPEC = "Run options: exclude {:broken=>true}\n" + json.dumps(
    {
        "version": "3.13.0",
        "seed": 4242,
        "examples": [
            _ex(
                1, "registers an offense", "RuboCop::Cop::Style::Foo registers an offense", "passed"
            ),
            _ex(
                2,
                "autocorrects `x [1]` — ünïcode",
                "RuboCop::Cop::Style::Foo autocorrects `x [1]` — ünïcode",
                "failed",
                exception={
                    "class": "RSpec::Expectations::ExpectationNotMetError",
                    "message": "expected: 1\n     got: 2",
                    "backtrace": ["./spec/x.rb:3"],
                },
            ),
            _ex(
                3,
                "is pending",
                "RuboCop::Cop::Style::Foo is pending",
                "pending",
                pending_message="Temporarily skipped with xit",
            ),
            # the same description twice (shared examples run per config); worst wins
            _ex(
                4, "registers an offense", "RuboCop::Cop::Style::Foo registers an offense", "failed"
            ),
        ],
        "summary": {
            "duration": 0.05,
            "example_count": 4,
            "failure_count": 2,
            "pending_count": 1,
            "errors_outside_of_examples_count": 1,
        },
        "summary_line": "4 examples, 2 failures, 1 pending, 1 error occurred outside of examples",
        "messages": [
            "An error occurred while loading ./spec/rubocop/cop/broken_spec.rb.\nFailure/Error: require 'nope'"
        ],
    }
)

SAMPLES = [("rspec-json", RSPEC)]


def test_rspec_ids_are_full_descriptions():
    report = reports.parse("rspec-json", RSPEC, exit_code=1)
    assert statuses(report) == {
        "RuboCop::Cop::Style::Foo registers an offense": F,
        "RuboCop::Cop::Style::Foo autocorrects `x [1]` — ünïcode": F,
        "RuboCop::Cop::Style::Foo is pending": S,
        "./spec/rubocop/cop/broken_spec.rb": E,
    }
    assert (
        report.by_id["RuboCop::Cop::Style::Foo is pending"].message
        == "Temporarily skipped with xit"
    )
    assert set(report.warning_codes) == {"duplicate", "suite-failed"}


@pytest.mark.parametrize(
    ("variant", "first", "status"),
    [
        ("description", "registers an offense", F),  # merged with its failing twin
        ("id", "./spec/rubocop/cop/style_spec.rb[1:1]", P),  # ids are unique
    ],
)
def test_id_field_variants(variant, first, status):
    report = reports.parse(f"rspec-json:{variant}", RSPEC)
    assert report.results[0].test_id == first
    assert report.results[0].status is status


def test_errors_outside_examples_without_a_file_name():
    doc = {
        "examples": [],
        "summary": {"errors_outside_of_examples_count": 1},
        "messages": ["NameError: uninitialized constant Foo"],
    }
    report = reports.parse("rspec-json", json.dumps(doc), exit_code=1)
    assert statuses(report) == {"<errors outside of examples>": E}
    assert report.consistent


def test_truncated_rspec_json_is_salvaged():
    cut = RSPEC.index('"description": "is pending"')
    report = reports.parse("rspec-json", RSPEC[:cut])
    assert len(report.results) == 2 and report.warning_codes == ("truncated",)


def test_not_rspec():
    with pytest.raises(ReportParseError):
        reports.parse("rspec-json", "Finished in 0.1 seconds\n3 examples, 0 failures\n")
