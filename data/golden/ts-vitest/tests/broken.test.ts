import { test } from 'vitest';
import { missing } from '../src/missing';

test('never collected', () => {
  missing();
});
