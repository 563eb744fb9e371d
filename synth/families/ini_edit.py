"""Edit one key of an INI file in one section, add another, keep comments."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.spec import Blueprint


@family("ini-edit", category="config-editing", difficulty=Difficulty.EASY)
class IniEdit(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        sections = rng.sample(["database", "web", "cache", "worker"], 3)
        ports = rng.sample(range(2000, 9000), 4)
        return {"path": rng.choice(["/app/config.ini", "/app/etc/service.ini"]),
                "sections": sections, "ports": ports[:3], "new_port": ports[3],
                "target": sections[rng.randint(0, 2)], "add_to": sections[rng.randint(0, 2)],
                "add_key": rng.choice(["timeout", "retries", "pool_size"]),
                "add_value": str(rng.randint(2, 99))}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        f, t, np_, a, k, v = (p["path"], p["target"], p["new_port"], p["add_to"], p["add_key"],
                              p["add_value"])
        return [
            f"In {f}, change `port` in the [{t}] section to {np_} (other sections keep their "
            f"port), and add `{k} = {v}` to the [{a}] section. Keep all comments.",
            f"Edit the INI file {f}: [{t}] port must become {np_} while the other sections' "
            f"ports stay unchanged; section [{a}] gets a new key {k} with value {v}. Comment "
            f"lines must survive.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        f, t, np_, a, k, v = (p["path"], p["target"], p["new_port"], p["add_to"], p["add_key"],
                              p["add_value"])
        lines = ["; service configuration", ""]
        for s, port in zip(p["sections"], p["ports"], strict=False):
            lines += [f"[{s}]", f"# settings for {s}", f"port = {port}", "enabled = true", ""]
        content = "\n".join(lines)
        want = {s: {"port": str(port), "enabled": "true"} for s, port in zip(p["sections"], p["ports"], strict=False)}
        want[t]["port"] = str(np_)
        want[a][k] = v
        comments = [ln for ln in lines if ln.startswith(("#", ";"))]
        solve = (f"sed -i '/^\\[{t}\\]/,/^\\[/ s/^port = .*/port = {np_}/' {f}",
                 f"sed -i '/^\\[{a}\\]/a {k} = {v}' {f}")
        check = f"""
import configparser


def test_values():
    cp = configparser.ConfigParser()
    cp.read({f!r})
    got = {{s: dict(cp[s]) for s in cp.sections()}}
    assert got == {want!r}, got


def test_comments_kept():
    lines = text({f!r}).splitlines()
    for c in {comments!r}:
        assert c in lines, c
"""
        return Blueprint(files={f: content}, solution=solve, check=check, mutants={
            "every-port": (f"sed -i 's/^port = .*/port = {np_}/' {f}", solve[1]),
            "configparser-rewrite": (
                f"python3 -c \"import configparser as c; p=c.ConfigParser(); p.read('{f}'); "
                f"p['{t}']['port']='{np_}'; p['{a}']['{k}']='{v}'; p.write(open('{f}','w'))\"",),
        })
