"""Base images without an image registry: a Debian base and one toolchain image per family.

The Debian root comes from `FROM debian:<suite>` when a registry answers, else from
`debootstrap` + `docker import`. On top of it sits `base` (common tools, the host's CA
bundle) and on that one image per language family, from Debian's packages only.

Tags are content-addressed: the tag is a hash of everything that built the image (recipe,
suite, mirror, parent's hash, CA bundle), so building twice builds once, and a changed
recipe gets a new tag instead of silently reusing a stale image.

This module plans, ensures and inspects images; the recipes are in `image_recipes.py`, the
building (`docker build`, the Debian root, debootstrap) in `image_build.py`.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from docker.errors import APIError

from envs import ca as ca_mod
from envs import engine
from envs.config import get_settings
from envs.errors import unknown
from envs.image_build import (  # noqa: F401  (the façade re-exports them)
    LABEL_HASH,
    LABEL_KIND,
    LABEL_RECIPE,
    RECIPE_VERSION,
    ImageBuildError,
    Log,
    build_context,
    build_lock,
    build_tag,
    content_hash,
    context_hash,
    ensure_rootfs,
    exists,
    no_log,
    remove,
    rootfs_tag,
)
from envs.image_recipes import (  # noqa: F401  (the façade re-exports them)
    LANGUAGE_IMAGE,
    Recipe,
    get_recipe,
    image_for,
    recipe,
    recipes,
)
from envs.models import ImageRecord

SUITES = ("bullseye", "bookworm", "trixie")


# --------------------------------------------------------------------------- planning


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
    content = content_hash(RECIPE_VERSION, r.name, suite, s.debian_mirror, parent_tag, ca_sha,
                           dockerfile)
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


# --------------------------------------------------------------------------- ensuring


def ensure(name: str, *, suite: str | None = None,
           ca_bundle: ca_mod.CABundle | str | None = "auto", log: Log = no_log,
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
        with build_lock(p.tag):
            if rebuild or not exists(p.tag):
                _build(p, bundle, log)
    return record(p)


def ensure_all(*, suite: str | None = None, ca_bundle: ca_mod.CABundle | str | None = "auto",
               log: Log = no_log, names: list[str] | None = None) -> list[ImageRecord]:
    bundle = ca_mod.detect() if ca_bundle == "auto" else ca_bundle
    return [ensure(n, suite=suite, ca_bundle=bundle, log=log) for n in (names or list(recipes()))]


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
    image_id = c.images.get(tag).id + "-" + content_hash(r.probes)[:8]
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
        wanted = {plan(n, suite=suite).tag for n in recipes()}
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


def prune(*, all_images: bool = False, suite: str | None = None, log: Log = no_log
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
