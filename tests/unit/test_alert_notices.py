"""The desktop notification sequences of tui/alertnotices.py: OSC 9 and OSC 777, the untrusted
text stripped of every control character, tmux's passthrough; and the setting's round trip."""

from __future__ import annotations

import re

import pytest

from spyglass.config import Config
from spyglass.tui.alertnotices import OSC_TEXT, osc_notification

HOSTILE = "evil\x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\x9d8;;http://x\x9c\r\nname\x00"


def test_osc9_and_osc777_say_the_title_and_the_text():
    assert osc_notification("spyglass alert", "office: any on 1.2.3.4:80", "osc9") == (
        "\x1b]9;spyglass alert: office: any on 1.2.3.4:80\x1b\\"
    )
    assert osc_notification("spyglass alert", "office: any on 1.2.3.4:80", "osc777") == (
        "\x1b]777;notify;spyglass alert;office: any on 1.2.3.4:80\x1b\\"
    )


@pytest.mark.parametrize("kind", ["osc9", "osc777"])
def test_no_control_character_of_the_text_reaches_the_terminal(kind):
    sequence = osc_notification(HOSTILE, HOSTILE, kind)
    # one sequence: its own introducer and terminator, and between them printable text only
    start, end = sequence.index("]") + 1, len(sequence) - 2
    assert sequence[: start - 1] == "\x1b" and sequence[end:] == "\x1b\\"
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", sequence[start:end])
    assert "name" in sequence[start:end]


def test_the_osc777_title_cannot_add_a_field_and_the_text_is_bounded():
    sequence = osc_notification("a;b", "x" * 5000, "osc777")
    assert sequence.startswith("\x1b]777;notify;a,b;")
    assert len(sequence) < OSC_TEXT * 2 + 40


def test_osc9_text_never_reads_as_a_progress_report():
    assert osc_notification("", "4;3;50", "osc9") == "\x1b]9; 4;3;50\x1b\\"


def test_in_tmux_the_sequence_is_passed_through_with_its_escapes_doubled():
    inner = osc_notification("t", "b", "osc9")
    assert osc_notification("t", "b", "osc9", tmux=True) == "\x1bPtmux;" + inner.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def test_the_setting_is_off_by_default_and_saved():
    assert Config.load().alert_signal == "off"
    config = Config()
    config.alert_signal = "osc777"
    config.save()
    assert Config.load().alert_signal == "osc777"


@pytest.mark.parametrize("kind", ["osc9", "osc777"])
def test_no_invisible_or_reordering_character_reaches_the_desktop(kind):
    # an alert name may hold a bidi override (U+202E), a zero-width space or a lone surrogate
    sequence = osc_notification("spyglass alert", "ev\u202eil\u200b name \ud800", kind)
    assert not re.search("[\u200b\u202e\ud800]", sequence)
    assert "name" in sequence
    sequence.encode()  # writable to the terminal as UTF-8
