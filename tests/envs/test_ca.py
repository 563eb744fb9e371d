"""CA detection: an override wins, then the variables tools honour, then the system bundle."""

from __future__ import annotations

import pytest

from envs import ca

CERT_A = b"-----BEGIN CERTIFICATE-----\nQUFBQQ==\n-----END CERTIFICATE-----"
CERT_B = b"-----BEGIN CERTIFICATE-----\nQkJCQg==\n-----END CERTIFICATE-----"


@pytest.fixture()
def bundles(tmp_path, monkeypatch):
    for var in ca.ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    a = tmp_path / "a.pem"
    a.write_bytes(b"# comment\n" + CERT_A + b"\n" + CERT_A + b"\r\n" + CERT_B + b"\n")
    b = tmp_path / "b.pem"
    b.write_bytes(CERT_B + b"\n")
    return a, b


def test_override_wins_over_environment(bundles, monkeypatch):
    a, b = bundles
    monkeypatch.setenv("SSL_CERT_FILE", str(b))
    found = ca.detect(str(a))
    assert found is not None and found.source == "override" and found.path == a


def test_environment_variables_in_order(bundles, monkeypatch):
    a, b = bundles
    monkeypatch.setenv("PIP_CERT", str(a))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(b))
    found = ca.detect("")
    assert found is not None and found.source == "REQUESTS_CA_BUNDLE"


def test_stale_variable_is_skipped(bundles, monkeypatch, tmp_path):
    a, _ = bundles
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "gone.pem"))
    monkeypatch.setenv("PIP_CERT", str(a))
    found = ca.detect("")
    assert found is not None and found.source == "PIP_CERT"


def test_none_turns_injection_off(bundles):
    assert ca.detect("none") is None
    assert ca.detect("NONE") is None


def test_certificates_are_deduplicated_and_normalised(bundles):
    a, _ = bundles
    bundle = ca.load(a)
    assert bundle.certificates == (CERT_A, CERT_B)
    assert b"\r" not in bundle.pem
    assert len(bundle.sha256) == 64


def test_hash_changes_with_content(bundles):
    a, b = bundles
    assert ca.load(a).sha256 != ca.load(b).sha256


def test_a_file_without_certificates_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(ca.CAError, match="no PEM certificate"):
        ca.load(bad)
    with pytest.raises(ca.CAError, match="cannot be read"):
        ca.detect(str(tmp_path / "missing.pem"))


def test_split_files_one_certificate_each(bundles):
    a, _ = bundles
    files = ca.split_files(ca.load(a))
    assert sorted(files) == ["envfactory-0000.crt", "envfactory-0001.crt"]
    assert all(v.count(b"BEGIN CERTIFICATE") == 1 for v in files.values())


def test_settings_variable_is_the_default_override(bundles, monkeypatch):
    from envs.config import reset_settings_cache

    a, b = bundles
    monkeypatch.setenv("SSL_CERT_FILE", str(b))
    monkeypatch.setenv("ENVFACTORY_CA_BUNDLE", str(a))
    reset_settings_cache()
    try:
        found = ca.detect()
        assert found is not None and found.path == a
    finally:
        monkeypatch.delenv("ENVFACTORY_CA_BUNDLE")
        reset_settings_cache()
