"""Restore a deleted file from history and commit it."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint

GIT = "git -c user.name=Dev -c user.email=dev@example.invalid"


@family("git-restore-file", category="git", difficulty=Difficulty.MEDIUM)
class GitRestore(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        path = rng.choice(["docs/guide.md", "etc/settings.conf", "scripts/deploy.txt"])
        versions = [" ".join(rng.sample(WORDS, 4)) for _ in range(3)]
        msg = rng.choice(["Restore the deleted file", "Bring back lost file", "Undo deletion"])
        return {"repo": "/app/project", "path": path, "versions": versions, "message": msg,
                "noise": rng.sample(WORDS, 3)}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        r, f, m = p["repo"], p["path"], p["message"]
        return [
            f"The file {f} was deleted at some point in the history of the git repository "
            f"{r}. Restore it with exactly the content it had just before it was deleted and "
            f"commit that as a new commit with the message \"{m}\" on the current branch. Do "
            f"not rewrite existing history; the working tree must be clean afterwards.",
            f"Recover {f} in the repo {r}: bring back its last version before its deletion, "
            f"then record a new commit \"{m}\" on top of the current branch (no history "
            f"rewriting, nothing left uncommitted).",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        r, f, m = p["repo"], p["path"], p["message"]
        steps = [f"mkdir -p {r} && cd {r} && git init -q -b main ."]
        day = 1

        def commit(msg: str) -> str:
            nonlocal day
            date = f"2024-02-{day:02d}T09:00:00Z"
            day += 1
            return (f"git add -A && GIT_AUTHOR_DATE={date} GIT_COMMITTER_DATE={date} "
                    f"{GIT} commit -q -m '{msg}'")

        for i, v in enumerate(p["versions"]):
            steps.append(f"mkdir -p $(dirname {f}) && echo '{v}' >> {f} && {commit(f'edit {i}')}")
        steps.append(f"echo '{p['noise'][0]}' > README && {commit('readme')}")
        steps.append(f"git rm -q {f} && {commit('cleanup')}")
        steps.append(f"echo '{p['noise'][1]}' >> README && {commit('more readme')}")
        setup = " && ".join(steps)
        n_commits = len(p["versions"]) + 3
        want = "".join(v + "\n" for v in p["versions"])
        first = p["versions"][0] + "\n"
        solve = (f"cd {r}\nc=$(git log --diff-filter=D --format=%H -- {f} | head -n 1)\n"
                 f"git checkout \"$c^\" -- {f}\n{GIT} commit -q -m \"{m}\"")
        check = f"""
def test_content():
    assert text({r!r} + "/" + {f!r}) == {want!r}


def test_committed_on_top():
    _, count = sh("git -C {r} rev-list --count HEAD")
    assert count.strip() == "{n_commits + 1}", count
    _, msg = sh("git -C {r} log -1 --format=%s")
    assert msg.strip() == {m!r}, msg
    _, shown = sh("git -C {r} show HEAD:{f}")
    assert shown == {want!r}, shown
    _, status = sh("git -C {r} status --porcelain")
    assert status.strip() == "", status
"""
        return Blueprint(setup=(setup,), solution=(solve,), check=check, mutants={
            "not-committed": (solve.rsplit("\n", 1)[0],),
            "first-version": (f"cd {r}\nprintf '%s' '{first}' > {f}\ngit add {f}\n"
                              f"{GIT} commit -q -m \"{m}\"",),
        })
