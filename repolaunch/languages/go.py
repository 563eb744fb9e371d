"""Go: modules (go.mod, go.sum), tested with `go test -json`.

Setup downloads the module graph (`go mod download`, from the Go module proxy) and builds
the packages and their test binaries once (`go test -run '^$'`), so the module and build
caches are in the env image; tests then run with the network off and `GOPROXY=off`
(a missing module fails at once instead of timing out). `go test` rebuilds what changed
itself, so an instance at another commit needs nothing more. The report is the
`go test -json` event stream (`gotest-json`): ids are `TestName` and `TestName/sub_case`.

Toolchain by era: the Go image carries Debian's Go (1.19 on bookworm). A go.mod that asks
for Go 1.21 or newer (`go 1.22.3`, or a `toolchain go1.22.5` line), which 1.19 cannot even
parse, gets that Go from the module proxy at setup (`golang.org/toolchain`, the module the
go command itself switches toolchains with), unpacked to /opt/envfactory/go.

Versions: go.sum pins every module, so there is no date to resolve as of.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, first_match
from repolaunch.diagnose import rule, suites_towards
from repolaunch.languages import Plan, Traits, register

REPORT = "/tmp/envfactory/gotest.json"
TOOLCHAIN_DIR = "/opt/envfactory/go"
LOCAL_GO = (1, 19)  # the image's go (Debian bookworm); newer go.mod versions fetch one
OLDEST_PROXY_GO = (1, 21, 13)  # the last go1.21 release; golang.org/toolchain starts at 1.21
PROXY = "https://proxy.golang.org"
PATH = (f"{TOOLCHAIN_DIR}/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
        "/sbin:/bin")

_GO_LINE = re.compile(r"^go\s+(\d+)\.(\d+)(?:\.(\d+))?\s*$", re.M)
_TOOLCHAIN_LINE = re.compile(r"^toolchain\s+go(\d+)\.(\d+)(?:\.(\d+))?\s*$", re.M)


def required_go(repo: Path) -> tuple[int, int, int] | None:
    """The Go version go.mod asks for (the toolchain line wins), or None."""
    try:
        text = (repo / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = [tuple(int(g or 0) for g in m.groups())
             for rx in (_GO_LINE, _TOOLCHAIN_LINE) for m in rx.finditer(text)]
    return max(found) if found else None  # type: ignore[return-value]


def toolchain_step(version: tuple[int, int, int]) -> str:
    """Fetch go<version> for linux/amd64 from the module proxy into TOOLCHAIN_DIR."""
    name = f"go{version[0]}.{version[1]}.{version[2]}"
    mod = f"v0.0.1-{name}.linux-amd64"
    url = f"{PROXY}/golang.org/toolchain/@v/{mod}.zip"
    tmp = "/tmp/envfactory/toolchain"
    return (f"rm -rf {tmp} {TOOLCHAIN_DIR} && mkdir -p {tmp} /opt/envfactory"
            f" && curl -fsSL --retry 3 -o {tmp}/go.zip {url}"
            f" && unzip -q {tmp}/go.zip -d {tmp}"
            f" && mv {tmp}/golang.org/toolchain@{mod} {TOOLCHAIN_DIR}"
            f" && chmod -R a+rX {TOOLCHAIN_DIR} && chmod a+x {TOOLCHAIN_DIR}/bin/* "
            f"{TOOLCHAIN_DIR}/pkg/tool/*/* && rm -rf {tmp} && go version")


def _run_regex(tests_var: str) -> str:
    """Shell: the top-level test names of the ids in $tests_var -> R='^(A|B)$'.

    Subtest ids select their parent; the report then holds every subtest of it."""
    return f'R=$(for t in {tests_var}; do echo "${{t%%/*}}"; done | sort -u | paste -sd"|" -)'


# --------------------------------------------------------------------------- diagnose

@rule(r"go: go\.mod requires go >= ([\d.]+)|go\.mod requires go ([\d.]+)|"
      r"invalid go version '([\d.]+)'|unknown directive: toolchain")
def _go_version(m, plan, phase, step):
    if plan.language is Language.GO:
        yield from suites_towards(plan, "newer", "the module wants a newer Go")


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree) -> Facts:
    f = Facts(package_manager="go")
    if tree.has("go.mod"):
        f.build_system = "go-modules"
        f.cite("go.mod")
        mod = tree.read("go.mod")
        v = first_match(r"(?m)^go\s+(\d+\.\d+(?:\.\d+)?)", mod)
        if v:
            f.versions["go"] = v
        tc = first_match(r"(?m)^toolchain\s+go(\S+)", mod)
        if tc:
            f.versions["go-toolchain"] = tc
        module = first_match(r"(?m)^module\s+(\S+)", mod)
        if module:
            f.extra["module"] = module
    else:
        f.build_system = "gopath"
    if any(p.endswith("_test.go") for p in tree.with_ext(".go")):
        f.test_framework = "gotest"
    return f


@register("go")
class GoPlugin:
    language = Language.GO
    traits = Traits(
        image_family="go",
        extensions=(".go",),
        build_files=("go.mod",),
        test_files=(r"\w+_test\.go",),
        version_key="go",
        github_names=("Go",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        has_mod = (repo / "go.mod").is_file()
        vendored = (repo / "vendor" / "modules.txt").is_file()
        notes: list[str] = []
        setup: list[str] = []
        env = {"PATH": PATH, "GOPATH": "/root/go", "GOFLAGS": "-modcacherw",
               "GOTOOLCHAIN": "local", "CGO_ENABLED": "1"}
        want = required_go(repo)
        if want is not None and (want[0], want[1]) > LOCAL_GO:
            # the proxy serves toolchains from go1.21 on; an older ask gets the first of them
            # (Go 1 compatibility: a newer go builds it, and its dependencies may need it)
            setup.append(toolchain_step(want if want >= (1, 21, 0) else OLDEST_PROXY_GO))
            notes.append(f"go.mod asks for go{'.'.join(map(str, want))}: fetched from the "
                         "module proxy (golang.org/toolchain)")
        if has_mod and not vendored:
            setup.append("go mod download")
        elif vendored:
            notes.append("vendored modules: nothing to download")
        else:
            env["GO111MODULE"] = "off"
            notes.append("no go.mod: GOPATH mode (GO111MODULE=off)")
        setup.append("go build ./... && go test -count=1 -run '^$' ./... >/dev/null")

        base = "mkdir -p /tmp/envfactory && GOPROXY=off go test -json -count=1"
        per_test = (f"{_run_regex('{tests}')}; {base} -run \"^($R)\\$\" ./... > {REPORT}")
        return Plan(
            language=Language.GO,
            image_family="go",
            build_system="go-modules" if has_mod else "gopath",
            test_framework=detection.test_framework or "gotest",
            setup_steps=tuple(setup),
            test_command=f"{base} ./... > {REPORT}",
            report_format="gotest-json",
            report_path=REPORT,
            per_test_command=per_test,
            # the packages that hold the files (a Go test file is its directory's package;
            # a file under testdata/ is a fixture of the package above it: the go tool
            # ignores testdata directories, their package's tests read them); other files
            # say nothing, and with no package named at all every package runs
            scope_command=('P=$(for f in {tests}; do case "$f" in '
                           'testdata/*) echo "./.";; */testdata/*) echo "./${f%%/testdata/*}";; '
                           '*.go) echo "./$(dirname "$f")";; esac; done | sort -u); '
                           f"{base} ${{P:-./...}} > {REPORT}"),
            env=env,
            dependency_files=("go.mod", "go.sum", "**/go.mod", "**/go.sum", "go.work",
                              "go.work.sum", "vendor/modules.txt"),
            notes=tuple(notes),
        )
