"""The dashboard's and the CLI's door to the backend on this machine: :mod:`~spyglass.local.launcher`
starts ``spyglass serve`` as a child process, :mod:`~spyglass.local.datalock` is the data dir's lock
that says which backend serves it, and :mod:`~spyglass.local.sockets` the listening socket that both
the launcher and ``serve`` bind. The TUI imports the server through nothing else.

Only the standard library and :mod:`spyglass.config` load with it: the launcher reaches into the
server once, inside a function, for the local account (``server/stores.py``).
"""
