"""Text that the CLI prints and the dashboard shows, built in one place.

Everything here returns inert text: plain ``str`` already passed through ``spyglass.safetext``
(rows, lines, cells), never Rich markup, so the CLI prints it as it is and the TUI wraps it in
``rich.text.Text``. Banners and host records are read as raw JSON dicts (``values.as_dict``):
every member but address, port, transport and timestamp may hold any JSON type, and nothing
here assumes one.
"""
