"""Base images without an image registry: a Debian base and one toolchain image per family.

The Debian root comes from `FROM debian:<suite>` when a registry answers, else from
`debootstrap` + `docker import`. On top of it sits `base` (common tools, the host's CA
bundle) and on that one image per language family, from Debian's packages only.

Tags are content-addressed: the tag is a hash of everything that built the image (recipe,
suite, mirror, parent's hash, CA bundle), so building twice builds once, and a changed
recipe gets a new tag instead of silently reusing a stale image.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from docker.errors import APIError, ImageNotFound

from envs import ca as ca_mod
from envs import engine
from envs.config import get_settings
from envs.errors import InfraError, unknown
from envs.models import ImageRecord, Language

RECIPE_VERSION = "1"  # bump to invalidate every tag when the build logic itself changes
LABEL_RECIPE = "envfactory.recipe"
LABEL_HASH = "envfactory.hash"
LABEL_KIND = "envfactory.kind"
SUITES = ("bullseye", "bookworm", "trixie")

Log = Callable[[str], None]


class ImageBuildError(InfraError):
    """An image could not be built; the message names the step and the last output line."""


@dataclass(frozen=True)
class Recipe:
    name: str
    parent: str | None
    packages: tuple[str, ...] = ()
    run: tuple[str, ...] = ()  # extra shell steps after the packages
    env: tuple[tuple[str, str], ...] = ()
    languages: tuple[Language, ...] = ()
    # tool -> shell command printing its version (first line kept)
    probes: tuple[tuple[str, str], ...] = ()
    per_suite: dict[str, tuple[str, ...]] = field(default_factory=dict)  # package overrides

    def packages_for(self, suite: str) -> tuple[str, ...]:
        return self.per_suite.get(suite, self.packages)


_RECIPES: dict[str, Recipe] = {}


def recipe(r: Recipe) -> Recipe:
    _RECIPES[r.name] = r
    return r


def recipes() -> dict[str, Recipe]:
    return dict(_RECIPES)


def get_recipe(name: str) -> Recipe:
    try:
        return _RECIPES[name]
    except KeyError:
        raise unknown("image", name, sorted(_RECIPES)) from None


recipe(Recipe(
    name="base",
    parent=None,
    packages=("ca-certificates", "curl", "git", "patch", "procps", "python3", "xz-utils",
              "unzip", "less"),
    env=(("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"), ("TZ", "UTC")),
    probes=(("debian", "cat /etc/debian_version"), ("git", "git --version | cut -d' ' -f3"),
            ("python3", "python3 -c 'import platform; print(platform.python_version())'")),
))
recipe(Recipe(
    name="python",
    parent="base",
    packages=("python3", "python3-venv", "python3-pip", "python3-pytest", "python3-dev",
              "build-essential"),
    languages=(Language.PYTHON,),
    probes=(("python", "python3 -c 'import platform; print(platform.python_version())'"),
            ("pip", "pip3 --version | cut -d' ' -f2"),
            ("pytest", "pytest --version 2>&1 | head -1 | cut -d' ' -f2")),
))
recipe(Recipe(
    name="java",
    parent="base",
    packages=("openjdk-17-jdk-headless", "maven", "ca-certificates-java"),
    per_suite={"trixie": ("openjdk-21-jdk-headless", "maven", "ca-certificates-java"),
               "bullseye": ("openjdk-17-jdk-headless", "maven", "ca-certificates-java")},
    # Rebuild the Java trust store from /etc/ssl/certs, which holds the injected CA by now.
    run=("update-ca-certificates -f >/dev/null",),
    languages=(Language.JAVA,),
    probes=(("java", "java -version 2>&1 | head -1 | cut -d'\"' -f2"),
            ("maven", "mvn -B -v 2>/dev/null | head -1 | cut -d' ' -f3")),
))
recipe(Recipe(
    name="go",
    parent="base",
    packages=("golang-go", "gcc", "libc6-dev"),
    env=(("GOPATH", "/root/go"), ("PATH", "/root/go/bin:/usr/local/sbin:/usr/local/bin:"
                                          "/usr/sbin:/usr/bin:/sbin:/bin")),
    languages=(Language.GO,),
    probes=(("go", "go env GOVERSION | sed s/^go//"),),
))
recipe(Recipe(
    name="cpp",
    parent="base",
    packages=("gcc", "g++", "make", "cmake", "ninja-build", "pkg-config", "libgtest-dev",
              "libgmock-dev", "autoconf", "automake", "libtool", "catch2", "doctest-dev"),
    languages=(Language.C, Language.CPP),
    probes=(("gcc", "gcc -dumpfullversion"), ("g++", "g++ -dumpfullversion"),
            ("make", "make --version | head -1 | cut -d' ' -f3"),
            ("cmake", "cmake --version | head -1 | cut -d' ' -f3"),
            ("ninja", "ninja --version"),
            ("gtest", "dpkg-query -W -f='${Version}' libgtest-dev | cut -d- -f1")),
))
recipe(Recipe(
    name="node",
    parent="base",
    packages=("nodejs", "npm", "node-typescript"),
    languages=(Language.JAVASCRIPT, Language.TYPESCRIPT),
    probes=(("node", "node --version | sed s/^v//"), ("npm", "npm --version 2>/dev/null"),
            ("tsc", "tsc --version | cut -d' ' -f2")),
))
recipe(Recipe(
    name="php",
    parent="base",
    packages=("php-cli", "php-xml", "php-mbstring", "phpunit", "composer"),
    languages=(Language.PHP,),
    probes=(("php", "php -r 'echo PHP_VERSION;'"),
            ("phpunit", "phpunit --version | head -1 | cut -d' ' -f2"),
            ("composer", "composer --version 2>/dev/null | head -1 | cut -d' ' -f3")),
))
recipe(Recipe(
    name="ruby",
    parent="base",
    packages=("ruby", "ruby-dev", "bundler", "rake", "ruby-minitest", "ruby-rspec",
              "build-essential"),
    languages=(Language.RUBY,),
    probes=(("ruby", "ruby -e 'print RUBY_VERSION'"),
            ("bundler", "bundler --version | cut -d' ' -f3"),
            ("rspec", "rspec --version 2>&1 | head -1 | cut -d' ' -f2"),
            ("rake", "rake --version | cut -d' ' -f3")),
))

recipe(Recipe(
    name="rust",
    parent="base",
    # Debian's toolchain (rustup's downloads cannot be reached): rustc 1.48 / 1.63 / 1.85
    packages=("rustc", "cargo", "gcc", "libc6-dev", "make", "pkg-config", "libssl-dev"),
    languages=(Language.RUST,),
    probes=(("rustc", "rustc --version | cut -d' ' -f2"),
            ("cargo", "cargo --version | cut -d' ' -f2")),
))

# Which image a language runs in.
LANGUAGE_IMAGE: dict[Language, str] = {
    lang: r.name for r in _RECIPES.values() for lang in r.languages
}


def image_for(language: Language | str) -> str:
    return LANGUAGE_IMAGE[Language(language)]


# --------------------------------------------------------------------------- hashing


@dataclass(frozen=True)
class Plan:
    """Everything that decides one image: its tag is a hash of this."""

    recipe: Recipe
    suite: str
    mirror: str
    source: str  # how the Debian root is made, for the root only
    ca_sha: str | None
    parent_tag: str | None
    content_hash: str
    tag: str


def _hash(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def rootfs_tag(suite: str, mirror: str) -> str:
    prefix = get_settings().image_prefix
    return f"{prefix}/debian:{suite}-{_hash('rootfs', RECIPE_VERSION, suite, mirror)[:12]}"


def check_suite(suite: str | None) -> str:
    """The suite to use (None: the settings'); an unknown one is bad input."""
    suite = suite or get_settings().debian_suite
    if suite not in SUITES:
        raise unknown("Debian suite", suite, SUITES, field="--suite")
    return suite


def plan(name: str, *, suite: str | None = None, ca_bundle: ca_mod.CABundle | str | None = "auto"
         ) -> Plan:
    """The tag an image would have, without building anything."""
    s = get_settings()
    suite = check_suite(suite)
    bundle = ca_mod.detect() if ca_bundle == "auto" else ca_bundle
    assert not isinstance(bundle, str)
    r = get_recipe(name)
    parent_tag = plan(r.parent, suite=suite, ca_bundle=bundle).tag if r.parent else None
    ca_sha = bundle.sha256 if bundle is not None else None
    dockerfile = _dockerfile(r, suite, parent_tag or rootfs_tag(suite, s.debian_mirror), bundle)
    content = _hash(RECIPE_VERSION, r.name, suite, s.debian_mirror, parent_tag, ca_sha, dockerfile)
    tag = f"{s.image_prefix}/{r.name}:{suite}-{content[:12]}"
    return Plan(r, suite, s.debian_mirror, s.base_source, ca_sha, parent_tag, content, tag)


def _dockerfile(r: Recipe, suite: str, parent: str, bundle: ca_mod.CABundle | None) -> str:
    lines = [f"FROM {parent}"]
    if r.parent is None:  # the base: apt settings, CA injection, common tools
        lines += [
            "ENV DEBIAN_FRONTEND=noninteractive",
            "RUN printf 'APT::Install-Recommends \"false\";\\nAPT::Install-Suggests \"false\";\\n'"
            " > /etc/apt/apt.conf.d/90envfactory",
        ]
        if bundle is not None:
            # The bundle goes in as loose PEM files first so apt itself can use it (https
            # mirrors), then update-ca-certificates merges it into the system store.
            lines += [
                "COPY ca/ /usr/local/share/ca-certificates/envfactory/",
                "RUN mkdir -p /etc/ssl/certs && cat /usr/local/share/ca-certificates/envfactory/"
                "*.crt >> /etc/ssl/certs/ca-certificates.crt",
            ]
    pkgs = " ".join(r.packages_for(suite))
    if pkgs:
        lines.append(
            "RUN apt-get update -qq && apt-get install -y -qq " + pkgs
            + " >/tmp/apt.log 2>&1 || (tail -40 /tmp/apt.log; exit 1); "
            "rm -rf /var/lib/apt/lists/* /tmp/apt.log"
        )
    if r.parent is None and bundle is not None:
        lines.append("RUN update-ca-certificates >/dev/null 2>&1")
        b = ca_mod.IMAGE_BUNDLE
        ca_env = {
            "SSL_CERT_FILE": b, "REQUESTS_CA_BUNDLE": b, "PIP_CERT": b, "CURL_CA_BUNDLE": b,
            "GIT_SSL_CAINFO": b, "NODE_EXTRA_CA_CERTS": b, "npm_config_cafile": b,
            "ENVFACTORY_CA_INJECTED": "1",
        }
        lines.append("ENV " + " ".join(f"{k}={v}" for k, v in ca_env.items()))
    lines += [f"RUN {step}" for step in r.run]
    if r.env:
        lines.append("ENV " + " ".join(f'{k}="{v}"' for k, v in r.env))
    if r.parent is None:
        lines.append('CMD ["bash"]')
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- building


def _log_default(msg: str) -> None:
    pass


@contextlib.contextmanager
def _lock(tag: str) -> Iterator[None]:
    """One builder per tag across processes (pytest workers, a CLI run)."""
    locks = get_settings().home / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / (hashlib.sha1(tag.encode()).hexdigest()[:16] + ".lock")
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def exists(tag: str) -> bool:
    try:
        engine.client().images.get(tag)
        return True
    except ImageNotFound:
        return False


def remove(tag: str) -> bool:
    """Remove a local image by tag (an env image that must not be a cache hit); False when
    it was not there or is still in use."""
    try:
        engine.client().images.remove(tag, force=True)
    except (ImageNotFound, APIError):
        return False
    return True


def ensure(name: str, *, suite: str | None = None,
           ca_bundle: ca_mod.CABundle | str | None = "auto", log: Log = _log_default,
           rebuild: bool = False) -> ImageRecord:
    """The image for `name`, built if (and only if) its tag is missing."""
    p = plan(name, suite=suite, ca_bundle=ca_bundle)
    bundle = ca_mod.detect() if ca_bundle == "auto" else ca_bundle
    assert not isinstance(bundle, str)
    if p.recipe.parent:
        ensure(p.recipe.parent, suite=p.suite, ca_bundle=bundle, log=log)
    else:
        ensure_rootfs(p.suite, log=log)
    if rebuild or not exists(p.tag):
        with _lock(p.tag):
            if rebuild or not exists(p.tag):
                _build(p, bundle, log)
    return record(p)


def ensure_all(*, suite: str | None = None, ca_bundle: ca_mod.CABundle | str | None = "auto",
               log: Log = _log_default, names: list[str] | None = None) -> list[ImageRecord]:
    bundle = ca_mod.detect() if ca_bundle == "auto" else ca_bundle
    return [ensure(n, suite=suite, ca_bundle=bundle, log=log) for n in (names or list(_RECIPES))]


def _build(p: Plan, bundle: ca_mod.CABundle | None, log: Log) -> None:
    s = get_settings()
    parent = p.parent_tag or rootfs_tag(p.suite, s.debian_mirror)
    files: dict[str, bytes] = {}
    if bundle is not None and p.recipe.parent is None:
        files.update({f"ca/{k}": v for k, v in ca_mod.split_files(bundle).items()})
    labels = {LABEL_RECIPE: p.recipe.name, LABEL_HASH: p.content_hash,
              LABEL_KIND: "base" if p.recipe.parent is None else "language",
              "envfactory.suite": p.suite}
    build_tag(p.tag, _dockerfile(p.recipe, p.suite, parent, bundle), files, labels=labels,
              log=log, logname=f"{p.recipe.name}-{p.suite}-{p.content_hash[:12]}")


def context_hash(dockerfile: str, files: Mapping[str, bytes]) -> str:
    """The content address of a build: the Dockerfile and every context file."""
    h = hashlib.sha256(dockerfile.encode())
    for name in sorted(files):
        h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def build_context(name: str, dockerfile: str, files: Mapping[str, bytes] | None = None, *,
                  kind: str = "env", labels: Mapping[str, str] | None = None,
                  log: Log = _log_default) -> str:
    """Build (once) an image from a Dockerfile and in-memory context; returns its tag.

    The tag is `<prefix>/<name>:<hash>` of the Dockerfile and files, so the same inputs are a
    cache hit. Used by the layers above for env and task images.
    """
    files = dict(files or {})
    digest = context_hash(dockerfile, files)
    tag = f"{get_settings().image_prefix}/{name}:{digest[:16]}"
    if exists(tag):
        return tag
    with _lock(tag):
        if not exists(tag):
            all_labels = {LABEL_RECIPE: name, LABEL_HASH: digest, LABEL_KIND: kind,
                          **(labels or {})}
            build_tag(tag, dockerfile, files, labels=all_labels, log=log,
                      logname=f"{name.replace('/', '_')}-{digest[:12]}")
    return tag


def build_tag(tag: str, dockerfile: str, files: Mapping[str, bytes], *,
              labels: Mapping[str, str], log: Log = _log_default, logname: str = "") -> None:
    """Run one `docker build` of an in-memory context, streaming its log to a file."""
    s = get_settings()
    context = _tar({**files, "Dockerfile": dockerfile.encode()})
    logdir = s.logs_dir / "images"
    logdir.mkdir(parents=True, exist_ok=True)
    logfile = logdir / f"{logname or tag.replace('/', '_').replace(':', '-')}.log"
    log(f"building {tag} (log: {logfile})")
    start = time.monotonic()
    last: list[str] = []
    api = engine.client().api
    with open(logfile, "w", encoding="utf-8") as out:
        try:
            stream = api.build(fileobj=context, custom_context=True, tag=tag, rm=True,
                               forcerm=True, decode=True, labels=dict(labels), pull=False)
            for chunk in stream:
                if "stream" in chunk:
                    text = chunk["stream"]
                    out.write(text)
                    last = (last + text.splitlines())[-40:]
                if "error" in chunk:
                    out.write(chunk["error"] + "\n")
                    tail = next((ln for ln in reversed(last) if ln.strip()), chunk["error"])
                    raise ImageBuildError(
                        f"building {tag} failed: {chunk['error'].strip()[:200]}"
                        f" (last output: {tail.strip()[:200]}; log: {logfile})")
        except APIError as exc:
            raise ImageBuildError(f"building {tag} failed: {exc.explanation}") from exc
    log(f"built {tag} in {time.monotonic() - start:.0f}s")


def _tar(files: Mapping[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def ensure_rootfs(suite: str, *, log: Log = _log_default) -> str:
    """The bare Debian root image: pulled where a registry answers, else debootstrapped."""
    s = get_settings()
    tag = rootfs_tag(suite, s.debian_mirror)
    if exists(tag):
        return tag
    with _lock(tag):
        if exists(tag):
            return tag
        source = s.base_source
        if source not in ("auto", "pull", "debootstrap"):
            raise ImageBuildError(
                f"ENVFACTORY_BASE_SOURCE={source!r}; known: auto, pull, debootstrap")
        if source in ("auto", "pull") and _try_pull(suite, tag, log):
            return tag
        if source == "pull":
            raise ImageBuildError(f"no registry answers for debian:{suite} (base_source=pull)")
        _debootstrap(suite, s.debian_mirror, tag, log)
    return tag


def _try_pull(suite: str, tag: str, log: Log) -> bool:
    c = engine.client()
    try:
        image = c.images.pull("debian", tag=suite)
    except Exception as exc:  # any registry failure means: fall back to debootstrap
        log(f"no registry for debian:{suite} ({str(exc).splitlines()[0][:120]}); "
            "falling back to debootstrap")
        return False
    image.tag(tag)
    log(f"pulled debian:{suite}")
    return True


def _debootstrap(suite: str, mirror: str, tag: str, log: Log) -> None:
    if os.geteuid() != 0:
        raise ImageBuildError("debootstrap needs root (no image registry answers); run as root "
                              "or set ENVFACTORY_BASE_SOURCE=pull with a reachable registry")
    if shutil.which("debootstrap") is None:
        log("installing debootstrap ...")
        proc = subprocess.run([*engine.APT, "install", "-y", "-qq", "debootstrap"],
                              capture_output=True, text=True,
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if proc.returncode != 0:
            subprocess.run([*engine.APT, "update", "-qq"], capture_output=True)
            proc = subprocess.run([*engine.APT, "install", "-y", "-qq", "debootstrap"],
                                  capture_output=True, text=True,
                                  env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if proc.returncode != 0:
            raise ImageBuildError(f"cannot install debootstrap: {_last_line(proc.stderr)}")
    s = get_settings()
    work = s.home / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix=f"rootfs-{suite}-") as tmp:
        root = Path(tmp) / "root"
        log(f"debootstrap {suite} from {mirror} (no image registry answers) ...")
        start = time.monotonic()
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", suite, str(root), mirror],
            capture_output=True, text=True)
        if proc.returncode != 0:
            log_path = s.logs_dir / f"debootstrap-{suite}.log"
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(proc.stdout + proc.stderr)
            raise ImageBuildError(
                f"debootstrap {suite} failed: {_last_line(proc.stdout + proc.stderr)} "
                f"(log: {log_path})")
        # Keep the image small and reproducible-ish: no apt lists or caches.
        for junk in ("var/lib/apt/lists", "var/cache/apt/archives"):
            shutil.rmtree(root / junk, ignore_errors=True)
            (root / junk).mkdir(parents=True, exist_ok=True)
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        archive = Path(tmp) / "rootfs.tar"
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."],
                       check=True)
        repo, _, version = tag.rpartition(":")
        engine.client().api.import_image_from_file(
            str(archive), repository=repo, tag=version,
            changes=["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     'CMD ["bash"]'])
        log(f"imported {tag} in {time.monotonic() - start:.0f}s")


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"


# --------------------------------------------------------------------------- inspection


def record(p: Plan) -> ImageRecord:
    image = engine.client().images.get(p.tag)
    return ImageRecord(
        tag=p.tag,
        kind="base" if p.recipe.parent is None else "language",
        language=p.recipe.languages[0] if len(p.recipe.languages) == 1 else None,
        parent=p.parent_tag,
        content_hash=p.content_hash,
        size_bytes=int(image.attrs.get("Size") or 0),
        versions=toolchain_versions(p.tag, p.recipe),
    )


_VERSIONS_LABEL_CACHE: dict[str, dict[str, str]] = {}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def toolchain_versions(tag: str, r: Recipe) -> dict[str, str]:
    """Run each version probe once in a throwaway container (cached per image id)."""
    c = engine.client()
    # Probes are not part of the image hash, so they are part of the cache key.
    image_id = c.images.get(tag).id + "-" + _hash(r.probes)[:8]
    cached = _VERSIONS_LABEL_CACHE.get(image_id) or _read_version_cache(image_id)
    if cached is not None:
        _VERSIONS_LABEL_CACHE[image_id] = cached
        return cached
    script = "; ".join(f"echo \"{k}=$({cmd} 2>/dev/null | head -1)\"" for k, cmd in r.probes)
    out = c.containers.run(tag, ["sh", "-c", script], remove=True, network_disabled=True)
    versions: dict[str, str] = {}
    for line in _ANSI.sub("", out.decode(errors="replace")).splitlines():
        k, _, v = line.partition("=")
        if k:
            versions[k] = v.strip()
    _VERSIONS_LABEL_CACHE[image_id] = versions
    _write_version_cache(image_id, versions)
    return versions


def _version_cache_path(image_id: str) -> Path:
    return get_settings().home / "cache" / "versions" / (image_id.replace(":", "_") + ".json")


def _read_version_cache(image_id: str) -> dict[str, str] | None:
    try:
        return json.loads(_version_cache_path(image_id).read_text())
    except (OSError, ValueError):
        return None


def _write_version_cache(image_id: str, versions: dict[str, str]) -> None:
    path = _version_cache_path(image_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(versions))


@dataclass(frozen=True)
class LocalImage:
    tag: str
    recipe: str
    kind: str
    size_bytes: int
    created: str
    current: bool  # the tag the recipes would build now


def list_local(*, suite: str | None = None) -> list[LocalImage]:
    """Every envfactory-built image on the engine, newest first."""
    c = engine.client()
    wanted = set()
    with contextlib.suppress(Exception):
        wanted = {plan(n, suite=suite).tag for n in _RECIPES}
    out: list[LocalImage] = []
    for image in c.images.list(filters={"label": LABEL_RECIPE}):
        labels = image.labels or {}
        for tag in image.tags or ["<none>"]:
            out.append(LocalImage(
                tag=tag, recipe=labels.get(LABEL_RECIPE, "?"), kind=labels.get(LABEL_KIND, "?"),
                size_bytes=int(image.attrs.get("Size") or 0),
                created=str(image.attrs.get("Created", ""))[:19], current=tag in wanted))
    out.sort(key=lambda i: i.created, reverse=True)
    return out


def prune(*, all_images: bool = False, suite: str | None = None, log: Log = _log_default
          ) -> list[str]:
    """Remove stale envfactory images (tags no recipe builds now); all of them with all_images."""
    c = engine.client()
    removed: list[str] = []
    for img in list_local(suite=suite):
        if img.tag == "<none>" or (img.current and not all_images):
            continue
        if img.kind not in ("base", "language") and not all_images:
            continue  # env and task images are not the recipes' to judge
        try:
            c.images.remove(img.tag, noprune=False)
            removed.append(img.tag)
            log(f"removed {img.tag}")
        except APIError as exc:
            log(f"kept {img.tag}: {exc.explanation}")
    with contextlib.suppress(APIError):
        c.images.prune(filters={"dangling": True, "label": LABEL_RECIPE})
    return removed
