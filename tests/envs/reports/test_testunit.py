"""test-unit -v output (captured from Debian bookworm's ruby 3.1 with its bundled
test-unit 3.5.3)."""

from __future__ import annotations

from envs import reports

from ._helpers import E, F, P, S, statuses

# ruby -Itest test/test_foo.rb -v
VERBOSE = (
    'Loaded suite test/test_foo\n'
    'Started\n'
    'M::TC_Bar: \n'
    '  test_y:\t\t\t\t\t\t.: (0.000652)\n'
    'TC_Foo: \n'
    '  test_data[a]:\t\t\t\t\t\t.: (0.000685)\n'
    '  test_data[b]:\t\t\t\t\t\tF\n'
    '===============================================================================\n'
    'Failure: test_data[b](TC_Foo)\n'
    "test/test_foo.rb:12:in `test_data'\n"
    '      9:   def test_notify; notify("hi"); assert true; end\n'
    '     10:   def test_noisy; puts "hello"; assert true; end\n'
    '     11:   data("a" => 1, "b" => 2)\n'
    '  => 12:   def test_data(d); assert_equal 1, d; end\n'
    '     13:   sub_test_case "ctx" do\n'
    '     14:     test "with spaces" do assert true end\n'
    '     15:   end\n'
    '<1> expected but was\n'
    '<2>\n'
    '===============================================================================\n'
    ': (0.166930)\n'
    '  test_err:\t\t\t\t\t\tE\n'
    '===============================================================================\n'
    'Error: test_err(TC_Foo): RuntimeError: boom\n'
    "test/test_foo.rb:6:in `test_err'\n"
    '     3: class TC_Foo < Test::Unit::TestCase\n'
    '     4:   def test_pass; assert true; end\n'
    '     5:   def test_fail; assert_equal 1, 2; end\n'
    '  => 6:   def test_err; raise "boom"; end\n'
    '     7:   def test_omit; omit("nope"); end\n'
    '     8:   def test_pend; pend("later"); end\n'
    '     9:   def test_notify; notify("hi"); assert true; end\n'
    '===============================================================================\n'
    ': (0.017926)\n'
    '  test_fail:\t\t\t\t\t\tF\n'
    '===============================================================================\n'
    'Failure: test_fail(TC_Foo)\n'
    "test/test_foo.rb:5:in `test_fail'\n"
    "     2: require 'test/unit'\n"
    '     3: class TC_Foo < Test::Unit::TestCase\n'
    '     4:   def test_pass; assert true; end\n'
    '  => 5:   def test_fail; assert_equal 1, 2; end\n'
    '     6:   def test_err; raise "boom"; end\n'
    '     7:   def test_omit; omit("nope"); end\n'
    '     8:   def test_pend; pend("later"); end\n'
    '<1> expected but was\n'
    '<2>\n'
    '===============================================================================\n'
    ': (0.007044)\n'
    '  test_noisy:\t\t\t\t\t\thello\n'
    '.: (0.003870)\n'
    '  test_notify:\t\t\t\t\t\tN\n'
    '===============================================================================\n'
    'Notification: hi [test_notify(TC_Foo)]\n'
    "test/test_foo.rb:9:in `test_notify'\n"
    '===============================================================================\n'
    '.: (0.001808)\n'
    '  test_omit:\t\t\t\t\t\tO\n'
    '===============================================================================\n'
    'Omission: nope [test_omit(TC_Foo)]\n'
    "test/test_foo.rb:7:in `test_omit'\n"
    '===============================================================================\n'
    ': (0.006953)\n'
    '  test_pass:\t\t\t\t\t\t.: (0.000378)\n'
    '  test_pend:\t\t\t\t\t\tP\n'
    '===============================================================================\n'
    'Pending: test_pend(TC_Foo): later\n'
    "test/test_foo.rb:8:in `test_pend'\n"
    '      5:   def test_fail; assert_equal 1, 2; end\n'
    '      6:   def test_err; raise "boom"; end\n'
    '      7:   def test_omit; omit("nope"); end\n'
    '  =>  8:   def test_pend; pend("later"); end\n'
    '      9:   def test_notify; notify("hi"); assert true; end\n'
    '     10:   def test_noisy; puts "hello"; assert true; end\n'
    '     11:   data("a" => 1, "b" => 2)\n'
    '===============================================================================\n'
    ': (0.012072)\n'
    '  ctx: \n'
    '    test: with spaces:\t\t\t\t\t.: (0.001281)\n'
    'TC_Foo::Inner: \n'
    '  test_x:\t\t\t\t\t\t.: (0.000889)\n'
    '\n'
    'Finished in 0.233714894 seconds.\n'
    '-------------------------------------------------------------------------------\n'
    '12 tests, 8 assertions, 2 failures, 1 errors, 1 pendings, 1 omissions, 1 notifications\n'
    '63.6364% passed\n'
    '-------------------------------------------------------------------------------\n'
    '51.34 tests/s, 34.23 assertions/s\n'
)

# the same without -v: progress marks, only the faults are named
PROGRESS = (
    'Loaded suite test/test_foo\n'
    'Started\n'
    '..F\n'
    '===============================================================================\n'
    'Failure: test_data[b](TC_Foo)\n'
    "test/test_foo.rb:12:in `test_data'\n"
    '      9:   def test_notify; notify("hi"); assert true; end\n'
    '     10:   def test_noisy; puts "hello"; assert true; end\n'
    '     11:   data("a" => 1, "b" => 2)\n'
    '  => 12:   def test_data(d); assert_equal 1, d; end\n'
    '     13:   sub_test_case "ctx" do\n'
    '     14:     test "with spaces" do assert true end\n'
    '     15:   end\n'
    '<1> expected but was\n'
    '<2>\n'
    '===============================================================================\n'
    'E\n'
    '===============================================================================\n'
    'Error: test_err(TC_Foo): RuntimeError: boom\n'
    "test/test_foo.rb:6:in `test_err'\n"
    '     3: class TC_Foo < Test::Unit::TestCase\n'
    '     4:   def test_pass; assert true; end\n'
    '     5:   def test_fail; assert_equal 1, 2; end\n'
    '  => 6:   def test_err; raise "boom"; end\n'
    '     7:   def test_omit; omit("nope"); end\n'
    '     8:   def test_pend; pend("later"); end\n'
    '     9:   def test_notify; notify("hi"); assert true; end\n'
    '===============================================================================\n'
    'F\n'
    '===============================================================================\n'
    'Failure: test_fail(TC_Foo)\n'
    "test/test_foo.rb:5:in `test_fail'\n"
    "     2: require 'test/unit'\n"
    '     3: class TC_Foo < Test::Unit::TestCase\n'
    '     4:   def test_pass; assert true; end\n'
    '  => 5:   def test_fail; assert_equal 1, 2; end\n'
    '     6:   def test_err; raise "boom"; end\n'
    '     7:   def test_omit; omit("nope"); end\n'
    '     8:   def test_pend; pend("later"); end\n'
    '<1> expected but was\n'
    '<2>\n'
    '===============================================================================\n'
    'hello\n'
    '.N\n'
    '===============================================================================\n'
    'Notification: hi [test_notify(TC_Foo)]\n'
    "test/test_foo.rb:9:in `test_notify'\n"
    '===============================================================================\n'
    '.O\n'
    '===============================================================================\n'
    'Omission: nope [test_omit(TC_Foo)]\n'
    "test/test_foo.rb:7:in `test_omit'\n"
    '===============================================================================\n'
    '.P\n'
    '===============================================================================\n'
    'Pending: test_pend(TC_Foo): later\n'
    "test/test_foo.rb:8:in `test_pend'\n"
    '      5:   def test_fail; assert_equal 1, 2; end\n'
    '      6:   def test_err; raise "boom"; end\n'
    '      7:   def test_omit; omit("nope"); end\n'
    '  =>  8:   def test_pend; pend("later"); end\n'
    '      9:   def test_notify; notify("hi"); assert true; end\n'
    '     10:   def test_noisy; puts "hello"; assert true; end\n'
    '     11:   data("a" => 1, "b" => 2)\n'
    '===============================================================================\n'
    '..\n'
    'Finished in 0.07542936 seconds.\n'
    '-------------------------------------------------------------------------------\n'
    '12 tests, 8 assertions, 2 failures, 1 errors, 1 pendings, 1 omissions, 1 notifications\n'
    '63.6364% passed\n'
    '-------------------------------------------------------------------------------\n'
    '159.09 tests/s, 106.06 assertions/s\n'
)

SAMPLES = [("testunit", VERBOSE), ("testunit", PROGRESS)]


def test_testunit_ids_are_class_hash_method():
    report = reports.parse("testunit", VERBOSE, exit_code=1)
    assert statuses(report) == {
        "M::TC_Bar#test_y": P,
        "TC_Foo#test_data[a]": P,
        "TC_Foo#test_data[b]": F,
        "TC_Foo#test_err": E,
        "TC_Foo#test_fail": F,
        "TC_Foo#test_noisy": P,  # its output sat between the name and the mark
        "TC_Foo#test_notify": P,  # a notification does not end the test
        "TC_Foo#test_omit": S,
        "TC_Foo#test_pass": P,
        "TC_Foo#test_pend": S,
        "TC_Foo::ctx#test: with spaces": P,  # sub_test_case, printed as "ctx"
        "TC_Foo::Inner#test_x": P,
    }
    assert report.by_id["TC_Foo#test_pass"].duration is not None
    assert report.consistent and not report.warnings
    assert reports.parse("test-unit", VERBOSE).format == "testunit"


def test_progress_output_reports_the_named_faults():
    report = reports.parse("testunit", PROGRESS, exit_code=1)
    assert statuses(report) == {
        "TC_Foo#test_data[b]": F, "TC_Foo#test_err": E, "TC_Foo#test_fail": F,
        "TC_Foo#test_omit": S, "TC_Foo#test_pend": S,
    }


def test_nesting_follows_the_indentation():
    rule = "=" * 79
    text = (
        "TC_A: \n"
        "  test_a:\t\t\t.: (0.1)\n"
        "  Sub: \n"
        "    test_s:\t\t\t.: (0.1)\n"
        "  test_after:\t\t\t.: (0.1)\n"
        "Other::Case: \n"
        "  test_o:\t\t\tE\n"
        f"{rule}\n"
        "Error: test_o(Other::Case): RuntimeError: x\n"
        f"{rule}\n"
        ": (0.2)\n"
        "4 tests, 3 assertions, 0 failures, 1 errors, 0 pendings, 0 omissions, "
        "0 notifications\n"
    )
    report = reports.parse("testunit", text, exit_code=1)
    assert statuses(report) == {"TC_A#test_a": P, "TC_A::Sub#test_s": P,
                                "TC_A#test_after": P, "Other::Case#test_o": E}
    assert report.consistent


def test_a_cut_report_keeps_the_fault_seen_and_warns_of_missing_tests():
    cut = VERBOSE[: VERBOSE.index("Failure: test_fail")] + "Failure: test_fail(TC_Foo)\n"
    cut += "3 tests, 1 assertions, 1 failures, 0 errors, 0 pendings, 0 omissions\n"
    report = reports.parse("testunit", cut, exit_code=1)
    got = statuses(report)
    assert got["TC_Foo#test_fail"] == F and got["TC_Foo#test_err"] == E
