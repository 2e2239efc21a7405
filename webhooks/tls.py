"""The webhook's TLS: one server context, its policy, and the certificate reloader.

Policy: TLS 1.2 or newer; for TLS 1.2 only ECDHE key exchange with an AEAD cipher (AES-GCM,
ChaCha20-Poly1305), so no CBC, no RSA key transport, no SHA-1 MACs (TLS 1.3's suites are all
AEAD); no compression, no renegotiation. With ``client_ca`` the peer must present a certificate
signed by it (the apiserver's admission client certificate, from the kubeconfig its
``--admission-control-config-file`` names); without one the handshake fails.

:class:`CertReloader`: every ``reload_seconds`` the files are read again (a mounted Secret
changes by a symlink swap, so their contents are what counts), and a new pair goes into the live
context, which every new connection's handshake uses; connections already open keep theirs. A
pair that does not load (half written, key and certificate apart) is logged and the old one kept.
"""

from __future__ import annotations

import asyncio
import logging
import pathlib
import ssl
import tempfile

__all__ = ["CIPHERS_TLS12", "CertReloader", "server_context"]

log = logging.getLogger(__name__)

CIPHERS_TLS12 = "ECDHE+AESGCM:ECDHE+CHACHA20"  # AEAD only, forward secret; TLS 1.3 suites are OpenSSL's


def server_context(
    certfile: pathlib.Path, keyfile: pathlib.Path, *, client_ca: pathlib.Path | None = None
) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(CIPHERS_TLS12)
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_NO_RENEGOTIATION | ssl.OP_CIPHER_SERVER_PREFERENCE
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(certfile, keyfile)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cafile=str(client_ca))
    return ctx


class CertReloader:
    """Loads the pair at ``certfile``/``keyfile`` into ``context`` whenever their contents change."""

    def __init__(self, context: ssl.SSLContext, certfile: pathlib.Path, keyfile: pathlib.Path) -> None:
        self.context = context
        self.certfile = certfile
        self.keyfile = keyfile
        self.reloads = 0  # pairs loaded since the server started (the first check counts one)
        self._loaded: tuple[bytes, bytes] | None = None
        self._rejected: tuple[bytes, bytes] | None = None

    def _read(self) -> tuple[bytes, bytes] | None:
        try:
            return self.certfile.read_bytes(), self.keyfile.read_bytes()
        except OSError as exc:
            log.warning("cannot read the TLS pair (%s); serving the one loaded before", exc)
            return None

    def check(self) -> bool:
        """Load the pair on disk if it is new and sound; True if it was loaded."""
        pair = self._read()
        if pair is None or pair in (self._loaded, self._rejected):
            return False
        try:
            _load_pair(self.context, pair)
        except (ssl.SSLError, OSError, ValueError) as exc:
            log.warning("the new TLS pair in %s does not load (%s); serving the one loaded before", self.certfile, exc)
            self._rejected = pair
            return False
        if self._loaded is not None:
            log.info("loaded the new TLS pair of %s", self.certfile)
        self._loaded, self._rejected = pair, None
        self.reloads += 1
        return True

    async def run(self, period: float) -> None:
        while True:
            self.check()
            await asyncio.sleep(period)


def _load_pair(context: ssl.SSLContext, pair: tuple[bytes, bytes]) -> None:
    """Into ``context``, but only once a scratch context loaded the same bytes: a pair that fails
    half-way must not leave the live context with a certificate and a key that do not match."""
    with tempfile.TemporaryDirectory(prefix="vbridge-tls-") as folder:
        cert, key = pathlib.Path(folder) / "tls.crt", pathlib.Path(folder) / "tls.key"
        cert.write_bytes(pair[0])
        key.touch(mode=0o600)
        key.write_bytes(pair[1])
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
        context.load_cert_chain(cert, key)
