package org.example.golden;

public final class Calc {
    private Calc() {}

    public static int add(int a, int b) {
        return a + b;
    }

    public static int divide(int a, int b) {
        return a / b;
    }
}
