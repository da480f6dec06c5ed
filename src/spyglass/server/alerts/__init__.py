"""Network alerts and notifiers: the store (``alerts.db``), the trigger engine fed by the
collector, the providers that deliver, and the durable delivery worker."""

from __future__ import annotations

from typing import Any


def install_alerts(app: Any) -> None:
    """Open ``alerts.db``, subscribe the trigger engine to the collector, and add the delivery
    worker and the engine to the app's background services (the engine stops first)."""
    from spyglass.server.alerts.delivery import DeliveryWorker
    from spyglass.server.alerts.engine import AlertEngine
    from spyglass.server.alerts.store import AlertStore

    settings, store = app.state.settings, app.state.store
    alerts = AlertStore(settings.data_dir, clock=store.clock)
    delivery = DeliveryWorker(alerts, dict(settings.notifier_urls), settings.smtp_server)
    engine = AlertEngine(alerts, delivery)
    app.state.collector.subscribe(engine.listener)
    app.state.alerts, app.state.alert_delivery, app.state.alert_engine = alerts, delivery, engine
    app.state.services += [delivery, engine]
