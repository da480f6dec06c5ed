"""E-mail the backend sends (notifications, organization invitations) through the configured
SMTP server (``spyglass serve --smtp HOST[:PORT]``)."""

from __future__ import annotations

import asyncio
import smtplib
from email.message import EmailMessage

SENDER = "spyglass@localhost"
NO_SMTP = "No SMTP server is configured (spyglass serve --smtp HOST[:PORT], or SPYGLASS_SMTP)"


class MailNotConfigured(RuntimeError):
    """No SMTP server is configured: e-mail cannot be sent."""


def message(to: str, subject: str, body: str, sender: str = SENDER) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg.set_content(body)
    return msg


def send_now(server: tuple[str, int] | None, msg: EmailMessage, timeout: float = 10.0) -> None:
    """Deliver ``msg`` (blocking); OSError or smtplib.SMTPException when the server refuses or fails."""
    if server is None:
        raise MailNotConfigured(NO_SMTP)
    host, port = server
    with smtplib.SMTP(host, port, timeout=timeout) as smtp:
        smtp.send_message(msg)


async def send(server: tuple[str, int] | None, msg: EmailMessage, timeout: float = 10.0) -> None:
    """:func:`send_now` in a thread: the event loop never waits on an SMTP server."""
    await asyncio.to_thread(send_now, server, msg, timeout)
