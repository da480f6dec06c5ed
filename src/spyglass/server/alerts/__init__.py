"""Network alerts and notifiers: the store (``alerts.db``), the trigger engine fed by the
collector, the providers that deliver, and the durable delivery worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from spyglass.server.state.alerts import AlertState


def install_alerts(app: FastAPI, alerts: AlertState) -> None:
    """Serve ``alerts`` (``alerts.db``, or the shared state: the app opens it), subscribe the trigger
    engine to the collector, and add the engine and the delivery worker to the app's background
    services."""
    from spyglass.netools.dns import Resolver
    from spyglass.netools.networks import Reach
    from spyglass.server.alerts.bodies import BodyReader
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.destinations import Destinations
    from spyglass.server.alerts.engine import AlertEngine

    settings = app.state.settings
    names = Resolver(settings.geonet.nameservers, settings.geonet.dns_port, settings.geonet.dns_timeout)
    allowed = Destinations(Reach(settings.notifier_allow), names)
    delivery = DeliveryWorker(alerts, allowed, dict(settings.notifier_urls), settings.smtp_server)
    engine = AlertEngine(alerts, delivery)
    app.state.collector.subscribe(engine.listener)
    app.state.alerts, app.state.alert_delivery, app.state.alert_engine = alerts, delivery, engine
    # The engine starts before the collector and so stops after it: the banners the collector
    # stores as it stops still reach the engine, which queues their notifications durably.
    app.state.services.insert(app.state.services.index(app.state.collector), engine)
    app.state.services.append(delivery)
    app.state.alert_bodies = BodyReader()  # a large create's or edit's networks read in a process of its own
    app.state.services.append(app.state.alert_bodies)
