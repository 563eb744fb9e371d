"""Python samples: pyproject + pytest (src layout) and setup.py + unittest (run by pytest).

Test ids are pytest node ids (`junit:pytest`): `tests/test_core.py::test_name` and
`tests/test_core.py::TestCase::test_name` for unittest classes.

`py-verlib` is the time machine's sample: its whole history predates packaging 22.0
(2022-12-07), which removed `packaging.version.LegacyVersion`, and it declares only
`packaging>=20.0`. Resolved as of its commit dates its tests pass; with today's packaging
its test modules do not even import.
"""

from __future__ import annotations

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from data.samples import replaced as _sub
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED




# --------------------------------------------------------------------------- py-textkit

_TK_PYPROJECT = _d('''
    [build-system]
    requires = ["setuptools>=61", "wheel"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "textkit"
    version = "0.1.0"
    description = "Small text helpers: slugs and truncation"
    requires-python = ">=3.8"

    [project.optional-dependencies]
    test = ["pytest>=7"]

    [tool.setuptools.packages.find]
    where = ["src"]

    [tool.pytest.ini_options]
    testpaths = ["tests"]
''')

_TK_INIT = _d('''
    """Small text helpers."""

    from textkit.core import slugify, truncate

    __all__ = ["slugify", "truncate"]
    __version__ = "0.1.0"
''')

_TK_CORE_0 = _d('''
    """Text helpers: slugs and truncation."""

    import re
    import unicodedata

    _NON_WORD = re.compile(r"[^a-z0-9]+")


    def slugify(text: str, sep: str = "-") -> str:
        """The lower-case ASCII words of text joined by sep."""
        folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        return _NON_WORD.sub(sep, folded.lower()).strip(sep)


    def truncate(text: str, width: int, ellipsis: str = "...") -> str:
        """text cut to at most width characters, ending in ellipsis when cut."""
        if len(text) <= width:
            return text
        return text[: width - len(ellipsis)] + ellipsis
''')

_TK_CORE_FIXED = _sub(
    _TK_CORE_0,
    '''        return text
    return text[: width - len(ellipsis)] + ellipsis
''',
    '''        return text
    if width < len(ellipsis):
        return ellipsis[:width]
    return text[: width - len(ellipsis)] + ellipsis
''',
)

_TK_CORE_REFACTORED = _d('''
    """Text helpers: slugs and truncation."""

    import re
    import unicodedata

    _NON_WORD = re.compile(r"[^a-z0-9]+")


    def _ascii_fold(text: str) -> str:
        return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


    def _join_words(text: str, sep: str) -> str:
        return _NON_WORD.sub(sep, text).strip(sep)


    def slugify(text: str, sep: str = "-") -> str:
        """The lower-case ASCII words of text joined by sep."""
        return _join_words(_ascii_fold(text).lower(), sep)


    def truncate(text: str, width: int, ellipsis: str = "...") -> str:
        """text cut to at most width characters, ending in ellipsis when cut."""
        if len(text) <= width:
            return text
        if width < len(ellipsis):
            return ellipsis[:width]
        return text[: width - len(ellipsis)] + ellipsis
''')

_TK_CORE_FAST = _sub(
    _TK_CORE_REFACTORED,
    '''    """The lower-case ASCII words of text joined by sep."""
    return''',
    '''    """The lower-case ASCII words of text joined by sep."""
    if text.isascii():
        return _join_words(text.lower(), sep)
    return''',
)

_TK_TESTS_0 = _d('''
    from textkit import slugify, truncate


    def test_slugify_basic():
        assert slugify("Hello, World!") == "hello-world"


    def test_slugify_accents():
        assert slugify("Crème Brûlée") == "creme-brulee"


    def test_slugify_custom_separator():
        assert slugify("a b  c", sep="_") == "a_b_c"


    def test_truncate_short_text_unchanged():
        assert truncate("abc", 5) == "abc"


    def test_truncate_long_text():
        assert truncate("abcdefghij", 6) == "abc..."
''')

_TK_TESTS_FIX = _TK_TESTS_0 + "\n\n" + _d('''


    def test_truncate_narrow_width():
        assert truncate("abcdefghij", 2) == ".."
        assert len(truncate("abcdefghij", 1)) == 1
''')

_TK_TESTS_FLAKY = "import random\n\n" + _TK_TESTS_FIX + "\n\n" + _d('''


    def test_slugify_long_input_is_fast():
        # Planted flaky test: whether it passes is a coin toss, not a property of slugify
        # (it stands for a wall-clock budget on a loaded CI machine).
        slugify("word " * 2000)
        assert random.SystemRandom().random() < 0.5
''')

_TK_TESTS_HEAD = "import pytest\n\n" + _TK_TESTS_FIX + "\n\n" + _d('''


    def test_slugify_drops_apostrophes():
        # known bug (#9): the apostrophe splits the word
        assert slugify("Don't stop") == "dont-stop"


    @pytest.mark.skip(reason="needs emoji names from unicodedata (#10)")
    def test_slugify_emoji():
        assert slugify("I ♥ tea") == "i-heart-tea"
''')

_TK_VERSION_TEST = _d('''
    import textkit


    def test_version_is_semver():
        parts = textkit.__version__.split(".")
        assert len(parts) == 3 and all(p.isdigit() for p in parts)
''')

_TK_README_0 = _d('''
    # textkit

    Small text helpers: `slugify` and `truncate`.

        pip install -e '.[test]' && pytest
''')

_TK_README_1 = _TK_README_0 + "\n" + _d('''

    ## truncate(text, width, ellipsis="...")

    Returns `text` when it fits in `width` characters, else its head followed by `ellipsis`,
    `width` characters in all.
''')


@sample
def sample_py_textkit() -> SampleRepo:
    t = "tests/test_core.py::"
    return SampleRepo(
        name="py-textkit",
        language=Language.PYTHON,
        build_system="pyproject",
        test_framework="pytest",
        description="pyproject (setuptools, src layout) + pytest; a planted flaky test",
        commits=(
            Commit("Initial textkit: slugify and truncate", {
                "pyproject.toml": _TK_PYPROJECT,
                "README.md": _TK_README_0,
                ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n",
                "src/textkit/__init__.py": _TK_INIT,
                "src/textkit/core.py": _TK_CORE_0,
                "tests/test_core.py": _TK_TESTS_0,
                "tests/test_version.py": _TK_VERSION_TEST,
            }, date="2022-05-09T10:12:00+00:00", tag="v0.1.0"),
            Commit("Document truncate in the README", {"README.md": _TK_README_1},
                   date="2022-09-02T16:40:00+00:00"),
            Commit("Fix truncate when width is smaller than the ellipsis (#3)\n\nFixes #2", {
                "src/textkit/core.py": _TK_CORE_FIXED,
                "tests/test_core.py": _TK_TESTS_FIX,
            }, date="2023-01-20T09:05:00+00:00"),
            Commit("Split slugify into folding and joining helpers",
                   {"src/textkit/core.py": _TK_CORE_REFACTORED},
                   date="2023-06-11T14:22:00+00:00"),
            Commit("Speed up slugify on long ASCII input (#6)\n\nFixes #5", {
                "src/textkit/core.py": _TK_CORE_FAST,
                "tests/test_core.py": _TK_TESTS_FLAKY,
            }, date="2023-10-08T11:00:00+00:00"),
            Commit("Drop the flaky timing test, add tests for known issues (#8)\n\nFixes #7",
                   {"tests/test_core.py": _TK_TESTS_HEAD},
                   date="2024-02-14T08:30:00+00:00", tag="v0.2.0"),
        ),
        expected={
            t + "test_slugify_basic": P,
            t + "test_slugify_accents": P,
            t + "test_slugify_custom_separator": P,
            t + "test_truncate_short_text_unchanged": P,
            t + "test_truncate_long_text": P,
            t + "test_truncate_narrow_width": P,
            t + "test_slugify_drops_apostrophes": F,
            t + "test_slugify_emoji": S,
            "tests/test_version.py::test_version_is_semver": P,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.OTHER, decoy="docs_only"),
            Planted(
                commit=2, issues=(2,),
                fail_to_pass=(t + "test_truncate_narrow_width",),
                pass_to_pass=(
                    t + "test_slugify_basic", t + "test_slugify_accents",
                    t + "test_slugify_custom_separator", t + "test_truncate_short_text_unchanged",
                    t + "test_truncate_long_text", "tests/test_version.py::test_version_is_semver",
                ),
            ),
            Planted(commit=3, kind=TaskKind.REFACTOR, decoy="refactor"),
            Planted(commit=4, issues=(5,), fail_to_pass=(t + "test_slugify_long_input_is_fast",),
                    decoy="flaky"),
            Planted(commit=5, kind=TaskKind.OTHER, issues=(7,), decoy="tests_only"),
        ),
        issues=(
            Issue(2, "truncate() returns more than width characters for tiny widths",
                  "`truncate('abcdefghij', 2)` returns `'abcdefghi...'`, twelve characters. "
                  "I expected at most two.",
                  ("Confirmed: the slice goes negative when width < len(ellipsis).",),
                  created_at="2022-12-30T18:00:00+00:00"),
            Issue(5, "slugify is slow on long input",
                  "Slugifying a 10 kB ASCII string takes noticeably long; the NFKD "
                  "normalization is not needed for ASCII text.",
                  created_at="2023-09-20T10:00:00+00:00"),
            Issue(7, "test_slugify_long_input_is_fast fails at random on CI",
                  "About every other run fails; the budget is not a property of the code.",
                  ("Let's drop it.",), created_at="2024-01-30T12:00:00+00:00"),
        ),
    )


# --------------------------------------------------------------------------- py-verlib

_VL_SETUP = _d('''
    from setuptools import find_packages, setup

    setup(
        name="verlib",
        version="0.1.0",
        description="Sort and compare version strings, legacy ones included",
        packages=find_packages(exclude=["tests"]),
        python_requires=">=3.6",
        install_requires=["packaging>=20.0"],
    )
''')

_VL_INIT = _d('''
    """Sort and compare version strings, legacy (non-PEP 440) ones included."""

    from verlib.core import is_legacy, latest, sort_versions

    __all__ = ["is_legacy", "latest", "sort_versions"]
''')

_VL_CORE_0 = _d('''
    """Version helpers on top of packaging.version, legacy (non-PEP 440) versions included."""

    from packaging.version import LegacyVersion, parse


    def is_legacy(text):
        """True when text is no PEP 440 version (packaging falls back to LegacyVersion)."""
        return isinstance(parse(text), LegacyVersion)


    def sort_versions(items):
        """items sorted oldest first; legacy versions sort before every PEP 440 version."""
        return sorted(items, key=parse)


    def latest(items, include_prereleases=False):
        """The newest version in items, or None when there is none."""
        candidates = sorted(items, key=parse)
        return candidates[-1] if candidates else None
''')

_VL_CORE_1 = _sub(
    _VL_CORE_0,
    '''    candidates = sorted(items, key=parse)
''',
    '''    candidates = [v for v in items if include_prereleases or not parse(v).is_prerelease]
    candidates.sort(key=parse)
''',
)

_VL_CORE_2 = _sub(_VL_CORE_1, "return sorted(items, key=parse)",
                  "return sorted(list(items), key=parse)")

_VL_TESTS_0 = _d('''
    import unittest

    from verlib import is_legacy, latest, sort_versions


    class IsLegacyTest(unittest.TestCase):
        def test_pep440_version(self):
            self.assertFalse(is_legacy("1.2.3"))

        def test_legacy_version(self):
            self.assertTrue(is_legacy("1.0.x"))


    class SortVersionsTest(unittest.TestCase):
        def test_numeric_order(self):
            self.assertEqual(sort_versions(["1.10", "1.2", "1.9"]), ["1.2", "1.9", "1.10"])

        def test_legacy_sorts_first(self):
            self.assertEqual(sort_versions(["1.0", "1.0.x", "0.9"]), ["1.0.x", "0.9", "1.0"])


    class LatestTest(unittest.TestCase):
        def test_latest(self):
            self.assertEqual(latest(["0.9", "1.1", "1.0"]), "1.1")

        def test_latest_of_nothing(self):
            self.assertIsNone(latest([]))
''')

_VL_TESTS_1 = _VL_TESTS_0 + (
    "\n"
    "    def test_latest_skips_prereleases(self):\n"
    '        self.assertEqual(latest(["1.0", "2.0b1"]), "1.0")\n'
    "\n"
    "    def test_latest_with_prereleases(self):\n"
    '        self.assertEqual(latest(["1.0", "2.0b1"], include_prereleases=True), "2.0b1")\n'
)

_VL_TESTS_2 = _sub(
    _VL_TESTS_1,
    '''        self.assertEqual(sort_versions(["1.0", "1.0.x", "0.9"]), ["1.0.x", "0.9", "1.0"])
''',
    '''        self.assertEqual(sort_versions(["1.0", "1.0.x", "0.9"]), ["1.0.x", "0.9", "1.0"])

    def test_generator_input(self):
        self.assertEqual(sort_versions(v for v in ["2.0", "1.0"]), ["1.0", "2.0"])
''',
)

_VL_KNOWN = _d('''
    import sys
    import unittest

    from verlib import latest


    class KnownIssuesTest(unittest.TestCase):
        def test_legacy_ranks_above_older_release(self):
            # known issue: legacy versions sort before every release, so 0.9 wins
            self.assertEqual(latest(["0.9", "1.0.x"]), "1.0.x")

        @unittest.skipUnless(sys.platform == "win32", "Windows build tags only")
        def test_windows_build_tags(self):
            self.assertEqual(latest(["1.0-win32", "1.0-win64"]), "1.0-win64")
''')

_VL_README = _d('''
    # verlib

    Sort and compare version strings, legacy (non-PEP 440) ones included.

        python setup.py develop && python -m unittest discover -s tests
''')


@sample
def sample_py_verlib() -> SampleRepo:
    t = "tests/test_core.py::"
    return SampleRepo(
        name="py-verlib",
        language=Language.PYTHON,
        build_system="setuptools",
        test_framework="unittest",
        description="setup.py + unittest; needs packaging < 22 (LegacyVersion): the "
                    "time machine's sample",
        needs_network=True,
        commits=(
            Commit("Initial verlib: version sorting on top of packaging", {
                "setup.py": _VL_SETUP,
                "README.md": _VL_README,
                ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n",
                "verlib/__init__.py": _VL_INIT,
                "verlib/core.py": _VL_CORE_0,
                "tests/__init__.py": "",
                "tests/test_core.py": _VL_TESTS_0,
            }, date="2020-03-10T09:00:00+00:00", tag="v0.1.0"),
            Commit("Fix latest() picking pre-releases by default (#4)\n\nFixes #3", {
                "verlib/core.py": _VL_CORE_1,
                "tests/test_core.py": _VL_TESTS_1,
            }, date="2020-11-19T15:30:00+00:00"),
            Commit("Fix sort_versions on generator input (#6)\n\nFixes #5", {
                "verlib/core.py": _VL_CORE_2,
                "tests/test_core.py": _VL_TESTS_2,
            }, date="2021-06-08T12:45:00+00:00"),
            Commit("Add tests for known issues", {"tests/test_known_issues.py": _VL_KNOWN},
                   date="2021-11-02T10:20:00+00:00", tag="v0.2.0"),
        ),
        expected={
            t + "IsLegacyTest::test_pep440_version": P,
            t + "IsLegacyTest::test_legacy_version": P,
            t + "SortVersionsTest::test_numeric_order": P,
            t + "SortVersionsTest::test_legacy_sorts_first": P,
            t + "SortVersionsTest::test_generator_input": P,
            t + "LatestTest::test_latest": P,
            t + "LatestTest::test_latest_of_nothing": P,
            t + "LatestTest::test_latest_skips_prereleases": P,
            t + "LatestTest::test_latest_with_prereleases": P,
            "tests/test_known_issues.py::KnownIssuesTest::test_legacy_ranks_above_older_release": F,
            "tests/test_known_issues.py::KnownIssuesTest::test_windows_build_tags": S,
        },
        planted=(
            Planted(
                commit=1, issues=(3,),
                fail_to_pass=(t + "LatestTest::test_latest_skips_prereleases",),
                pass_to_pass=(
                    t + "IsLegacyTest::test_pep440_version", t + "IsLegacyTest::test_legacy_version",
                    t + "SortVersionsTest::test_numeric_order",
                    t + "SortVersionsTest::test_legacy_sorts_first",
                    t + "LatestTest::test_latest", t + "LatestTest::test_latest_of_nothing",
                    t + "LatestTest::test_latest_with_prereleases",
                ),
            ),
            Planted(commit=2, issues=(5,), decoy="no_fail_to_pass"),
            Planted(commit=3, kind=TaskKind.OTHER, decoy="tests_only"),
        ),
        issues=(
            Issue(3, "latest() returns pre-releases although include_prereleases is False",
                  "`latest(['1.0', '2.0b1'])` gives `'2.0b1'`; the flag is never read.",
                  created_at="2020-10-02T08:00:00+00:00"),
            Issue(5, "sort_versions() with a generator",
                  "Does `sort_versions` accept a generator? It looks like it consumes it twice.",
                  ("sorted() takes any iterable; adding a test to be sure.",),
                  created_at="2021-05-27T19:00:00+00:00"),
        ),
        extra={"time_machine_commit": "3",
               "time_machine": "tests pass with packaging as of the commit date (21.x); "
                               "packaging >= 22 removed LegacyVersion"},
    )
