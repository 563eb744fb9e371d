"""minitest -v output."""

from __future__ import annotations

from envs import reports

from ._helpers import E, F, P, S, statuses

MINITEST = """\
Run options: -v --seed 12345

# Running:

TestSite#test_static_files = 0.01 s = .
TestSite#test_render_with_spaces in name = 0.00 s = F
Jekyll::TestFilters#test_0001_escapes ünïcode [html] = 0.02 s = .
TestSite#test_boom = 0.00 s = E
TestSite#test_pending = 0.00 s = S
Jekyll Drops::SiteDrop#test_noisy = hello from the test
0.03 s = .

Finished in 0.062000s, 96.7742 runs/s, 193.5484 assertions/s.

  1) Failure:
TestSite#test_render_with_spaces in name [test/test_site.rb:42]:
Expected: 1
  Actual: 2

  2) Error:
TestSite#test_boom:
RuntimeError: boom
    test/test_site.rb:50:in `test_boom'

6 runs, 12 assertions, 1 failures, 1 errors, 1 skips
"""

SAMPLES = [("minitest", MINITEST)]


def test_minitest_ids_are_class_hash_method():
    report = reports.parse("minitest", MINITEST, exit_code=1)
    assert statuses(report) == {
        "TestSite#test_static_files": P,
        "TestSite#test_render_with_spaces in name": F,
        "Jekyll::TestFilters#test_0001_escapes ünïcode [html]": P,
        "TestSite#test_boom": E,
        "TestSite#test_pending": S,
        "Jekyll Drops::SiteDrop#test_noisy": P,  # output split the line
    }
    assert report.by_id["TestSite#test_static_files"].duration == 0.01
    assert report.consistent
