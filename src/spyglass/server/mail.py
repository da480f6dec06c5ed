"""E-mail the backend sends (notifications, organization invitations) through the configured
SMTP server (``spyglass serve --smtp HOST[:PORT]``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import smtplib
from email.message import EmailMessage

log = logging.getLogger("spyglass.mail")

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


class Outbox:
    """E-mail sent after the answer (a background service): ``post`` queues a message and returns,
    so a request never waits on the SMTP server nor tells by its time whether it sent one. One
    message at a time; at most ``limit`` wait, past that a new one is dropped (said in the log)."""

    def __init__(self, server: tuple[str, int] | None, limit: int = 1000) -> None:
        self.server = server
        self._queue: asyncio.Queue[tuple[EmailMessage, str]] = asyncio.Queue(limit)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def post(self, msg: EmailMessage, what: str) -> None:
        """Queue ``msg`` (from any thread); ``what`` names it in the log."""
        if self._loop is None:
            log.warning("%s was not sent: the outbox is not running", what)
        else:
            self._loop.call_soon_threadsafe(self._put, msg, what)

    def _put(self, msg: EmailMessage, what: str) -> None:
        try:
            self._queue.put_nowait((msg, what))
        except asyncio.QueueFull:
            log.warning("%s was not sent: %d e-mails are waiting already", what, self._queue.qsize())

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._send_all(), name="outbox")

    async def stop(self) -> None:
        self._loop = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if left := self._queue.qsize():
            log.warning("%d e-mails were not sent: the backend stopped first", left)

    async def _send_all(self) -> None:
        while True:
            msg, what = await self._queue.get()
            try:
                await send(self.server, msg)
            except (OSError, smtplib.SMTPException, MailNotConfigured) as exc:
                log.warning("%s failed: %s", what, exc)
