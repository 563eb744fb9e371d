"""Base images: content-addressed tags, nine languages from Debian packages, the host CA inside."""

from __future__ import annotations

import pytest

from envs import ca, images
from envs.models import Language
from envs.sandbox import Sandbox

pytestmark = pytest.mark.docker


def test_every_language_has_a_toolchain_image():
    assert set(images.LANGUAGE_IMAGE) == set(Language)
    assert images.image_for("c") == images.image_for("cpp") == "cpp"
    assert images.image_for("typescript") == images.image_for("javascript") == "node"


def test_unknown_image_lists_the_known_names():
    with pytest.raises(KeyError, match=r"known: base, .*python"):
        images.get_recipe("cobol")


def test_unknown_suite_is_refused():
    with pytest.raises(ValueError, match="known: bullseye, bookworm, trixie"):
        images.plan("base", suite="hamm")


def test_tag_is_a_hash_of_what_built_it(tmp_path):
    first = images.plan("python", ca_bundle=None)
    assert images.plan("python", ca_bundle=None).tag == first.tag
    pem = tmp_path / "extra.pem"
    pem.write_bytes(b"-----BEGIN CERTIFICATE-----\nQUFBQQ==\n-----END CERTIFICATE-----\n")
    with_ca = images.plan("python", ca_bundle=ca.load(pem))
    assert with_ca.tag != first.tag  # the CA reaches every child through the parent hash
    assert images.plan("python", suite="trixie", ca_bundle=None).tag != first.tag
    from envs.config import get_settings

    assert first.tag.startswith(f"{get_settings().image_prefix}/python:bookworm-")


def test_building_twice_builds_once(docker_engine):
    images.ensure_all()  # whatever is missing is built here, once
    events: list[str] = []
    records = images.ensure_all(log=events.append)
    assert not [e for e in events if "building" in e or "debootstrap" in e], events
    assert {r.tag for r in records} == {images.plan(n).tag for n in images.recipes()}


@pytest.mark.parametrize("family", ["python", "java", "go", "cpp", "node", "php", "ruby"])
def test_toolchain_versions_are_recorded(language_image, family):
    record = images.ensure(family)
    assert record.size_bytes and record.size_bytes > 50 * 2**20
    assert record.versions, family
    assert all(v for v in record.versions.values()), record.versions


def test_images_are_listed_as_current(docker_engine):
    current = {i.tag for i in images.list_local() if i.current}
    assert images.plan("base").tag in current


def test_host_ca_is_injected(language_image):
    bundle = ca.detect()
    if bundle is None:
        pytest.skip("no CA bundle on this host")
    with Sandbox.start(language_image("base")) as sb:
        res = sb.exec("echo $SSL_CERT_FILE $PIP_CERT $NODE_EXTRA_CA_CERTS $ENVFACTORY_CA_INJECTED;"
                      " ls /usr/local/share/ca-certificates/envfactory | wc -l")
        assert res.exit_code == 0, res.output
        assert f"{ca.IMAGE_BUNDLE} {ca.IMAGE_BUNDLE} {ca.IMAGE_BUNDLE} 1" in res.stdout
        assert res.stdout.split()[-1] == str(len(bundle))
        # every injected certificate made it into the system store
        last = bundle.certificates[-1].decode()
        res = sb.exec(f"grep -c -F '{last.splitlines()[1]}' {ca.IMAGE_BUNDLE}")
        assert res.stdout.strip() not in ("", "0"), res.output


@pytest.mark.network
@pytest.mark.parametrize(
    ("family", "command"),
    [
        ("python", "pip download --no-deps -q -d /tmp/dl six && ls /tmp/dl"),
        ("node", "npm view is-number version"),
        ("java", "mvn -B -q dependency:get -Dartifact=junit:junit:4.13.2 "
                 "&& ls ~/.m2/repository/junit/junit/4.13.2/"),
        ("go", "mkdir -p /tmp/m && cd /tmp/m && go mod init example.com/m >/dev/null 2>&1 "
               "&& go mod download -json github.com/google/uuid@v1.6.0"),
    ],
)
def test_package_managers_reach_their_registries_through_the_proxy(language_image, family,
                                                                   command):
    with Sandbox.start(language_image(family), network=True) as sb:
        res = sb.exec(command, timeout=300)
    assert res.exit_code == 0, res.output[-2000:]
    assert "certificate" not in res.output.lower() or res.exit_code == 0
