"""TypeScript samples: tsc + node's test runner, and Vitest.

Ids: TAP (node --test on the compiled tests) and Vitest's JSON both join describe titles and
the test title with `` > ``. Both samples install packages (typescript, @types/node, vitest)
as of their commit dates, so their dates start in late 2024.
"""

from __future__ import annotations

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples.javascript import package_json
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED

# --------------------------------------------------------------------------- tsc + node:test

_TSCONFIG = """\
{
  // Compiled output goes to build/ (git-ignored); tests run from there with node --test.
  "compilerOptions": {
    "target": "ES2020",
    "module": "commonjs",
    "rootDir": ".",
    "outDir": "build",
    "strict": true,
    "esModuleInterop": true,
    "skipLibCheck": true,
    "types": ["node"],
  },
  "include": ["src", "test"]
}
"""

_RANGE_V0 = """\
/** A half-open interval [start, end). */
export interface Range {
  start: number;
  end: number;
}

export function overlaps(a: Range, b: Range): boolean {
  return a.start <= b.end && b.start <= a.end;
}

export function length(r: Range): number {
  return Math.max(0, r.end - r.start);
}
"""

_RANGE_V1 = """\
/** A half-open interval [start, end). */
export interface Range {
  start: number;
  end: number;
}

function isEmpty(r: Range): boolean {
  return r.end <= r.start;
}

export function overlaps(a: Range, b: Range): boolean {
  return a.start <= b.end && b.start <= a.end;
}

export function length(r: Range): number {
  return isEmpty(r) ? 0 : r.end - r.start;
}
"""

_RANGE_V2 = _RANGE_V1.replace(
    "  return a.start <= b.end && b.start <= a.end;",
    "  return a.start < b.end && b.start < a.end;",
)

_RANGE_TEST_V0 = """\
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { length, overlaps } from '../src/range';

describe('overlaps', () => {
  it('detects overlapping ranges', () => {
    assert.equal(overlaps({ start: 0, end: 5 }, { start: 3, end: 8 }), true);
  });

  it('detects disjoint ranges', () => {
    assert.equal(overlaps({ start: 0, end: 2 }, { start: 4, end: 6 }), false);
  });
});

describe('length', () => {
  it('measures a range', () => {
    assert.equal(length({ start: 2, end: 7 }), 5);
  });

  it('is zero for an empty range', () => {
    assert.equal(length({ start: 7, end: 2 }), 0);
  });
});
"""

_RANGE_TEST_V1 = _RANGE_TEST_V0.replace("""\
    assert.equal(overlaps({ start: 0, end: 2 }, { start: 4, end: 6 }), false);
  });
""", """\
    assert.equal(overlaps({ start: 0, end: 2 }, { start: 4, end: 6 }), false);
  });

  it('treats touching ranges as disjoint', () => {
    assert.equal(overlaps({ start: 0, end: 5 }, { start: 5, end: 10 }), false);
  });
""")

_MERGE = """\
import { overlaps, Range } from './range';

/** Merge overlapping and adjacent ranges into a sorted, disjoint list. */
export function merge(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && overlaps(last, r)) {
      last.end = Math.max(last.end, r.end);
    } else {
      out.push({ ...r });
    }
  }
  return out;
}
"""

_MERGE_TEST = """\
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { merge } from '../src/merge';

describe('merge', () => {
  it('joins overlapping ranges', () => {
    assert.deepEqual(merge([{ start: 4, end: 9 }, { start: 0, end: 5 }]), [{ start: 0, end: 9 }]);
  });

  it('keeps disjoint ranges apart', () => {
    assert.deepEqual(merge([{ start: 0, end: 1 }, { start: 3, end: 4 }]), [
      { start: 0, end: 1 },
      { start: 3, end: 4 },
    ]);
  });

  it('joins adjacent ranges', () => {
    assert.deepEqual(merge([{ start: 0, end: 5 }, { start: 5, end: 7 }]), [{ start: 0, end: 7 }]);
  });

  it('merges a million ranges quickly', { skip: 'benchmark, run by hand' }, () => {
    const many = Array.from({ length: 1_000_000 }, (_, i) => ({ start: i, end: i + 2 }));
    assert.equal(merge(many).length, 1);
  });
});
"""

_RANGE_README_V0 = """\
# rangeset

Interval helpers in TypeScript. `npm test` compiles with `tsc` and runs `node --test`.
"""

_RANGE_README_V1 = _RANGE_README_V0 + """
## Ranges are half-open

A range `{ start, end }` holds the numbers `start <= x < end`. So `{ start: 0, end: 5 }` and
`{ start: 5, end: 10 }` touch but do not overlap, and a range with `end <= start` is empty.
"""

_RANGE_DOC = """\
# Design notes

Half-open ranges compose: the length of `[a, b)` is `b - a`, and splitting `[a, c)` at `b`
gives `[a, b)` and `[b, c)` with nothing counted twice.
"""


@sample
def sample_ts_node_test() -> SampleRepo:
    pkg = package_json(
        name="rangeset", version="0.4.0", private=True, main="build/src/index.js",
        scripts={"build": "tsc -p tsconfig.json",
                 "test": "tsc -p tsconfig.json && node --test build/test/"},
        devDependencies={"typescript": "^5.4.5", "@types/node": "^18.19.0"},
    )
    commits = (
        Commit("Range overlap and length", {
            "package.json": pkg, "tsconfig.json": _TSCONFIG,
            ".gitignore": "node_modules/\nbuild/\n", "README.md": _RANGE_README_V0,
            "src/range.ts": _RANGE_V0, "test/range.test.ts": _RANGE_TEST_V0,
        }, date="2024-09-15T08:00:00+00:00", tag="v0.1.0"),
        Commit("Extract an isEmpty helper", {
            "src/range.ts": _RANGE_V1,
        }, date="2025-02-01T12:30:00+00:00"),
        Commit("Fix touching ranges reported as overlapping (#12)\n\nFixes #11", {
            "src/range.ts": _RANGE_V2, "test/range.test.ts": _RANGE_TEST_V1,
        }, date="2025-07-19T16:15:00+00:00", tag="v0.2.0"),
        Commit("Docs: explain half-open ranges", {
            "README.md": _RANGE_README_V1, "docs/design.md": _RANGE_DOC,
        }, date="2025-12-05T10:00:00+00:00"),
        Commit("Add merge()", {
            "src/merge.ts": _MERGE, "test/merge.test.ts": _MERGE_TEST,
        }, date="2026-04-22T09:40:00+00:00", tag="v0.4.0"),
    )
    return SampleRepo(
        name="ts-node-test",
        language=Language.TYPESCRIPT,
        build_system="npm",
        test_framework="node-test",
        commits=commits,
        expected={
            "overlaps > detects overlapping ranges": P,
            "overlaps > detects disjoint ranges": P,
            "overlaps > treats touching ranges as disjoint": P,
            "length > measures a range": P,
            "length > is zero for an empty range": P,
            "merge > joins overlapping ranges": P,
            "merge > keeps disjoint ranges apart": P,
            "merge > joins adjacent ranges": F,
            "merge > merges a million ranges quickly": S,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.REFACTOR, decoy="refactor"),
            Planted(
                commit=2, issues=(11,),
                fail_to_pass=("overlaps > treats touching ranges as disjoint",),
                pass_to_pass=(
                    "overlaps > detects overlapping ranges", "overlaps > detects disjoint ranges",
                    "length > measures a range", "length > is zero for an empty range",
                ),
            ),
            Planted(commit=3, kind=TaskKind.OTHER, decoy="docs_only"),
        ),
        issues=(
            Issue(11, "overlaps() is true for ranges that only touch",
                  "Ranges are half-open, so `[0, 5)` and `[5, 10)` share no point, but "
                  "`overlaps({start: 0, end: 5}, {start: 5, end: 10})` returns `true`.",
                  created_at="2025-07-01T10:00:00+00:00"),
        ),
        needs_network=True,
        description="TypeScript compiled with tsc to build/, tested with node --test (TAP).",
    )


# --------------------------------------------------------------------------- vitest

_LRU_V0 = """\
/** A least-recently-used cache holding at most `capacity` entries. */
export class LRU<K, V> {
  private readonly items = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.items.get(key);
  }

  set(key: K, value: V): this {
    this.items.delete(key);
    this.items.set(key, value);
    if (this.items.size > this.capacity) {
      const oldest = this.items.keys().next().value as K;
      this.items.delete(oldest);
    }
    return this;
  }

  get size(): number {
    return this.items.size;
  }
}
"""

_LRU_V1 = _LRU_V0.replace("""\
  get(key: K): V | undefined {
    return this.items.get(key);
  }
""", """\
  get(key: K): V | undefined {
    if (!this.items.has(key)) return undefined;
    const value = this.items.get(key) as V;
    this.items.delete(key);
    this.items.set(key, value);
    return value;
  }
""")

_LRU_V2 = _LRU_V1.replace("""\
  constructor(readonly capacity: number) {}
""", """\
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
  }
""")

_TTL = """\
import { LRU } from './lru';

/** An LRU whose entries expire `ttlMs` after they were set. */
export class TtlLRU<K, V> {
  private readonly cache: LRU<K, { value: V; expires: number }>;

  constructor(capacity: number, readonly ttlMs: number) {
    this.cache = new LRU(capacity);
  }

  set(key: K, value: V): this {
    this.cache.set(key, { value, expires: Date.now() + this.ttlMs });
    return this;
  }

  get(key: K): V | undefined {
    const hit = this.cache.get(key);
    if (!hit || hit.expires <= Date.now()) return undefined;
    return hit.value;
  }

  /** Look without refreshing recency (and, for now, without checking expiry: #16). */
  peek(key: K): V | undefined {
    return this.cache.get(key)?.value;
  }
}
"""

_LRU_TEST_V0 = """\
import { describe, expect, it } from 'vitest';
import { LRU } from '../src/lru';

describe('LRU', () => {
  it('stores and returns values', () => {
    const c = new LRU<string, number>(2).set('a', 1);
    expect(c.get('a')).toBe(1);
  });

  it('evicts the oldest entry', () => {
    const c = new LRU<string, number>(2).set('a', 1).set('b', 2).set('c', 3);
    expect(c.get('a')).toBeUndefined();
    expect(c.get('c')).toBe(3);
  });
});
"""

_LRU_TEST_V1 = _LRU_TEST_V0.replace("""\
    expect(c.get('c')).toBe(3);
  });
""", """\
    expect(c.get('c')).toBe(3);
  });

  it('get refreshes recency', () => {
    const c = new LRU<string, number>(2).set('a', 1).set('b', 2);
    c.get('a');
    c.set('c', 3);
    expect(c.get('a')).toBe(1);
    expect(c.get('b')).toBeUndefined();
  });
""")

_LRU_TEST_V2 = _LRU_TEST_V1.replace("""\
    expect(c.get('b')).toBeUndefined();
  });
""", """\
    expect(c.get('b')).toBeUndefined();
  });

  it('reports its size', () => {
    expect(new LRU<string, number>(3).set('a', 1).set('b', 2).size).toBe(2);
  });

  it('overwrites existing keys', () => {
    const c = new LRU<string, number>(2).set('a', 1).set('a', 5);
    expect(c.get('a')).toBe(5);
    expect(c.size).toBe(1);
  });
""")

_LRU_TEST_V3 = _LRU_TEST_V2.replace("""\
    expect(c.size).toBe(1);
  });
""", """\
    expect(c.size).toBe(1);
  });

  it('accepts a capacity of one', () => {
    const c = new LRU<string, number>(1).set('a', 1).set('b', 2);
    expect(c.get('b')).toBe(2);
    expect(c.size).toBe(1);
  });
""")

_TTL_TEST = """\
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TtlLRU } from '../src/ttl';

describe('TtlLRU', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  describe('expiry', () => {
    it('expires entries', () => {
      const c = new TtlLRU<string, number>(4, 1000).set('a', 1);
      vi.advanceTimersByTime(999);
      expect(c.get('a')).toBe(1);
      vi.advanceTimersByTime(1);
      expect(c.get('a')).toBeUndefined();
    });

    it('peek ignores expired entries', () => {
      const c = new TtlLRU<string, number>(4, 1000).set('a', 1);
      vi.advanceTimersByTime(5000);
      expect(c.peek('a')).toBeUndefined();
    });

    it.skip('persists entries to disk', () => {
      expect(true).toBe(false);
    });
  });
});
"""


@sample
def sample_ts_vitest() -> SampleRepo:
    pkg = package_json(
        name="tiny-lru-ts", version="2.1.0", private=True, type="module",
        scripts={"test": "vitest run", "typecheck": "tsc --noEmit"},
        devDependencies={"typescript": "^5.4.5", "vitest": "^1.6.0"},
    )
    tsconfig = """\
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["src", "test"]
}
"""
    commits = (
        Commit("LRU cache", {
            "package.json": pkg, "tsconfig.json": tsconfig, ".gitignore": "node_modules/\n",
            "README.md": "# tiny-lru-ts\n\nA small LRU cache. `npm test` runs Vitest.\n",
            "src/lru.ts": _LRU_V0, "test/lru.test.ts": _LRU_TEST_V0,
        }, date="2024-11-02T11:00:00+00:00", tag="v1.0.0"),
        Commit("Fix get() not refreshing recency (#12)\n\nFixes #11", {
            "src/lru.ts": _LRU_V1, "test/lru.test.ts": _LRU_TEST_V1,
        }, date="2025-04-18T14:25:00+00:00", tag="v1.1.0"),
        Commit("More LRU tests", {
            "test/lru.test.ts": _LRU_TEST_V2,
        }, date="2025-10-09T09:00:00+00:00"),
        Commit("Fix capacity validation (#14)\n\nFixes #13", {
            "src/lru.ts": _LRU_V2, "test/lru.test.ts": _LRU_TEST_V3,
        }, date="2026-01-15T17:30:00+00:00", tag="v2.0.0"),
        Commit("Add TtlLRU", {
            "src/ttl.ts": _TTL, "test/ttl.test.ts": _TTL_TEST,
        }, date="2026-03-27T08:05:00+00:00", tag="v2.1.0"),
    )
    return SampleRepo(
        name="ts-vitest",
        language=Language.TYPESCRIPT,
        build_system="npm",
        test_framework="vitest",
        commits=commits,
        expected={
            "LRU > stores and returns values": P,
            "LRU > evicts the oldest entry": P,
            "LRU > get refreshes recency": P,
            "LRU > reports its size": P,
            "LRU > overwrites existing keys": P,
            "LRU > accepts a capacity of one": P,
            "TtlLRU > expiry > expires entries": P,
            "TtlLRU > expiry > peek ignores expired entries": F,
            "TtlLRU > expiry > persists entries to disk": S,
        },
        planted=(
            Planted(
                commit=1, issues=(11,),
                fail_to_pass=("LRU > get refreshes recency",),
                pass_to_pass=("LRU > stores and returns values", "LRU > evicts the oldest entry"),
            ),
            Planted(commit=2, kind=TaskKind.OTHER, decoy="tests_only"),
            Planted(commit=3, issues=(13,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(11, "get() does not count as a use",
                  "After `c.get('a')`, setting a new key evicts `a` instead of the entry that "
                  "was used least recently.", created_at="2025-04-02T10:00:00+00:00"),
            Issue(13, "new LRU(0) silently accepts a useless capacity",
                  "A capacity of 0 (or -1, or 1.5) should throw instead of evicting everything.",
                  created_at="2026-01-05T10:00:00+00:00"),
        ),
        needs_network=True,
        description="A TypeScript LRU cache tested with Vitest 1 (json reporter).",
    )
