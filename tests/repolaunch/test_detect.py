"""Detection from a repository's own files: synthetic repositories for each language, build
system and test framework, mixed and vendored trees, versions, CI hints; and every
registered sample detected as what its generator declares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data import samples
from envs.models import Language
from repolaunch.detect import Detection, DetectionError, detect

L = Language


def mk(root: Path, files: dict[str, str]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def det(tmp_path: Path, files: dict[str, str]) -> Detection:
    return detect(mk(tmp_path / "repo", files))


def pkg(**fields) -> str:
    return json.dumps(fields)


PY_SRC = "def f(x):\n    return x + 1\n" * 20
JAVA_SRC = "package a;\npublic class A { int f() { return 1; } }\n" * 10
GO_SRC = "package a\n\nfunc F() int { return 1 }\n" * 10
C_SRC = "int f(int x) { return x + 1; }\n" * 20
CPP_SRC = "#include <vector>\nint f(std::vector<int> v) { return v.size(); }\n" * 10
JS_SRC = "function f(x) { return x + 1; }\nmodule.exports = { f };\n" * 10
TS_SRC = "export function f(x: number): number { return x + 1; }\n" * 10
PHP_SRC = "<?php\nfunction f($x) { return $x + 1; }\n" * 10
RB_SRC = "def f(x)\n  x + 1\nend\n" * 10


# --------------------------------------------------------------------------- the nine languages


@pytest.mark.parametrize("files, primary, build, framework", [
    ({"pyproject.toml": "[project]\nname='a'\n", "a/__init__.py": PY_SRC,
      "tests/test_a.py": "import pytest\ndef test_a(): pass\n"},
     L.PYTHON, "pyproject", "pytest"),
    ({"pom.xml": "<project><dependencies><dependency><groupId>org.junit.jupiter</groupId>"
                 "<artifactId>junit-jupiter</artifactId></dependency></dependencies></project>",
      "src/main/java/a/A.java": JAVA_SRC}, L.JAVA, "maven", "junit5"),
    ({"go.mod": "module example.com/a\n\ngo 1.21\n", "a.go": GO_SRC,
      "a_test.go": "package a\nimport \"testing\"\nfunc TestF(t *testing.T) {}\n"},
     L.GO, "go-modules", "gotest"),
    ({"Makefile": "all:\n\tcc -o a a.c\ncheck: all\n\t./a\n", "a.c": C_SRC, "a.h": "int f(int);\n"},
     L.C, "make", "make-check"),
    ({"CMakeLists.txt": "project(a LANGUAGES CXX)\nfind_package(GTest REQUIRED)\n"
                        "enable_testing()\ngtest_discover_tests(t)\n",
      "src/a.cpp": CPP_SRC, "tests/t.cpp": "#include <gtest/gtest.h>\n"}, L.CPP, "cmake", "gtest"),
    ({"package.json": pkg(name="a", scripts={"test": "node --test"}), "index.js": JS_SRC,
      "test/a.test.js": "const test = require('node:test');\n"},
     L.JAVASCRIPT, "npm", "node-test"),
    ({"package.json": pkg(name="a", devDependencies={"vitest": "^1.6.0"}),
      "tsconfig.json": "{}", "src/a.ts": TS_SRC}, L.TYPESCRIPT, "npm", "vitest"),
    ({"composer.json": pkg(require={"php": ">=8.1"},
                           **{"require-dev": {"phpunit/phpunit": "^10"}}),
      "src/A.php": PHP_SRC, "tests/ATest.php": PHP_SRC}, L.PHP, "composer", "phpunit"),
    ({"Gemfile": "source 'https://rubygems.org'\ngem 'minitest'\n", "lib/a.rb": RB_SRC,
      "test/test_a.rb": "require 'minitest/autorun'\n"}, L.RUBY, "bundler", "minitest"),
])
def test_each_language(tmp_path, files, primary, build, framework):
    d = det(tmp_path, files)
    assert (d.primary, d.build_system, d.test_framework) == (primary, build, framework)
    assert d.languages and abs(sum(d.languages.values()) - 1) < 1e-3
    assert d.evidence


# --------------------------------------------------------------------------- build systems


@pytest.mark.parametrize("files, build, manager", [
    ({"pyproject.toml": "[project]\nname = 'a'\nrequires-python = '>=3.9'\n"}, "pyproject", "pip"),
    ({"pyproject.toml": "[tool.poetry]\nname = 'a'\n[build-system]\n"
                        "build-backend = 'poetry.core.masonry.api'\n"}, "pyproject", "poetry"),
    ({"setup.py": "from setuptools import setup\nsetup(name='a')\n"}, "setuptools", "pip"),
    ({"setup.cfg": "[metadata]\nname = a\n"}, "setuptools", "pip"),
    ({"pyproject.toml": "[tool.black]\nline-length = 100\n", "setup.py": "setup()\n"},
     "setuptools", "pip"),
    ({"requirements.txt": "requests\n"}, "requirements", "pip"),
    ({"requirements/dev.txt": "pytest\n"}, "requirements", "pip"),
    ({"tox.ini": "[tox]\nenvlist = py311\n"}, "tox", "pip"),
    ({"noxfile.py": "import nox\n"}, "nox", "pip"),
    ({"pyproject.toml": "[project]\nname='a'\n", "uv.lock": ""}, "pyproject", "uv"),
])
def test_python_build_systems(tmp_path, files, build, manager):
    d = det(tmp_path, {**files, "a.py": PY_SRC})
    assert d.primary is L.PYTHON
    assert (d.build_system, d.package_manager) == (build, manager)


@pytest.mark.parametrize("files, build", [
    ({"pom.xml": "<project/>"}, "maven"),
    ({"build.gradle": "plugins { id 'java' }\n"}, "gradle"),
    ({"build.gradle.kts": "plugins { java }\n"}, "gradle"),
    ({"gradlew": "#!/bin/sh\n", "settings.gradle": ""}, "gradle"),
    ({"build.xml": "<project/>"}, "ant"),
    ({}, "javac"),
])
def test_java_build_systems(tmp_path, files, build):
    d = det(tmp_path, {**files, "src/A.java": JAVA_SRC})
    assert (d.primary, d.build_system) == (L.JAVA, build)
    if "gradlew" in files:
        assert d.extra["gradle_wrapper"] == "gradlew"


@pytest.mark.parametrize("files, build", [
    ({"CMakeLists.txt": "project(a C)\n"}, "cmake"),
    ({"meson.build": "project('a', 'c')\n"}, "meson"),
    ({"configure.ac": "AC_INIT([a], [1])\n", "Makefile.am": "bin_PROGRAMS = a\n"}, "autotools"),
    ({"configure": "#!/bin/sh\n"}, "autotools"),
    ({"Makefile": "all:\n\tcc a.c\n"}, "make"),
    ({}, "plain"),
])
def test_c_build_systems(tmp_path, files, build):
    d = det(tmp_path, {**files, "a.c": C_SRC})
    assert (d.primary, d.build_system) == (L.C, build)


def test_go_without_module_is_gopath(tmp_path):
    d = det(tmp_path, {"a.go": GO_SRC})
    assert (d.primary, d.build_system, d.test_framework) == (L.GO, "gopath", None)


@pytest.mark.parametrize("lockfile, manager", [
    ("package-lock.json", "npm"), ("yarn.lock", "yarn"), ("pnpm-lock.yaml", "pnpm"), (None, "npm"),
])
def test_node_package_managers(tmp_path, lockfile, manager):
    files = {"package.json": pkg(name="a"), "a.js": JS_SRC}
    if lockfile:
        files[lockfile] = ""
    d = det(tmp_path, files)
    assert d.build_system == d.package_manager == manager
    assert d.extra.get("lockfile") == lockfile


def test_package_manager_field(tmp_path):
    d = det(tmp_path, {"package.json": pkg(packageManager="pnpm@8.15.0"), "a.js": JS_SRC})
    assert d.build_system == "pnpm"


@pytest.mark.parametrize("files, build, manager", [
    ({"Gemfile": "gem 'rake'\n"}, "bundler", "bundler"),
    ({"a.gemspec": "Gem::Specification.new do |s|\nend\n"}, "gemspec", "gem"),
    ({"Rakefile": "task :default\n"}, "rake", "gem"),
])
def test_ruby_build_systems(tmp_path, files, build, manager):
    d = det(tmp_path, {**files, "lib/a.rb": RB_SRC})
    assert (d.primary, d.build_system, d.package_manager) == (L.RUBY, build, manager)


# --------------------------------------------------------------------------- test frameworks


@pytest.mark.parametrize("files, framework", [
    ({"tests/test_a.py": "import unittest\nclass T(unittest.TestCase): pass\n"}, "unittest"),
    ({"tests/test_a.py": "def test_a():\n    assert True\n"}, "pytest"),
    ({"tests/test_a.py": "import unittest\n", "pytest.ini": "[pytest]\n"}, "pytest"),
    ({"tests/test_a.py": "import unittest\n", "conftest.py": ""}, "pytest"),
    ({"tests/test_a.py": "import unittest\n",
      "pyproject.toml": "[project]\nname='a'\n[tool.pytest.ini_options]\n"}, "pytest"),
    ({"tests/test_a.py": "from nose.tools import eq_\n"}, "nose"),
    ({"tests/test_a.py": "x = 1\n", "requirements-dev.txt": "nose\n"}, "nose"),
])
def test_python_frameworks(tmp_path, files, framework):
    d = det(tmp_path, {"setup.py": "setup()\n", "a.py": PY_SRC, **files})
    assert d.test_framework == framework


@pytest.mark.parametrize("files, framework", [
    ({"pom.xml": "<dependency><groupId>junit</groupId><artifactId>junit</artifactId>"
                 "<version>4.13.2</version></dependency>"}, "junit4"),
    ({"pom.xml": "<artifactId>junit-jupiter-api</artifactId>"}, "junit5"),
    ({"build.gradle": "dependencies { testImplementation 'junit:junit:4.13.2' }\n"}, "junit4"),
    ({"build.gradle.kts": "dependencies { testImplementation(\"org.junit.jupiter:junit-jupiter:5"
                          ".10.0\") }\ntasks.test { useJUnitPlatform() }\n"}, "junit5"),
    ({"src/test/java/ATest.java": "import org.junit.jupiter.api.Test;\n"}, "junit5"),
    ({"src/test/java/ATest.java": "import org.junit.Test;\n"}, "junit4"),
    ({"pom.xml": "<artifactId>testng</artifactId>"}, "testng"),
])
def test_java_frameworks(tmp_path, files, framework):
    d = det(tmp_path, {"src/main/java/A.java": JAVA_SRC, **files})
    assert d.test_framework == framework


@pytest.mark.parametrize("files, framework", [
    ({"CMakeLists.txt": "project(a CXX)\nenable_testing()\nadd_test(NAME t COMMAND t)\n"}, "ctest"),
    ({"CMakeLists.txt": "project(a CXX)\ntarget_link_libraries(t GTest::gtest_main)\n"}, "gtest"),
    ({"CMakeLists.txt": "project(a CXX)\nenable_testing()\n",
      "test/t.cpp": "#include <gtest/gtest.h>\n"}, "gtest"),
    ({"CMakeLists.txt": "project(a CXX)\nfind_package(Catch2 3 REQUIRED)\n"}, "catch2"),
    ({"CMakeLists.txt": "project(a CXX)\n", "test/t.cpp": "#include <catch2/catch_test_macros.hpp>\n"},
     "catch2"),
    ({"CMakeLists.txt": "project(a CXX)\n", "test/t.cpp": "#include \"doctest/doctest.h\"\n"},
     "doctest"),
    ({"configure.ac": "AC_INIT\n", "Makefile.am": "TESTS = t\ncheck_PROGRAMS = t\n"}, "automake"),
    ({"Makefile": "check:\n\t./t\n"}, "make-check"),
    ({"Makefile": "test:\n\t./t\n"}, "make-test"),
])
def test_cpp_frameworks(tmp_path, files, framework):
    d = det(tmp_path, {"src/a.cpp": CPP_SRC, **files})
    assert d.primary is L.CPP and d.test_framework == framework


@pytest.mark.parametrize("package, files, framework", [
    ({"scripts": {"test": "node --test test/"}}, {}, "node-test"),
    ({"scripts": {"test": "jest --coverage"}}, {}, "jest"),
    ({"scripts": {"test": "mocha"}, "devDependencies": {"chai": "4"}}, {}, "mocha"),
    ({"scripts": {"test": "vitest run"}}, {}, "vitest"),
    ({"devDependencies": {"jest": "^29"}}, {}, "jest"),
    ({"devDependencies": {"vitest": "^1", "jest": "^29"}}, {}, "vitest"),
    ({"scripts": {"test": "npm run lint && mocha test"}, "devDependencies": {"jest": "^29"}}, {},
     "mocha"),
    ({"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}},
     {"test/a.test.js": "import { test } from 'node:test';\n"}, "node-test"),
    ({}, {"jest.config.js": "module.exports = {};\n"}, "jest"),
    ({}, {".mocharc.json": "{}"}, "mocha"),
    ({"scripts": {"test:unit": "vitest"}}, {}, "vitest"),
])
def test_node_frameworks(tmp_path, package, files, framework):
    d = det(tmp_path, {"package.json": pkg(**package), "index.js": JS_SRC, **files})
    assert d.primary is L.JAVASCRIPT and d.test_framework == framework


@pytest.mark.parametrize("files, framework", [
    ({"composer.json": pkg(**{"require-dev": {"phpunit/phpunit": "^10"}})}, "phpunit"),
    ({"composer.json": "{}", "phpunit.xml.dist": "<phpunit/>"}, "phpunit"),
    ({"composer.json": pkg(**{"require-dev": {"pestphp/pest": "^2"}})}, "pest"),
])
def test_php_frameworks(tmp_path, files, framework):
    d = det(tmp_path, {"src/A.php": PHP_SRC, **files})
    assert d.test_framework == framework


@pytest.mark.parametrize("files, framework", [
    ({".rspec": "--require spec_helper\n", "spec/a_spec.rb": "describe A do\nend\n"}, "rspec"),
    ({"Gemfile": "gem 'rspec'\n", "spec/a_spec.rb": "describe A do\nend\n"}, "rspec"),
    ({"Gemfile": "gem 'minitest'\n", "test/a_test.rb": "require 'minitest/autorun'\n"},
     "minitest"),
    ({"Rakefile": "require 'rake/testtask'\nRake::TestTask.new\n",
      "test/test_a.rb": "require 'minitest/autorun'\n"}, "minitest"),
    ({"Gemfile": "gem 'test-unit'\n", "test/test_a.rb": "require 'test/unit'\n"}, "test-unit"),
])
def test_ruby_frameworks(tmp_path, files, framework):
    d = det(tmp_path, {"lib/a.rb": RB_SRC, **files})
    assert d.test_framework == framework


# --------------------------------------------------------------------------- mixed repositories


def test_typescript_needs_tsconfig_or_dependency(tmp_path):
    base = {"package.json": pkg(name="a"), "src/a.ts": TS_SRC, "lib/b.js": JS_SRC * 3}
    assert det(tmp_path / "1", {**base, "tsconfig.json": "{}"}).primary is L.TYPESCRIPT
    assert det(tmp_path / "2", {**base, "package.json": pkg(
        devDependencies={"typescript": "^5"})}).primary is L.TYPESCRIPT
    # .ts files without tsconfig or a typescript dependency: a JavaScript package
    assert det(tmp_path / "3", base).primary is L.JAVASCRIPT
    d = det(tmp_path / "1b", {**base, "tsconfig.json": "{}"})
    assert d.extra["tsconfig"] == "tsconfig.json"
    assert set(d.languages) == {L.TYPESCRIPT, L.JAVASCRIPT}


def test_declaration_files_do_not_make_typescript(tmp_path):
    d = det(tmp_path, {"package.json": pkg(name="a"), "index.js": JS_SRC,
                       "index.d.ts": TS_SRC * 5, "tsconfig.json": "{}"})
    assert d.primary is L.JAVASCRIPT


def test_type_tests_do_not_make_typescript(tmp_path):
    # A JavaScript package that type-checks its declarations (dotenv: tests/types/test.ts with
    # its own tsconfig and a typescript devDependency; tsd's index.test-d.ts) is JavaScript.
    base = {"package.json": pkg(devDependencies={"typescript": "^5", "tap": "^19"}),
            "lib/main.js": JS_SRC * 5, "lib/main.d.ts": TS_SRC}
    d = det(tmp_path / "1", {**base, "tests/types/test.ts": TS_SRC,
                             "tests/types/tsconfig.json": "{}"})
    assert d.primary is L.JAVASCRIPT
    assert d.test_framework == "tap"
    d = det(tmp_path / "2", {**base, "index.test-d.ts": TS_SRC * 3, "test-d/more.ts": TS_SRC})
    assert d.primary is L.JAVASCRIPT


def test_a_sliver_of_typescript_does_not_make_typescript(tmp_path):
    # a typescript dependency and one small .ts file in a big JavaScript package
    files = {"package.json": pkg(devDependencies={"typescript": "^5"}),
             "lib/a.js": JS_SRC * 40, "examples/demo.ts": TS_SRC}
    assert det(tmp_path / "1", files).primary is L.JAVASCRIPT
    # with a root tsconfig and TypeScript sources that matter it is TypeScript
    files = {**files, "tsconfig.json": "{}", "src/index.ts": TS_SRC * 20}
    assert det(tmp_path / "2", files).primary is L.TYPESCRIPT
    # a tsconfig only below the root (a type-test or example project) is no TS tooling
    files = {"package.json": pkg(name="a"), "lib/a.js": JS_SRC, "src/b.ts": TS_SRC,
             "examples/tsconfig.json": "{}"}
    assert det(tmp_path / "3", files).primary is L.JAVASCRIPT


def test_build_files_outweigh_helper_scripts(tmp_path):
    # a Go module with a bigger Python helper script is still Go
    d = det(tmp_path, {"go.mod": "module a\n\ngo 1.22\n", "a.go": GO_SRC,
                       "scripts/gen.py": PY_SRC})  # 1.5x the Go bytes
    assert d.primary is L.GO
    assert set(d.languages) == {L.GO, L.PYTHON}
    # a Python package with a JavaScript docs theme is still Python
    d = det(tmp_path / "2", {"pyproject.toml": "[project]\nname='a'\n", "a/x.py": PY_SRC,
                             "docs/theme.js": JS_SRC * 2})
    assert d.primary is L.PYTHON


@pytest.mark.parametrize("cmake, primary", [
    ("project(a LANGUAGES C)\n", L.C),
    ("project(a LANGUAGES CXX)\n", L.CPP),
    ("project(a C)\n", L.C),
    ("project(a VERSION 1.0 LANGUAGES CXX)\n", L.CPP),
    ("project(a)\n", L.CPP),  # both by default: the extensions decide
])
def test_c_versus_cpp(tmp_path, cmake, primary):
    # equal amounts of C and C++: CMake's project() decides, else the larger side
    files = {"CMakeLists.txt": cmake, "a.c": C_SRC, "b.cpp": CPP_SRC * 2}
    if "LANGUAGES C)" in cmake or cmake == "project(a C)\n":
        files["b.cpp"] = CPP_SRC  # less C++ than C would say C anyway: make it a close call
    assert det(tmp_path, files).primary is primary


def test_headers_follow_the_majority(tmp_path):
    d = det(tmp_path, {"a.cpp": CPP_SRC, "a.h": "int f();\n" * 100})
    assert d.primary is L.CPP and set(d.languages) == {L.CPP}
    d = det(tmp_path / "2", {"a.c": C_SRC, "a.h": "int f();\n" * 100})
    assert d.primary is L.C


def test_meson_languages(tmp_path):
    d = det(tmp_path, {"meson.build": "project('a', 'cpp')\n", "a.c": C_SRC * 3, "b.cc": CPP_SRC})
    assert (d.primary, d.build_system) == (L.CPP, "meson")


# --------------------------------------------------------------------------- vendored trees


def test_vendored_and_build_dirs_are_ignored(tmp_path):
    big_js = JS_SRC * 200
    d = det(tmp_path, {
        "pyproject.toml": "[project]\nname='a'\n", "a/x.py": PY_SRC,
        "node_modules/x/index.js": big_js, "vendor/y.php": PHP_SRC * 200,
        "build/lib/a/x.py": PY_SRC, "dist/bundle.js": big_js, "target/T.java": JAVA_SRC * 50,
        "third_party/z.c": C_SRC * 200, ".venv/lib/site.py": PY_SRC * 50,
        ".git/objects/x.js": big_js, "static/app.min.js": big_js,
        "a.egg-info/x.py": PY_SRC, "cmake-build-debug/x.cpp": CPP_SRC * 50,
    })
    assert d.primary is L.PYTHON and set(d.languages) == {L.PYTHON}


def test_vendored_only_is_no_source(tmp_path):
    with pytest.raises(DetectionError, match="no recognisable source"):
        det(tmp_path, {"README.md": "hi\n", "node_modules/x/index.js": JS_SRC})


def test_empty_repository(tmp_path):
    (tmp_path / "empty" / ".git").mkdir(parents=True)
    with pytest.raises(DetectionError, match="empty"):
        detect(tmp_path / "empty")
    with pytest.raises(DetectionError):
        detect(tmp_path / "missing")


def test_errors_are_one_line(tmp_path):
    try:
        det(tmp_path, {"notes.txt": "x\n", "data.csv": "1,2\n"})
    except DetectionError as exc:
        assert "\n" not in str(exc)
    else:
        raise AssertionError("no error")


def test_build_file_without_sources(tmp_path):
    assert det(tmp_path, {"pom.xml": "<project/>"}).primary is L.JAVA


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("files, key, version", [
    ({"pyproject.toml": "[project]\nname='a'\nrequires-python = '>=3.9'\n", "a.py": PY_SRC},
     "python", ">=3.9"),
    ({"setup.py": "setup(name='a', python_requires='>=3.8, <4')\n", "a.py": PY_SRC},
     "python", ">=3.8, <4"),
    ({"setup.cfg": "[options]\npython_requires = >=3.7\n", "a.py": PY_SRC}, "python", ">=3.7"),
    ({"setup.py": "setup()\n", ".python-version": "3.10.4\n", "a.py": PY_SRC}, "python", "3.10.4"),
    ({"pom.xml": "<properties><maven.compiler.release>17</maven.compiler.release></properties>",
      "A.java": JAVA_SRC}, "java", "17"),
    ({"pom.xml": "<properties><maven.compiler.source>1.8</maven.compiler.source></properties>",
      "A.java": JAVA_SRC}, "java", "1.8"),
    ({"build.gradle": "java { toolchain { languageVersion = JavaLanguageVersion.of(21) } }\n",
      "A.java": JAVA_SRC}, "java", "21"),
    ({"build.gradle": "sourceCompatibility = JavaVersion.VERSION_11\n", "A.java": JAVA_SRC},
     "java", "11"),
    ({"go.mod": "module a\n\ngo 1.21.3\n\ntoolchain go1.22.1\n", "a.go": GO_SRC}, "go", "1.21.3"),
    ({"package.json": pkg(engines={"node": ">=18"}), "a.js": JS_SRC}, "node", ">=18"),
    ({"package.json": pkg(), ".nvmrc": "v20.11.0\n", "a.js": JS_SRC}, "node", "20.11.0"),
    ({"package.json": pkg(devDependencies={"typescript": "~5.4.5"}), "tsconfig.json": "{}",
      "a.ts": TS_SRC}, "typescript", "~5.4.5"),
    ({"composer.json": pkg(require={"php": "^8.1"}), "a.php": PHP_SRC}, "php", "^8.1"),
    ({"Gemfile": "source 'x'\nruby '3.2.2'\n", "a.rb": RB_SRC}, "ruby", "3.2.2"),
    ({"Gemfile": "gem 'x'\n", ".ruby-version": "ruby-3.1.4\n", "a.rb": RB_SRC}, "ruby", "3.1.4"),
    ({"a.gemspec": "s.required_ruby_version = '>= 2.7'\n", "a.rb": RB_SRC}, "ruby", ">= 2.7"),
    ({"package.json": pkg(), ".tool-versions": "nodejs 18.19.0\npython 3.11.4\n",
      "a.js": JS_SRC}, "node", "18.19.0"),
    ({"CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(a CXX)\n"
                        "set(CMAKE_CXX_STANDARD 17)\n", "a.cpp": CPP_SRC}, "cxx_standard", "17"),
])
def test_versions(tmp_path, files, key, version):
    assert det(tmp_path, files).versions[key] == version


def test_go_toolchain_and_tool_versions(tmp_path):
    d = det(tmp_path, {"go.mod": "module a\n\ngo 1.21\n\ntoolchain go1.22.1\n", "a.go": GO_SRC,
                       ".tool-versions": "golang 1.22.1\nnodejs 18\n"})
    assert d.versions["go"] == "1.21" and d.versions["go-toolchain"] == "1.22.1"
    assert d.versions["node"] == "18"  # .tool-versions adds what the build files do not say


# --------------------------------------------------------------------------- CI hints


def test_github_actions_hints(tmp_path):
    workflow = """\
name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        node-version: [18, 20.x]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node-version }}
      - run: npm ci
      - run: |
          npm run build
          npm test -- --coverage
"""
    d = det(tmp_path, {"package.json": pkg(name="a"), "a.js": JS_SRC,
                       ".github/workflows/ci.yml": workflow})
    assert d.ci_versions == {"node": ("18", "20.x")}
    assert ".github/workflows/ci.yml: npm test -- --coverage" in d.hints
    assert ".github/workflows/ci.yml: npm ci" in d.hints
    assert ".github/workflows/ci.yml" in d.evidence
    # workflow files are not source
    assert set(d.languages) == {L.JAVASCRIPT}


def test_gitlab_and_travis_hints(tmp_path):
    d = det(tmp_path, {
        "setup.py": "setup()\n", "a.py": PY_SRC,
        ".gitlab-ci.yml": "test:\n  image: python:3.11-slim\n  script:\n    - pip install -e .\n"
                          "    - pytest -q\n",
        ".travis.yml": "language: python\npython:\n  - '3.8'\n  - '3.9'\nscript: python -m "
                       "unittest\n",
    })
    assert d.ci_versions["python"] == ("3.11", "3.8", "3.9")
    assert ".gitlab-ci.yml: pytest -q" in d.hints
    assert ".travis.yml: python -m unittest" in d.hints


def test_broken_ci_file_is_ignored(tmp_path):
    d = det(tmp_path, {"go.mod": "module a\n", "a.go": GO_SRC,
                       ".github/workflows/x.yml": "jobs: [unclosed\n"})
    assert d.primary is L.GO and d.hints == ()


# --------------------------------------------------------------------------- the samples


ALL_SAMPLES = samples.names()


@pytest.mark.parametrize("name", ALL_SAMPLES)
def test_every_sample_detected_as_declared(tmp_path, name):
    sample = samples.get(name)
    repo = samples.write(sample, tmp_path)
    d = detect(repo)
    assert (d.primary, d.build_system, d.test_framework) == (
        sample.language, sample.build_system, sample.test_framework), d.evidence


@pytest.mark.parametrize("files, framework", [
    # a Gemfile listing both: the test files decide
    ({"Gemfile": "gem 'minitest'\ngem 'test-unit'\n",
      "test/test_a.rb": "require 'test/unit'\nclass TC_A < Test::Unit::TestCase\nend\n"},
     "test-unit"),
    ({"Gemfile": "gem 'minitest'\ngem 'test-unit'\n",
      "test/test_a.rb": "require 'minitest/autorun'\nclass A < Minitest::Test\nend\n"},
     "minitest"),
    ({"Gemfile": "gem 'test-unit'\n", "test/helper.rb": "require 'minitest/autorun'\n",
      "test/a_test.rb": "class A < Minitest::Test\nend\n"}, "minitest"),
])
def test_ruby_unit_framework_from_the_test_files(tmp_path, files, framework):
    d = det(tmp_path, {"lib/a.rb": RB_SRC, **files})
    assert d.test_framework == framework
