"""RSpec ``--format json``: ``examples[]``.

The id is ``full_description`` (``Foo#add adds two numbers``); ``rspec-json:description``
uses the example's own description and ``rspec-json:id`` RSpec's id
(``./spec/foo_spec.rb[1:2]``) -- SWE-bench's jq transforms use ``description`` for some
repos. Status: passed, failed, pending (-> SKIPPED). The same description can occur
several times; the worst status is kept. Files that failed to load (counted in
``errors_outside_of_examples_count``) become ERROR results named by their path, or
``<errors outside of examples>`` when the messages name none.
"""

from __future__ import annotations

import re

from envs.models import TestStatus
from envs.reports._util import as_str, load_json, salvage_objects
from envs.reports.registry import ParseContext, ReportParseError, register

_STATUS = {"passed": TestStatus.PASSED, "failed": TestStatus.FAILED, "pending": TestStatus.SKIPPED}
_LOAD_ERROR = re.compile(r"An error occurred while loading (\S+?)\.?(?:\s|$)")
OUTSIDE_ID = "<errors outside of examples>"
_FIELDS = {"full_description": "full_description", "description": "description", "id": "id"}


def _add(ctx: ParseContext, example: object, field: str) -> None:
    if not isinstance(example, dict):
        return
    raw = as_str(example.get("status")).lower()
    status = _STATUS.get(raw)
    test_id = as_str(example.get(field)) or as_str(example.get("full_description"))
    if status is None:
        ctx.warn("unknown-status", f"{test_id!r} has status {raw!r}; left out")
        return
    message = None
    exc = example.get("exception")
    if isinstance(exc, dict):
        message = as_str(exc.get("message")) or as_str(exc.get("class"))
    elif status is TestStatus.SKIPPED:
        message = as_str(example.get("pending_message")) or None
    ctx.add(test_id, status, duration=example.get("run_time"), message=message)


def _is_report(doc: object) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("examples"), list)


@register(
    "rspec-json",
    kind="structured",
    variants=tuple(_FIELDS),
    description="rspec --format json",
)
def parse_rspec_json(text: str, ctx: ParseContext) -> None:
    field = _FIELDS[ctx.variant or "full_description"]
    try:
        doc = load_json(text, "rspec-json", _is_report)
    except ReportParseError:
        salvaged = [e for e in salvage_objects(text, "id") if "status" in e]
        if not salvaged:
            raise ReportParseError(
                "rspec-json: no examples array (not an RSpec JSON report)"
            ) from None
        for example in salvaged:
            _add(ctx, example, field)
        ctx.warn("truncated", f"the JSON document is incomplete; salvaged {len(salvaged)} examples")
        return
    for example in doc["examples"]:
        _add(ctx, example, field)
    summary = doc.get("summary")
    outside = summary.get("errors_outside_of_examples_count") if isinstance(summary, dict) else None
    if isinstance(outside, int) and not isinstance(outside, bool) and outside > 0:
        messages = doc.get("messages")
        text_messages = [as_str(m) for m in messages] if isinstance(messages, list) else []
        files = [f for m in text_messages for f in _LOAD_ERROR.findall(m)]
        for path in files:
            ctx.add(path, TestStatus.ERROR, message="failed to load")
        if not files:
            # keep the failure visible (and the report consistent with rspec's exit code)
            ctx.add(OUTSIDE_ID, TestStatus.ERROR, message="\n".join(text_messages) or None)
        ctx.warn(
            "suite-failed",
            f"{outside} errors outside of examples" + (f": {', '.join(files)}" if files else ""),
        )
