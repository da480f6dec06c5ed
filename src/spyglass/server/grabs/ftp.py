"""FTP: the greeting, whether anonymous login works, and the FEAT features."""

from __future__ import annotations

import re

from . import replies
from .base import Conn, Found, Target, cpe_members

# Greeting patterns for common servers: regex -> (product, cpe vendor:product)
KNOWN = [
    (re.compile(r"ProFTPD (\d[\w.]*)"), "ProFTPD", "proftpd:proftpd"),
    (re.compile(r"vsFTPd (\d[\w.]*)"), "vsftpd", "beasts:vsftpd"),
    (re.compile(r"Pure-FTPd"), "Pure-FTPd", "pureftpd:pure-ftpd"),
    (re.compile(r"FileZilla Server(?: version)? (\d[\w.]*)"), "FileZilla ftpd", "filezilla-project:filezilla_server"),
    (re.compile(r"pyftpdlib (\d[\w.]*)"), "pyftpdlib", "giampaolo:pyftpdlib"),
    (re.compile(r"Microsoft FTP Service"), "Microsoft ftpd", "microsoft:ftp_service"),
]


def product(greeting: str) -> dict:
    for pattern, name, cpe in KNOWN:
        m = pattern.search(greeting)
        if m:
            return cpe_members(name, m.group(1) if m.groups() else None, cpe)
    return {}


def features(feat_reply: bytes) -> dict:
    """FEAT lines as the original service keeps them: name -> {"parameters": [...]}"""
    out: dict = {}
    if replies.code(feat_reply) != 211:
        return out
    for line in replies.lines(feat_reply)[1:-1]:
        name, *params = line.strip().split(" ", 1)
        if name:
            out[name.upper()] = {"parameters": params[0].split(";") if params else []}
    return out


async def grab(t: Target) -> Found | None:
    conn = await Conn.open(t)
    try:
        greeting = await replies.read(conn)
        if replies.code(greeting) not in (220, 120):
            return None
        dialogue = replies.Dialogue(conn, greeting)
        ask = dialogue.ask
        feat = await ask(b"FEAT")  # before login: servers delay a refused login, some for seconds
        user = await ask(b"USER anonymous")
        login = await ask(b"PASS anonymous@") if replies.code(user) == 331 else user
        anonymous = replies.code(login) == 230
        await ask(b"QUIT")
    finally:
        await conn.close()
    data = dialogue.transcript()
    feats = features(feat)
    ftp = {"anonymous": anonymous, "features": feats}
    return Found("ftp", data, {"ftp": ftp, **product(replies.text(greeting))})
