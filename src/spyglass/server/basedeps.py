"""The request dependencies a feature's own routes take (the stream host's, the replay
endpoint's): the authenticated caller and the alert state. deps.py, where routers/ find every
other, names these too; they live a floor below it so that a feature never imports the
composition (the app's ``state``, set up by app.py, is read at request time).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from spyglass.server.auth import Caller, caller
from spyglass.server.state.alerts import AlertState

Who = Annotated[Caller, Depends(caller)]  # the authenticated caller, or a 401/429 {error}


async def _alerts(request: Request) -> AlertState:
    return request.app.state.alerts


Alerts = Annotated[AlertState, Depends(_alerts)]
