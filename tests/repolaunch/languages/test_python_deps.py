"""Where a Python project's test dependencies come from: sets from widest to narrowest,
requirement files for tests only, includes followed, unreachable URLs dropped with a note,
tox's own test environment, a minimum-pins file only on its own."""

from __future__ import annotations

from repolaunch.languages import python_deps as deps
from tests.repolaunch.conftest import write_files


def test_requirement_files_for_tests_only(tmp_path):
    write_files(tmp_path, {"requirements.txt": "a\n", "requirements_dev.txt": "b\n",
                     "requirements/tests.txt": "c\n", "requirements/docs.txt": "d\n",
                     "requirements_test_pre_commit.txt": "e\n", "requirements-lint.txt": "f\n",
                     "requirements/typing.txt": "g\n", "requirements/build.txt": "h\n",
                     "requirements_test_min.txt": "i\n"})
    assert deps.requirement_files(tmp_path) == [
        "requirements.txt", "requirements/tests.txt", "requirements_dev.txt",
        "requirements_test_min.txt"]
    assert deps.is_min_pins("requirements_test_min.txt")
    assert not deps.is_min_pins("requirements/tests.txt")


def test_includes_followed_and_urls_dropped_with_a_note(tmp_path):
    write_files(tmp_path, {"requirements_test.txt":
                     "-r requirements_test_pre_commit.txt\n-r requirements_base.txt\n"
                     "-e .\npytest~=6.2  # pinned\nfoo==1.0 --hash=sha256:abc\n"
                     "git+https://github.com/x/y@main#egg=y\n"
                     "bar @ https://github.com/x/bar/archive/main.zip\n--index-url http://x\n",
                     "requirements_base.txt": "attrs>=20\n-r requirements_test.txt\n",
                     "requirements_test_pre_commit.txt": "pylint==2.8.2\n"})
    notes: list[str] = []
    lines = deps.read_requirements(tmp_path, "requirements_test.txt", notes)
    assert lines == ["attrs>=20", "pytest~=6.2", "foo==1.0"]
    assert len(notes) == 2 and all("cannot be fetched" in n for n in notes)


def test_everything_first_then_a_core_and_each_source_on_top(tmp_path):
    write_files(tmp_path, {
        "setup.py": "EXTRAS = {'reco': ['simplejson'], 'tests': ['pytest'], 'all': ['x']}\n"
                    "EXTRAS['dev'] = EXTRAS['tests'] + ['tox']\n"
                    "setup(name='p', extras_require=EXTRAS)\n",
        "requirements-test.txt": "mock\n",
        "requirements-test-min.txt": "pytest==6.0\n",
        "tox.ini": "[testenv]\nextras = tests,reco\ndeps =\n  coverage\n  py38: old\n"
                   "  {[base]deps}\n  -r requirements-test.txt\n"})
    notes: list[str] = []
    plan = deps.install_plan(tmp_path, {}, installable=True, notes=notes)
    assert plan.widest.extras == ("tests", "dev", "reco", "all")
    assert plan.widest.requirements == ("mock", "coverage")
    assert [(c.label, c.extras) for c in plan.cores] == [
        ("the project with its test extras", ("tests", "dev", "reco")),
        ("the project alone", ())]
    assert [a.label for a in plan.addons] == ["requirements-test.txt", "tox deps",
                                              "extra [all]"]
    assert [(m.label, m.requirements) for m in plan.minimal] == [
        ("minimum pins requirements-test-min.txt", ("pytest==6.0",))]
    assert "everything for tests" in plan.describe()


def test_a_plain_requirements_project(tmp_path):
    write_files(tmp_path, {"requirements.txt": "attrs\n"})
    plan = deps.install_plan(tmp_path, {}, installable=False, notes=[])
    assert plan.widest.requirements == ("attrs",)
    assert [c.label for c in plan.cores] == ["pytest alone"]


def test_what_ci_installs_tools_and_the_project_left_out(tmp_path):
    write_files(tmp_path, {
        "setup.py": "NAME = 'pkg'\nsetup(name=NAME, extras_require={'plot': ['mpl']})\n",
        ".github/workflows/ci.yml":
            "jobs:\n  test:\n    steps:\n"
            "      - name: Test pip install works  # prose, not a command\n"
            "      - run: python -m pip install -U pip  # to have a cache dir\n"
            "      - run: |\n"
            "          python -m pip install -e .[plot]\n"
            "          pip install numpy 'pillow>=8' pytest-cov flake8 types-requests\n"
            "          pip install git+https://github.com/x/data && pip install pkg\n"
            "          pip install -r requirements.txt ${{ matrix.extra }}\n",
        ".travis.yml": "install: source ci/install.sh\n",
        "ci/install.sh": "conda install --yes cython\nconda install -c conda-forge gdcm\n"
                         "pip3 install --upgrade scipy==1.2.0\n"})
    notes: list[str] = []
    pkgs, extras = deps.ci_packages(tmp_path, notes)
    # pins dropped: the CI's are for its interpreters, the environment's day picks
    assert pkgs == ["numpy", "pillow", "pytest-cov", "cython", "scipy"]
    assert extras == ["plot"]
    assert len(notes) == 1 and "github.com/x/data" in notes[0]
    plan = deps.install_plan(tmp_path, {}, installable=True, notes=[])
    assert plan.widest.extras == ("plot",)
    assert [a.label for a in plan.addons] == ["CI: numpy", "CI: pillow", "CI: pytest-cov",
                                              "CI: cython", "CI: scipy"]


def test_distribution_names():
    assert deps.distribution_name('[project]\nauthors = [{name = "A"}]\nname = "p-q"\n',
                                  "", "") == "p-q"
    assert deps.distribution_name("", "[metadata]\nname = cfgname\n", "") == "cfgname"
    assert deps.distribution_name("", "", "setup(\n    name='lit',\n)") == "lit"
    assert deps.distribution_name("", "", "NAME = 'const'\nsetup(name=NAME)\n") == "const"
    assert deps.distribution_name("", "", "") is None
