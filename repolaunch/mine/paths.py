"""Which part of a change a file is: test, docs or code (`classify_path`).

The rules are per-language file-name conventions (each language's `Traits.test_files`) plus
test directories (`TEST_DIRS`, Maven/Gradle test source sets) instead of SWE-bench's "path
contains 'test'" substring rule, so ``src/latest.py`` and ``contest.py`` are code, while
``testdata/`` fixtures are test files. `test_path_pattern` is the same test rule as a PCRE,
for checks that run inside a container.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import PurePosixPath

from repolaunch import languages

__all__ = ["DOCS_DIRS", "TEST_DIRS", "FileRole", "classify_path", "test_path_pattern"]


class FileRole(str, Enum):
    CODE = "code"
    TEST = "test"
    DOCS = "docs"


# Directory names that make everything below them a test file. "testdata" and fixtures
# under a test directory are test files too: the test patch must carry what the new tests
# read (SWE-bench's test patches do).
TEST_DIRS = frozenset({
    "test", "tests", "spec", "specs", "__tests__", "__mocks__", "testing", "testdata",
    "test-data", "test_data", "e2e", "testutil", "testutils", "testhelpers", "test_helpers",
    "test-utils", "test_utils", "unittests", "unittest", "integration-tests",
    "integration_tests", "cypress",
})
# Maven/Gradle source sets: src/test/**, src/integrationTest/**, src/testFixtures/**.
_TEST_SOURCE_SETS = re.compile(r"(^|/)src/(test|it|integrationTest|testFixtures|[a-z]+Test)/")

DOCS_DIRS = frozenset({"docs", "doc", "documentation", "man", "website", "site-docs"})
_DOC_EXTS = frozenset({".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".rdoc", ".pod"})
_DOC_STEMS = re.compile(
    r"(readme|changelog|changes|history|news|authors|contributors|contributing|license|"
    r"licence|copying|notice|code_of_conduct|security|support|maintainers|releasing)"
    r"([._-].*)?$",
    re.IGNORECASE,
)
# Root-level .txt files are docs except those that build or pin something.
_BUILD_TXT = re.compile(r"(cmakelists|requirements.*|constraints.*|.*-requirements)\.txt$", re.I)


def classify_path(path: str) -> FileRole:
    """Whether a changed file belongs to the tests, the docs or the code.

    Test rules come first, so a fixture such as ``tests/data/sample.md`` stays with the tests
    that read it; ``docs/`` and doc-like files are docs; everything else (sources, build
    files, CI, configuration) is code.
    """
    p = PurePosixPath(path)
    dirs = [d.lower() for d in p.parts[:-1]]
    name = p.name
    if any(d in TEST_DIRS for d in dirs) or _TEST_SOURCE_SETS.search(path):
        return FileRole.TEST
    if languages.test_file_rule().fullmatch(name):  # each language's own naming rule
        return FileRole.TEST
    if any(d in DOCS_DIRS for d in dirs):
        return FileRole.DOCS
    suffix = p.suffix.lower()
    if suffix in _DOC_EXTS or _DOC_STEMS.match(name):
        return FileRole.DOCS
    if not dirs and suffix == ".txt" and not _BUILD_TXT.match(name):
        return FileRole.DOCS
    return FileRole.CODE


def test_path_pattern() -> str:
    """A PCRE (``grep -P``) that matches a path `classify_path` calls a test, for checks that
    run inside a container (has anything but tests changed?)."""
    dirs = "|".join(sorted(re.escape(d) for d in TEST_DIRS))
    return (f"(?:^|/)(?i:{dirs})/|{_TEST_SOURCE_SETS.pattern}|"
            f"(?:^|/)(?:{languages.test_file_rule().pattern})$")
