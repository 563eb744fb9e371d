package org.example.golden;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CalcTest {
    @Test
    void addsNumbers() {
        assertEquals(5, Calc.add(2, 3));
    }

    @Test
    void addIsWrong() {
        assertEquals(5, Calc.add(2, 2));
    }

    @Test
    void dividesByZero() {
        // an exception that is not an assertion: Surefire writes <error>
        assertEquals(0, Calc.divide(1, 0));
    }

    @Test
    @Disabled("not today")
    void disabledTest() {
        assertTrue(false);
    }

    @Test
    void assumptionFails() {
        Assumptions.assumeTrue(false, "only on Sundays");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, -3})
    void isPositive(int n) {
        assertTrue(n > 0);
    }

    @ParameterizedTest(name = "{0} + {1} = {2}")
    @CsvSource({"1, 1, 2", "2, 2, 5"})
    void addsCsv(int a, int b, int want) {
        assertEquals(want, Calc.add(a, b));
    }

    @Test
    @DisplayName("ünïcode [display] name")
    void displayNamed() {
        assertEquals(2, Calc.add(1, 1));
    }

    @Nested
    class Inner {
        @Test
        void innerPasses() {
            assertEquals(0, Calc.add(0, 0));
        }
    }
}
