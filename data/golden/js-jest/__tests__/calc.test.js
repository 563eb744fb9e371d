const { add, divide } = require('../calc');

describe('calc', () => {
  test('adds numbers', () => {
    expect(add(2, 3)).toBe(5);
  });

  test('add is wrong', () => {
    expect(add(2, 2)).toBe(5);
  });

  test('throws unexpectedly', () => {
    divide(1, 0);
  });

  test.skip('skipped test', () => {});

  test.todo('todo test');

  test.each([
    [1, 2, 3],
    [2, 2, 5],
  ])('add(%i, %i) is %i', (a, b, want) => {
    expect(add(a, b)).toBe(want);
  });

  describe('inner [bracket] ünïcode', () => {
    test('deep name with spaces', () => {
      expect(add(0, 0)).toBe(0);
    });
  });
});

test('top level test', () => {
  expect(add(1, 1)).toBe(2);
});
