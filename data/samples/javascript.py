"""JavaScript samples: node's built-in test runner (TAP), Jest, and Mocha.

Test ids follow the report formats' conventions: TAP and Jest join the describe titles and
the test title with `` > ``; Mocha's own json reporter gives ``fullTitle`` (space-joined).
Samples that install packages use dates from late 2024 on: their setup resolves npm packages
as of the commit date (``npm install --before``), and the registry must know versions by then.
"""

from __future__ import annotations

import json

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def package_json(**fields: object) -> str:
    return json.dumps(fields, indent=2) + "\n"


GITIGNORE = "node_modules/\ncoverage/\n*.log\n"


# --------------------------------------------------------------------------- node --test

_SLUG_V0 = """\
'use strict';

// Turn a title into a URL slug: "Hello World" -> "hello-world".
function slugify(input, { separator = '-' } = {}) {
  return String(input)
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]/g, separator);
}

module.exports = { slugify };
"""

_SLUG_V1 = """\
'use strict';

// Turn a title into a URL slug: "Hello World" -> "hello-world".
function slugify(input, { separator = '-' } = {}) {
  const slug = String(input)
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator);
  const edge = new RegExp(`^${escape(separator)}+|${escape(separator)}+$`, 'g');
  return slug.replace(edge, '');
}

function escape(text) {
  return text.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&');
}

module.exports = { slugify };
"""

_SLUG_TEST_V0 = """\
'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { slugify } = require('../src/slugify');

describe('slugify', () => {
  it('lowercases', () => {
    assert.equal(slugify('ABC'), 'abc');
  });

  it('replaces spaces', () => {
    assert.equal(slugify('a b'), 'a-b');
  });

  it('supports a custom separator', () => {
    assert.equal(slugify('a b', { separator: '_' }), 'a_b');
  });
});
"""

_SLUG_TEST_V1 = _SLUG_TEST_V0.replace("""\
  it('supports a custom separator', () => {""", """\
  it('collapses repeated separators', () => {
    assert.equal(slugify('  Hello,  World! '), 'hello-world');
  });

  it('supports a custom separator', () => {""")

_TRUNCATE = """\
'use strict';

// Shorten text to at most `max` characters, ending with `ellipsis` when cut.
function truncate(text, max, ellipsis = '\\u2026') {
  const s = String(text);
  if (s.length <= max) return s;
  return s.slice(0, Math.max(0, max - ellipsis.length)) + ellipsis;
}

module.exports = { truncate };
"""

_TRUNCATE_TEST_V0 = """\
'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { truncate } = require('../src/truncate');

describe('truncate', () => {
  it('keeps short text', () => {
    assert.equal(truncate('abc', 5), 'abc');
  });

  it('cuts long text', () => {
    assert.equal(truncate('abcdefgh', 5), 'abcd\\u2026');
  });
});
"""

def add_tests(text: str, block: str) -> str:
    """Insert `block` before the closing line of the file's last describe()."""
    cut = text.rstrip().rfind("});")
    return text[:cut] + block + text[cut:]


_TRUNCATE_TEST_V1 = add_tests(_TRUNCATE_TEST_V0, """\

  it('handles max smaller than the ellipsis', () => {
    assert.equal(truncate('abcdef', 0), '\\u2026');
  });

  it('supports a custom ellipsis', () => {
    assert.equal(truncate('abcdef', 4, '..'), 'ab..');
  });
""")

_INDEX_V0 = """\
'use strict';
module.exports = {
  ...require('./slugify'),
  ...require('./truncate'),
};
"""

_INDEX_V1 = """\
'use strict';
module.exports = {
  ...require('./slugify'),
  ...require('./truncate'),
  ...require('./case'),
};
"""

_INDEX_TEST = """\
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const kit = require('../src');

const NAMES = [%s];

test('index exports every helper', () => {
  for (const name of NAMES) {
    assert.equal(typeof kit[name], 'function', name);
  }
});
"""

_CASE = """\
'use strict';

// "foo bar-baz" -> "fooBarBaz". Known limitation: ASCII letters only (#15).
function camelCase(text) {
  const words = String(text).toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

module.exports = { camelCase };
"""

_CASE_TEST = """\
'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { camelCase } = require('../src/case');

describe('camelCase', () => {
  it('joins words', () => {
    assert.equal(camelCase('foo bar-baz'), 'fooBarBaz');
  });

  it('keeps digits', () => {
    assert.equal(camelCase('version 2 beta'), 'version2Beta');
  });

  it('handles accented letters', () => {
    assert.equal(camelCase('\\u00e9t\\u00e9 chaud'), '\\u00e9t\\u00e9Chaud');
  });

  it('splits graphemes', { skip: 'needs Intl.Segmenter everywhere' }, () => {
    assert.equal(camelCase('\\u{1F600} smile'), '\\u{1F600}Smile');
  });
});
"""

_SLUG_README_V0 = """\
# slugkit

Small string helpers for titles and URLs.

```js
const { slugify, truncate } = require('slugkit');
slugify('Hello World'); // 'hello-world'
```

Run the tests with `npm test` (Node 18 or newer).
"""

_SLUG_README_V1 = _SLUG_README_V0 + """
## Options

- `slugify(text, { separator })`: the separator between words, `-` by default.
- `truncate(text, max, ellipsis)`: cut `text` to `max` characters including the ellipsis
  (`…` by default).
"""


@sample
def sample_js_node_test() -> SampleRepo:
    pkg = package_json(
        name="slugkit", version="0.3.0", description="Small string helpers: slugify, truncate",
        main="src/index.js", scripts={"test": "node --test test/"},
        engines={"node": ">=18"}, license="MIT",
    )
    commits = (
        Commit("Initial slugify", {
            "package.json": pkg, ".gitignore": GITIGNORE, "README.md": _SLUG_README_V0,
            "src/slugify.js": _SLUG_V0, "test/slugify.test.js": _SLUG_TEST_V0,
        }, date="2022-05-03T09:12:00+00:00", tag="v0.1.0"),
        Commit("Add truncate helper and an index", {
            "src/truncate.js": _TRUNCATE, "test/truncate.test.js": _TRUNCATE_TEST_V0,
            "src/index.js": _INDEX_V0,
            "test/index.test.js": _INDEX_TEST % "'slugify', 'truncate'",
        }, date="2022-11-20T16:40:00+00:00"),
        Commit("Document the options in the README", {
            "README.md": _SLUG_README_V1,
        }, date="2023-04-09T11:05:00+00:00"),
        Commit("Fix slugify leaving repeated separators (#12)\n\nFixes #11", {
            "src/slugify.js": _SLUG_V1, "test/slugify.test.js": _SLUG_TEST_V1,
        }, date="2023-10-01T08:30:00+00:00", tag="v0.2.0"),
        Commit("Test truncate edge cases", {
            "test/truncate.test.js": _TRUNCATE_TEST_V1,
        }, date="2024-03-17T19:22:00+00:00"),
        Commit("Add camelCase helper", {
            "src/case.js": _CASE, "test/case.test.js": _CASE_TEST, "src/index.js": _INDEX_V1,
            "test/index.test.js": _INDEX_TEST % "'slugify', 'truncate', 'camelCase'",
        }, date="2024-08-25T14:00:00+00:00", tag="v0.3.0"),
    )
    return SampleRepo(
        name="js-node-test",
        language=Language.JAVASCRIPT,
        build_system="npm",
        test_framework="node-test",
        commits=commits,
        expected={
            "slugify > lowercases": P,
            "slugify > replaces spaces": P,
            "slugify > collapses repeated separators": P,
            "slugify > supports a custom separator": P,
            "truncate > keeps short text": P,
            "truncate > cuts long text": P,
            "truncate > handles max smaller than the ellipsis": P,
            "truncate > supports a custom ellipsis": P,
            "index exports every helper": P,
            "camelCase > joins words": P,
            "camelCase > keeps digits": P,
            "camelCase > handles accented letters": F,
            "camelCase > splits graphemes": S,
        },
        planted=(
            Planted(commit=2, kind=TaskKind.OTHER, decoy="docs_only"),
            Planted(
                commit=3, issues=(11,),
                fail_to_pass=("slugify > collapses repeated separators",),
                pass_to_pass=(
                    "slugify > lowercases", "slugify > replaces spaces",
                    "slugify > supports a custom separator", "truncate > keeps short text",
                    "truncate > cuts long text", "index exports every helper",
                ),
            ),
            Planted(commit=4, kind=TaskKind.OTHER, decoy="tests_only"),
        ),
        issues=(
            Issue(11, "slugify keeps runs of separators",
                  "`slugify('  Hello,  World! ')` gives `hello---world-` instead of "
                  "`hello-world`: every punctuation mark and space becomes its own `-`, and "
                  "trailing punctuation leaves a dangling separator.",
                  comments=("Confirmed on 0.1.0.",), created_at="2023-09-12T10:00:00+00:00"),
            Issue(15, "camelCase drops accented letters",
                  "`camelCase('été chaud')` gives `tChaud`.",
                  created_at="2024-08-20T10:00:00+00:00"),
        ),
        needs_network=False,
        description="CommonJS string helpers tested with node --test (TAP); no dependencies.",
    )


# --------------------------------------------------------------------------- jest

_MONEY_V0 = """\
'use strict';

const SYMBOLS = { USD: '$', EUR: '\\u20ac', GBP: '\\u00a3' };

function formatPrice(amount, currency = 'USD') {
  const symbol = SYMBOLS[currency] || `${currency} `;
  const [whole, cents] = amount.toFixed(2).split('.');
  return symbol + whole.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ',') + '.' + cents;
}

module.exports = { formatPrice };
"""

_MONEY_V1 = """\
'use strict';

const SYMBOLS = { USD: '$', EUR: '\\u20ac', GBP: '\\u00a3' };

function formatPrice(amount, currency = 'USD') {
  const symbol = SYMBOLS[currency] || `${currency} `;
  const [whole, cents] = Math.abs(amount).toFixed(2).split('.');
  const sign = amount < 0 ? '-' : '';
  return sign + symbol + whole.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ',') + '.' + cents;
}

module.exports = { formatPrice };
"""

_CART_V0 = """\
'use strict';

function cartTotal(items) {
  let total = 0;
  for (const item of items) {
    total += item.price * item.qty;
  }
  return total;
}

function applyDiscount(price, percent) {
  return price - (price * percent) / 100;
}

module.exports = { cartTotal, applyDiscount };
"""

_CART_V1 = """\
'use strict';

const lineTotal = (item) => item.price * item.qty;

function cartTotal(items) {
  return items.map(lineTotal).reduce((sum, n) => sum + n, 0);
}

function applyDiscount(price, percent) {
  return price - (price * percent) / 100;
}

module.exports = { cartTotal, applyDiscount };
"""

_CART_V2 = _CART_V1.replace("""\
  return price - (price * percent) / 100;""", """\
  const cents = Math.round((price - (price * percent) / 100) * 100);
  return cents / 100;""")

_CART_TEST_V0 = """\
'use strict';
const { cartTotal, applyDiscount } = require('../src/cart');

describe('cartTotal', () => {
  test('sums price times quantity', () => {
    expect(cartTotal([{ price: 2, qty: 3 }, { price: 1.5, qty: 2 }])).toBe(9);
  });

  test('is zero for an empty cart', () => {
    expect(cartTotal([])).toBe(0);
  });
});

describe('applyDiscount', () => {
  test('takes the percentage off', () => {
    expect(applyDiscount(200, 25)).toBe(150);
  });
});
"""

_CART_TEST_V1 = _CART_TEST_V0.replace("""\
    expect(applyDiscount(200, 25)).toBe(150);
  });
""", """\
    expect(applyDiscount(200, 25)).toBe(150);
  });

  test('rounds to whole cents', () => {
    expect(applyDiscount(19.99, 10)).toBe(17.99);
  });
""")

_MONEY_TEST_V0 = """\
'use strict';
const { formatPrice } = require('../src/money');

describe('formatPrice', () => {
  test('formats dollars', () => {
    expect(formatPrice(5)).toBe('$5.00');
  });

  test('uses the euro sign', () => {
    expect(formatPrice(3, 'EUR')).toBe('\\u20ac3.00');
  });
});
"""

_MONEY_TEST_V1 = add_tests(_MONEY_TEST_V0, """\

  test('groups thousands', () => {
    expect(formatPrice(1234567.5)).toBe('$1,234,567.50');
  });
""")

_TAX = """\
'use strict';

// Add sales tax at `rate` (0.2 = 20%). Category exemptions are not implemented yet (#16).
function addTax(price, rate, options = {}) {
  void options;
  return Math.round(price * (1 + rate) * 100) / 100;
}

module.exports = { addTax };
"""

_TAX_TEST = """\
'use strict';
const { addTax } = require('../src/tax');

describe('addTax', () => {
  test('adds the rate', () => {
    expect(addTax(10, 0.2)).toBe(12);
  });

  test('exempts groceries', () => {
    expect(addTax(10, 0.2, { category: 'grocery' })).toBe(10);
  });

  test.skip('compounds regional taxes', () => {
    expect(addTax(addTax(10, 0.1), 0.05)).toBe(11.55);
  });
});
"""


@sample
def sample_js_jest() -> SampleRepo:
    pkg = package_json(
        name="pricebook", version="1.2.0", private=True, main="src/index.js",
        scripts={"test": "jest"}, devDependencies={"jest": "^29.7.0"},
        jest={"testEnvironment": "node"},
    )
    commits = (
        Commit("Cart totals, discounts and price formatting", {
            "package.json": pkg, ".gitignore": GITIGNORE,
            "README.md": "# pricebook\n\nCart arithmetic for a small shop. `npm test` runs Jest.\n",
            "src/cart.js": _CART_V0, "src/money.js": _MONEY_V0,
            "test/cart.test.js": _CART_TEST_V0, "test/money.test.js": _MONEY_TEST_V0,
        }, date="2024-10-05T10:00:00+00:00", tag="v1.0.0"),
        Commit("Refactor cartTotal into map and reduce", {
            "src/cart.js": _CART_V1,
        }, date="2025-01-20T15:30:00+00:00"),
        Commit("Fix discounted prices keeping fractions of a cent (#12)\n\nFixes #11", {
            "src/cart.js": _CART_V2, "test/cart.test.js": _CART_TEST_V1,
        }, date="2025-05-11T09:45:00+00:00", tag="v1.1.0"),
        Commit("Fix formatting of negative prices (#14)\n\nFixes #13", {
            "src/money.js": _MONEY_V1, "test/money.test.js": _MONEY_TEST_V1,
        }, date="2025-09-02T18:10:00+00:00"),
        Commit("Add sales tax", {
            "src/tax.js": _TAX, "test/tax.test.js": _TAX_TEST,
        }, date="2026-02-14T12:00:00+00:00", tag="v1.2.0"),
    )
    return SampleRepo(
        name="js-jest",
        language=Language.JAVASCRIPT,
        build_system="npm",
        test_framework="jest",
        commits=commits,
        expected={
            "cartTotal > sums price times quantity": P,
            "cartTotal > is zero for an empty cart": P,
            "applyDiscount > takes the percentage off": P,
            "applyDiscount > rounds to whole cents": P,
            "formatPrice > formats dollars": P,
            "formatPrice > uses the euro sign": P,
            "formatPrice > groups thousands": P,
            "addTax > adds the rate": P,
            "addTax > exempts groceries": F,
            "addTax > compounds regional taxes": S,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.REFACTOR, decoy="refactor"),
            Planted(
                commit=2, issues=(11,),
                fail_to_pass=("applyDiscount > rounds to whole cents",),
                pass_to_pass=(
                    "cartTotal > sums price times quantity", "cartTotal > is zero for an empty cart",
                    "applyDiscount > takes the percentage off", "formatPrice > formats dollars",
                    "formatPrice > uses the euro sign",
                ),
            ),
            Planted(commit=3, issues=(13,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(11, "Discounted prices have fractions of a cent",
                  "`applyDiscount(19.99, 10)` returns `17.991`; receipts show `17.991`.",
                  comments=("Prices should always be rounded to whole cents.",),
                  created_at="2025-04-30T08:00:00+00:00"),
            Issue(13, "Negative prices print the sign after the symbol",
                  "`formatPrice(-5)` gives `$-5.00`; refunds should read `-$5.00`.",
                  created_at="2025-08-25T08:00:00+00:00"),
        ),
        needs_network=True,
        description="CommonJS cart arithmetic tested with Jest 29 (--json report).",
    )


# --------------------------------------------------------------------------- mocha

_QS_V0 = """\
'use strict';

function parse(query) {
  const out = {};
  for (const part of String(query).replace(/^\\?/, '').split('&')) {
    if (!part) continue;
    const [key, value = ''] = part.split('=');
    out[decodeURIComponent(key)] = decodeURIComponent(value);
  }
  return out;
}

function stringify(obj) {
  return Object.entries(obj)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

module.exports = { parse, stringify };
"""

_QS_V1 = _QS_V0.replace("""\
    out[decodeURIComponent(key)] = decodeURIComponent(value);""", """\
    out[decode(key)] = decode(value);""").replace("""\
function stringify(obj) {""", """\
function decode(text) {
  return decodeURIComponent(text.replace(/\\+/g, ' '));
}

function stringify(obj) {""")

_QS_V2 = _QS_V1.replace("""\
    out[decode(key)] = decode(value);""", """\
    const name = decode(key);
    if (name.endsWith('[]')) {
      const list = out[name.slice(0, -2)] || (out[name.slice(0, -2)] = []);
      list.push(decode(value));
    } else {
      out[name] = decode(value);
    }""")

_QS_TEST_V0 = """\
'use strict';
const assert = require('node:assert/strict');
const { parse, stringify } = require('../src/qs');

describe('parse', function () {
  it('reads key value pairs', function () {
    assert.deepEqual(parse('a=1&b=2'), { a: '1', b: '2' });
  });

  it('ignores a leading question mark', function () {
    assert.deepEqual(parse('?a=1'), { a: '1' });
  });
});

describe('stringify', function () {
  it('encodes reserved characters', function () {
    assert.equal(stringify({ q: 'a&b' }), 'q=a%26b');
  });
});
"""

_QS_TEST_V1 = _QS_TEST_V0.replace("""\
    assert.deepEqual(parse('?a=1'), { a: '1' });
  });
""", """\
    assert.deepEqual(parse('?a=1'), { a: '1' });
  });

  it('decodes plus as space', function () {
    assert.deepEqual(parse('q=hello+world'), { q: 'hello world' });
  });
""")

_QS_TEST_V2 = _QS_TEST_V1.replace("""\
describe('stringify', function () {""", """\
describe('parse arrays', function () {
  it('collects repeated bracket keys', function () {
    assert.deepEqual(parse('t[]=a&t[]=b'), { t: ['a', 'b'] });
  });
});

describe('stringify', function () {""")

_QS_TEST_V3 = _QS_TEST_V2.replace("""\
    assert.equal(stringify({ q: 'a&b' }), 'q=a%26b');
  });
""", """\
    assert.equal(stringify({ q: 'a&b' }), 'q=a%26b');
  });

  it('sorts keys', function () {
    assert.equal(stringify({ b: 1, a: 2 }), 'a=2&b=1');
  });

  it.skip('writes nested objects', function () {
    assert.equal(stringify({ a: { b: 1 } }), 'a[b]=1');
  });
""")


@sample
def sample_js_mocha() -> SampleRepo:
    pkg = package_json(
        name="qparse", version="0.4.0", private=True, main="src/qs.js",
        scripts={"test": "mocha 'test/**/*.spec.js'"}, devDependencies={"mocha": "^10.4.0"},
    )
    commits = (
        Commit("Query string parse and stringify", {
            "package.json": pkg, ".gitignore": GITIGNORE,
            "README.md": "# qparse\n\nA tiny query-string codec. Tests: `npm test` (Mocha).\n",
            "src/qs.js": _QS_V0, "test/qs.spec.js": _QS_TEST_V0,
        }, date="2024-09-20T07:00:00+00:00"),
        Commit("Fix plus signs not decoded as spaces (#12)\n\nFixes #11", {
            "src/qs.js": _QS_V1, "test/qs.spec.js": _QS_TEST_V1,
        }, date="2025-03-03T13:20:00+00:00", tag="v0.2.0"),
        Commit("Support repeated bracket keys as arrays", {
            "src/qs.js": _QS_V2, "test/qs.spec.js": _QS_TEST_V2,
        }, date="2025-08-14T10:10:00+00:00", tag="v0.3.0"),
        Commit("Specify key order for stringify", {
            "test/qs.spec.js": _QS_TEST_V3,
            "README.md": "# qparse\n\nA tiny query-string codec. Tests: `npm test` (Mocha).\n\n"
                         "`stringify` will sort keys (not done yet).\n",
        }, date="2026-01-30T17:45:00+00:00", tag="v0.4.0"),
    )
    return SampleRepo(
        name="js-mocha",
        language=Language.JAVASCRIPT,
        build_system="npm",
        test_framework="mocha",
        commits=commits,
        expected={
            "parse reads key value pairs": P,
            "parse ignores a leading question mark": P,
            "parse decodes plus as space": P,
            "parse arrays collects repeated bracket keys": P,
            "stringify encodes reserved characters": P,
            "stringify sorts keys": F,
            "stringify writes nested objects": S,
        },
        planted=(
            Planted(
                commit=1, issues=(11,),
                fail_to_pass=("parse decodes plus as space",),
                pass_to_pass=(
                    "parse reads key value pairs", "parse ignores a leading question mark",
                    "stringify encodes reserved characters",
                ),
            ),
        ),
        issues=(
            Issue(11, "'+' in a query is not a space",
                  "`parse('q=hello+world')` returns `{ q: 'hello+world' }`; HTML forms "
                  "encode spaces as `+`.", created_at="2025-02-20T09:00:00+00:00"),
        ),
        needs_network=True,
        description="A query-string codec tested with Mocha 10 (json reporter, fullTitle ids).",
    )
