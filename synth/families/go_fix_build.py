"""Go: fix a package that does not compile, without breaking its API."""

from __future__ import annotations

import random
from typing import Any

from envs.models import Difficulty
from synth.families import Family, family
from synth.families import _programs as prog
from synth.families._kit import write_step
from synth.spec import Blueprint

# Compile the standard packages the tasks use once, in a layer every Go task shares.
WARM = ("mkdir -p /tmp/warm && cd /tmp/warm && printf 'module warm\\ngo 1.19\\n' > go.mod && "
        "printf 'package warm\\nimport (\"strconv\"; \"testing\")\\nfunc TestW(t *testing.T) "
        "{ _ = strconv.Itoa(1) }\\n' > w_test.go && go test ./... >/dev/null && go vet ./... && "
        "cd / && rm -rf /tmp/warm")


@family("go-fix-build", category="build-debug", difficulty=Difficulty.MEDIUM, image="go",
        language="go")
class GoFixBuild(Family):
    def sample(self, rng: random.Random) -> dict[str, Any]:
        return prog.sample(rng)

    def phrasings(self, p: dict[str, Any]) -> list[str]:
        return [
            "The Go module in /app/proj does not compile (`go build ./...`). Fix it so that "
            "`go build ./...` and `go test ./...` succeed. Keep the package's exported "
            "functions and their behaviour.",
            "`go test ./...` in /app/proj fails with a build error. Repair the code (do not "
            "delete or change the exported API or the tests) until it builds and passes.",
        ]

    def implement(self, p: dict[str, Any]) -> Blueprint:
        f = prog.camel(p["name"])
        if p["kind"] == "clamp":
            (a, w) = p["visible"][0]
            visible = f'\tif got := Describe{f}({prog.args_text(a)}); got != "result={w}" {{\n'
        else:
            (a, w) = p["visible"][0]
            visible = f'\tif got := Describe{f}({prog.args_text(a)}); got != "result={w}" {{\n'
        test = (f"package calc\n\nimport \"testing\"\n\nfunc TestDescribe(t *testing.T) {{\n"
                f"{visible}\t\tt.Fatalf(\"got %q\", got)\n\t}}\n}}\n")
        hidden_cases = "".join(
            f'\tif got := Describe{f}({prog.args_text(a)}); got != "result={w}" {{\n'
            f'\t\tt.Errorf("{a}: got %q", got)\n\t}}\n'
            f'\tif got := {f}({prog.args_text(a)}); got != {w} {{\n\t\tt.Errorf("{a}: %d", got)\n\t}}\n'
            for a, w in p["hidden"] + p["visible"])
        hidden = f"package calc\n\nimport \"testing\"\n\nfunc TestHidden(t *testing.T) {{\n{hidden_cases}}}\n"
        check = f"""
HIDDEN = {hidden!r}


def test_builds():
    code, out = sh("go build ./...", cwd="/app/proj", timeout=120)
    assert code == 0, out[-800:]


def test_hidden_tests():
    Path("/app/proj/zz_hidden_test.go").write_text(HIDDEN)
    try:
        code, out = sh("go test ./...", cwd="/app/proj", timeout=120)
    finally:
        os.remove("/app/proj/zz_hidden_test.go")
    assert code == 0, out[-800:]
"""
        src = "/app/proj/calc.go"
        return Blueprint(
            image="go", prelude=(WARM,),
            files={"/app/proj/go.mod": "module example.com/proj\n\ngo 1.19\n",
                   src: prog.go_src(p, broken=True), "/app/proj/calc_test.go": test},
            solution=(write_step(src, prog.go_src(p, broken=False)),), check=check,
            mutants={
                "constant-describe": (write_step(src, prog.go_src(
                    p, broken=False, describe=f'"result={p["visible"][0][1]}"')),),
                "delete-the-test": ("rm /app/proj/calc_test.go",
                                    f"sed -i '/^import \"strconv\"/d; /strconv/c\\\\treturn \"\"' {src}"),
            })
