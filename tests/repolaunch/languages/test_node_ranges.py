"""`engines.node` ranges read with node-semver, as npm reads them (strict, prereleases
included); the suite-level behaviour is in test_javascript_setup.py."""

from __future__ import annotations

import pytest

from repolaunch.languages.javascript_node import node_range_fits


@pytest.mark.parametrize("spec, have, fits", [
    (">=18", (18, 20), True),
    (">=18.21", (18, 20), False),
    ("^18.12.0 || >=20", (20, 19), True),
    (">16", (17, 0), True),  # a partial version is a whole range: >16 is >=17
    ("<=18", (18, 99), True),
    ("12 - 18", (18, 99), True),
    ("12 - 18", (19, 0), False),
    ("~18.20", (18, 20), True),
    ("~18.20", (18, 21), False),
    ("v18.x", (18, 5), True),
    (">= 20.6.0 < 21", (20, 19), True),
    (">=20.19.1", (20, 19), False),  # `have` is read as major.minor.0
    (">=20.0.0-rc.1", (20, 0), True),  # a prerelease bound, as npm's includePrerelease
    ("*", (12, 22), True),
    ("", (12, 22), True),
    ("^20 ||", (12, 22), True),  # an empty alternative is any version, as in npm
    ("latest", (12, 22), True),  # Node's own aliases for "a current Node"
    ("lts", (12, 22), True),
    ("node >= 18", (20, 19), None),  # not a range npm reads
    ("lts/*", (20, 19), None),
    ("https://nodejs.org/dist/v20.0.0/node.tgz", (20, 19), None),
    # npm refuses a comma-separated range (its check then fails the engine); the hand
    # parser read the commas as spaces and said it fits
    (">=12, <20", (18, 20), None),
])
def test_node_range_fits(spec, have, fits):
    assert node_range_fits(spec, have) is fits
