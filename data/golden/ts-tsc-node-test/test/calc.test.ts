import test, { describe, it } from 'node:test';
import assert from 'node:assert';
import { add, divide } from '../src/calc';

interface Row {
  a: number;
  b: number;
  want: number;
}

const rows: Row[] = [
  { a: 1, b: 2, want: 3 },
  { a: 2, b: 2, want: 5 },
];

test('adds numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('add is wrong', () => {
  assert.strictEqual(add(2, 2), 5);
});

test('throws unexpectedly', () => {
  divide(1, 0);
});

test('rejects asynchronously', async () => {
  await Promise.reject(new Error('async failure'));
});

test('skipped test', { skip: true }, () => {});

describe('typed suite ünïcode', () => {
  for (const { a, b, want } of rows) {
    it(`add(${a}, ${b}) is ${want} [row]`, () => {
      assert.strictEqual(add(a, b), want);
    });
  }
  it.todo('todo without a body');
});
