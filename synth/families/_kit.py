"""Small helpers the family modules share: word lists, shell snippets, check preamble."""

from __future__ import annotations

import random
import string

# Our own short vocabulary (no copied lists): enough to make names and prose distinct.
WORDS = [
    "amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
    "juniper", "kestrel", "lagoon", "meadow", "nickel", "onyx", "pepper", "quartz", "raven",
    "saffron", "tundra", "umber", "violet", "willow", "xenon", "yarrow", "zephyr", "anchor",
    "beacon", "copper", "dune", "falcon", "glacier", "heron", "iris", "jasper", "kelp",
    "lotus", "marble", "nectar", "orchid", "pebble", "quill", "reef", "slate", "thistle",
    "upland", "vapor", "walnut", "yonder", "zinc",
]
NAMES = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "uma", "victor",
    "wendy", "xavier", "yvonne", "zoe",
]
SERVICES = ("auth", "billing", "search", "cart", "gateway", "mailer", "scheduler", "inventory")
CITIES = ("Lisbon", "Oslo", "Quito", "Hanoi", "Lagos", "Perth", "Tbilisi", "Cusco")


def words(rng: random.Random, k: int) -> list[str]:
    return rng.sample(WORDS, k)


def ident(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def py_step(code: str) -> str:
    """A shell step running a Python snippet (quoted heredoc: no shell expansion)."""
    return f"python3 - <<'PYEOF'\n{code.strip()}\nPYEOF"


def write_step(path: str, text: str) -> str:
    """A shell step writing a file verbatim."""
    return f"mkdir -p \"$(dirname {path})\"\ncat > {path} <<'TXTEOF'\n{text}TXTEOF"


CHECK_PREAMBLE = '''\
import json
import os
import subprocess
from pathlib import Path


def sh(cmd, cwd=None, timeout=60):
    """Run a shell command, returning (exit code, combined output)."""
    p = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def text(path):
    return Path(path).read_text()

'''
