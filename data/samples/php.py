"""PHP samples: PHPUnit 9 with Composer autoloading -- a namespaced PSR-4 library with a
phpunit.xml, and a plain tests/ directory with classmap autoloading and no configuration."""

from __future__ import annotations

import json
from textwrap import indent

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED



def _json(doc: dict) -> str:
    return json.dumps(doc, indent=4) + "\n"


# --------------------------------------------------------------------------- php-money

_MONEY_COMPOSER = _json({
    "name": "envfactory/money",
    "description": "Money values in integer cents",
    "type": "library",
    "license": "MIT",
    "require": {"php": ">=8.1"},
    "require-dev": {"phpunit/phpunit": "^9.6"},
    "autoload": {"psr-4": {"Acme\\Money\\": "src/"}},
    "autoload-dev": {"psr-4": {"Acme\\Money\\Tests\\": "tests/"}},
})

_PHPUNIT_XML = _d("""
    <?xml version="1.0" encoding="UTF-8"?>
    <phpunit bootstrap="vendor/autoload.php" colors="false" failOnRisky="true">
      <testsuites>
        <testsuite name="money">
          <directory suffix="Test.php">tests</directory>
        </testsuite>
      </testsuites>
    </phpunit>
""")

_FORMAT_V0 = _d("""
        public function format(): string
        {
            return sprintf('%d.%02d %s', intdiv($this->cents, 100), $this->cents % 100, $this->currency);
        }
""")

_FORMAT_V1 = _d("""
        public function format(): string
        {
            $sign = $this->cents < 0 ? '-' : '';
            $abs = abs($this->cents);
            return sprintf('%s%d.%02d %s', $sign, intdiv($abs, 100), $abs % 100, $this->currency);
        }
""")

_ALLOCATE = "\n" + _d("""
        /** @return list<Money> shares in the given ratios; the remainder goes to the first ones */
        public function allocate(int ...$ratios): array
        {
            $total = array_sum($ratios);
            $parts = [];
            $left = $this->cents;
            foreach ($ratios as $ratio) {
                $share = intdiv($this->cents * $ratio, $total);
                $parts[] = $share;
                $left -= $share;
            }
            for ($i = 0; $left > 0; $i++, $left--) {
                $parts[$i]++;
            }
            return array_map(fn (int $c): self => new self($c, $this->currency), $parts);
        }
""")


def _money(format_: str, allocate: str = "") -> str:
    return _d("""
        <?php

        declare(strict_types=1);

        namespace Acme\\Money;

        final class Money
        {
            public function __construct(private int $cents, private string $currency)
            {
            }

            public static function parse(string $text): self
            {
                if (!preg_match('/^(-?)(\\d+)(?:\\.(\\d{2}))? ([A-Z]{3})$/', $text, $m)) {
                    throw new \\InvalidArgumentException("not an amount: {$text}");
                }
                $cents = (int) $m[2] * 100 + (int) ($m[3] ?: 0);
                return new self($m[1] === '-' ? -$cents : $cents, $m[4]);
            }

            public function cents(): int
            {
                return $this->cents;
            }

            public function currency(): string
            {
                return $this->currency;
            }

            public function add(Money $other): self
            {
                if ($other->currency !== $this->currency) {
                    throw new \\InvalidArgumentException('currencies differ');
                }
                return new self($this->cents + $other->cents, $this->currency);
            }

        """) + indent(format_ + allocate, "    ") + "}\n"


_MONEY_TEST_HEAD = _d("""
    <?php

    declare(strict_types=1);

    namespace Acme\\Money\\Tests;

    use Acme\\Money\\Money;
    use PHPUnit\\Framework\\TestCase;

    final class MoneyTest extends TestCase
    {
        public function testAddsAmounts(): void
        {
            $sum = (new Money(150, 'EUR'))->add(new Money(275, 'EUR'));
            $this->assertSame(425, $sum->cents());
        }

        public function testAddRejectsOtherCurrency(): void
        {
            $this->expectException(\\InvalidArgumentException::class);
            (new Money(1, 'EUR'))->add(new Money(1, 'USD'));
        }

        public function testFormatsAmount(): void
        {
            $this->assertSame('12.34 EUR', (new Money(1234, 'EUR'))->format());
        }

        public function testParsesAmount(): void
        {
            $money = Money::parse('-3.50 USD');
            $this->assertSame(-350, $money->cents());
            $this->assertSame('USD', $money->currency());
        }

        /** @dataProvider invalidAmounts */
        public function testRejectsInvalid(string $text): void
        {
            $this->expectException(\\InvalidArgumentException::class);
            Money::parse($text);
        }

        public static function invalidAmounts(): array
        {
            return [
                'empty' => [''],
                'no currency' => ['12.00'],
                'lowercase currency' => ['1.00 eur'],
            ];
        }
""")

_MONEY_TEST_NEG = _d("""

        public function testFormatsNegativeAmounts(): void
        {
            $this->assertSame('-12.34 EUR', (new Money(-1234, 'EUR'))->format());
            $this->assertSame('-0.05 EUR', (new Money(-5, 'EUR'))->format());
        }
""")

_ALLOCATION_TEST = _d("""
    <?php

    declare(strict_types=1);

    namespace Acme\\Money\\Tests;

    use Acme\\Money\\Money;
    use PHPUnit\\Framework\\TestCase;

    final class AllocationTest extends TestCase
    {
        private static function cents(array $parts): array
        {
            return array_map(fn (Money $m): int => $m->cents(), $parts);
        }

        public function testAllocatesEvenly(): void
        {
            $this->assertSame([50, 50], self::cents((new Money(100, 'EUR'))->allocate(1, 1)));
        }

        public function testAllocatesRemainderToFirst(): void
        {
            $this->assertSame([34, 33, 33], self::cents((new Money(100, 'EUR'))->allocate(1, 1, 1)));
        }

        // Known issue #6: the remainder of a negative amount is lost.
        public function testAllocatesNegativeAmounts(): void
        {
            $parts = self::cents((new Money(-100, 'EUR'))->allocate(1, 2));
            $this->assertSame(-100, array_sum($parts));
        }

        public function testConvertsCurrencies(): void
        {
            $this->markTestSkipped('exchange rates are not available offline');
        }
    }
""")

_MONEY_README = "# money\n\nMoney values in integer cents.\n\n    composer dump-autoload && phpunit\n"
_MONEY_README_DOCS = _MONEY_README + _d("""

    ## Rounding

    Amounts are integer cents, so nothing is ever rounded implicitly. `Money::parse`
    accepts at most two decimals; `format()` always prints two.
""")


@sample
def sample_php_money() -> SampleRepo:
    ns = "Acme\\Money\\Tests\\"
    commits = (
        Commit(
            "Initial Money value object",
            {
                "composer.json": _MONEY_COMPOSER,
                "phpunit.xml": _PHPUNIT_XML,
                ".gitignore": "/vendor/\n.phpunit.result.cache\n",
                "README.md": _MONEY_README,
                "src/Money.php": _money(_FORMAT_V0),
                "tests/MoneyTest.php": _MONEY_TEST_HEAD + "}\n",
            },
            date="2019-01-22T10:00:00+00:00",
            tag="v1.0.0",
        ),
        Commit(
            "Fix format() of negative amounts (#2)\n\nFixes #1",
            {
                "src/Money.php": _money(_FORMAT_V1),
                "tests/MoneyTest.php": _MONEY_TEST_HEAD + _MONEY_TEST_NEG + "}\n",
            },
            date="2020-04-03T09:30:00+00:00",
        ),
        Commit(
            "Document rounding rules (#4)\n\nFixes #3",
            {"README.md": _MONEY_README_DOCS},
            date="2021-06-18T16:00:00+00:00",
        ),
        Commit(
            "Add Money::allocate() (#7)\n\nCloses #5",
            {
                "src/Money.php": _money(_FORMAT_V1, _ALLOCATE),
                "tests/AllocationTest.php": _ALLOCATION_TEST,
            },
            date="2023-02-07T11:45:00+00:00",
            tag="v1.1.0",
        ),
    )
    base = [f"{ns}MoneyTest::{m}" for m in (
        "testAddsAmounts", "testAddRejectsOtherCurrency", "testFormatsAmount", "testParsesAmount",
        'testRejectsInvalid with data set "empty"',
        'testRejectsInvalid with data set "no currency"',
        'testRejectsInvalid with data set "lowercase currency"',
    )]
    expected = {t: P for t in base}
    expected.update({
        f"{ns}MoneyTest::testFormatsNegativeAmounts": P,
        f"{ns}AllocationTest::testAllocatesEvenly": P,
        f"{ns}AllocationTest::testAllocatesRemainderToFirst": P,
        f"{ns}AllocationTest::testAllocatesNegativeAmounts": F,
        f"{ns}AllocationTest::testConvertsCurrencies": S,
    })
    return SampleRepo(
        name="php-money",
        language=Language.PHP,
        build_system="composer",
        test_framework="phpunit",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(1,),
                    fail_to_pass=(f"{ns}MoneyTest::testFormatsNegativeAmounts",),
                    pass_to_pass=tuple(base)),
            Planted(commit=2, kind=TaskKind.OTHER, issues=(3,), decoy="docs_only"),
        ),
        issues=(
            Issue(1, "format() prints negative amounts wrongly",
                  "(new Money(-1234, 'EUR'))->format() gives `-12.-34 EUR`; "
                  "-5 cents gives `0.-5 EUR`.",
                  ("The sign has to be printed once, in front.",),
                  created_at="2020-03-30T10:00:00+00:00"),
            Issue(3, "How does Money round?", "The README does not say.",
                  created_at="2021-06-01T10:00:00+00:00"),
            Issue(5, "Split an amount by ratios", "allocate(1, 1, 1) for shared bills.",
                  created_at="2023-01-10T10:00:00+00:00"),
            Issue(6, "allocate() loses cents of negative amounts",
                  "(new Money(-100, 'EUR'))->allocate(1, 2) sums to -99.",
                  created_at="2023-02-10T10:00:00+00:00"),
        ),
        description="PHP 8.1 value object; PSR-4 autoload, phpunit.xml, namespaced tests",
    )


# --------------------------------------------------------------------------- php-slugify

_SLUG_COMPOSER = _json({
    "name": "envfactory/slugify",
    "description": "URL slugs from titles",
    "license": "MIT",
    "require": {"php": ">=8.0", "ext-mbstring": "*"},
    "autoload": {"classmap": ["src/"]},
})


def _slugify(pattern: str, refactored: bool = False) -> str:
    head = "<?php\n\nfinal class Slugify\n{\n"
    sig = "    public static function slug(string $text, string $separator = '-'): string\n    {\n"
    if not refactored:
        return head + sig + (
            "        $text = strtolower(trim($text));\n"
            f"        $text = preg_replace('{pattern}', $separator, $text);\n"
            "        return trim($text, $separator);\n    }\n}\n"
        )
    return head + f"    private const OTHERS = '{pattern}';\n\n" + sig + (
        "        $slug = self::replaceOthers(strtolower(trim($text)), $separator);\n"
        "        return trim($slug, $separator);\n    }\n\n"
        "    private static function replaceOthers(string $text, string $separator): string\n"
        "    {\n        return preg_replace(self::OTHERS, $separator, $text);\n    }\n}\n"
    )


_SLUG_TEST_HEAD = _d("""
    <?php

    use PHPUnit\\Framework\\TestCase;

    final class SlugifyTest extends TestCase
    {
        public function testLowercases(): void
        {
            $this->assertSame('hello', Slugify::slug('Hello'));
        }

        public function testCustomSeparator(): void
        {
            $this->assertSame('a_b', Slugify::slug('a b', '_'));
        }

        public function testTrimsSeparators(): void
        {
            $this->assertSame('hi', Slugify::slug(' hi! '));
        }

        /** @dataProvider examples */
        public function testExamples(string $title, string $slug): void
        {
            $this->assertSame($slug, Slugify::slug($title));
        }

        public static function examples(): array
        {
            return [['Foo Bar', 'foo-bar'], ['x1 y2', 'x1-y2']];
        }
""")

_SLUG_TEST_COLLAPSE = _d("""

        public function testCollapsesRepeatedSeparators(): void
        {
            $this->assertSame('hello-world', Slugify::slug('Hello,  World'));
        }
""")

_TRUNCATE = _d("""
    <?php

    final class Truncate
    {
        /** At most $max characters of $text, with $ellipsis appended when it was cut. */
        public static function chars(string $text, int $max, string $ellipsis = '…'): string
        {
            if (strlen($text) <= $max) {
                return $text;
            }
            return substr($text, 0, $max) . $ellipsis;
        }
    }
""")

_TRUNCATE_TEST = _d("""
    <?php

    use PHPUnit\\Framework\\TestCase;

    final class TruncateTest extends TestCase
    {
        public function testShortTextUnchanged(): void
        {
            $this->assertSame('abc', Truncate::chars('abc', 5));
        }

        public function testCutsLongText(): void
        {
            $this->assertSame('abc…', Truncate::chars('abcdef', 3));
        }

        // Known issue #9: bytes are counted, not characters.
        public function testCountsCharactersNotBytes(): void
        {
            $this->assertSame('héllo', Truncate::chars('héllo', 5));
        }

        public function testTransliteration(): void
        {
            $this->markTestSkipped('needs the intl extension');
        }
    }
""")


@sample
def sample_php_slugify() -> SampleRepo:
    commits = (
        Commit(
            "Initial slugify helper",
            {
                "composer.json": _SLUG_COMPOSER,
                ".gitignore": "/vendor/\n",
                "README.md": "# slugify\n\n`Slugify::slug('Hello World')` is `hello-world`.\n",
                "src/Slugify.php": _slugify("/[^a-z0-9]/"),
                "tests/SlugifyTest.php": _SLUG_TEST_HEAD + "}\n",
            },
            date="2017-08-08T08:00:00+00:00",
        ),
        Commit(
            "Fix repeated separators not being collapsed (#6)\n\nFixes #5",
            {
                "src/Slugify.php": _slugify("/[^a-z0-9]+/"),
                "tests/SlugifyTest.php": _SLUG_TEST_HEAD + _SLUG_TEST_COLLAPSE + "}\n",
            },
            date="2018-10-12T12:30:00+00:00",
        ),
        Commit(
            "Refactor Slugify internals (#8)\n\nCloses #7",
            {"src/Slugify.php": _slugify("/[^a-z0-9]+/", refactored=True)},
            date="2020-02-29T10:00:00+00:00",
        ),
        Commit(
            "Add Truncate::chars()",
            {"src/Truncate.php": _TRUNCATE, "tests/TruncateTest.php": _TRUNCATE_TEST},
            date="2022-09-01T14:20:00+00:00",
            tag="v2.0.0",
        ),
    )
    base = ("SlugifyTest::testLowercases", "SlugifyTest::testCustomSeparator",
            "SlugifyTest::testTrimsSeparators", "SlugifyTest::testExamples with data set #0",
            "SlugifyTest::testExamples with data set #1")
    expected = {t: P for t in base}
    expected.update({
        "SlugifyTest::testCollapsesRepeatedSeparators": P,
        "TruncateTest::testShortTextUnchanged": P,
        "TruncateTest::testCutsLongText": P,
        "TruncateTest::testCountsCharactersNotBytes": F,
        "TruncateTest::testTransliteration": S,
    })
    return SampleRepo(
        name="php-slugify",
        language=Language.PHP,
        build_system="composer",
        test_framework="phpunit",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(5,),
                    fail_to_pass=("SlugifyTest::testCollapsesRepeatedSeparators",),
                    pass_to_pass=base),
            Planted(commit=2, kind=TaskKind.REFACTOR, issues=(7,), decoy="refactor"),
        ),
        issues=(
            Issue(5, "Repeated separators in slugs",
                  "Slugify::slug('Hello,  World') gives `hello---world`.",
                  ("Runs of other characters should become one separator.",),
                  created_at="2018-10-01T10:00:00+00:00"),
            Issue(7, "Name the pattern in Slugify", "The regex is inlined; give it a name.",
                  created_at="2020-02-10T10:00:00+00:00"),
            Issue(9, "Truncate counts bytes", "Truncate::chars('héllo', 5) cuts the o.",
                  created_at="2022-09-05T10:00:00+00:00"),
        ),
        description="PHP slug helper; classmap autoload, tests/ without phpunit.xml",
    )
