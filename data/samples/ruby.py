"""Ruby samples: minitest through a Rakefile's test task, and RSpec with a Gemfile, a gemspec
and a .rspec file (both resolve from the gems the ruby image ships)."""

from __future__ import annotations

from textwrap import indent

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from envs.models import Language, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED



def _piece(text: str, pad: str) -> str:
    """A block added to a file body: a blank line, then the block at the body's depth."""
    return "\n" + indent(_d(text), pad)


# --------------------------------------------------------------------------- ruby-roman

_RAKEFILE = _d("""
    require "rake/testtask"

    Rake::TestTask.new(:test) do |t|
      t.libs << "test"
      t.libs << "lib"
      t.test_files = FileList["test/**/*_test.rb"]
      t.warning = false
    end

    task default: :test
""")

_FROM_V0 = "digits.sum\n"
_FROM_V1 = _d("""
    total = 0
    digits.each_with_index do |digit, i|
      following = digits[i + 1]
      total += following && following > digit ? -digit : digit
    end
    total
""")


def _roman(from_body: str, normalize: str = "text.upcase") -> str:
    body = indent(from_body, "    ")
    return _d("""
        # Roman numerals, 1..3999.
        module Roman
          NUMERALS = {
            1000 => "M", 900 => "CM", 500 => "D", 400 => "CD", 100 => "C", 90 => "XC",
            50 => "L", 40 => "XL", 10 => "X", 9 => "IX", 5 => "V", 4 => "IV", 1 => "I"
          }.freeze
          VALUES = { "M" => 1000, "D" => 500, "C" => 100, "L" => 50, "X" => 10, "V" => 5,
                     "I" => 1 }.freeze

          def self.to_roman(number)
            raise ArgumentError, "out of range: #{number}" unless (1..3999).cover?(number)

            NUMERALS.reduce(+"") do |out, (value, letters)|
              count, number = number.divmod(value)
              out << (letters * count)
            end
          end

          def self.from_roman(text)
            digits = @NORMALIZE@.chars.map do |c|
              VALUES.fetch(c) { raise ArgumentError, "bad numeral: #{c}" }
            end
    """).replace("@NORMALIZE@", normalize) + body + "  end\nend\n"


_TEST_HELPER = _d("""
    $LOAD_PATH.unshift File.expand_path("../lib", __dir__)
    require "roman"
    require "minitest/autorun"
""")

_ROMAN_TEST = _d("""
    require "test_helper"

    class RomanTest < Minitest::Test
      def test_basic_numerals
        assert_equal "III", Roman.to_roman(3)
        assert_equal "MDCLXVI", Roman.to_roman(1666)
      end

      def test_subtractive
        assert_equal "XIV", Roman.to_roman(14)
        assert_equal "MCMXC", Roman.to_roman(1990)
      end

      def test_from_roman_basic
        assert_equal 1666, Roman.from_roman("MDCLXVI")
      end

      def test_rejects_bad_numerals
        assert_raises(ArgumentError) { Roman.from_roman("ABC") }
      end
""")

_ROMAN_TEST_SUB = _piece("""
      def test_from_roman_subtractive
        assert_equal 14, Roman.from_roman("XIV")
        assert_equal 1990, Roman.from_roman("MCMXC")
      end
""", "  ")

_ROMAN_TEST_LOWER = _piece("""
      def test_from_roman_lowercase
        assert_equal 14, Roman.from_roman("xiv")
      end
""", "  ")

_RANGE_TEST = _d("""
    require "test_helper"

    class RangeTest < Minitest::Test
      def test_zero_raises
        assert_raises(ArgumentError) { Roman.to_roman(0) }
      end

      def test_largest_number
        assert_equal "MMMCMXCIX", Roman.to_roman(3999)
      end

      # Known issue #6: non-canonical numerals are accepted.
      def test_rejects_non_canonical
        assert_raises(ArgumentError) { Roman.from_roman("IIII") }
      end

      def test_unicode_numerals
        skip "Unicode numerals are not supported"
      end
    end
""")


@sample
def sample_ruby_roman() -> SampleRepo:
    commits = (
        Commit(
            "Initial Roman numeral conversions",
            {
                "Rakefile": _RAKEFILE,
                "README.md": "# roman\n\n`Roman.to_roman(14)` is `\"XIV\"`.\n\n    rake test\n",
                "lib/roman.rb": _roman(_FROM_V0),
                "test/test_helper.rb": _TEST_HELPER,
                "test/roman_test.rb": _ROMAN_TEST + "end\n",
            },
            date="2015-03-03T12:00:00+00:00",
        ),
        Commit(
            "Fix from_roman for subtractive pairs (#2)\n\nFixes #1",
            {
                "lib/roman.rb": _roman(_FROM_V1),
                "test/roman_test.rb": _ROMAN_TEST + _ROMAN_TEST_SUB + "end\n",
            },
            date="2016-07-19T08:45:00+00:00",
        ),
        Commit(
            "Handle lowercase numerals (#4)\n\nFixes #3",
            {
                "lib/roman.rb": _roman(_FROM_V1, normalize="text.to_s.strip.upcase"),
                "test/roman_test.rb": _ROMAN_TEST + _ROMAN_TEST_SUB + _ROMAN_TEST_LOWER
                + "end\n",
            },
            date="2018-01-08T17:00:00+00:00",
        ),
        Commit(
            "Add range tests and record known issues",
            {"test/range_test.rb": _RANGE_TEST},
            date="2020-11-11T11:11:00+00:00",
            tag="v1.0.0",
        ),
    )
    base = ("RomanTest#test_basic_numerals", "RomanTest#test_subtractive",
            "RomanTest#test_from_roman_basic", "RomanTest#test_rejects_bad_numerals")
    expected = {t: P for t in base}
    expected.update({
        "RomanTest#test_from_roman_subtractive": P,
        "RomanTest#test_from_roman_lowercase": P,
        "RangeTest#test_zero_raises": P,
        "RangeTest#test_largest_number": P,
        "RangeTest#test_rejects_non_canonical": F,
        "RangeTest#test_unicode_numerals": S,
    })
    return SampleRepo(
        name="ruby-roman",
        language=Language.RUBY,
        build_system="rake",
        test_framework="minitest",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(1,), fail_to_pass=("RomanTest#test_from_roman_subtractive",),
                    pass_to_pass=base),
            Planted(commit=2, issues=(3,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(1, "from_roman gets subtractive numerals wrong",
                  'Roman.from_roman("XIV") returns 16.',
                  ("A smaller digit before a larger one must be subtracted.",),
                  created_at="2016-07-01T10:00:00+00:00"),
            Issue(3, "Lowercase numerals", 'Does Roman.from_roman("xiv") work?',
                  ("It should already; a test would settle it.",),
                  created_at="2017-12-20T10:00:00+00:00"),
            Issue(6, "from_roman accepts IIII", "Non-canonical numerals should be rejected.",
                  created_at="2020-11-01T10:00:00+00:00"),
        ),
        description="Ruby module; Rakefile with Rake::TestTask, minitest",
    )


# --------------------------------------------------------------------------- ruby-wordwrap

_GEMFILE = _d("""
    source "https://rubygems.org"

    gemspec

    group :test do
      gem "rspec", "~> 3.12"
    end
""")

_GEMSPEC = _d("""
    Gem::Specification.new do |spec|
      spec.name = "wordwrap"
      spec.version = "0.3.0"
      spec.summary = "Greedy word wrapping"
      spec.authors = ["envfactory samples"]
      spec.license = "MIT"
      spec.files = Dir["lib/**/*.rb"]
      spec.required_ruby_version = ">= 2.7"
    end
""")


def _wordwrap(long_words_fixed: bool, width_fixed: bool) -> str:
    skip = "" if long_words_fixed else "      next if word.length > width\n\n"
    fits = "line.length + 1 + word.length <= width" if width_fixed else \
        "line.length + word.length <= width"
    return _d("""
        # Greedy word wrapping.
        module WordWrap
          # Wrap text so that no line is longer than width (unless a single word is).
          def self.wrap(text, width)
            lines = []
            line = +""
            text.split(/\\s+/).each do |word|
        """) + skip + _d(f"""
              if line.empty?
                line << word
              elsif {fits}
                line << " " << word
              else
                lines << line
                line = word.dup
              end
            end
            lines << line unless line.empty?
            lines.join("\\n")
          end
        end
    """)


_SPEC_HELPER = _d("""
    $LOAD_PATH.unshift File.expand_path("../lib", __dir__)
    require "wordwrap"

    RSpec.configure do |config|
      config.disable_monkey_patching!
      config.order = :defined
    end
""")

_SPEC_BASE = _d("""
    RSpec.describe WordWrap do
      describe ".wrap" do
        it "keeps short text on one line" do
          expect(WordWrap.wrap("hello world", 20)).to eq("hello world")
        end

        it "breaks lines at the width" do
          expect(WordWrap.wrap("the quick brown fox", 10)).to eq("the quick\\nbrown fox")
        end

        it "collapses runs of whitespace" do
          expect(WordWrap.wrap("a  \\n b", 10)).to eq("a b")
        end
""")

_SPEC_LONG = _piece("""
        it "keeps words longer than the width" do
          expect(WordWrap.wrap("a supercalifragilistic word", 10))
            .to eq("a\\nsupercalifragilistic\\nword")
        end
""", "    ")

_SPEC_WIDTH = _piece("""
        it "never makes a line longer than the width" do
          expect(WordWrap.wrap("aaa bbb", 6)).to eq("aaa\\nbbb")
        end
""", "    ")

_SPEC_KNOWN = _piece("""
        # Known issue #7: long words are not hyphenated.
        it "hyphenates words longer than the width" do
          expect(WordWrap.wrap("supercalifragilistic", 10)).to eq("supercali-\\nfragilist-\\nic")
        end

        xit "measures East Asian wide characters as two columns" do
          expect(WordWrap.wrap("日本語 日本語", 6)).to eq("日本語\\n日本語")
        end
""", "    ")

_SPEC_END = "  end\nend\n"


@sample
def sample_ruby_wordwrap() -> SampleRepo:
    spec_path = "spec/wordwrap_spec.rb"
    commits = (
        Commit(
            "Initial greedy word wrap gem",
            {
                "Gemfile": _GEMFILE,
                "wordwrap.gemspec": _GEMSPEC,
                ".rspec": "--require spec_helper\n",
                ".gitignore": "Gemfile.lock\n/.bundle/\n",
                "README.md": "# wordwrap\n\n`WordWrap.wrap(text, 72)`\n\n    bundle exec rspec\n",
                "lib/wordwrap.rb": _wordwrap(False, False),
                "spec/spec_helper.rb": _SPEC_HELPER,
                spec_path: _SPEC_BASE + _SPEC_END,
            },
            date="2016-02-14T10:00:00+00:00",
            tag="v0.1.0",
        ),
        Commit(
            "Fix words longer than the width being dropped (#3)\n\nFixes #2",
            {
                "lib/wordwrap.rb": _wordwrap(True, False),
                spec_path: _SPEC_BASE + _SPEC_LONG + _SPEC_END,
            },
            date="2017-09-25T13:00:00+00:00",
        ),
        Commit(
            "Fix lines one character longer than the width (#5)\n\nFixes #4",
            {
                "lib/wordwrap.rb": _wordwrap(True, True),
                spec_path: _SPEC_BASE + _SPEC_LONG + _SPEC_WIDTH + _SPEC_END,
            },
            date="2019-03-08T09:30:00+00:00",
            tag="v0.2.0",
        ),
        Commit(
            "Record known issues as specs",
            {spec_path: _SPEC_BASE + _SPEC_LONG + _SPEC_WIDTH + _SPEC_KNOWN + _SPEC_END},
            date="2021-08-30T15:15:00+00:00",
        ),
    )
    pre = "WordWrap.wrap "
    base = tuple(pre + d for d in ("keeps short text on one line", "breaks lines at the width",
                                   "collapses runs of whitespace"))
    long_words = pre + "keeps words longer than the width"
    width = pre + "never makes a line longer than the width"
    expected = {t: P for t in base}
    expected.update({
        long_words: P,
        width: P,
        pre + "hyphenates words longer than the width": F,
        pre + "measures East Asian wide characters as two columns": S,
    })
    return SampleRepo(
        name="ruby-wordwrap",
        language=Language.RUBY,
        build_system="bundler",
        test_framework="rspec",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(2,), fail_to_pass=(long_words,), pass_to_pass=base),
            Planted(commit=2, issues=(4,), fail_to_pass=(width,),
                    pass_to_pass=(*base, long_words)),
        ),
        issues=(
            Issue(2, "Long words disappear",
                  'WordWrap.wrap("a supercalifragilistic word", 10) loses the long word.',
                  ("They should get a line of their own.",),
                  created_at="2017-09-10T10:00:00+00:00"),
            Issue(4, "Lines are one character too long",
                  'WordWrap.wrap("aaa bbb", 6) gives a 7-character line.',
                  ("The joining space is not counted.",),
                  created_at="2019-03-01T10:00:00+00:00"),
            Issue(7, "Hyphenate long words", "Break words longer than the width with hyphens.",
                  created_at="2021-08-20T10:00:00+00:00"),
        ),
        description="Ruby gem; Gemfile + gemspec + .rspec, RSpec",
    )
