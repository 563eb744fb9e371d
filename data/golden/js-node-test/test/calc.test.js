const test = require('node:test');
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { add, divide } = require('../calc');

test('adds numbers', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('add is wrong', () => {
  assert.strictEqual(add(2, 2), 5);
});

test('throws unexpectedly', () => {
  divide(1, 0);
});

test('skipped test', { skip: 'not today' }, () => {});

test('todo that fails', { todo: 'later' }, () => {
  assert.fail('not done yet');
});

test('todo that passes', { todo: true }, () => {});

describe('math suite', () => {
  it('nested passes', () => {
    assert.strictEqual(add(0, 0), 0);
  });

  describe('inner [bracket] ünïcode', () => {
    it('deep # hash name', () => {});
    it.skip('deep skipped', () => {});
  });

  for (const [a, b, want] of [[1, 2, 3], [2, 2, 5]]) {
    it(`add(${a}, ${b}) is ${want}`, () => {
      assert.strictEqual(add(a, b), want);
    });
  }
});
