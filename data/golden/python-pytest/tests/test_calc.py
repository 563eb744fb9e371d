import pytest

from calc import add, divide


def test_adds_numbers():
    assert add(2, 3) == 5


def test_add_is_wrong():
    assert add(2, 2) == 5


def test_divides_by_zero():
    # an exception in the test body: pytest reports a failure, not an error
    assert divide(1, 0) == 0


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture setup failed")


def test_uses_broken_fixture(broken_fixture):
    assert True


@pytest.fixture
def breaks_in_teardown():
    yield
    raise RuntimeError("fixture teardown failed")


def test_passes_then_teardown_errors(breaks_in_teardown):
    assert True


@pytest.mark.skip(reason="not today")
def test_skipped_by_marker():
    assert False


def test_skips_itself():
    pytest.skip("skipped at run time")


@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert add(1, 1) == 3


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(1, 2, 3, id="one plus two"),
        pytest.param(1, 1, 2, id="ünïcode"),
        pytest.param(2, 2, 5, id="[bracket]"),
    ],
)
def test_add_param(a, b, want):
    assert add(a, b) == want


class TestGroup:
    def test_method(self):
        assert add(0, 0) == 0

    @pytest.mark.parametrize("n", [0, 1])
    def test_param_method(self, n):
        assert n < 1
