"""C: fix a broken Makefile (link error) and the bug it was hiding."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families import _programs as prog
from synth.families._kit import write_step
from synth.spec import Blueprint

MAKEFILE = """CC = gcc
CFLAGS = -O1 -Wall
OBJS = OBJLIST

BIN: $(OBJS)
\t$(CC) $(CFLAGS) -o BIN $(OBJS)

%.o: %.c util.h
\t$(CC) $(CFLAGS) -c $<

clean:
\trm -f *.o BIN
"""


@family("c-fix-build", category="build-debug", difficulty=Difficulty.HARD, image="cpp",
        language="c")
class CFixBuild(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        p = prog.sample(rng)
        p["bin"] = rng.choice(["calc", "tool", "runner"])
        return p

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        b = p["bin"]
        return [
            f"`make` fails in /app/proj. Fix the build so that `make clean && make` produces "
            f"./{b}, and make sure ./{b} prints correct results (the function's comment in "
            f"util.h says what it computes).",
            f"The C project in /app/proj does not build with `make`. Repair it so a clean "
            f"`make` yields the program {b}, whose output must be correct for any input "
            f"(see util.h for the specification).",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        b, n = p["bin"], p["name"]
        spec = ("x limited to the range [lo, hi]" if p["kind"] == "clamp"
                else "the sum of the decimal digits of n >= 0")
        header = f"#ifndef UTIL_H\n#define UTIL_H\n/* {spec} */\n{prog.c_proto(p)}\n#endif\n"
        nargs = 3 if p["kind"] == "clamp" else 1
        call = ", ".join(f"atoi(argv[{i + 1}])" for i in range(nargs))
        main = (f"#include <stdio.h>\n#include <stdlib.h>\n#include \"util.h\"\n\n"
                f"int main(int argc, char **argv) {{\n    if (argc != {nargs + 1}) {{\n"
                f"        fprintf(stderr, \"usage: {b} {'X LO HI' if nargs == 3 else 'N'}\\n\");\n"
                f"        return 2;\n    }}\n    printf(\"%d\\n\", {n}({call}));\n    return 0;\n}}\n")
        broken = MAKEFILE.replace("OBJLIST", "main.o").replace("BIN", b)
        fixed = MAKEFILE.replace("OBJLIST", "main.o util.o").replace("BIN", b)
        cases = p["hidden"] + p["visible"]
        check = f"""
def test_clean_build():
    code, out = sh("make clean && make", cwd="/app/proj", timeout=120)
    assert code == 0, out[-800:]


def test_outputs():
    for args, want in {cases!r}:
        code, out = sh("./{b} " + " ".join(map(str, args)), cwd="/app/proj")
        assert code == 0 and out.strip() == str(want), (args, out, want)
"""
        fix_make = write_step("/app/proj/Makefile", fixed)
        fix_code = write_step("/app/proj/util.c", prog.c_src(p, buggy=False))
        return Blueprint(
            image="cpp",
            files={"/app/proj/Makefile": broken, "/app/proj/main.c": main,
                   "/app/proj/util.h": header, "/app/proj/util.c": prog.c_src(p, buggy=True)},
            solution=(fix_make, fix_code), check=check,
            mutants={"makefile-only": (fix_make,), "code-only": (fix_code,),
                     "hand-built": (fix_code, f"cd /app/proj && gcc -o {b} main.c util.c")})
