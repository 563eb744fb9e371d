require('./does-not-exist');

test('never', () => {});
