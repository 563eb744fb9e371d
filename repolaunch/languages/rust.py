"""Rust: Cargo packages and workspaces, tested with `cargo test`; libtest's own output.

Everything the factory knows of Rust is in this module: its traits (sources, build files,
test-file names, image family), detection facts, the plan and its diagnose rules. The
report is what libtest prints (format ``libtest``, `envs.reports.libtest`): ids are the
names it prints, ``tests::parses_units`` for a unit test in a module, ``parses_units``
for a top-level test of an integration-test file, as SWE-bench Multilingual lists them.

Setup fetches the crates (crates.io, network on) and compiles every test target once, so
the registry, the index and ``target/`` are in the env image; tests then run with
``--offline`` and the network off. A small runner (`RUNNER`, written into the image at
setup) maps the arguments the factory passes to cargo: test files become targets
(``tests/io.rs`` is ``--test io`` of the package that holds it, a file under ``src/`` the
package's lib and bins), other arguments are test names run ``--exact``; no argument is
the whole workspace. Each package runs from its own directory, output of all of them is
concatenated, and the exit status is the worst one.

Toolchain by era: Debian's rustc (1.48 on bullseye, 1.63 on bookworm, 1.85 on trixie); no
rustup here. A committed lock file of format 1-3 is the project's own era: the default
suite first. Cargo before 1.68 reads crates.io's index from GitHub, which cannot be reached
here, so the crates such a lock file pins are vendored from static.crates.io (checked
against its checksums) into a directory source. No lock file (crates resolved today), a
version-4 lock file, a ``rust-version`` past bookworm's rustc or edition 2024 start on
trixie, whose Cargo picks crate versions that fit the toolchain
(``incompatible-rust-versions = "fallback"``). A
build that says the toolchain is too old moves to a newer suite; one that breaks inside a
registry crate on a new toolchain (inference changes, new lints made errors) moves to an
older one. Warnings are never errors here (``RUSTFLAGS=-Awarnings``), as in SWE-bench's
own Rust specifications.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.config import get_settings
from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, first_match, read_toml
from repolaunch.diagnose import Action, rule, suites_towards
from repolaunch.languages import Plan, Traits, register

RUNNER = "/opt/envfactory/cargo-tests"
CARGO_HOME = "/opt/envfactory/cargo"
RUSTC_BY_SUITE = {"bullseye": (1, 48), "bookworm": (1, 63), "trixie": (1, 85)}
NEW_SUITE = "trixie"
ENV = {
    "CARGO_HOME": CARGO_HOME,
    "CARGO_TERM_COLOR": "never",
    "CARGO_INCREMENTAL": "0",
    "CARGO_NET_RETRY": "5",
    "CARGO_REGISTRIES_CRATES_IO_PROTOCOL": "sparse",  # cargo 1.68-1.69 (later: the default)
    # Cargo >= 1.84: crates whose rust-version the toolchain meets, where there is a choice
    "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS": "fallback",
    "RUSTFLAGS": "-Awarnings",
    "RUST_BACKTRACE": "0",
    "PATH": f"{CARGO_HOME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
}

# The runner, in Python (the base image has python3): files to cargo targets, names to
# exact filters, one cargo run per package, worst status out.
_RUNNER_SOURCE = r'''#!/usr/bin/env python3
import os, re, subprocess, sys

def package_dir(path):
    d = os.path.dirname(os.path.abspath(path))
    while True:
        toml = os.path.join(d, "Cargo.toml")
        if os.path.isfile(toml):
            with open(toml, encoding="utf-8", errors="replace") as fh:
                if re.search(r"(?m)^\[package\]", fh.read()):
                    return d
        if d in ("/", os.getcwd()) or not d.startswith(os.getcwd()):
            return os.getcwd()
        d = os.path.dirname(d)

def target(rel):
    """The cargo target options of a file, relative to its package ([]: the package)."""
    parts = rel.split("/")
    stem = parts[-1][:-3]
    if parts[0] in ("tests", "benches", "examples") and len(parts) >= 2:
        name = stem if len(parts) == 2 else parts[1]
        flag = {"tests": "--test", "benches": "--bench", "examples": "--example"}[parts[0]]
        return [(flag, name)]
    if parts[0] == "src" and len(parts) >= 3 and parts[1] == "bin":
        return [("--bin", stem if len(parts) == 3 else parts[2])]
    if parts[0] == "src":
        return [("--lib",), ("--bins",)] if parts[-1] == "main.rs" else [("--lib",)]
    return []

# cfgs rustc or Cargo set themselves; any other a test file requires is the project's own
BUILTIN = {"test", "unix", "windows", "debug_assertions", "doc", "doctest", "miri",
           "proc_macro", "panic", "overflow_checks", "all", "any", "not", "feature"}

def required(path, package):
    """What a test file's own ``#![cfg(...)]`` asks for: (features the package declares,
    custom cfgs), e.g. ``#![cfg(all(feature = "full", my_unstable))]``; the file's
    tests are compiled only with them, as its maintainers' CI runs it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8000)
        with open(os.path.join(package, "Cargo.toml"), encoding="utf-8", errors="replace") as fh:
            toml = fh.read()
    except OSError:
        return [], []
    features, cfgs = [], []
    for attr in re.findall(r"#!\[cfg\((.*?)\)\]", head, re.S):  # it may span lines
        prev = None
        while prev != attr:  # positive conditions only: drop not(...) groups
            prev, attr = attr, re.sub(r"not\([^()]*(?:\([^()]*\))*[^()]*\)", "", attr)
        declared = toml.split("[features]", 1)[1].split("\n[", 1)[0] if "[features]" in toml else ""
        for f in re.findall(r'feature\s*=\s*"([^"]+)"', attr):
            if re.search(r'(?m)^\s*"?%s"?\s*=' % re.escape(f), declared) and f not in features:
                features.append(f)
        attr = re.sub(r'\w+\s*=\s*"[^"]*"', "", attr)
        for c in re.findall(r"\b([A-Za-z_]\w*)\b", attr):
            if c not in BUILTIN and not c.startswith("target_") and c not in cfgs:
                cfgs.append(c)
    return features, cfgs

args = sys.argv[1:]
# paths (a test patch's files; fixtures among them say nothing to cargo) and test names
paths = [a for a in args if "/" in a or os.path.exists(a)]
files = [a for a in paths if a.endswith(".rs")]
names = [a for a in args if a not in paths]
root = os.getcwd()
runs = {}  # package dir -> target options (None: the whole package)
wants = {}  # package dir -> (features, cfgs) its test files require
for f in files:
    d = package_dir(f)
    feats, cfgs = required(f, d)
    have = wants.setdefault(d, ([], []))
    have[0].extend(x for x in feats if x not in have[0])
    have[1].extend(x for x in cfgs if x not in have[1])
    t = target(os.path.relpath(os.path.abspath(f), d))
    if not t:
        runs[d] = None
    elif runs.get(d, []) is not None:
        runs[d] = runs.get(d, []) + [x for x in t if x not in runs.get(d, [])]
if not files:  # names only, or nothing: the whole workspace
    runs = {root: [("--workspace",)] if os.path.isfile("Cargo.toml") else []}
filters = (["--"] + names + ["--exact"]) if names else []
worst = 0
for d, tgt in runs.items():
    cmd = ["cargo", "test", "--offline", "--no-fail-fast"] + [o for t in tgt or [] for o in t]
    feats, cfgs = wants.get(d, ([], []))
    env = dict(os.environ)
    if feats:
        cmd += ["--features", ",".join(feats)]
    if cfgs:
        env["RUSTFLAGS"] = " ".join([env.get("RUSTFLAGS", "")] + ["--cfg " + c for c in cfgs]).strip()
    cmd += filters
    print("envfactory: (cd %s && %s%s)" % (os.path.relpath(d, root), "RUSTFLAGS=%r " % env["RUSTFLAGS"]
          if cfgs else "", " ".join(cmd)), flush=True)
    rc = subprocess.call(cmd, cwd=d, stderr=subprocess.STDOUT, env=env)
    worst = max(worst, rc)
sys.exit(worst)
'''


# Crates for a toolchain older than the sparse index (cargo < 1.68 reads crates.io's index
# from GitHub, which cannot be reached here): every registry package the lock file pins is
# downloaded from static.crates.io, checked against the lock's checksum and unpacked into a
# directory source that replaces crates.io. Exit 3: nothing to vendor (no lock file, or no
# registry package in it). Git dependencies are left to cargo.
VENDOR = "/opt/envfactory/cargo-vendor"
_VENDOR_SOURCE = r"""#!/usr/bin/env python3
import concurrent.futures, hashlib, io, json, os, re, sys, tarfile, time, urllib.request

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
try:
    with open("Cargo.lock", encoding="utf-8", errors="replace") as fh:
        lock = fh.read()
except OSError:
    sys.exit(3)
pins, table, cur = {}, None, {}

def close(entry):
    if entry.get("source") == CRATES_IO and entry.get("name") and entry.get("version"):
        pins[(entry["name"], entry["version"])] = entry.get("checksum")

for line in lock.splitlines() + ["[end]"]:
    if line.startswith("["):
        if table == "package":
            close(cur)
        table, cur = line.strip("[] \t"), {}
        continue
    m = re.match(r'^(name|version|source|checksum) = "([^"]*)"', line)
    if table == "package" and m:
        cur[m.group(1)] = m.group(2)
    m = re.match(r'^"checksum (\S+) (\S+) \(([^)]*)\)" = "([0-9a-f]{64})"', line)
    if table == "metadata" and m and m.group(3) == CRATES_IO:  # lock format 1
        pins[(m.group(1), m.group(2))] = m.group(4)
if not pins:
    sys.exit(3)
home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
vendor = os.path.join(home, "vendor")
os.makedirs(vendor, exist_ok=True)

def get(key):
    name, version = key
    dest = os.path.join(vendor, "%s-%s" % (name, version))
    if os.path.isfile(os.path.join(dest, ".cargo-checksum.json")):
        return None
    url = "https://static.crates.io/crates/%s/%s-%s.crate" % (name, name, version)
    for attempt in range(4):
        try:
            data = urllib.request.urlopen(url, timeout=120).read()
            break
        except Exception as exc:
            if attempt == 3:
                return "%s %s: %s" % (name, version, exc)
            time.sleep(2 * (attempt + 1))
    sha = hashlib.sha256(data).hexdigest()
    if pins[key] and sha != pins[key]:
        return "%s %s: checksum %s, the lock file says %s" % (name, version, sha, pins[key])
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in member.name.split("/") \
                    or not (member.isfile() or member.isdir()):
                continue
            tar.extract(member, vendor)
    with open(os.path.join(dest, ".cargo-checksum.json"), "w") as fh:
        json.dump({"files": {}, "package": sha}, fh)
    return None

with concurrent.futures.ThreadPoolExecutor(8) as pool:
    errors = [e for e in pool.map(get, sorted(pins)) if e]
if errors:
    sys.exit("envfactory: %d crate(s) could not be vendored: %s" % (len(errors), "; ".join(errors[:5])))
with open(os.path.join(home, "config.toml"), "w") as fh:
    fh.write('[source.crates-io]\nreplace-with = "envfactory-vendor"\n\n'
             '[source.envfactory-vendor]\ndirectory = "%s"\n' % vendor)
print("envfactory: %d crates vendored from static.crates.io" % len(pins))
"""


def _rustc_wanted(repo: Path, manifest: dict) -> tuple[int, int] | None:
    """The rustc the manifest or the toolchain file asks for, as (major, minor)."""
    pkg = manifest.get("package") if isinstance(manifest.get("package"), dict) else {}
    ws = manifest.get("workspace") if isinstance(manifest.get("workspace"), dict) else {}
    wpkg = ws.get("package") if isinstance(ws.get("package"), dict) else {}
    texts = [str(pkg.get("rust-version") or ""), str(wpkg.get("rust-version") or "")]
    for name in ("rust-toolchain.toml", "rust-toolchain"):
        p = repo / name
        if p.is_file():
            text = p.read_text(encoding="utf-8", errors="replace")
            texts.append(first_match(r"channel\s*=\s*\"(\d+\.\d+)", text) or
                         first_match(r"^\s*(\d+\.\d+)", text) or "")
    found = [tuple(int(x) for x in m.groups())
             for t in texts if (m := re.match(r"(\d+)\.(\d+)", t))]
    return max(found) if found else None  # type: ignore[return-value]


def _lock_version(repo: Path) -> int | None:
    lock = repo / "Cargo.lock"
    if not lock.is_file():
        return None
    head = lock.read_text(encoding="utf-8", errors="replace")[:2000]
    v = first_match(r"(?m)^version\s*=\s*(\d+)", head)
    return int(v) if v else 1  # the first formats had no version line


def _has_dependencies(repo: Path, manifest: dict) -> bool:
    """Whether anything is fetched from a registry: the lock file lists packages with a
    source (the workspace's own have none), else the manifest has dependency tables."""
    try:
        lock = (repo / "Cargo.lock").read_text(encoding="utf-8", errors="replace")
    except OSError:
        lock = ""
    if lock:
        return 'source = "registry+' in lock
    tables = ("dependencies", "dev-dependencies", "build-dependencies")
    return any(manifest.get(t) for t in tables) or isinstance(manifest.get("workspace"), dict)


def choose_suite(repo: Path, manifest: dict) -> tuple[str | None, str]:
    """(suite, why): None is the default suite."""
    lock = _lock_version(repo)
    wanted = _rustc_wanted(repo, manifest)
    editions = {str(t.get("edition") or "") for key in ("package", "workspace")
                if isinstance(t := manifest.get(key), dict)}
    default = get_settings().debian_suite
    have = RUSTC_BY_SUITE.get(default, (0, 0))
    if wanted and wanted > have:
        return NEW_SUITE, f"rust-version {wanted[0]}.{wanted[1]} is past rustc " \
                          f"{have[0]}.{have[1]} of Debian {default}"
    if "2024" in editions:
        return NEW_SUITE, "edition 2024"
    if lock is None:
        return NEW_SUITE, "no Cargo.lock: crates resolve as of today, so today's toolchain"
    if lock >= 4:
        return NEW_SUITE, "Cargo.lock format 4 (cargo 1.78 or newer)"
    if _has_dependencies(repo, manifest):
        # cargo before 1.68 reads crates.io's index from GitHub, which cannot be reached
        # here: the crates the lock file pins are vendored from static.crates.io instead
        return None, f"Cargo.lock format {lock}, its crates vendored: the default suite's " \
                     "toolchain"
    return None, f"Cargo.lock format {lock}: the default suite's toolchain"


def read_facts(tree: Tree) -> Facts:
    f = Facts(build_system="cargo", package_manager="cargo", test_framework="libtest")
    manifest = read_toml(tree.read("Cargo.toml"))
    f.cite("Cargo.toml")
    if tree.has("Cargo.lock"):
        f.extra["lockfile"] = "Cargo.lock"
    if isinstance(manifest.get("workspace"), dict):
        f.extra["workspace"] = "yes"
    if tree.has(".config/nextest.toml"):
        f.extra["nextest"] = ".config/nextest.toml"  # still run with cargo test: same ids
    wanted = _rustc_wanted(tree.root, manifest)
    if wanted:
        f.versions["rust"] = f"{wanted[0]}.{wanted[1]}"
    return f


# --------------------------------------------------------------------------- diagnose

@rule(r"requires rustc \d+\.\d+(?:\.\d+)? or newer|"
      r"lock file version `?\d+`? (?:was found|requires)|"
      r"feature `edition20\d\d` is required|"
      r"is only supported (?:on|with) (?:the )?(?:nightly|Rust \d+\.\d+)|"
      r"this version of Cargo is older than the `20\d\d` edition|"
      r"Unable to update registry `crates-io`", "setup,test")
def _rustc_too_old(m, plan, phase, step):
    if plan.language is Language.RUST:
        yield from suites_towards(plan, "newer", "the crates want a newer rustc")


# Steps a registry crate down to its newest earlier release that the lock file accepts
# (`cargo update --precise`) and this toolchain builds (the test build no longer fails in
# it), reading the
# releases from crates.io's sparse index (which has no dates to go by).
_STEP_DOWN = r"""python3 - {name} {version} <<'ENVFACTORY_PY'
import json, re, subprocess, sys, urllib.request

def releases(name, below):
    n = name.lower()
    path = {1: "1/" + n, 2: "2/" + n, 3: "3/%s/%s" % (n[0], n)}.get(
        len(n), "%s/%s/%s" % (n[:2], n[2:4], n))
    text = urllib.request.urlopen("https://index.crates.io/" + path, timeout=60).read().decode()
    key = lambda v: tuple(int(x) for x in v.split("+")[0].split("-")[0].split("."))
    return sorted({r["vers"] for r in map(json.loads, filter(str.strip, text.splitlines()))
                   if not r.get("yanked") and "-" not in r["vers"] and key(r["vers"]) < key(below)},
                  key=key, reverse=True)[:10]

def cargo(*args):
    return subprocess.call(["cargo", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def builds(*names):
    # the project's test build no longer fails in these crates (its own code may still)
    p = subprocess.run(["cargo", "test", "--workspace", "--no-run"], capture_output=True, text=True)
    return p.returncode == 0 or not any("could not compile `%s`" % n in p.stderr for n in names)

def dependents(name, version):
    # the registry packages whose entry in Cargo.lock depends on it (not the project's own)
    with open("Cargo.lock", encoding="utf-8") as fh:
        blocks = fh.read().split("[[package]]")
    out = []
    for b in blocks:
        n = re.search(r'^name = "([^"]+)"', b, re.M)
        v = re.search(r'^version = "([^"]+)"', b, re.M)
        deps = re.findall(r'^\s*"([^" ]+)(?: ([^" ]+))?', b.split("dependencies = [", 1)[-1], re.M) \
            if "dependencies = [" in b else []
        if n and v and "source = " in b and any(
                d == name and (not dv or dv == version) for d, dv in deps):
            out.append((n.group(1), v.group(1)))
    return out

def step(name, cur, depth):
    # the newest earlier release the lock accepts and that builds; failing that, each
    # registry dependent a release further back, then the crate again (its releases
    # that the dependent's newer release kept out may fit now)
    at = cur
    for v in releases(name, cur):
        if cargo("update", "-p", name + "@" + at, "--precise", v) != 0:
            continue  # outside what the dependents accept
        at = v
        if builds(name):
            print("envfactory: %s %s -> %s" % (name, cur, v))
            return True
    if at != cur:
        cargo("update", "-p", name + "@" + at, "--precise", cur)
    if depth > 0:
        return False
    for dep, dv in dependents(name, cur):
        dat = dv
        for w in releases(dep, dv)[:6]:
            if cargo("update", "-p", dep + "@" + dat, "--precise", w) != 0:
                continue
            dat = w
            held = [v for n, v in locked(name)]
            if cur not in held:  # the older dependent took an older crate: does it build?
                if builds(name, dep):
                    print("envfactory: %s %s -> %s (for %s)" % (dep, dv, w, name))
                    return True
            elif step(name, cur, depth + 1):
                print("envfactory: %s %s -> %s" % (dep, dv, w))
                return True
        if dat != dv:
            cargo("update", "-p", dep + "@" + dat, "--precise", dv)
    return False

def locked(name):
    with open("Cargo.lock", encoding="utf-8") as fh:
        text = fh.read()
    return re.findall(r'^name = "(%s)"\nversion = "([^"]+)"' % re.escape(name), text, re.M)

sys.exit(0 if step(sys.argv[1], sys.argv[2], 0) else
         "envfactory: no earlier release of %s (or of what needs it) builds here" % sys.argv[1])
ENVFACTORY_PY"""


def step_down(name: str, version: str) -> str:
    """Shell: the crate `name` at `version` replaced by its newest earlier release."""
    return _STEP_DOWN.replace("{name}", name).replace("{version}", version)


# A registry crate newer than the toolchain: it uses a feature stabilized after this rustc
# (E0658) and declares no rust-version the resolver could have kept it back by. Crates
# are resolved today when there is no lock file, so the crate steps down a release.
@rule(r"^error\[E0658\][^\n]*\n\s*--> \S*/(registry/src/[^/\s]+|vendor)/"
      r"([A-Za-z0-9_-]+?)-(\d+\.\d+\.\d+[^/\s]*)/", "setup,test")
def _crate_too_new(m, plan, phase, step):
    if plan.language is not Language.RUST:
        return
    if m.group(1) == "vendor":  # pinned by the lock file: the project wants a newer rustc
        yield from suites_towards(plan, "newer", f"{m.group(2)} {m.group(3)} (locked) needs "
                                  "a newer rustc")
    else:
        yield Action("shell", step_down(m.group(2), m.group(3)),
                     f"{m.group(2)} {m.group(3)} needs a newer rustc: an earlier release")


# An error inside a crate from the registry (not the project's own code): old crate code
# that a newer rustc no longer accepts, so an older toolchain. (A feature not yet stable,
# E0658, is the opposite: the crate is too new; see above.)
@rule(r"^error(?:\[E(?!0658)\d+\])?: [^\n]*\n\s*--> \S*/(?:registry/src|vendor)/", "setup,test")
def _crate_too_old(m, plan, phase, step):
    if plan.language is Language.RUST:
        yield from suites_towards(plan, "older", "a registry crate no longer compiles")


@register("rust")
class RustPlugin:
    language = Language.RUST
    traits = Traits(
        image_family="rust",
        extensions=(".rs",),
        build_files=("Cargo.toml", "Cargo.lock"),
        # most Rust tests live in `#[cfg(test)]` modules of the sources or under tests/
        # (a test directory for every language); these are the names that say it alone
        test_files=(r"\w+_tests?\.rs", r"tests?\.rs"),
        version_key="rust",
        github_names=("Rust",),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection, *, suite: str | None = None) -> Plan:
        repo = Path(repo)
        manifest = read_toml((repo / "Cargo.toml").read_text(encoding="utf-8", errors="replace")
                             if (repo / "Cargo.toml").is_file() else "")
        chosen, why = choose_suite(repo, manifest)
        notes = [f"toolchain: {why}"]
        workspace = " --workspace" if isinstance(manifest.get("workspace"), dict) else ""
        setup = (
            f"mkdir -p /opt/envfactory && cat > {RUNNER} <<'ENVFACTORY_RUNNER'\n"
            f"{_RUNNER_SOURCE}ENVFACTORY_RUNNER\nchmod +x {RUNNER} && rustc --version",
            f"cat > {VENDOR} <<'ENVFACTORY_VENDOR'\n{_VENDOR_SOURCE}ENVFACTORY_VENDOR\n"
            # vendored crates first; a lock file they do not satisfy falls back to crates.io
            f"if python3 {VENDOR} && cargo fetch; then :; else "
            f'rm -f "$CARGO_HOME/config.toml"; cargo fetch; fi',
            f"cargo test{workspace} --no-run",
        )
        return Plan(
            language=Language.RUST,
            image_family="rust",
            suite=suite if suite is not None else chosen,
            build_system="cargo",
            test_framework=detection.test_framework or "libtest",
            setup_steps=setup,
            test_command=RUNNER,
            report_format="libtest",
            per_test_command=f"{RUNNER} {{tests}}",
            scope_command=f"{RUNNER} {{tests}}",  # the runner takes files and names
            check_command=f"cargo test --offline{workspace} --no-run",
            env=dict(ENV),
            dependency_files=("Cargo.toml", "**/Cargo.toml", "Cargo.lock", "rust-toolchain",
                              "rust-toolchain.toml", ".cargo/config.toml", ".cargo/config"),
            notes=tuple(notes),
        )
