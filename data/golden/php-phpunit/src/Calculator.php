<?php

declare(strict_types=1);

namespace Golden;

final class Calculator
{
    public static function add(int $a, int $b): int
    {
        return $a + $b;
    }

    public static function divide(int $a, int $b): int
    {
        return intdiv($a, $b);
    }
}
