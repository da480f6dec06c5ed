"""The data dir's files are its owner's alone: every state and store in it (accounts, notifier
secrets, what every account collected) makes it so, whichever database holds the state."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def make_private(data_dir: Path) -> None:
    """The data dir and everything in it readable by its owner only (0700 folders, 0600 files): it
    holds accounts, notifier secrets and what every account collected. Modes of an existing dir
    (from before, or copied) are put right; the backend's processes create files 0600 (umask)."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for folder, _subfolders, files in os.walk(data_dir):
        # a running backend renames and removes files as this walks (a bulk-data file's .partial)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(folder, 0o700)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                with contextlib.suppress(FileNotFoundError):
                    os.chmod(path, 0o600)


def private_files() -> None:
    """In a process that writes a data dir (serve, import): new files 0600 and folders 0700."""
    os.umask(0o077)
