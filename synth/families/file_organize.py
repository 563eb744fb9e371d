"""Move files from an inbox into one folder per extension."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import words
from synth.spec import Blueprint


@family("file-organize", category="file-operations", difficulty=Difficulty.EASY)
class FileOrganize(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        exts = rng.sample(["txt", "csv", "log", "md", "json", "yaml", "ini"], 4)
        names = words(rng, 9)
        files = {f"{n}.{rng.choice(exts)}": f"{n} {rng.randint(1, 10**6)}\n" for n in names[:7]}
        files.update({n.upper(): f"plain {n}\n" for n in names[7:]})  # no extension
        inbox = rng.choice(["/app/inbox", "/app/incoming", "/app/drop"])
        other = rng.choice(["other", "misc", "noext"])
        return {"inbox": inbox, "dest": "/app/sorted", "other": other, "files": files}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        i, d, o = p["inbox"], p["dest"], p["other"]
        return [
            f"The directory {i} is a mess. Move every file in it into {d}/<extension>/ "
            f"(for example a.csv goes to {d}/csv/a.csv). Files without an extension go to "
            f"{d}/{o}/. Keep file names and contents; leave {i} empty.",
            f"Sort the files of {i} by extension: each file must end up in {d}/EXT/ where EXT "
            f"is its extension, and extension-less files in {d}/{o}/. Nothing may remain in "
            f"{i}, and no file may be altered or renamed.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        i, d, o = p["inbox"], p["dest"], p["other"]
        files = {f"{i}/{n}": c for n, c in p["files"].items()}
        loop = (f'cd {i}\nfor f in *; do ext="${{f##*.}}"; [ "$ext" = "$f" ] && ext={o}; '
                f'mkdir -p "{d}/$ext"; mv -- "$f" "{d}/$ext/"; done')
        expected = {}
        for n, c in p["files"].items():
            ext = n.rsplit(".", 1)[1] if "." in n else o
            expected[f"{d}/{ext}/{n}"] = c
        check = f"""
EXPECTED = {expected!r}
INBOX = {i!r}


def test_every_file_in_its_folder():
    for path, content in EXPECTED.items():
        assert Path(path).is_file(), path
        assert text(path) == content, path


def test_nothing_else_in_dest():
    found = {{str(p) for p in Path({d!r}).rglob("*") if p.is_file()}}
    assert found == set(EXPECTED), sorted(found ^ set(EXPECTED))


def test_inbox_empty():
    assert Path(INBOX).is_dir() and not any(Path(INBOX).iterdir())
"""
        return Blueprint(
            files=files, solution=(f"mkdir -p {d}", loop), check=check,
            mutants={
                "copy-not-move": (f"mkdir -p {d}", loop.replace("mv --", "cp --")),
                "skip-no-extension": (f"mkdir -p {d}", loop.replace(
                    f'[ "$ext" = "$f" ] && ext={o};', '[ "$ext" = "$f" ] && continue;')),
            })
