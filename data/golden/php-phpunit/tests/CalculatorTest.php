<?php

declare(strict_types=1);

namespace Golden\Tests;

use Golden\Calculator;
use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/../src/Calculator.php';

final class CalculatorTest extends TestCase
{
    public function testAddsNumbers(): void
    {
        $this->assertSame(5, Calculator::add(2, 3));
    }

    public function testAddIsWrong(): void
    {
        $this->assertSame(5, Calculator::add(2, 2));
    }

    public function testThrowsUnexpectedly(): void
    {
        // DivisionByZeroError: an error, not a failed assertion
        $this->assertSame(0, Calculator::divide(1, 0));
    }

    public function testSkipped(): void
    {
        $this->markTestSkipped('not today');
    }

    public function testIncomplete(): void
    {
        $this->markTestIncomplete('later');
    }

    /**
     * @dataProvider sums
     */
    public function testSum(int $a, int $b, int $want): void
    {
        $this->assertSame($want, Calculator::add($a, $b));
    }

    public function sums(): array
    {
        return [
            'one plus two' => [1, 2, 3],
            'ünïcode [bracket]' => [1, 1, 2],
            [2, 2, 5],
        ];
    }
}
