"""The dependency time machine's calendar: which Python a commit of a given day runs on, and
from which day its dependencies may be resolved.

Three interpreters can be had here, one per Debian suite the mirror serves (`SUITE_PYTHON`):
3.9 (bullseye), 3.11 (bookworm), 3.13 (trixie). Older suites and the standalone builds
(downloaded from GitHub) cannot. A commit gets the newest of them that its project allowed
on that day (`choose_python`), read from its own files (trove classifiers,
``requires-python`` / ``python_requires``, the CI matrix, tox's envlist) and from the
calendar (no interpreter whose ecosystem was not there yet), no newer than the default
suite's (3.11) unless the project requires a newer one; failing all that, the oldest we
have, 3.9, which runs most code of 2013-2021 (``collections.Mapping`` & co. went in 3.10).

Dependencies are resolved as of the commit's date, but never before `wheel_floor` of the
interpreter: before its packages had wheels for it, an old numpy or pandas would have to be
compiled from source against an interpreter it never knew (and usually fails to). So a
2019 commit on 3.9 gets the world of early 2021 — the oldest world that runs on 3.9.

    choice = choose_python(repo, "2019-05-13T10:00:00Z")
    choice.version, choice.suite, choice.why      # "3.9", "bullseye", "..."
    resolve_date("2019-05-13T10:00:00Z", "3.9")   # "2021-01-03T00:00:00Z"
"""

from __future__ import annotations

import configparser
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict

# CPython minor releases (python.org's release dates).
PYTHON_RELEASES: dict[str, str] = {
    "3.5": "2015-09-13", "3.6": "2016-12-23", "3.7": "2018-06-27", "3.8": "2019-10-14",
    "3.9": "2020-10-05", "3.10": "2021-10-04", "3.11": "2022-10-24", "3.12": "2023-10-02",
    "3.13": "2024-10-07", "3.14": "2025-10-07",
}
# What each Debian suite the mirror answers for ships as python3.
SUITE_PYTHON: dict[str, str] = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
# How long after an interpreter's release its ecosystem (numpy, scipy, pandas, lxml ...)
# had binary wheels for it; before that, resolving for it means compiling.
WHEEL_LAG = timedelta(days=90)


class PythonChoice(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: str  # "3.9"
    suite: str  # the Debian suite that ships it
    why: str
    declared: tuple[str, ...] = ()  # minor versions the project's files name


def vkey(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:2])


def parse_date(text: str) -> datetime:
    """An ISO date or timestamp (naive means UTC)."""
    text = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T00:00:00+00:00"
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def utc(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def wheel_floor(version: str) -> str | None:
    """The first day dependencies may be resolved on for this interpreter (RFC 3339)."""
    released = PYTHON_RELEASES.get(version)
    return utc(parse_date(released) + WHEEL_LAG) if released else None


def resolve_date(date: str | None, version: str) -> str | None:
    """The day to resolve dependencies as of: the commit's, moved up to the wheel floor."""
    if not date:
        return None
    floor = wheel_floor(version)
    when = utc(parse_date(date))
    return floor if floor and when < floor else when


# --------------------------------------------------------------------------- declarations


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


_CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)\b")
_TOX_ENV = re.compile(r"\bpy3(\d{1,2})\b")
_CI_VERSION = re.compile(r"^3\.(\d{1,2})(?:\.\d+|\.x)?$")


def classifiers(repo: Path) -> set[str]:
    text = "".join(_read(repo / f) for f in ("setup.py", "setup.cfg", "pyproject.toml"))
    return set(_CLASSIFIER.findall(text))


def requires_python(repo: Path) -> str | None:
    """The project's ``requires-python`` / ``python_requires`` specifier, if it has one."""
    pyproject = _read(repo / "pyproject.toml")
    m = re.search(r"""(?m)^\s*requires-python\s*=\s*["']([^"']+)""", pyproject)
    if m:
        return m.group(1)
    m = re.search(r"""python_requires\s*=\s*["']([^"']+)""", _read(repo / "setup.py"))
    if m:
        return m.group(1)
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(_read(repo / "setup.cfg"))
    except configparser.Error:
        return None
    if cfg.has_option("options", "python_requires"):
        return cfg.get("options", "python_requires").strip()
    return None


def ci_pythons(repo: Path) -> set[str]:
    """Minor versions named by tox's envlist and the CI workflows' python-version lists."""
    out = {f"3.{m}" for m in _TOX_ENV.findall(_read(repo / "tox.ini"))}
    workflows = repo / ".github" / "workflows"
    files = sorted(workflows.glob("*.y*ml")) if workflows.is_dir() else []
    for f in [*files, repo / ".travis.yml"]:
        for m in re.finditer(r"(?m)(?:python-version|python)\s*:\s*(.+)$", _read(f)):
            for tok in re.findall(r"[\d.x]+", m.group(1)):
                v = _CI_VERSION.match(tok)
                if v:
                    out.add(f"3.{v.group(1)}")
        for m in re.finditer(r"""["']?(3\.\d{1,2})["']?""", _matrix_block(_read(f))):
            out.add(m.group(1))
    return out


def _matrix_block(text: str) -> str:
    """The lines of ``python-version: [...]`` / ``python:`` lists spanning several lines."""
    m = re.search(r"(?ms)^(\s*)(?:python-version|python):\s*\n((?:\1\s+-.*\n)+)", text)
    return m.group(2) if m else ""


def satisfies(version: str, spec: str | None) -> bool:
    """Whether a minor version meets a requires-python specifier (best effort: clauses of
    >=, >, <=, <, ==, !=, ~=; an unreadable clause is ignored)."""
    if not spec:
        return True
    v = vkey(version)
    for clause in spec.split(","):
        m = re.match(r"\s*(~=|>=|<=|==|!=|>|<)\s*([\d.*]+)", clause)
        if not m:
            continue
        op, raw = m.groups()
        if raw.endswith("*"):
            want = vkey(raw)
            if op == "==" and v[:len(want)] != want:
                return False
            if op == "!=" and v[:len(want)] == want:
                return False
            continue
        want = vkey(raw)
        full = tuple(int(x) for x in re.findall(r"\d+", raw))
        if op == ">=" and v < want:
            return False
        if op == ">" and (v < want or (v == want and len(full) <= 2)):
            return False
        if op == "<" and v >= want and not (v == want and len(full) > 2 and full[2] > 0):
            return False
        if op == "<=" and v > want:
            return False
        if op == "==" and v != want:
            return False
        if op == "~=" and (v < want or (len(full) > 2 and v != want)):
            return False
    return True


# --------------------------------------------------------------------------- the choice


def choose_python(repo: Path, date: str | None, *, default: str = "3.11",
                  suites: dict[str, str] | None = None) -> PythonChoice:
    """The interpreter for a commit: the newest we have that the project allowed on its
    commit's day, no newer than ``default`` unless the project requires a newer one."""
    have = suites or SUITE_PYTHON
    by_version = sorted(((v, s) for s, v in have.items()), key=lambda x: vkey(x[0]))
    spec = requires_python(repo)
    declared = classifiers(repo) | ci_pythons(repo)
    when = parse_date(date) if date else None

    def released_by(v: str) -> bool:
        # an interpreter counts for a commit once its ecosystem had wheels for it
        rel = PYTHON_RELEASES.get(v)
        return when is None or rel is None or parse_date(rel) + WHEEL_LAG <= when

    candidates = [(v, s) for v, s in by_version if satisfies(v, spec)]
    note = ""
    if not candidates:
        note = f"; requires-python {spec!r} excludes every interpreter here"
        candidates = by_version
    ceiling = vkey(default)
    if declared:
        ceiling = min(ceiling, vkey(max(declared, key=vkey)))
    if all(vkey(v) > ceiling for v, _ in candidates):
        ceiling = vkey(candidates[0][0])  # the project requires newer than the ceiling
    fitting = [(v, s) for v, s in candidates if released_by(v) and vkey(v) <= ceiling]
    named = ", ".join(sorted(declared, key=vkey))
    if fitting:
        v, s = fitting[-1]
        basis = [f"the project names {named}" if declared else f"default {default}"]
        if date:
            basis.append(f"in use by {date[:10]}")
        if spec:
            basis.append(f"requires-python {spec}")
        why = f"Python {v} ({s}): " + ", ".join(basis)
    else:
        v, s = candidates[0]
        why = (f"Python {v} ({s}): the oldest here"
               + (f"; the project names {named}" if declared else "")
               + (f" as of {date[:10]}" if date else ""))
    return PythonChoice(version=v, suite=s, why=why + note,
                        declared=tuple(sorted(declared, key=vkey)))


def older_suite(suite: str, suites: dict[str, str] | None = None) -> str | None:
    have = suites or SUITE_PYTHON
    order = sorted(have, key=lambda s: vkey(have[s]))
    i = order.index(suite) if suite in order else -1
    return order[i - 1] if i > 0 else None


def newer_suite(suite: str, suites: dict[str, str] | None = None) -> str | None:
    have = suites or SUITE_PYTHON
    order = sorted(have, key=lambda s: vkey(have[s]))
    i = order.index(suite) if suite in order else len(order)
    return order[i + 1] if i + 1 < len(order) else None
