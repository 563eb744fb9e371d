"""A Tcl runtest harness's console ([ok]: / [err]: / [skip]: lines)."""

from __future__ import annotations

from envs import reports

from ._helpers import F, P, S, statuses

CONSOLE = """\
Cleanup: may take some time... OK
Starting test server at port 21079
[ready]: 4242
Testing unit/type/zset
\x1b[0;32m[ok]\x1b[0m: Check encoding - listpack (1 ms)
[ok]: ZSET basic ZADD and score update - listpack (2 ms)
[err]: BZPOPMIN with variadic args - listpack in tests/unit/type/zset.tcl
Expected 'b' to equal or match 'a'
[skip]: ZADD - Variadic version (large)
[ignore]: ZRANGESTORE - src key wrong type: large-memory tag
[ok]: ZADD XX and NX are not compatible - #10762 fix (0 ms)
[1/1 \x1b[0;33mdone\x1b[0m]: unit/type/zset (12 seconds)

                   The End

Execution time of different units:
  12 seconds - unit/type/zset

!!! WARNING The following tests failed:

*** [err]: BZPOPMIN with variadic args - listpack in tests/unit/type/zset.tcl
Expected 'b' to equal or match 'a'
Cleanup: may take some time... OK
"""

SAMPLES = [("tcltest", CONSOLE)]


def test_each_test_line_is_one_test_named_as_printed():
    got = statuses(reports.parse("tcltest", CONSOLE))
    assert got == {
        "Check encoding - listpack": P,
        "ZSET basic ZADD and score update - listpack": P,
        "BZPOPMIN with variadic args - listpack": F,
        "ZADD - Variadic version (large)": S,
        "ZADD XX and NX are not compatible - #10762 fix": P,
    }


def test_the_closing_list_of_failures_is_not_a_duplicate_warning():
    report = reports.parse("tcltest", CONSOLE)
    assert not [w for w in report.warnings if "duplicate" in w]


def test_a_dead_test_client_is_said():
    text = "[ok]: a (1 ms)\n[exception]: Executing test client: I/O error\n"
    report = reports.parse("tcltest", text)
    assert statuses(report) == {"a": P}
    assert "aborted" in report.warning_codes
