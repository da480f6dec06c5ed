"""A service as a scanner saw it, in the banner members the crawler gives the same service.

The crawler's own parsers (HTTP heads, SSH version lines, FTP and SMTP greetings, certificates)
do the reading, so an imported banner and a collected one agree on ``product``, ``http``, ``ssl``
and ``ssh``, and the same queries and facets find both. They are imported when first used (:func:`crawler`):
the crawler's package brings asyncssh and more (most of a second), which every ``spyglass import``
and each of its worker processes would otherwise pay for JSON lines too.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import hashlib
import ssl
import types


@functools.cache
def crawler() -> types.SimpleNamespace:
    """The crawler's parsing modules, imported at their first use (once: an import statement in a
    function costs its lookup at every call, and these are called for every banner)."""
    from spyglass.server.grabs import base, ftp, httpparse, redis, smtp, sshparse, tls

    return types.SimpleNamespace(
        base=base, ftp=ftp, httpparse=httpparse, redis=redis, smtp=smtp, sshparse=sshparse, tls=tls
    )


def http_members(head: str, body: str | None = None, host: str | None = None) -> dict:
    """``http`` (status, server, title, html) and the server's product, from a response's head (its
    status line and headers) and, where the scanner kept it, its body."""
    c = crawler()
    parsed = c.httpparse.parse(head.encode("latin-1", "replace"))
    server = parsed.header("server") if parsed else None
    http: dict = {"status": parsed.status if parsed else None, "server": server}
    if host:
        http["host"] = host
    if body is not None:
        http.update(title=c.httpparse.title(body), html=body, html_hash=c.base.signed_hash(body))
    return {"data": head, **server_members(server), "http": http}


def server_members(server: str | None) -> dict:
    """``http.server`` and the product it names, from an HTTP Server header."""
    c = crawler()
    product = c.httpparse.server_product(server)
    return {"http": {"server": server}, **(c.base.cpe_members(*product) if product else {})}


def ssh_members(version: str, key: dict | None = None, kex: dict | None = None) -> dict:
    """``data``, ``ssh`` and the product of an SSH service from its version line and, where the
    scanner read them, its host key (``{"type", "key": base64 blob}``) and server KEXINIT lists."""
    c = crawler()
    lines, member = [version], dict[str, object]()
    if key:
        with contextlib.suppress(binascii.Error, ValueError):
            digest = hashlib.md5(base64.b64decode(key["key"], validate=True)).hexdigest()
            member["fingerprint"] = ":".join(digest[i : i + 2] for i in range(0, 32, 2))
        member.update(type=key.get("type"), key=key["key"])
        lines += [f"Key type: {key.get('type')}", f"Key: {key['key']}"]
        if "fingerprint" in member:
            lines.append(f"Fingerprint: {member['fingerprint']}")
    if kex:
        member.update(kex_members(kex))
    out: dict = {"data": "\n".join(lines) + "\n"}
    if member:
        out["ssh"] = member
    product = c.sshparse.product(version)
    if product:
        out.update(c.base.cpe_members(*product))
    return out


def kex_members(kex: dict) -> dict:
    """``ssh``'s ``kex`` (the server's lists), its HASSH, and the ``cipher`` and ``mac`` the crawler's
    own client (asyncssh's defaults) would negotiate with those lists, as a collected banner has them."""
    from asyncssh.encryption import get_default_encryption_algs
    from asyncssh.mac import get_default_mac_algs

    from spyglass.server.grabs.ssh import negotiate

    def listed(name: str) -> list[str]:
        value = kex.get(name)
        return [a for a in value if isinstance(a, str)] if isinstance(value, list) else []

    return {
        "kex": kex,
        "hassh": crawler().sshparse.hassh_server({k: listed(k) for k in kex}),
        "cipher": negotiate(get_default_encryption_algs(), listed("encryption_algorithms")),
        "mac": negotiate(get_default_mac_algs(), listed("mac_algorithms")),
    }


def greeting_members(module: str, greeting: str) -> dict:
    """``data`` and the product of an FTP or SMTP greeting (another service's: ``data`` alone)."""
    out: dict = {"data": greeting}
    if module == "ftp":
        out.update(crawler().ftp.product(greeting))
    elif module == "smtp":
        out.update(crawler().smtp.product(greeting))
    return out


def ssl_member(ders: list[bytes]) -> dict:
    """``ssl`` as the crawler has it (``cert`` parsed, ``chain`` as PEM, leaf first) from DER
    certificates. The chain stops at the first that is not a whole certificate (a scanner's copy cut
    short): a SHA-256 of cut bytes would match no certificate anywhere."""
    c = crawler()
    out: dict = {"chain": [], "chain_sha256": []}
    for der in ders:
        try:
            cert = c.tls.load_certificate(der)
        except ValueError:
            break
        out.setdefault("cert", c.tls.cert_member(cert))  # the leaf's
        out["chain"].append(ssl.DER_cert_to_PEM_cert(der))
        out["chain_sha256"].append(hashlib.sha256(der).hexdigest())
    return out
