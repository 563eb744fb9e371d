"""What goes into each toolchain image: a `Recipe` per image (Debian packages, extra shell
steps, environment, version probes), registered by name. `base` (common tools) has no
parent; every language family's image sits on it, from Debian's packages only.

    recipes()["python"].packages_for("bookworm")
    image_for("typescript")   # "node"
"""

from __future__ import annotations

from dataclasses import dataclass, field

from envs.errors import unknown
from envs.models import Language

__all__ = ["LANGUAGE_IMAGE", "Recipe", "get_recipe", "image_for", "recipe", "recipes"]


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
