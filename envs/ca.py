"""The host's CA bundle, found and normalised for injection into images.

Networks that intercept TLS (corporate proxies) sign with a CA that only the host trusts;
inside a container pip, npm, Maven and Go fail on certificates until that bundle is copied
in and pointed to. Detection order: an explicit override (`--ca-bundle`,
`ENVFACTORY_CA_BUNDLE`; the word `none` turns injection off), then the variables tools
already honour, then the usual system locations.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from envs.errors import UserError

ENV_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE")
SYSTEM_PATHS = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Alpine
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
    "/etc/ssl/ca-bundle.pem",  # openSUSE
    "/etc/ssl/cert.pem",  # macOS, BSDs
)
# Where the bundle lands inside every image (see envs/images.py).
IMAGE_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

_PEM = re.compile(
    rb"-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END CERTIFICATE-----"
)


class CAError(UserError):
    """A CA bundle was named but cannot be used; the message says why in one line."""


@dataclass(frozen=True)
class CABundle:
    source: str  # where it came from: "override", an env var name, or "system"
    path: Path
    certificates: tuple[bytes, ...]  # PEM blocks, deduplicated, in order

    @property
    def pem(self) -> bytes:
        return b"\n".join(self.certificates) + b"\n"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.pem).hexdigest()

    def __len__(self) -> int:
        return len(self.certificates)


def load(path: str | Path, source: str = "override") -> CABundle:
    p = Path(path).expanduser()
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise CAError(f"CA bundle {p} cannot be read: {exc.strerror or exc}") from exc
    blocks: list[bytes] = []
    seen: set[bytes] = set()
    for match in _PEM.finditer(data):
        block = match.group(0).replace(b"\r\n", b"\n")
        if block not in seen:
            seen.add(block)
            blocks.append(block)
    if not blocks:
        raise CAError(f"CA bundle {p} holds no PEM certificate")
    return CABundle(source=source, path=p, certificates=tuple(blocks))


def detect(override: str | None = None) -> CABundle | None:
    """The bundle to inject, or None when injection is off or nothing was found."""
    if override is None:
        from envs.config import get_settings

        override = get_settings().ca_bundle
    if override:
        if override.strip().lower() == "none":
            return None
        return load(override, "override")
    for var in ENV_VARS:
        value = os.environ.get(var)
        if value and Path(value).is_file():
            try:
                return load(value, var)
            except CAError:
                continue  # a stale variable should not stop detection
    for candidate in SYSTEM_PATHS:
        if Path(candidate).is_file():
            try:
                return load(candidate, "system")
            except CAError:
                continue
    return None


def split_files(bundle: CABundle) -> dict[str, bytes]:
    """One certificate per file, as update-ca-certificates and Java's keystore hook expect."""
    return {f"envfactory-{i:04d}.crt": cert + b"\n" for i, cert in enumerate(bundle.certificates)}
