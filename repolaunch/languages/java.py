"""Java: Maven (pom.xml), Gradle (a wrapper or gradle on PATH), or plain javac + JUnit.

Every test command rebuilds from the checkout (`clean` for the build tools, a fresh class
folder outside the checkout for javac), since an instance at another commit is the env
image plus `git checkout -f <sha> && git clean -fd`, which keeps git-ignored build output.
Reports are JUnit XML (Surefire's, Gradle's or the JUnit console launcher's), all of them
concatenated into one file, read as `junit:java`: ids are `package.Class#method`.

- Maven: setup runs `mvn clean test` once with the network (failing tests ignored) so every
  plugin and provider is in ~/.m2; tests then run offline (`-o`).
- Gradle: `./gradlew` (or `gradle`) `test`, offline at test time. No Gradle ships in the
  Java image, so a build without a wrapper needs one installed first.
- Plain javac: JUnit comes from Maven Central at setup into /opt/envfactory/lib — the
  JUnit Platform console launcher (Jupiter and Vintage engines), plus JUnit 4 and Hamcrest
  when the tests use JUnit 4 — checked against Central's SHA-1 files. Every `*.java` file
  compiles into one class folder with `lib/*.jar`; the launcher scans it.

Versions are pinned by the build files themselves (Maven's fixed versions), so there is no
date to resolve as of.
"""

from __future__ import annotations

import re
from pathlib import Path

from envs.models import Language
from repolaunch.detect import Detection, Facts, Tree, first_match
from repolaunch.diagnose import Action, rule, suites_towards
from repolaunch.languages import Plan, Traits, register

REPORT = "/tmp/envfactory/junit.xml"
LIB = "/opt/envfactory/lib"
BUILD = "/tmp/envfactory/java"
CENTRAL = "https://repo.maven.apache.org/maven2"
CONSOLE_VERSION = "1.10.2"
CONSOLE_JAR = f"junit-platform-console-standalone-{CONSOLE_VERSION}.jar"
JUNIT4 = (("junit", "junit", "4.13.2"), ("org.hamcrest", "hamcrest-core", "1.3"))
CONSOLE = (("org.junit.platform", "junit-platform-console-standalone", CONSOLE_VERSION),)
# Maven 3.8's super POM binds Surefire 2.12.4, which finds no JUnit 5 tests; a pom that
# pins no Surefire (and has no parent that might) gets this one run explicitly.
SUREFIRE = "org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test"

_SKIP_DIRS = {".git", "target", "build", "out", "node_modules", ".gradle"}
_JUNIT5 = re.compile(r"^\s*import\s+(static\s+)?org\.junit\.jupiter\.", re.M)
_JUNIT4 = re.compile(r"^\s*import\s+(static\s+)?(org\.junit\.(?!jupiter|platform)|junit\.)", re.M)
# "found a <failure> or <error>" in a JUnit report: the exit code a runner told to ignore
# test failures should still have given
_FAILED = "grep -qE '<(failure|error)[ >/]'"


def java_files(repo: Path) -> list[Path]:
    out = []
    for path in repo.rglob("*.java"):
        if not _SKIP_DIRS.intersection(path.relative_to(repo).parts[:-1]):
            out.append(path)
    return sorted(out)


def junit_flavors(repo: Path) -> set[str]:
    """{"junit5", "junit4"}: which JUnit APIs the sources import."""
    found: set[str] = set()
    for path in java_files(repo):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _JUNIT5.search(text):
            found.add("junit5")
        if _JUNIT4.search(text):
            found.add("junit4")
    return found


def build_system(repo: Path) -> str:
    if (repo / "pom.xml").is_file():
        return "maven"
    if any((repo / f).is_file() for f in ("build.gradle", "build.gradle.kts", "gradlew",
                                           "settings.gradle", "settings.gradle.kts")):
        return "gradle"
    if (repo / "build.xml").is_file():
        return "ant"
    return "javac"


def _finish(run: str, where: str) -> str:
    """Run, then concatenate the TEST-*.xml reports `find {where}` lists into REPORT; the
    exit code is the run's, or 1 when it said 0 but a report holds a failure."""
    return (f"mkdir -p /tmp/envfactory && rm -f {REPORT}; {run}; rc=$?;"
            f" find {where} -name 'TEST-*.xml' -exec cat {{}} + > {REPORT} 2>/dev/null;"
            f" if [ $rc -eq 0 ] && {_FAILED} {REPORT}; then rc=1; fi; exit $rc")


def _fetch(coords: tuple[tuple[str, str, str], ...]) -> str:
    parts = [f"mkdir -p {LIB}", f"cd {LIB}"]
    for group, artifact, version in coords:
        jar = f"{artifact}-{version}.jar"
        url = f"{CENTRAL}/{group.replace('.', '/')}/{artifact}/{version}/{jar}"
        parts.append(f"curl -fsSL --retry 3 -o {jar} {url}")
        parts.append(f'echo "$(curl -fsSL --retry 3 {url}.sha1 | cut -c1-40)  {jar}" | sha1sum -c -')
    return " && ".join(parts)


def default_surefire_too_old(repo: Path) -> bool:
    """Does the pom leave Surefire to Maven's default while its tests use JUnit 5?"""
    poms = [repo / "pom.xml", *repo.glob("*/pom.xml")]
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in poms
                     if p.is_file())
    return ("maven-surefire-plugin" not in text and "<parent>" not in text
            and "junit5" in junit_flavors(repo))


# The test classes of the files given: each ``.java`` file's class (its base name).
_CLASSES = ("C=$(for f in {tests}; do case \"$f\" in *.java) basename \"$f\" .java;; esac; "
            "done | sort -u)")


def _maven(repo: Path, detection: Detection) -> dict:
    flags = "-B -ntp -Dstyle.color=never"
    goals = "clean test"
    notes = ["Maven: dependencies and plugins resolved at setup, tests offline (-o)"]
    if default_surefire_too_old(repo):
        goals = f"clean test-compile {SUREFIRE}"
        notes.append(f"no Surefire in the pom and JUnit 5 tests: {SUREFIRE.rsplit(':', 1)[0]}")
    run = f"mvn {flags} -o -Dmaven.test.failure.ignore=true {goals}"
    per_test = (f'T=""; for t in {{tests}}; do T="$T,$t"; done;'
                f' mvn {flags} -o -Dmaven.test.failure.ignore=true'
                f' -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false'
                f' -Dtest="${{T#,}}" {goals}')
    where = ". -path '*/target/surefire-reports/*'"
    # SWE-bench's scope: the test patch's classes (Surefire's -Dtest), else everything
    scope = (f'{_CLASSES}; if [ -z "$C" ]; then {run}; else mvn {flags} -o'
             f' -Dmaven.test.failure.ignore=true -Dsurefire.failIfNoSpecifiedTests=false'
             f' -DfailIfNoTests=false -Dtest="$(echo $C | tr " " ,)" {goals}; fi')
    return dict(
        build_system="maven",
        setup_steps=(f"mvn {flags} -Dmaven.test.failure.ignore=true {goals}",),
        test_command=_finish(run, where),
        per_test_command=_finish(per_test, where),
        scope_command=_finish(scope, where),
        dependency_files=("pom.xml", "**/pom.xml", ".mvn/**"),
        notes=tuple(notes),
    )


def _gradle(repo: Path, detection: Detection) -> dict:
    tool = "./gradlew" if (repo / "gradlew").is_file() else "gradle"
    flags = "--no-daemon --console=plain"
    where = ". -path '*/build/test-results/*'"
    run = f"{tool} {flags} --offline clean test --continue"
    per_test = (f'T=""; for t in {{tests}}; do T="$T --tests $(echo "$t" | tr "#" ".")"; done;'
                f" {tool} {flags} --offline clean test --continue $T")
    # the test patch's classes in any package (Gradle's --tests takes class patterns)
    scope = (f'set -f; {_CLASSES}; T=""; for c in $C; do T="$T --tests *.$c --tests $c"; done;'
             f" {tool} {flags} --offline clean test --continue $T")
    return dict(
        build_system="gradle",
        setup_steps=(f"{tool} {flags} testClasses",),
        test_command=_finish(run, where),
        per_test_command=_finish(per_test, where),
        scope_command=_finish(scope, where),
        dependency_files=("build.gradle", "build.gradle.kts", "settings.gradle",
                          "settings.gradle.kts", "gradle.properties", "gradle/**",
                          "**/build.gradle", "**/build.gradle.kts"),
        notes=(f"Gradle via {tool}; the Java image has no Gradle of its own",),
    )


_ANT_TARGET = re.compile(r"<target\s[^>]*?name\s*=\s*[\"']([^\"']+)[\"']", re.S)
_ANT_IMPORT = re.compile(r"<import\s[^>]*?file\s*=\s*[\"']([^\"'$]+)[\"']", re.S)


def ant_targets(repo: Path) -> list[str]:
    """The target names of build.xml and of the files it imports (one level), in order."""
    out: list[str] = []
    files = [repo / "build.xml"]
    with_imports = 0
    while files and with_imports < 30:
        path = files.pop(0)
        with_imports += 1
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out += [t for t in _ANT_TARGET.findall(text) if t not in out]
        if path == repo / "build.xml":
            files += [(repo / m).resolve() for m in _ANT_IMPORT.findall(text)]
    return out


def _ant(repo: Path, detection: Detection) -> dict:
    """Ant: the build's own compile and test targets by their usual names (Debian's Ant);
    its JUnit task's XML reports read wherever they land."""
    targets = ant_targets(repo)
    test = next((t for t in ("test", "tests", "junit", "check") if t in targets), "test")
    compile_ = next((t for t in ("test.compile", "compile-tests", "compile.tests",
                                 "compile-test", "compile", "build", "jar") if t in targets), "")
    install = ("command -v ant >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND="
               "noninteractive apt-get install -y -qq --no-install-recommends ant ant-optional"
               " >/dev/null)")
    where = ". -not -path './.git/*'"
    return dict(
        build_system="ant",
        setup_steps=(install, f"ant -noinput {compile_}".rstrip()),
        test_command=_finish(f"ant -noinput {test}", where),
        dependency_files=("build.xml", "**/*.ant.xml", "**/ivy.xml", "**/ivysettings.xml"),
        notes=(f"Ant: setup `{compile_ or 'the default target'}`, tests `{test}`",),
    )


def _javac(repo: Path, detection: Detection) -> dict:
    flavors = junit_flavors(repo)
    coords = CONSOLE + (JUNIT4 if "junit4" in flavors else ())
    classes = f"{BUILD}/classes"
    compile_ = (
        f"rm -rf {BUILD} && mkdir -p {classes} {BUILD}/reports /tmp/envfactory"
        f" && find . -name '*.java' -not -path './.git/*' -not -path '*/target/*'"
        f" -not -path '*/build/*' > {BUILD}/sources.txt"
        f' && CP="$(ls {LIB}/*.jar lib/*.jar libs/*.jar 2>/dev/null | paste -sd: -)"'
        " && for d in src/main/resources src/test/resources resources test-resources; do"
        ' if [ -d "$d" ]; then CP="$CP:$PWD/$d"; fi; done'
        f' && javac -nowarn -encoding UTF-8 -d {classes} -cp "$CP" @{BUILD}/sources.txt'
    )
    launch = (f'java -jar {LIB}/{CONSOLE_JAR} execute --disable-banner --details=summary'
              f' --class-path "{classes}:$CP" --reports-dir {BUILD}/reports')
    run = f"{compile_} && {launch} --scan-class-path"
    per_test = (f'{compile_} && SEL=""; for t in {{tests}}; do SEL="$SEL --select-method=$t"; done;'
                f" {launch} $SEL")
    where = f"{BUILD}/reports"
    return dict(
        build_system="javac",
        setup_steps=(_fetch(coords),),
        test_command=_finish(run, where),
        per_test_command=_finish(per_test, where),
        dependency_files=("lib/*.jar", "libs/*.jar"),
        notes=(f"plain javac; JUnit console launcher {CONSOLE_VERSION}"
               + (" with JUnit 4 (vintage engine)" if "junit4" in flavors else ""),),
    )


# --------------------------------------------------------------------------- diagnose

# Old code asks javac for a language level today's JDK no longer has (Java 6 on JDK 17).
# Maven reads extra command-line properties from .mvn/maven.config (3.3.1 and later), and a
# user property outranks the pom's: the lowest level the JDK still compiles.
@rule(r"(?:Source|Target) option \S+ is no longer supported\. Use (\d+) or later", "setup,test")
def _language_level_too_old(m, plan, phase, step):
    if plan.language is Language.JAVA:
        level = m.group(1)
        yield Action("shell", f"mkdir -p .mvn && printf ' %s' -Dmaven.compiler.source={level} "
                     f"-Dmaven.compiler.target={level} >> .mvn/maven.config",
                     f"javac no longer compiles that language level: {level}, the lowest "
                     "it does")


@rule(r"invalid (?:target|source) release: (\d+)|release version (\d+) not supported|"
      r"class file version (\d+)")
def _java_version(m, plan, phase, step):
    if plan.language is Language.JAVA:
        yield from suites_towards(plan, "newer", "the repository wants a newer JDK")


@rule(r"Detected Maven Version: \S+ is not in the allowed range|"
      r"requires Maven version|Maven \d[\d.]* or (?:newer|later) is required", "setup,test")
def _maven_version(m, plan, phase, step):
    if plan.language is Language.JAVA:
        yield from suites_towards(plan, "newer", "the project wants a newer Maven")


# A project between releases names its parent's next version, a SNAPSHOT that only a
# snapshot repository out of reach serves: the release of that version on Maven Central,
# else the newest release before it (what the snapshot grew from).
@rule(r"Non-resolvable parent POM for \S+: Could not (?:transfer|find) artifact "
      r"([\w.-]+):([\w.-]+):pom:(\d[\w.]*)-SNAPSHOT", "setup,test")
def _snapshot_parent(m, plan, phase, step):
    if plan.language is Language.JAVA:
        group, artifact, version = m.groups()
        yield Action("shell", release_parent_step(group, artifact, version),
                     f"the parent POM {group}:{artifact}:{version}-SNAPSHOT is served only by "
                     "a snapshot repository out of reach; its release instead")


def release_parent_step(group: str, artifact: str, version: str) -> str:
    """Shell: pom.xml's ``<parent>`` at `version`-SNAPSHOT set to that release on Maven
    Central, or the newest release before it; fails when there is none."""
    url = f"{CENTRAL}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    return f"""python3 - <<'PY'
import re, subprocess, sys
meta = subprocess.run(["curl", "-fsSL", "--retry", "3", {url!r}], capture_output=True,
                      text=True).stdout
key = lambda v: [int(p) for p in v.split(".")]
want = {version!r}
rel = sorted({{v for v in re.findall(r"<version>([0-9][0-9.]*)</version>", meta)}}, key=key)
older = [v for v in rel if key(v) <= key(want)]
if not older:
    sys.exit(f"envfactory: no release of {artifact} at or before {{want}}")
pom = open("pom.xml", encoding="utf-8").read()
parent = re.search(r"<parent>.*?</parent>", pom, re.S)
if parent is None or want + "-SNAPSHOT" not in parent.group(0):
    sys.exit("envfactory: pom.xml's <parent> does not name that snapshot")
block = parent.group(0).replace(want + "-SNAPSHOT", older[-1])
open("pom.xml", "w", encoding="utf-8").write(pom[:parent.start()] + block + pom[parent.end():])
print(f"envfactory: parent {artifact} {{want}}-SNAPSHOT -> {{older[-1]}}")
PY"""


# --------------------------------------------------------------------------- detection

def read_facts(tree: Tree) -> Facts:
    f = Facts()
    pom = tree.read("pom.xml") if tree.has("pom.xml") else ""
    gradle_files = [n for n in ("build.gradle", "build.gradle.kts", "settings.gradle",
                                "settings.gradle.kts") if tree.has(n)]
    gradle = "\n".join(tree.read(p) for p in tree.files
                       if p.rsplit("/", 1)[-1] in ("build.gradle", "build.gradle.kts"))
    dep_text = ""
    if pom:
        f.build_system = f.package_manager = "maven"
        f.cite("pom.xml")
        dep_text = "\n".join(tree.read(p) for p in tree.named("pom.xml"))
        v = (first_match(r"<maven\.compiler\.release>\s*([^<\s]+)", pom)
             or first_match(r"<release>\s*([^<\s]+)\s*</release>", pom)
             or first_match(r"<maven\.compiler\.source>\s*([^<\s]+)", pom)
             or first_match(r"<source>\s*([^<\s$]+)\s*</source>", pom)
             or first_match(r"<java\.version>\s*([^<\s]+)", pom))
        if v:
            f.versions["java"] = v
        if tree.has("mvnw"):
            f.extra["maven_wrapper"] = "mvnw"
    elif gradle_files or tree.has("gradlew"):
        f.build_system = f.package_manager = "gradle"
        f.cite(*(gradle_files or ["gradlew"]))
        dep_text = gradle
        if tree.has("gradlew"):
            f.extra["gradle_wrapper"] = "gradlew"
        v = (first_match(r"languageVersion(?:\.set)?\s*[(=]?\s*JavaLanguageVersion\.of\((\d+)\)", gradle)
             or first_match(r"sourceCompatibility\s*=?\s*(?:JavaVersion\.VERSION_)?['\"]?([\d._]+)",
                       gradle)
             or first_match(r"jvmToolchain\((\d+)\)", gradle))
        if v:
            v = v.replace("_", ".")
            f.versions["java"] = v[2:] if v.startswith("1.") and len(v) > 2 else v
    elif tree.has("build.xml"):
        f.build_system = "ant"
        f.cite("build.xml")
    else:
        f.build_system = "javac"
        f.cite(*tree.with_ext(".java")[:1])
    sources = "\n".join(tree.read(p, 20_000) for p in tree.with_ext(".java")
                        if "test" in p.lower())[:2_000_000]
    if re.search(r"org\.junit\.jupiter|junit-jupiter|junit-bom|useJUnitPlatform", dep_text) or (
            not dep_text and "org.junit.jupiter" in sources):
        f.test_framework = "junit5"
    elif re.search(r"<artifactId>\s*junit\s*</artifactId>|junit:junit", dep_text) or (
            not dep_text and re.search(r"import\s+(static\s+)?org\.junit\.", sources)):
        f.test_framework = "junit4"
    elif re.search(r"testng", dep_text) or "org.testng" in sources:
        f.test_framework = "testng"
    elif "org.junit.jupiter" in sources:
        f.test_framework = "junit5"
    elif re.search(r"import\s+(static\s+)?org\.junit\.", sources):
        f.test_framework = "junit4"
    return f


@register("java")
class JavaPlugin:
    language = Language.JAVA
    traits = Traits(
        image_family="java",
        extensions=(".java",),
        build_files=("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
                     "settings.gradle.kts", "gradlew", "build.xml"),
        test_files=(r"\w*Tests?\.(java|kt|groovy|scala)", r"\w*IT\.(java|kt)",
                    r"\w*TestCase\.(java|kt)", r"Test[A-Z0-9_]\w*\.(java|kt)"),
        version_key="java",
        github_names=("Java", "Kotlin"),
    )

    def facts(self, tree: Tree) -> Facts:
        return read_facts(tree)

    def plan(self, repo: Path, detection: Detection) -> Plan:
        repo = Path(repo)
        system = build_system(repo)
        parts = {"maven": _maven, "gradle": _gradle, "ant": _ant, "javac": _javac}[system](repo, detection)
        flavors = junit_flavors(repo)
        framework = detection.test_framework or (
            "junit5" if "junit5" in flavors else "junit4" if "junit4" in flavors else "junit5")
        return Plan(
            language=Language.JAVA,
            image_family="java",
            test_framework=framework,
            report_format="junit:java",
            report_path=REPORT,
            env={"MAVEN_OPTS": "-Xmx1g"},
            **parts,
        )
