"""Find the commit that introduced a line."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS, ident
from synth.spec import Blueprint

GIT = "git -c user.name=Dev -c user.email=dev@example.invalid"


def repo_script(path: str, commits: list[tuple[str, str, str]]) -> str:
    """Shell that makes a repository with fixed dates: (file, appended line, message)."""
    out = [f"mkdir -p {path} && cd {path} && git init -q -b main ."]
    for i, (f, line, msg) in enumerate(commits):
        date = f"2024-01-{i + 1:02d}T12:00:00Z"
        out.append(f"mkdir -p $(dirname {f}) && echo '{line}' >> {f} && git add -A && "
                   f"GIT_AUTHOR_DATE={date} GIT_COMMITTER_DATE={date} {GIT} commit -q -m '{msg}'")
    return "\n".join(out)


@family("git-find-commit", category="git", difficulty=Difficulty.MEDIUM)
class GitFindCommit(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(5, 9)
        at = rng.randint(1, n - 3)
        key = rng.choice(["API_TOKEN", "FEATURE_FLAG", "MAX_WORKERS", "CACHE_TTL"])
        value = ident(rng, 8)
        commits = []
        for i in range(n):
            if i == at:
                commits.append(("config.env", f"{key}={value}", f"configure {rng.choice(WORDS)}"))
            else:
                f = rng.choice(["notes.md", "config.env", "src/app.txt"])
                commits.append((f, f"{rng.choice(WORDS)} {i}", f"update {rng.choice(WORDS)} {i}"))
        return {"repo": "/app/repo", "line": f"{key}={value}", "commits": commits,
                "out": rng.choice(["/app/commit.txt", "/app/answer.txt"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        r, line, o = p["repo"], p["line"], p["out"]
        return [
            f"In the git repository {r}, find the commit that added the line `{line}` to "
            f"config.env. Write its full 40-character hash to {o}.",
            f"Someone introduced `{line}` into config.env of the repo at {r}. Which commit was "
            f"it? Save the complete commit hash (40 hex characters) in {o}.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        r, line, o = p["repo"], p["line"], p["out"]
        commits = [tuple(c) for c in p["commits"]]
        solve = f"cd {r} && git log --format=%H -S'{line}' -- config.env | tail -n 1 > {o}"
        check = f"""
def test_hash():
    got = text({o!r}).strip()
    _, log = sh("git -C {r} rev-list --reverse HEAD")
    want = None
    for c in log.split():
        code, body = sh(f"git -C {r} show {{c}}:config.env")
        if code == 0 and {line!r} in body.splitlines():
            want = c
            break
    assert want and got == want, (got, want)
"""
        return Blueprint(setup=(repo_script(r, commits),), solution=(solve,), check=check,
                         mutants={
                             "head": (f"git -C {r} rev-parse HEAD > {o}",),
                             "parent": (solve.replace("> " + o, f"| xargs -I{{}} git -C {r} "
                                                      f"rev-parse {{}}^ > {o}"),),
                         })
