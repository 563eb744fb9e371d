"""Top-k word frequencies of a text."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families._kit import WORDS
from synth.spec import Blueprint


@family("word-frequency", category="text-processing", difficulty=Difficulty.MEDIUM)
class WordFreq(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        vocab = rng.sample(WORDS, 14)
        counts = rng.sample(range(3, 40), 14)  # distinct counts: the ranking is unambiguous
        bag = [w for w, c in zip(vocab, counts, strict=False) for _ in range(c)]
        rng.shuffle(bag)
        # Some occurrences capitalized, so case must be folded.
        bag = [w.capitalize() if rng.random() < 0.3 else w for w in bag]
        lines, line = [], []
        for w in bag:
            line.append(w)
            if len(line) >= rng.randint(5, 11):
                lines.append(" ".join(line) + rng.choice([".", ",", "!", ";", ""]))
                line = []
        lines.append(" ".join(line))
        return {"src": "/app/text.txt", "k": rng.randint(3, 7), "text": "\n".join(lines) + "\n",
                "out": rng.choice(["/app/top.txt", "/app/freq.txt"])}

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        s, k, o = p["src"], p["k"], p["out"]
        return [
            f"Count word frequencies in {s}. A word is a run of letters, compared "
            f"case-insensitively (lowercase it). Write the {k} most frequent words to {o}, one "
            f"per line as `word count`, most frequent first.",
            f"Produce {o}: the top {k} words of {s} by number of occurrences, ignoring case and "
            f"punctuation, each line `word count` (lowercase word, a space, the count), "
            f"highest count first.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        s, k, o = p["src"], p["k"], p["out"]
        pipe = (f"tr -cs 'A-Za-z' '\\n' < {s} | tr 'A-Z' 'a-z' | grep -v '^$' | sort | uniq -c "
                f"| sort -k1,1nr -k2,2 | head -n {k} | awk '{{print $2, $1}}' > {o}")
        check = f"""
import re
from collections import Counter


def test_top_words():
    words = re.findall(r"[a-z]+", text({s!r}).lower())
    want = [f"{{w}} {{c}}" for w, c in sorted(Counter(words).items(), key=lambda x: (-x[1], x[0]))[:{k}]]
    got = [ln.strip() for ln in text({o!r}).splitlines() if ln.strip()]
    assert got == want, (got, want)
"""
        return Blueprint(files={s: p["text"]}, solution=(pipe,), check=check, mutants={
            "case-sensitive": (pipe.replace("| tr 'A-Z' 'a-z' ", ""),),
            "one-short": (pipe.replace(f"head -n {k}", f"head -n {k - 1}"),),
        })
