"""TLS: the certificate and its chain, the versions a service accepts and refuses, cipher and ALPN.
The ``ssl`` banner member of the https module (and of smtp after STARTTLS)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ssl
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from cryptography.utils import CryptographyDeprecationWarning

from .base import Closed, Conn, NotTLS, Target, insecure_tls

VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
ALPN = ["h2", "http/1.1"]


def session_member(sslobj: ssl.SSLObject) -> dict:
    """What one handshake shows: certificate, chain, cipher and the ALPN protocol chosen."""
    out: dict = {}
    ders = chain_der(sslobj)
    if ders:
        with contextlib.suppress(ValueError):  # not a certificate cryptography can parse at all
            out["cert"] = cert_member(load_certificate(ders[0]))
        out["chain"] = [ssl.DER_cert_to_PEM_cert(d) for d in ders]
        out["chain_sha256"] = [hashlib.sha256(d).hexdigest() for d in ders]
    cipher = sslobj.cipher()
    if cipher:
        out["cipher"] = {"name": cipher[0], "version": cipher[1], "bits": cipher[2]}
    alpn = sslobj.selected_alpn_protocol()
    out["alpn"] = [alpn] if alpn else []
    return out


def load_certificate(der: bytes) -> x509.Certificate:
    """A certificate from its DER (ValueError for none)."""
    with _any_serial():
        return x509.load_der_x509_certificate(der)


@contextlib.contextmanager
def _any_serial() -> Iterator[None]:
    """Where a serial that is not positive (RFC 5280 forbids it; servers send it) is read without
    cryptography's warning, which would print source paths on the user's terminal."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Parsed a serial number", CryptographyDeprecationWarning)
        yield


def chain_der(sslobj: ssl.SSLObject) -> list[bytes]:
    """The certificates the service sent, leaf first. Python 3.13 makes get_unverified_chain public;
    before that it is only on the private _sslobj, and without it the chain is the leaf alone."""
    inner = getattr(sslobj, "_sslobj", None)
    getter = getattr(inner, "get_unverified_chain", None)
    if getter is not None:
        with contextlib.suppress(Exception):
            chain = getter() or []
            return [c.public_bytes(ssl._ssl.ENCODING_DER) for c in chain]  # type: ignore[attr-defined]
    leaf = sslobj.getpeercert(binary_form=True)
    return [leaf] if leaf else []


def name_member(name: x509.Name) -> dict:
    out: dict = {}
    for attr in name:
        value = attr.value
        out[attr.rfc4514_attribute_name] = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return out


def cert_member(cert: x509.Certificate) -> dict:
    der = cert.public_bytes(serialization.Encoding.DER)
    with _any_serial():
        serial = cert.serial_number
    expires = cert.not_valid_after_utc
    oid = cert.signature_algorithm_oid
    return {
        "sig_alg": getattr(oid, "_name", None) or oid.dotted_string,
        "issued": cert.not_valid_before_utc.strftime("%Y%m%d%H%M%SZ"),
        "expires": expires.strftime("%Y%m%d%H%M%SZ"),
        "expired": expires < datetime.now(UTC),
        "version": cert.version.value,
        "serial": serial,
        "subject": name_member(cert.subject),
        "issuer": name_member(cert.issuer),
        "fingerprint": {"sha1": hashlib.sha1(der).hexdigest(), "sha256": hashlib.sha256(der).hexdigest()},
        "pubkey": _or_none(pubkey_member, cert),
        "extensions": _or_none(extensions_member, cert),
    }


def extensions_member(cert: x509.Certificate) -> list[dict]:
    return [
        {"name": getattr(e.oid, "_name", None) or e.oid.dotted_string, "critical": e.critical} for e in cert.extensions
    ]


def _or_none(part, cert: x509.Certificate):
    """A part of a certificate that cryptography refuses to read (a malformed extension, an unknown
    key type) is None; the rest of the certificate still counts."""
    try:
        return part(cert)
    except Exception:
        return None


def pubkey_member(cert: x509.Certificate) -> dict:
    key = cert.public_key()
    kinds = ((rsa.RSAPublicKey, "rsa"), (dsa.DSAPublicKey, "dsa"), (ec.EllipticCurvePublicKey, "ec"))
    for cls, kind in kinds:
        if isinstance(key, cls):
            return {"type": kind, "bits": key.key_size}
    if isinstance(key, ed25519.Ed25519PublicKey):
        return {"type": "ed25519", "bits": 256}
    if isinstance(key, ed448.Ed448PublicKey):
        return {"type": "ed448", "bits": 456}
    return {"type": type(key).__name__, "bits": None}


async def accepts(t: Target, version: ssl.TLSVersion) -> bool | None:
    """Whether the service completes a handshake pinned to ``version``; None when this machine's
    TLS library cannot offer that version at all (then it is not reported either way)."""
    ctx = insecure_tls()
    try:
        with warnings.catch_warnings():  # TLS 1.0 and 1.1 are deprecated: that is why we look for them
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ctx.maximum_version = version
    except (ValueError, ssl.SSLError):
        return None
    try:
        conn = await Conn.open(t, ctx)
    except (Closed, NotTLS):
        return False
    await conn.close()
    return True


async def grab_ssl(t: Target) -> dict | None:
    """The ``ssl`` member of a TLS service, or None when the port does not speak TLS."""
    try:
        conn = await Conn.open(t, insecure_tls(ALPN))
    except NotTLS:
        return None
    try:
        sslobj = conn.ssl_object
        member = session_member(sslobj) if sslobj is not None else {}
    finally:
        await conn.close()
    accepted = await asyncio.gather(*(accepts(t, v) for v in VERSIONS.values()))
    member["versions"] = [n if ok else f"-{n}" for n, ok in zip(VERSIONS, accepted, strict=True) if ok is not None]
    # A handshake offers several protocols and learns one: ask for each alone to learn them all.
    # (A service that chose none of them when offered all takes none.)
    chosen = member.get("alpn") or []
    if chosen:
        others = [p for p in ALPN if p not in chosen]
        agreed = dict(zip(others, await asyncio.gather(*(selects(t, p) for p in others)), strict=True))
        member["alpn"] = [p for p in ALPN if p in chosen or agreed.get(p)]
    return member


async def selects(t: Target, protocol: str) -> bool:
    """Whether the service agrees to ``protocol`` when it is the only one offered."""
    try:
        conn = await Conn.open(t, insecure_tls([protocol]))
    except (Closed, NotTLS):
        return False
    try:
        return conn.ssl_object is not None and conn.ssl_object.selected_alpn_protocol() == protocol
    finally:
        await conn.close()
