"""SMTP: the greeting, the EHLO extensions and, when STARTTLS is offered, the certificate."""

from __future__ import annotations

import re

from . import replies
from .base import Conn, Found, NotTLS, Target, cpe_members, insecure_tls
from .tls import session_member

EHLO_NAME = b"spyglass.invalid"
KNOWN = [
    (re.compile(r"Postfix"), "Postfix smtpd", "postfix:postfix", None),
    (re.compile(r"Exim (\d[\w.]*)"), "Exim smtpd", "exim:exim", 1),
    (re.compile(r"Sendmail (\d[\w.]*)"), "Sendmail", "sendmail:sendmail", 1),
    (re.compile(r"Microsoft ESMTP MAIL Service"), "Microsoft Exchange smtpd", None, None),
    (re.compile(r"Python SMTP (\d[\w.]*)"), "aiosmtpd", "aiosmtpd_project:aiosmtpd", 1),
]


def product(greeting: str) -> dict:
    for pattern, name, cpe, group in KNOWN:
        m = pattern.search(greeting)
        if m:
            return cpe_members(name, m.group(group) if group else None, cpe)
    return {}


def extensions(ehlo: bytes) -> list[str]:
    """The EHLO keywords after the greeting line (``SIZE 33554432``, ``STARTTLS``, ...)."""
    if replies.code(ehlo) != 250:
        return []
    return [line.strip() for line in replies.lines(ehlo)[1:] if line.strip()]


async def grab(t: Target) -> Found | None:
    conn = await Conn.open(t)
    members: dict = {}
    try:
        greeting = await replies.read(conn)
        if replies.code(greeting) != 220:
            return None
        dialogue = replies.Dialogue(conn, greeting)
        ask = dialogue.ask
        ehlo = await ask(b"EHLO " + EHLO_NAME)
        if replies.code(ehlo) != 250:
            ehlo = await ask(b"HELO " + EHLO_NAME)
        exts = extensions(ehlo)
        starttls = any(e.upper() == "STARTTLS" for e in exts)
        if starttls and replies.code(await ask(b"STARTTLS")) == 220:
            try:
                await conn.start_tls(insecure_tls())
            except NotTLS:
                pass
            else:
                if conn.ssl_object is not None:
                    members["ssl"] = session_member(conn.ssl_object)
                await ask(b"QUIT")
        else:
            await ask(b"QUIT")
    finally:
        await conn.close()
    members["smtp"] = {"extensions": exts, "starttls": starttls}
    members.update(product(replies.text(greeting)))
    return Found("smtp", dialogue.transcript(), members)
