"""Test ids as SWE-bench writes them, and a form two machines' ids can be compared in.

SWE-bench's pytest log parsers read ``-rA`` summary lines and keep ``line.split()[1]``, so an
id is cut at its first whitespace (``test_x[a b]`` -> ``test_x[a``). Its Jest parser reads
the verbose reporter's ``✓``/``✕`` lines, which hold the test's title alone, so a Jest id is
its last `` > `` part (``scope > rename > works`` -> ``works``, the form of SWE-bench
Multilingual's Jest-run lists). Its other runners' parsers (Django's ``test (module.Class)``,
sympy's, Go's, Maven's, Vitest's, karma's ...) keep ids whole. `swebench_id` applies these.

`comparable_id` is for comparing lists made on different machines: besides the cut, an
absolute path inside a parameter (a fixture file's location on the machine that ran the
tests) is shortened to its last part, as SWE-bench's ``parse_log_pytest_options`` does;
a JavaScript id's leading test file (SWE-bench's Vitest ids have it, ours do not) is left
out.
"""

from __future__ import annotations

import re

# report formats whose SWE-bench log parser is the pytest one (whitespace-split lines)
_PYTEST_FORMATS = ("pytest", "junit:pytest")
_OPTION = re.compile(r"^(.*?)\[(.*)\]$", re.S)
# report formats whose SWE-bench log parser keeps the title alone (Jest's verbose lines)
_TITLE_FORMATS = ("jest-json",)
JS_SEP = " > "


def is_pytest_format(report_format: str) -> bool:
    return report_format in _PYTEST_FORMATS


def swebench_id(test_id: str, report_format: str = "pytest") -> str:
    """The id SWE-bench's log parser for this format would write."""
    if report_format.split(":", 1)[0] in _TITLE_FORMATS:
        return test_id.rsplit(JS_SEP, 1)[-1]
    if not is_pytest_format(report_format):
        return test_id
    parts = test_id.split(None, 1)
    return parts[0] if parts else test_id


# A JavaScript id that starts with its test file ("src/a.spec.ts > suite > case"): SWE-bench's
# Vitest parser writes the file first, ours the suite path alone.
_JS_FILE = re.compile(r"^[^\s>]+\.(?:[cm]?[jt]sx?|vue|svelte) > ")
_JS_FORMATS = ("jest-json", "vitest-json", "mocha-json")


def comparable_id(test_id: str, report_format: str = "pytest") -> str:
    """`swebench_id`, with absolute paths in parameters reduced to their last part (and
    a JavaScript id's leading test file left out)."""
    cut = swebench_id(test_id, report_format)
    if report_format.split(":", 1)[0] in _JS_FORMATS:
        cut = _JS_FILE.sub("", cut, count=1)
    m = _OPTION.match(cut)
    if not m:
        return cut
    main, option = m.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]
    return f"{main}[{option}]"
