"""Pasted text stays text: the ESCs inside a bracketed paste are dropped before Textual reads them.

A terminal in bracketed-paste mode sends a paste between ``ESC [200~`` and ``ESC [201~``. Textual's
parser (8.2) takes an ESC inside a paste for the start of a key's escape sequence and, when it knows
none by those characters, gives them out as keys: a pasted ``tag:nmap ESC[0m CR port:22`` ran a
search (the CR became Enter) and a pasted ``ESC]0;X BEL`` opened the pane list (ctrl+g): newcomer
trial 26, with tmux's ``paste-buffer -p``, which passes ESC on (Alacritty and others strip it). So
copied banner text could press keys. Here the input is cleaned on its way in, as those terminals
clean it: inside a paste, ESC is dropped; the end marker itself is kept, held whole when a read
splits it (else its ESC would be dropped and the paste never end).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._xterm_parser import XTermParser
from textual.message import Message

ESC = "\x1b"
START = ESC + "[200~"
END = ESC + "[201~"


class PasteSafeParser(XTermParser):
    """Textual's parser, fed what it is fed less the ESCs inside bracketed pastes."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self.pasting = False
        self._tail = ""  # outside a paste: the last characters fed, where a START may have begun
        self._held = ""  # inside a paste: the start of what may be END, fed with the next read

    def feed(self, data: str) -> Iterable[Message]:
        cleaned = self.clean(data)
        if data and not cleaned:  # all of it held, or dropped: "" would tell the parser the input ended
            return ()
        return super().feed(cleaned)

    def clean(self, data: str) -> str:
        out: list[str] = []
        data, self._held = self._held + data, ""
        at = 0
        while at < len(data):
            if not self.pasting:
                seen = self._tail + data[at:]
                found = seen.find(START)
                if found < 0:
                    out.append(data[at:])
                    self._tail = seen[-(len(START) - 1) :]
                    break
                start = at + found - len(self._tail) + len(START)  # the paste's first character
                out.append(data[at:start])
                self.pasting, self._tail, at = True, "", start
                continue
            found = data.find(END, at)
            if found >= 0:
                out.append(data[at:found].replace(ESC, "") + END)
                self.pasting, at = False, found + len(END)
                continue
            cut = _end_begins(data, at)
            out.append(data[at:cut].replace(ESC, ""))
            self._held = data[cut:]
            break
        return "".join(out)


def _end_begins(data: str, at: int) -> int:
    """Where the part of END that ``data`` ends with begins (``len(data)``: none)."""
    for size in range(min(len(END) - 1, len(data) - at), 0, -1):
        if data.endswith(END[:size]):
            return len(data) - size
    return len(data)


def install() -> None:
    """Textual's Linux driver reads its keys with this parser from now on (a test checks the driver
    still finds its parser by that name)."""
    from textual.drivers import linux_driver

    linux_driver.XTermParser = PasteSafeParser  # type: ignore[misc]
