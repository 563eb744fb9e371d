"""Java samples: Maven + JUnit 5 (Surefire) and plain javac + JUnit 4 (no build file).

Test ids are `package.Class#method` (`junit:java`).
"""

from __future__ import annotations

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from data.samples import replaced as _sub
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED




# --------------------------------------------------------------------------- java-money

_MONEY_POM = _d('''
    <?xml version="1.0" encoding="UTF-8"?>
    <project xmlns="http://maven.apache.org/POM/4.0.0"
             xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
             xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
      <modelVersion>4.0.0</modelVersion>

      <groupId>org.example</groupId>
      <artifactId>money</artifactId>
      <version>0.1.0-SNAPSHOT</version>
      <packaging>jar</packaging>

      <properties>
        <maven.compiler.release>11</maven.compiler.release>
        <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
        <junit.version>5.7.1</junit.version>
      </properties>

      <dependencies>
        <dependency>
          <groupId>org.junit.jupiter</groupId>
          <artifactId>junit-jupiter</artifactId>
          <version>${junit.version}</version>
          <scope>test</scope>
        </dependency>
      </dependencies>

      <build>
        <plugins>
          <plugin>
            <groupId>org.apache.maven.plugins</groupId>
            <artifactId>maven-compiler-plugin</artifactId>
            <version>3.8.1</version>
          </plugin>
          <plugin>
            <groupId>org.apache.maven.plugins</groupId>
            <artifactId>maven-surefire-plugin</artifactId>
            <version>3.0.0-M5</version>
          </plugin>
        </plugins>
      </build>
    </project>
''')

_MONEY_0 = _d('''
    package org.example.money;

    import java.util.Objects;

    /** An amount of money in minor units (cents) of one currency. */
    public final class Money {
        private final long cents;
        private final String currency;

        public Money(long cents, String currency) {
            this.cents = cents;
            this.currency = Objects.requireNonNull(currency);
        }

        /** Parses "12.34 EUR", "-3.25 USD" or "7 GBP". */
        public static Money parse(String text) {
            String[] parts = text.trim().split("\\\\s+");
            if (parts.length != 2) {
                throw new IllegalArgumentException("expected '<amount> <currency>': " + text);
            }
            String amount = parts[0];
            int dot = amount.indexOf('.');
            long whole = Long.parseLong(dot < 0 ? amount : amount.substring(0, dot));
            long fraction = 0;
            if (dot >= 0) {
                fraction = Long.parseLong((amount.substring(dot + 1) + "00").substring(0, 2));
            }
            long cents = whole * 100 + (whole < 0 ? -fraction : fraction);
            return new Money(cents, parts[1]);
        }

        public long getCents() {
            return cents;
        }

        public String getCurrency() {
            return currency;
        }

        public Money plus(Money other) {
            if (!currency.equals(other.currency)) {
                throw new IllegalArgumentException(currency + " + " + other.currency);
            }
            return new Money(cents + other.cents, currency);
        }

        /** Splits into n parts that differ by at most one cent, the larger ones first. */
        public Money[] allocate(int n) {
            Money[] out = new Money[n];
            long base = cents / n;
            long remainder = cents % n;
            for (int i = 0; i < n; i++) {
                out[i] = new Money(base + (i < remainder ? 1 : 0), currency);
            }
            return out;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Money && ((Money) o).cents == cents
                    && ((Money) o).currency.equals(currency);
        }

        @Override
        public int hashCode() {
            return Objects.hash(cents, currency);
        }

        @Override
        public String toString() {
            long abs = Math.abs(cents);
            return String.format("%s%d.%02d %s", cents < 0 ? "-" : "", abs / 100, abs % 100,
                    currency);
        }
    }
''')

_MONEY_FIXED = _sub(
    _sub(_MONEY_0,
         "        String amount = parts[0];\n",
         "        String amount = parts[0];\n"
         '        boolean negative = amount.startsWith("-");\n'),
    "        long cents = whole * 100 + (whole < 0 ? -fraction : fraction);\n"
    "        return new Money(cents, parts[1]);\n",
    "        long cents = Math.abs(whole) * 100 + fraction;\n"
    "        return new Money(negative ? -cents : cents, parts[1]);\n",
)

_MONEY_NEGATE = _sub(
    _MONEY_FIXED,
    "    public Money plus(Money other) {\n",
    "    public Money negate() {\n"
    "        return new Money(-cents, currency);\n"
    "    }\n"
    "\n"
    "    public Money plus(Money other) {\n",
)

_MONEY_TEST_0 = _d('''
    package org.example.money;

    import static org.junit.jupiter.api.Assertions.assertEquals;
    import static org.junit.jupiter.api.Assertions.assertThrows;

    import org.junit.jupiter.api.Test;

    class MoneyTest {
        @Test
        void parsesWholeAndFraction() {
            assertEquals(1234, Money.parse("12.34 EUR").getCents());
        }

        @Test
        void parsesWithoutFraction() {
            assertEquals(700, Money.parse("7 GBP").getCents());
        }

        @Test
        void parsesNegativeAmounts() {
            assertEquals(-325, Money.parse("-3.25 USD").getCents());
        }

        @Test
        void addsSameCurrency() {
            assertEquals(new Money(300, "EUR"), new Money(100, "EUR").plus(new Money(200, "EUR")));
        }

        @Test
        void rejectsMixedCurrencies() {
            assertThrows(IllegalArgumentException.class,
                    () -> new Money(100, "EUR").plus(new Money(100, "USD")));
        }

        @Test
        void formatsTwoDecimals() {
            assertEquals("12.05 EUR", new Money(1205, "EUR").toString());
        }
    }
''')

_MONEY_TEST_FIX = _sub(
    _MONEY_TEST_0,
    "    @Test\n    void addsSameCurrency() {\n",
    "    @Test\n"
    "    void parsesNegativeAmountsBelowOne() {\n"
    '        assertEquals(-50, Money.parse("-0.50 USD").getCents());\n'
    "    }\n"
    "\n"
    "    @Test\n    void addsSameCurrency() {\n",
)

_MONEY_TEST_HEAD = _sub(
    _MONEY_TEST_FIX,
    '        assertEquals("12.05 EUR", new Money(1205, "EUR").toString());\n    }\n',
    '        assertEquals("12.05 EUR", new Money(1205, "EUR").toString());\n    }\n'
    "\n"
    "    @Test\n"
    "    void negateFlipsTheSign() {\n"
    '        assertEquals(new Money(-250, "EUR"), new Money(250, "EUR").negate());\n'
    "    }\n",
)

_ALLOCATE_TEST = _d('''
    package org.example.money;

    import static org.junit.jupiter.api.Assertions.assertArrayEquals;
    import static org.junit.jupiter.api.Assertions.assertEquals;

    import java.util.Arrays;
    import org.junit.jupiter.api.Disabled;
    import org.junit.jupiter.api.Test;

    class AllocateTest {
        private static long[] cents(Money[] parts) {
            return Arrays.stream(parts).mapToLong(Money::getCents).toArray();
        }

        @Test
        void splitsEvenly() {
            assertArrayEquals(new long[] {300, 300, 300}, cents(new Money(900, "EUR").allocate(3)));
        }

        @Test
        void givesRemainderToFirstParts() {
            assertArrayEquals(new long[] {334, 333, 333}, cents(new Money(1000, "EUR").allocate(3)));
        }

        @Test
        void allocatesNegativeAmounts() {
            // known bug: the remainder of a negative amount is lost
            assertEquals(-1000, Arrays.stream(cents(new Money(-1000, "EUR").allocate(3))).sum());
        }

        @Disabled("weighted allocation is not implemented yet (#12)")
        @Test
        void allocatesByWeights() {
            assertEquals(3, new Money(1000, "EUR").allocate(3).length);
        }
    }
''')

_MONEY_README_0 = _d('''
    # money

    Amounts of money in cents, one currency each.

        mvn test
''')

_MONEY_README_1 = _MONEY_README_0 + "\n" + _d('''
    ## Rounding

    `parse` keeps two decimals and drops the rest. `allocate(n)` splits an amount into `n`
    parts that differ by at most one cent; the first parts get the extra cents.
''')


@sample
def sample_java_money() -> SampleRepo:
    m, a = "org.example.money.MoneyTest#", "org.example.money.AllocateTest#"
    main = "src/main/java/org/example/money/Money.java"
    test = "src/test/java/org/example/money/MoneyTest.java"
    return SampleRepo(
        name="java-money",
        language=Language.JAVA,
        build_system="maven",
        test_framework="junit5",
        description="Maven + JUnit 5 (Surefire 3.0.0-M5); dependencies from Maven Central",
        needs_network=True,
        commits=(
            Commit("Initial Money type: parse, plus, allocate", {
                "pom.xml": _MONEY_POM,
                "README.md": _MONEY_README_0,
                ".gitignore": "target/\n",
                main: _MONEY_0,
                test: _MONEY_TEST_0,
            }, date="2021-04-12T08:15:00+00:00", tag="v0.1.0"),
            Commit("Explain rounding rules in the README", {"README.md": _MONEY_README_1},
                   date="2021-10-30T17:45:00+00:00"),
            Commit("Fix parse dropping the sign of amounts between -1 and 0 (#7)\n\nFixes #6", {
                main: _MONEY_FIXED,
                test: _MONEY_TEST_FIX,
            }, date="2022-06-14T10:00:00+00:00"),
            Commit("Add tests for allocate",
                   {"src/test/java/org/example/money/AllocateTest.java": _ALLOCATE_TEST},
                   date="2023-03-02T13:20:00+00:00"),
            Commit("Add Money.negate", {main: _MONEY_NEGATE, test: _MONEY_TEST_HEAD},
                   date="2024-02-19T09:40:00+00:00", tag="v0.2.0"),
        ),
        expected={
            m + "parsesWholeAndFraction": P,
            m + "parsesWithoutFraction": P,
            m + "parsesNegativeAmounts": P,
            m + "parsesNegativeAmountsBelowOne": P,
            m + "addsSameCurrency": P,
            m + "rejectsMixedCurrencies": P,
            m + "formatsTwoDecimals": P,
            m + "negateFlipsTheSign": P,
            a + "splitsEvenly": P,
            a + "givesRemainderToFirstParts": P,
            a + "allocatesNegativeAmounts": F,
            a + "allocatesByWeights": S,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.OTHER, decoy="docs_only"),
            Planted(
                commit=2, issues=(6,),
                fail_to_pass=(m + "parsesNegativeAmountsBelowOne",),
                pass_to_pass=(m + "parsesWholeAndFraction", m + "parsesWithoutFraction",
                              m + "parsesNegativeAmounts", m + "addsSameCurrency",
                              m + "rejectsMixedCurrencies", m + "formatsTwoDecimals"),
            ),
            Planted(commit=3, kind=TaskKind.OTHER, decoy="tests_only"),
        ),
        issues=(
            Issue(6, "Money.parse(\"-0.50 USD\") is positive",
                  "Parsing `-0.50 USD` gives 50 cents, not -50. `-1.50` works.",
                  ("The sign is read from the whole part, and -0 is 0.",),
                  created_at="2022-05-30T07:00:00+00:00"),
        ),
    )


# --------------------------------------------------------------------------- java-roman

_ROMAN_0 = _d('''
    package org.example.roman;

    /** Roman numerals, 1 to 3999. */
    public final class Roman {
        private static final int[] VALUES = {1000, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
        private static final String[] SYMBOLS =
                {"M", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"};

        private Roman() {
        }

        public static String toRoman(int n) {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < VALUES.length; i++) {
                while (n >= VALUES[i]) {
                    out.append(SYMBOLS[i]);
                    n -= VALUES[i];
                }
            }
            return out.toString();
        }

        public static int fromRoman(String s) {
            int total = 0;
            for (int i = 0; i < s.length(); i++) {
                int v = value(s.charAt(i));
                if (i + 1 < s.length() && v < value(s.charAt(i + 1))) {
                    total -= v;
                } else {
                    total += v;
                }
            }
            return total;
        }

        private static int value(char c) {
            switch (c) {
                case 'I': return 1;
                case 'V': return 5;
                case 'X': return 10;
                case 'L': return 50;
                case 'C': return 100;
                case 'D': return 500;
                case 'M': return 1000;
                default: throw new IllegalArgumentException("not a roman digit: " + c);
            }
        }
    }
''')

_ROMAN_1 = _sub(
    _sub(_ROMAN_0, "{1000, 500, 400,", "{1000, 900, 500, 400,"),
    '{"M", "D", "CD",', '{"M", "CM", "D", "CD",',
)

_ROMAN_2 = _sub(
    _sub(
        _sub(_ROMAN_1, "package org.example.roman;\n",
             "package org.example.roman;\n\nimport java.util.Map;\n"),
        "    private Roman() {\n",
        "    private static final Map<Character, Integer> DIGITS = Map.of(\n"
        "            'I', 1, 'V', 5, 'X', 10, 'L', 50, 'C', 100, 'D', 500, 'M', 1000);\n"
        "\n"
        "    private Roman() {\n",
    ),
    _ROMAN_0[_ROMAN_0.index("    private static int value(char c) {"):_ROMAN_0.rindex("}")],
    "    private static int value(char c) {\n"
    "        Integer v = DIGITS.get(c);\n"
    "        if (v == null) {\n"
    '            throw new IllegalArgumentException("not a roman digit: " + c);\n'
    "        }\n"
    "        return v;\n"
    "    }\n",
)

_ROMAN_3 = _sub(_ROMAN_2, "        int total = 0;\n",
                "        if (s.isEmpty()) {\n            return 0;\n        }\n"
                "        int total = 0;\n")

_ROMAN_TEST_0 = _d('''
    package org.example.roman;

    import static org.junit.Assert.assertEquals;

    import org.junit.Test;

    public class RomanTest {
        @Test
        public void convertsSmallNumbers() {
            assertEquals("IV", Roman.toRoman(4));
            assertEquals("IX", Roman.toRoman(9));
            assertEquals("XIV", Roman.toRoman(14));
        }

        @Test
        public void convertsLargeNumbers() {
            assertEquals("MMXXIV", Roman.toRoman(2024));
        }

        @Test
        public void parsesSubtractiveForms() {
            assertEquals(94, Roman.fromRoman("XCIV"));
        }

        @Test
        public void roundTripsSmallNumbers() {
            for (int n = 1; n < 400; n++) {
                assertEquals(n, Roman.fromRoman(Roman.toRoman(n)));
            }
        }
    }
''')

_ROMAN_TEST_1 = _sub(
    _ROMAN_TEST_0,
    "    @Test\n    public void parsesSubtractiveForms() {\n",
    "    @Test\n"
    "    public void convertsNineHundreds() {\n"
    '        assertEquals("CM", Roman.toRoman(900));\n'
    '        assertEquals("MCMXCIV", Roman.toRoman(1994));\n'
    "    }\n"
    "\n"
    "    @Test\n    public void parsesSubtractiveForms() {\n",
)

_ROMAN_TEST_3 = _sub(
    _ROMAN_TEST_1,
    "    @Test\n    public void roundTripsSmallNumbers() {\n",
    "    @Test\n"
    "    public void fromRomanOfEmptyIsZero() {\n"
    '        assertEquals(0, Roman.fromRoman(""));\n'
    "    }\n"
    "\n"
    "    @Test\n    public void roundTripsSmallNumbers() {\n",
)

_ROMAN_RANGE_TEST = _d('''
    package org.example.roman;

    import static org.junit.Assert.assertEquals;

    import org.junit.Ignore;
    import org.junit.Test;

    public class RangeTest {
        @Test
        public void convertsTheLargest() {
            assertEquals("MMMCMXCIX", Roman.toRoman(3999));
        }

        @Test(expected = IllegalArgumentException.class)
        public void rejectsZero() {
            // known bug (#8): toRoman(0) returns ""
            Roman.toRoman(0);
        }

        @Ignore("lowercase numerals are not supported yet (#9)")
        @Test
        public void parsesLowercase() {
            assertEquals(14, Roman.fromRoman("xiv"));
        }
    }
''')

_ROMAN_README = _d('''
    # roman

    Roman numerals for Java, no build tool:

        javac -d out -cp junit-4.13.2.jar:hamcrest-core-1.3.jar $(find src test -name '*.java')
        java -cp out:junit-4.13.2.jar:hamcrest-core-1.3.jar org.junit.runner.JUnitCore \\
            org.example.roman.RomanTest
''')


@sample
def sample_java_roman() -> SampleRepo:
    r, g = "org.example.roman.RomanTest#", "org.example.roman.RangeTest#"
    main = "src/org/example/roman/Roman.java"
    test = "test/org/example/roman/RomanTest.java"
    return SampleRepo(
        name="java-roman",
        language=Language.JAVA,
        build_system="javac",
        test_framework="junit4",
        description="plain javac (no build file) + JUnit 4; JUnit jars from Maven Central",
        needs_network=True,
        commits=(
            Commit("Initial roman numerals", {
                "README.md": _ROMAN_README,
                ".gitignore": "out/\n*.class\n",
                main: _ROMAN_0,
                test: _ROMAN_TEST_0,
            }, date="2021-01-20T11:00:00+00:00"),
            Commit("Fix toRoman for the nine hundreds (#2)\n\nFixes #1",
                   {main: _ROMAN_1, test: _ROMAN_TEST_1}, date="2021-08-11T16:10:00+00:00"),
            Commit("Look roman digits up in a map", {main: _ROMAN_2},
                   date="2022-09-27T09:30:00+00:00"),
            Commit("Fix fromRoman rejecting empty input (#5)\n\nFixes #4",
                   {main: _ROMAN_3, test: _ROMAN_TEST_3}, date="2023-05-05T14:00:00+00:00"),
            Commit("Add range tests", {"test/org/example/roman/RangeTest.java": _ROMAN_RANGE_TEST},
                   date="2024-03-12T10:50:00+00:00"),
        ),
        expected={
            r + "convertsSmallNumbers": P,
            r + "convertsLargeNumbers": P,
            r + "convertsNineHundreds": P,
            r + "parsesSubtractiveForms": P,
            r + "fromRomanOfEmptyIsZero": P,
            r + "roundTripsSmallNumbers": P,
            g + "convertsTheLargest": P,
            g + "rejectsZero": F,
            g + "parsesLowercase": S,
        },
        planted=(
            Planted(
                commit=1, issues=(1,),
                fail_to_pass=(r + "convertsNineHundreds",),
                pass_to_pass=(r + "convertsSmallNumbers", r + "convertsLargeNumbers",
                              r + "parsesSubtractiveForms", r + "roundTripsSmallNumbers"),
            ),
            Planted(commit=2, kind=TaskKind.REFACTOR, decoy="refactor"),
            Planted(commit=3, issues=(4,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(1, "toRoman(1900) gives MDCCCC",
                  "900 should be written CM: `toRoman(1994)` must be `MCMXCIV`.",
                  created_at="2021-07-30T12:00:00+00:00"),
            Issue(4, "fromRoman(\"\") throws?",
                  "I think `fromRoman(\"\")` throws StringIndexOutOfBoundsException.",
                  ("Could not reproduce: it returns 0. Adding a test and an explicit check.",),
                  created_at="2023-04-28T08:00:00+00:00"),
        ),
    )
