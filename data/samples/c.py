"""C samples: CMake + ctest with a test runner of the project's own, and autotools
(configure.ac + Makefile.am, run through autoreconf) with automake's `make check`."""

from __future__ import annotations

from textwrap import dedent, indent

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from envs.models import Language, TaskKind, TestStatus

P, F, S, X = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED, TestStatus.XFAIL



# --------------------------------------------------------------------------- c-strutil

_CMAKE = _d("""
    cmake_minimum_required(VERSION 3.13)
    project(strutil C)
    set(CMAKE_C_STANDARD 99)

    add_library(strutil src/strutil.c)
    target_include_directories(strutil PUBLIC include)

    # Tests: every TEST(name) in tests/test_*.c becomes a ctest test running
    # `test_runner name`; a test returns 77 to skip itself.
    enable_testing()
    file(GLOB test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_*.c)
    add_executable(test_runner tests/runner.c ${test_sources})
    target_link_libraries(test_runner strutil)
    foreach(src ${test_sources})
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
      file(STRINGS ${src} test_lines REGEX "^TEST\\\\(")
      foreach(line ${test_lines})
        string(REGEX REPLACE "^TEST\\\\(([A-Za-z0-9_]+)\\\\).*" "\\\\1" name "${line}")
        add_test(NAME ${name} COMMAND test_runner ${name})
        set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
      endforeach()
    endforeach()
""")

_RUNNER_H = _d("""
    #ifndef RUNNER_H
    #define RUNNER_H
    #include <stdio.h>

    /* A test returns 0 to pass, 77 to skip, anything else to fail. */
    typedef int (*test_fn)(void);
    struct test_case {
        const char *name;
        test_fn fn;
        struct test_case *next;
    };
    void runner_register(struct test_case *tc);

    #define TEST(name)                                                         \\
        static int test_##name(void);                                          \\
        static struct test_case case_##name = {#name, test_##name, 0};         \\
        __attribute__((constructor)) static void register_##name(void) {       \\
            runner_register(&case_##name);                                     \\
        }                                                                      \\
        static int test_##name(void)

    #define CHECK(cond)                                                        \\
        do {                                                                   \\
            if (!(cond)) {                                                     \\
                fprintf(stderr, "%s:%d: check failed: %s\\n", __FILE__,         \\
                        __LINE__, #cond);                                      \\
                return 1;                                                      \\
            }                                                                  \\
        } while (0)

    #define SKIP(why)                                                          \\
        do {                                                                   \\
            fprintf(stderr, "skipped: %s\\n", why);                             \\
            return 77;                                                         \\
        } while (0)

    #endif
""")

_RUNNER_C = _d("""
    #include <string.h>

    #include "runner.h"

    static struct test_case *head;

    void runner_register(struct test_case *tc) {
        tc->next = head;
        head = tc;
    }

    /* test_runner NAME runs one test; without arguments it runs them all. */
    int main(int argc, char **argv) {
        int failed = 0;
        struct test_case *tc;
        for (tc = head; tc; tc = tc->next) {
            int rc;
            if (argc > 1 && strcmp(argv[1], tc->name) != 0)
                continue;
            rc = tc->fn();
            if (argc > 1)
                return rc;
            printf("%s: %s\\n", rc == 0 ? "PASS" : rc == 77 ? "SKIP" : "FAIL", tc->name);
            if (rc != 0 && rc != 77)
                failed = 1;
        }
        if (argc > 1) {
            fprintf(stderr, "no test named %s\\n", argv[1]);
            return 2;
        }
        return failed;
    }
""")

_STRUTIL_H = _d("""
    #ifndef STRUTIL_H
    #define STRUTIL_H
    #include <stddef.h>

    /* Trim leading and trailing whitespace in place; returns the trimmed start. */
    char *su_trim(char *s);
    /* Upper-case ASCII letters in place. */
    void su_upper(char *s);
    /* Parse a decimal int; 0 on success, -1 on malformed input or overflow. */
    int su_parse_int(const char *s, int *out);
    /* Count whitespace-separated words. */
    size_t su_count_words(const char *s);

    #endif
""")

_PARSE_INT_V0 = _d("""
    int su_parse_int(const char *s, int *out) {
        long v = 0;
        if (!*s)
            return -1;
        for (; *s; s++) {
            if (*s < '0' || *s > '9')
                return -1;
            v = v * 10 + (*s - '0');
            if (v > INT_MAX)
                return -1;
        }
        *out = (int)v;
        return 0;
    }
""")

_PARSE_INT_V1 = _d("""
    int su_parse_int(const char *s, int *out) {
        long v = 0;
        int neg = 0;
        if (*s == '-' || *s == '+') {
            neg = *s == '-';
            s++;
        }
        if (!*s)
            return -1;
        for (; *s; s++) {
            if (*s < '0' || *s > '9')
                return -1;
            v = v * 10 + (*s - '0');
            if (v > (long)INT_MAX + neg)
                return -1;
        }
        *out = neg ? (int)-v : (int)v;
        return 0;
    }
""")

_WORDS_V0 = _d("""
    size_t su_count_words(const char *s) {
        size_t n;
        if (!*s)
            return 0;
        n = 1;
        for (; *s; s++)
            if (*s == ' ')
                n++;
        return n;
    }
""")

_WORDS_V1 = _WORDS_V0.replace("if (*s == ' ')", "if (*s == ' ' || *s == '\\t')")


def _strutil_c(parse_int: str, words: str) -> str:
    return _d("""
        #include "strutil.h"

        #include <ctype.h>
        #include <limits.h>
        #include <string.h>

        char *su_trim(char *s) {
            char *end;
            while (isspace((unsigned char)*s))
                s++;
            end = s + strlen(s);
            while (end > s && isspace((unsigned char)end[-1]))
                end--;
            *end = '\\0';
            return s;
        }

        void su_upper(char *s) {
            for (; *s; s++)
                if (*s >= 'a' && *s <= 'z')
                    *s = (char)(*s - 'a' + 'A');
        }

    """) + "\n" + parse_int + "\n" + words


_TESTS_HEAD = _d("""
    #include <string.h>

    #include "runner.h"
    #include "strutil.h"

""")

_T_BASE = _d("""
    TEST(trim_both_ends) {
        char buf[] = "  hello  ";
        CHECK(strcmp(su_trim(buf), "hello") == 0);
        return 0;
    }

    TEST(trim_empty) {
        char buf[] = "   ";
        CHECK(strcmp(su_trim(buf), "") == 0);
        return 0;
    }

    TEST(upper_ascii) {
        char buf[] = "abc";
        su_upper(buf);
        CHECK(strcmp(buf, "ABC") == 0);
        return 0;
    }

    TEST(parse_int_positive) {
        int v = 0;
        CHECK(su_parse_int("42", &v) == 0);
        CHECK(v == 42);
        return 0;
    }

    TEST(parse_int_rejects_junk) {
        int v = 0;
        CHECK(su_parse_int("4x", &v) == -1);
        CHECK(su_parse_int("", &v) == -1);
        return 0;
    }
""")

_T_NEGATIVE = _d("""

    TEST(parse_int_negative) {
        int v = 0;
        CHECK(su_parse_int("-17", &v) == 0);
        CHECK(v == -17);
        CHECK(su_parse_int("-", &v) == -1);
        return 0;
    }
""")

_T_MORE = _d("""

    TEST(upper_digits_unchanged) {
        char buf[] = "a1b2";
        su_upper(buf);
        CHECK(strcmp(buf, "A1B2") == 0);
        return 0;
    }

    TEST(trim_inner_spaces_kept) {
        char buf[] = " a  b ";
        CHECK(strcmp(su_trim(buf), "a  b") == 0);
        return 0;
    }
""")

_T_LOCALE = _d("""

    TEST(upper_locale) {
        SKIP("locale-aware upper-casing is not implemented");
    }
""")

_WORDS_FUZZ = _d("""
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    #include "runner.h"
    #include "strutil.h"

    TEST(count_words_fuzz) {
        char buf[64] = "";
        unsigned seed = 0;
        size_t words, i;
        FILE *f = fopen("/dev/urandom", "rb");
        if (f) {
            if (fread(&seed, sizeof seed, 1, f) != 1)
                seed = 0;
            fclose(f);
        }
        srand(seed);
        words = 1 + (size_t)(rand() % 4);
        for (i = 0; i < words; i++) {
            if (i)
                strcat(buf, rand() % 2 ? " " : "\\t");
            strcat(buf, "word");
        }
        if (rand() % 2)
            strcat(buf, " ");
        CHECK(su_count_words(buf) == words);
        return 0;
    }
""")

_WORDS_FIXED = _d("""
    #include "runner.h"
    #include "strutil.h"

    TEST(count_words_tabs) {
        CHECK(su_count_words("one\\ttwo three") == 3);
        CHECK(su_count_words("") == 0);
        return 0;
    }

    /* Known issue: a trailing separator counts as one more word. */
    TEST(count_words_trailing_space) {
        CHECK(su_count_words("one two ") == 2);
        return 0;
    }
""")

_STRUTIL_README = _d("""
    # strutil

    Small string helpers for C99: `su_trim`, `su_upper`, `su_parse_int`, `su_count_words`.

        cmake -S . -B build && cmake --build build && ctest --test-dir build
""")


@sample
def sample_c_strutil() -> SampleRepo:
    commits = (
        Commit(
            "Initial string utilities with a small test runner",
            {
                "CMakeLists.txt": _CMAKE,
                ".gitignore": "build/\n",
                "README.md": _STRUTIL_README,
                "include/strutil.h": _STRUTIL_H,
                "src/strutil.c": _strutil_c(_PARSE_INT_V0, _WORDS_V0),
                "tests/runner.h": _RUNNER_H,
                "tests/runner.c": _RUNNER_C,
                "tests/test_strutil.c": _TESTS_HEAD + _T_BASE,
            },
            date="2019-03-14T10:12:00+00:00",
            tag="v0.1",
        ),
        Commit(
            "Fix su_parse_int rejecting negative numbers (#2)\n\nFixes #1",
            {
                "src/strutil.c": _strutil_c(_PARSE_INT_V1, _WORDS_V0),
                "tests/test_strutil.c": _TESTS_HEAD + _T_BASE + _T_NEGATIVE,
            },
            date="2019-11-02T16:40:00+00:00",
        ),
        Commit(
            "Treat tabs as word separators (#4)\n\nFixes #3",
            {
                "src/strutil.c": _strutil_c(_PARSE_INT_V1, _WORDS_V1),
                "tests/test_words.c": _WORDS_FUZZ,
            },
            date="2020-08-21T09:05:00+00:00",
        ),
        Commit(
            "Add tests for su_upper and su_trim (#6)\n\nCloses #5",
            {"tests/test_strutil.c": _TESTS_HEAD + _T_BASE + _T_NEGATIVE + _T_MORE},
            date="2021-05-10T13:30:00+00:00",
        ),
        Commit(
            "Replace the random word-count test with fixed cases\n\n"
            "The fuzz test failed at random; known issues get tests of their own.",
            {
                "tests/test_words.c": _WORDS_FIXED,
                "tests/test_strutil.c": _TESTS_HEAD + _T_BASE + _T_NEGATIVE + _T_MORE
                + _T_LOCALE,
            },
            date="2022-02-03T11:00:00+00:00",
            tag="v0.2",
        ),
    )
    base = ("trim_both_ends", "trim_empty", "upper_ascii", "parse_int_positive",
            "parse_int_rejects_junk")
    expected = {name: P for name in base}
    expected.update({
        "parse_int_negative": P,
        "upper_digits_unchanged": P,
        "trim_inner_spaces_kept": P,
        "upper_locale": S,
        "count_words_tabs": P,
        "count_words_trailing_space": F,
    })
    return SampleRepo(
        name="c-strutil",
        language=Language.C,
        build_system="cmake",
        test_framework="ctest",
        commits=commits,
        expected=expected,
        planted=(
            Planted(commit=1, issues=(1,), fail_to_pass=("parse_int_negative",),
                    pass_to_pass=base),
            Planted(commit=2, issues=(3,), fail_to_pass=(), decoy="flaky"),
            Planted(commit=3, kind=TaskKind.OTHER, issues=(5,), decoy="tests_only"),
        ),
        issues=(
            Issue(1, "su_parse_int rejects negative numbers",
                  'su_parse_int("-17", &v) returns -1 instead of parsing -17.',
                  ("Confirmed, the sign is never looked at.",),
                  created_at="2019-10-28T08:00:00+00:00"),
            Issue(3, "su_count_words ignores tabs",
                  'su_count_words("a\\tb") is 1; tabs should separate words too.',
                  created_at="2020-08-01T08:00:00+00:00"),
            Issue(5, "More tests for su_upper and su_trim",
                  "Digits and inner spaces are not covered by any test.",
                  created_at="2021-05-01T08:00:00+00:00"),
        ),
        description="C99 string helpers; CMake, one ctest test per TEST() of its own runner",
    )


# --------------------------------------------------------------------------- c-kvconf

_CONFIGURE_AC = _d("""
    AC_INIT([kvconf], [1.0], [samples@envfactory.local])
    AC_CONFIG_SRCDIR([src/kvconf.c])
    AM_INIT_AUTOMAKE([foreign subdir-objects -Wall])
    AC_PROG_CC
    AM_PROG_AR
    AC_PROG_RANLIB
    AC_CONFIG_FILES([Makefile])
    AC_OUTPUT
""")


def _makefile_am(tests: tuple[str, ...], xfail: tuple[str, ...] = ()) -> str:
    text = _d("""
        AM_CPPFLAGS = -I$(srcdir)/include
        noinst_LIBRARIES = libkvconf.a
        libkvconf_a_SOURCES = src/kvconf.c include/kvconf.h
        LDADD = libkvconf.a

    """)
    text += "check_PROGRAMS = " + " ".join(f"tests/{t}" for t in tests) + "\n"
    text += "TESTS = $(check_PROGRAMS)\n"
    if xfail:
        text += "XFAIL_TESTS = " + " ".join(f"tests/{t}" for t in xfail) + "\n"
    text += "EXTRA_DIST = tests/check.h\n"
    return text


_KV_GITIGNORE = _d("""
    /Makefile
    /Makefile.in
    /aclocal.m4
    /autom4te.cache/
    /ar-lib
    /compile
    /config.log
    /config.status
    /configure
    /configure~
    /depcomp
    /install-sh
    /missing
    /test-driver
    *.o
    *.a
    *.log
    *.trs
    .deps/
    .dirstamp
    /tests/*
    !/tests/*.c
    !/tests/*.h
""")

_KV_H = _d("""
    #ifndef KVCONF_H
    #define KVCONF_H
    #include <stddef.h>

    /* Parse one "key = value" line into key and val. Returns 1 for a pair, 0 for a
       blank or comment line, -1 for a malformed line or one that does not fit. */
    int kv_parse_line(const char *line, char *key, size_t ksz, char *val, size_t vsz);

    #endif
""")

_KV_TRIM = "    while (vend > p && (vend[-1] == ' ' || vend[-1] == '\\t' || vend[-1] == '\\r'))\n" \
           "        vend--;\n"


def _kv_c(fixed: bool) -> str:
    text = _d("""
        #include "kvconf.h"

        #include <string.h>

        static const char *skip_ws(const char *s) {
            while (*s == ' ' || *s == '\\t')
                s++;
            return s;
        }

        static int copy(char *dst, size_t dsz, const char *from, const char *to) {
            size_t n = (size_t)(to - from);
            if (n >= dsz)
                return -1;
            memcpy(dst, from, n);
            dst[n] = '\\0';
            return 0;
        }

        int kv_parse_line(const char *line, char *key, size_t ksz, char *val, size_t vsz) {
            const char *p = skip_ws(line), *eq, *kend, *vend;
            if (*p == '\\0' || *p == '\\n' || *p == '#')
                return 0;
            eq = strchr(p, '=');
            if (!eq || eq == p)
                return -1;
            kend = eq;
            while (kend > p && (kend[-1] == ' ' || kend[-1] == '\\t'))
                kend--;
            if (copy(key, ksz, p, kend))
                return -1;
            p = skip_ws(eq + 1);
            vend = p + strcspn(p, "\\n");
        """)
    if fixed:
        text += _KV_TRIM
    text += "    return copy(val, vsz, p, vend) ? -1 : 1;\n}\n"
    return text


_CHECK_H = _d("""
    #ifndef CHECK_H
    #define CHECK_H
    #include <stdio.h>
    #include <string.h>

    static int failures;

    #define CHECK(cond)                                                          \\
        do {                                                                     \\
            if (!(cond)) {                                                       \\
                fprintf(stderr, "%s:%d: check failed: %s\\n", __FILE__, __LINE__,  \\
                        #cond);                                                  \\
                failures++;                                                      \\
            }                                                                    \\
        } while (0)
    #define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0)
    #define DONE() return failures ? 1 : 0

    #endif
""")


def _kv_test(body: str) -> str:
    return (
        '#include "kvconf.h"\n#include "check.h"\n\nint main(void) {\n'
        "    char k[32], v[64];\n" + indent(dedent(body).strip("\n"), "    ") + "\n    DONE();\n}\n"
    )


_KV_PARSE = _kv_test("""
    CHECK(kv_parse_line("name = demo", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(k, "name");
    CHECK_STR(v, "demo");
    CHECK(kv_parse_line("=oops", k, sizeof k, v, sizeof v) == -1);
    CHECK(kv_parse_line("no equals", k, sizeof k, v, sizeof v) == -1);
""")
_KV_COMMENTS = _kv_test("""
    CHECK(kv_parse_line("# a comment", k, sizeof k, v, sizeof v) == 0);
    CHECK(kv_parse_line("   ", k, sizeof k, v, sizeof v) == 0);
    CHECK(kv_parse_line("", k, sizeof k, v, sizeof v) == 0);
""")
_KV_VALUES_V0 = """
    CHECK(kv_parse_line("path=/usr/lib", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "/usr/lib");
    CHECK(kv_parse_line("empty =", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "");
"""
_KV_VALUES_V1 = _KV_VALUES_V0 + """
    CHECK(kv_parse_line("color = blue   ", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "blue");
    CHECK(kv_parse_line("eol = crlf\\r\\n", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "crlf");
"""
_KV_INCLUDE = _d("""
    #include <stdio.h>

    int main(void) {
        fprintf(stderr, "include directives are not implemented yet\\n");
        return 77; /* automake: skipped */
    }
""")
_KV_QUOTES = _kv_test("""
    /* Quoted values keep inner spaces without the quotes: not supported yet. */
    CHECK(kv_parse_line("title = \\"a b\\"", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "a b");
""")
_KV_ESCAPES = _kv_test("""
    CHECK(kv_parse_line("sep = a\\\\tb", k, sizeof k, v, sizeof v) == 1);
    CHECK_STR(v, "a\\tb");
""")

_KV_README = "# kvconf\n\nA tiny `key = value` configuration parser.\n\n" \
             "    autoreconf -fi && ./configure && make check\n"
_KV_README_DOCS = _KV_README + _d("""

    ## Format

    - one `key = value` pair a line; whitespace around keys and values is ignored;
    - lines starting with `#` are comments, blank lines are skipped;
    - see docs/format.md for the details.
""")
_KV_FORMAT_DOC = _d("""
    # The kvconf format

    Keys are everything before the first `=`, trimmed. Values run to the end of the line.
    A line without `=` is malformed; `kv_parse_line` returns -1 for it.
""")


@sample
def sample_c_kvconf() -> SampleRepo:
    base_tests = ("test_parse", "test_comments", "test_values")
    commits = (
        Commit(
            "Initial kvconf parser with autotools build",
            {
                "configure.ac": _CONFIGURE_AC,
                "Makefile.am": _makefile_am(base_tests),
                ".gitignore": _KV_GITIGNORE,
                "README.md": _KV_README,
                "include/kvconf.h": _KV_H,
                "src/kvconf.c": _kv_c(False),
                "tests/check.h": _CHECK_H,
                "tests/test_parse.c": _KV_PARSE,
                "tests/test_comments.c": _KV_COMMENTS,
                "tests/test_values.c": _kv_test(_KV_VALUES_V0),
            },
            date="2018-06-01T08:30:00+00:00",
            tag="v1.0",
        ),
        Commit(
            "Fix trailing whitespace kept in values (#3)\n\nFixes #2",
            {
                "src/kvconf.c": _kv_c(True),
                "tests/test_values.c": _kv_test(_KV_VALUES_V1),
            },
            date="2019-09-15T19:45:00+00:00",
        ),
        Commit(
            "Document the configuration format (#5)\n\nFixes #4",
            {"README.md": _KV_README_DOCS, "docs/format.md": _KV_FORMAT_DOC},
            date="2020-12-01T12:00:00+00:00",
        ),
        Commit(
            "Add tests for includes, quoting and escapes\n\n"
            "Quoting is a known limitation (expected to fail); escapes are tracked in #6.",
            {
                "Makefile.am": _makefile_am(
                    (*base_tests, "test_include", "test_quotes", "test_escapes"),
                    xfail=("test_quotes",),
                ),
                "tests/test_include.c": _KV_INCLUDE,
                "tests/test_quotes.c": _KV_QUOTES,
                "tests/test_escapes.c": _KV_ESCAPES,
            },
            date="2022-03-03T10:10:00+00:00",
            tag="v1.1",
        ),
    )
    return SampleRepo(
        name="c-kvconf",
        language=Language.C,
        build_system="autotools",
        test_framework="automake",
        commits=commits,
        expected={
            "tests/test_parse": P,
            "tests/test_comments": P,
            "tests/test_values": P,
            "tests/test_include": S,
            "tests/test_quotes": X,
            "tests/test_escapes": F,
        },
        planted=(
            Planted(commit=1, issues=(2,), fail_to_pass=("tests/test_values",),
                    pass_to_pass=("tests/test_parse", "tests/test_comments")),
            Planted(commit=2, kind=TaskKind.OTHER, issues=(4,), decoy="docs_only"),
        ),
        issues=(
            Issue(2, "Trailing whitespace is kept in values",
                  "`color = blue   ` gives the value `blue   `; trailing blanks (and the "
                  "CR of CRLF files) should be dropped.",
                  ("Same with Windows line endings.",),
                  created_at="2019-09-01T09:00:00+00:00"),
            Issue(4, "Document the file format",
                  "The README does not say what a valid line looks like.",
                  created_at="2020-11-20T09:00:00+00:00"),
            Issue(6, "Support backslash escapes in values",
                  "`sep = a\\tb` should give a tab.",
                  created_at="2022-02-20T09:00:00+00:00"),
        ),
        description="key=value parser in C; autotools (autoreconf at setup), make check",
    )
