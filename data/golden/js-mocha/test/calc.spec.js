const assert = require('assert');
const { add, divide } = require('../calc');

describe('calc', function () {
  it('adds numbers', function () {
    assert.strictEqual(add(2, 3), 5);
  });

  it('add is wrong', function () {
    assert.strictEqual(add(2, 2), 5);
  });

  it('throws unexpectedly', function () {
    divide(1, 0);
  });

  it.skip('skipped test', function () {});

  it('pending without a body');

  it('skips itself', function () {
    this.skip();
  });

  [[1, 2, 3], [2, 2, 5]].forEach(([a, b, want]) => {
    it(`add(${a}, ${b}) is ${want}`, function () {
      assert.strictEqual(add(a, b), want);
    });
  });

  describe('inner [bracket] ünïcode', function () {
    it('deep name with spaces', function () {
      assert.strictEqual(add(0, 0), 0);
    });
  });
});

describe('broken hook', function () {
  before(function () {
    throw new Error('setup failed');
  });

  it('never runs', function () {});
});
