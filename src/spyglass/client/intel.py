"""Client of the main internet intelligence API (``{base_url}``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import quote

from spyglass import models as m
from spyglass.client.base import HostClient
from spyglass.client.errors import NotFound


def _seg(value: str) -> str:
    """A path segment, escaped so that user input cannot change the path."""
    return quote(str(value), safe=":,")


def _csv(values: str | Iterable) -> str:
    return values if isinstance(values, str) else ",".join(str(v) for v in values)


class IntelClient(HostClient):
    """Every method of the main API, typed. Calls that spend credits are never repeated blindly."""

    def _ns(self, path: str) -> str:
        return f"/{self.namespace}{path}"

    async def _success(self, method: str, path: str, **kwargs) -> bool:
        return (await self.call(m.Success, method, path, **kwargs)).success

    # -- search and host -------------------------------------------------------------------
    async def host(self, ip: str, *, history: bool = False, minify: bool = False) -> m.HostRecord:
        return await self.call(m.HostRecord, "GET", self._ns(f"/host/{_seg(ip)}"),
                               params={"history": history, "minify": minify})

    async def count(self, query: str, facets: str | Sequence[str] | None = None) -> m.SearchResponse:
        params = {"query": query, "facets": _csv(facets) if facets else None}
        return await self.call(m.SearchResponse, "GET", self._ns("/host/count"), params=params)

    async def search(self, query: str, facets: str | Sequence[str] | None = None, *, page: int = 1,
                     minify: bool = True, fields: str | Sequence[str] | None = None) -> m.SearchResponse:
        params = {"query": query, "facets": _csv(facets) if facets else None, "page": page,
                  "minify": minify, "fields": _csv(fields) if fields else None}
        # May spend a query credit: not repeated once it may have reached the server.
        return await self.call(m.SearchResponse, "GET", self._ns("/host/search"), params=params,
                               idempotent=False)

    async def search_facets(self) -> list[str]:
        return await self.call(list[str], "GET", self._ns("/host/search/facets"))

    async def search_filters(self) -> list[str]:
        return await self.call(list[str], "GET", self._ns("/host/search/filters"))

    async def search_tokens(self, query: str) -> m.SearchTokens:
        return await self.call(m.SearchTokens, "GET", self._ns("/host/search/tokens"), params={"query": query})

    # -- on-demand scanning ----------------------------------------------------------------
    async def ports(self) -> list[int]:
        return await self.call(list[int], "GET", self._ns("/ports"))

    async def protocols(self) -> dict[str, str]:
        return await self.call(dict[str, str], "GET", self._ns("/protocols"))

    async def scan(self, ips: str | Sequence[str] | Mapping[str, Sequence[tuple[int, str]]]) -> m.ScanSubmission:
        """Scan IPs or netblocks; a mapping asks for given ``(port, protocol)`` pairs per address."""
        if isinstance(ips, Mapping):
            form = json.dumps({ip: [list(pair) for pair in pairs] for ip, pairs in ips.items()})
        else:
            form = _csv(ips)
        result = await self.call(m.ScanSubmission, "POST", self._ns("/scan"), data={"ips": form})
        self.credits.update(scan=result.credits_left)
        return result

    async def scan_internet(self, port: int, protocol: str) -> m.ScanSubmission:
        return await self.call(m.ScanSubmission, "POST", self._ns("/scan/internet"),
                               data={"port": port, "protocol": protocol})

    async def scans(self) -> m.ScanList:
        return await self.call(m.ScanList, "GET", self._ns("/scans"))

    async def scan_status(self, scan_id: str) -> m.ScanStatus:
        return await self.call(m.ScanStatus, "GET", self._ns(f"/scan/{_seg(scan_id)}"))

    # -- network alerts --------------------------------------------------------------------
    async def alert_create(self, name: str, ips: Sequence[str], expires: int | None = None) -> m.Alert:
        body: dict = {"name": name, "filters": {"ip": list(ips)}}
        if expires is not None:
            body["expires"] = expires
        return await self.call(m.Alert, "POST", self._ns("/alert"), json=body)

    async def alert(self, alert_id: str) -> m.Alert:
        return await self.call(m.Alert, "GET", self._ns(f"/alert/{_seg(alert_id)}/info"))

    async def alerts(self) -> list[m.Alert]:
        return await self.call(list[m.Alert], "GET", self._ns("/alert/info"))

    async def alert_update(self, alert_id: str, ips: Sequence[str]) -> m.Alert:
        # Replaces the monitored networks: repeating it changes nothing.
        return await self.call(m.Alert, "POST", self._ns(f"/alert/{_seg(alert_id)}"),
                               json={"filters": {"ip": list(ips)}}, idempotent=True)

    async def alert_delete(self, alert_id: str) -> bool:
        return await self._success("DELETE", self._ns(f"/alert/{_seg(alert_id)}"))

    async def alert_triggers(self) -> list[m.Trigger]:
        return await self.call(list[m.Trigger], "GET", self._ns("/alert/triggers"))

    async def alert_enable_triggers(self, alert_id: str, triggers: str | Sequence[str]) -> bool:
        return await self._success("PUT", self._ns(f"/alert/{_seg(alert_id)}/trigger/{_seg(_csv(triggers))}"))

    async def alert_disable_triggers(self, alert_id: str, triggers: str | Sequence[str]) -> bool:
        return await self._success("DELETE", self._ns(f"/alert/{_seg(alert_id)}/trigger/{_seg(_csv(triggers))}"))

    async def alert_ignore_service(self, alert_id: str, trigger: str, service: str) -> bool:
        path = f"/alert/{_seg(alert_id)}/trigger/{_seg(trigger)}/ignore/{_seg(service)}"
        return await self._success("PUT", self._ns(path))

    async def alert_unignore_service(self, alert_id: str, trigger: str, service: str) -> bool:
        path = f"/alert/{_seg(alert_id)}/trigger/{_seg(trigger)}/ignore/{_seg(service)}"
        return await self._success("DELETE", self._ns(path))

    async def alert_add_notifier(self, alert_id: str, notifier_id: str) -> bool:
        return await self._success("PUT", self._ns(f"/alert/{_seg(alert_id)}/notifier/{_seg(notifier_id)}"))

    async def alert_remove_notifier(self, alert_id: str, notifier_id: str) -> bool:
        return await self._success("DELETE", self._ns(f"/alert/{_seg(alert_id)}/notifier/{_seg(notifier_id)}"))

    # -- notifiers -------------------------------------------------------------------------
    async def notifiers(self) -> m.NotifierList:
        return await self.call(m.NotifierList, "GET", "/notifier")

    async def notifier_providers(self) -> dict[str, m.ProviderSpec]:
        return await self.call(dict[str, m.ProviderSpec], "GET", "/notifier/provider")

    async def notifier_create(self, provider: str, args: Mapping[str, str],
                              description: str | None = None) -> m.NotifierCreated:
        form = {"provider": provider, **args}
        if description is not None:
            form["description"] = description
        return await self.call(m.NotifierCreated, "POST", "/notifier", data=form)

    async def notifier(self, notifier_id: str) -> m.Notifier:
        return await self.call(m.Notifier, "GET", f"/notifier/{_seg(notifier_id)}")

    async def notifier_update(self, notifier_id: str, args: Mapping[str, str]) -> m.NotifierCreated:
        return await self.call(m.NotifierCreated, "PUT", f"/notifier/{_seg(notifier_id)}", data=dict(args))

    async def notifier_delete(self, notifier_id: str) -> bool:
        return await self._success("DELETE", f"/notifier/{_seg(notifier_id)}")

    # -- directory -------------------------------------------------------------------------
    async def queries(self, page: int = 1, sort: str | None = None, order: str | None = None) -> m.SavedQueryList:
        return await self.call(m.SavedQueryList, "GET", self._ns("/query"),
                               params={"page": page, "sort": sort, "order": order})

    async def query_search(self, query: str, page: int = 1) -> m.SavedQueryList:
        return await self.call(m.SavedQueryList, "GET", self._ns("/query/search"),
                               params={"query": query, "page": page})

    async def query_tags(self, size: int = 10) -> m.QueryTags:
        return await self.call(m.QueryTags, "GET", self._ns("/query/tags"), params={"size": size})

    # -- bulk data -------------------------------------------------------------------------
    async def datasets(self) -> list[m.Dataset]:
        return await self.call(list[m.Dataset], "GET", self._ns("/data"))

    async def dataset_files(self, dataset: str) -> list[m.DatasetFile]:
        return await self.call(list[m.DatasetFile], "GET", self._ns(f"/data/{_seg(dataset)}"))

    # -- organization and account ----------------------------------------------------------
    async def org(self) -> m.Organization:
        return await self.call(m.Organization, "GET", "/org")

    async def org_add_member(self, user: str, notify: bool = False) -> bool:
        return await self._success("PUT", f"/org/member/{_seg(user)}", params={"notify": notify})

    async def org_remove_member(self, user: str) -> bool:
        return await self._success("DELETE", f"/org/member/{_seg(user)}")

    async def profile(self) -> m.AccountProfile:
        return await self.call(m.AccountProfile, "GET", "/account/profile")

    # -- DNS -------------------------------------------------------------------------------
    async def dns_domain(self, domain: str, *, history: bool = False, type: str | None = None,
                         page: int = 1) -> m.DomainInfo:
        return await self.call(m.DomainInfo, "GET", f"/dns/domain/{_seg(domain)}",
                               params={"history": history, "type": type, "page": page}, idempotent=False)

    async def dns_resolve(self, hostnames: str | Sequence[str]) -> dict[str, str | None]:
        return await self.call(dict[str, str | None], "GET", "/dns/resolve", params={"hostnames": _csv(hostnames)})

    async def dns_reverse(self, ips: str | Sequence[str]) -> dict[str, list[str] | None]:
        return await self.call(dict[str, list[str] | None], "GET", "/dns/reverse", params={"ips": _csv(ips)})

    # -- utility and plan ------------------------------------------------------------------
    async def http_headers(self) -> dict[str, str]:
        return await self.call(dict[str, str], "GET", "/tools/httpheaders")

    async def my_ip(self) -> str:
        return await self.call(str, "GET", "/tools/myip")

    async def backend_info(self) -> dict | None:
        """What a spyglass backend holds (banners, demo data); None from other services."""
        try:
            return await self.call(dict, "GET", "/spyglass/info")
        except NotFound:
            return None

    async def api_info(self) -> m.ApiInfo:
        info = await self.call(m.ApiInfo, "GET", "/api-info")
        limits = info.usage_limits
        self.credits.update(query=info.query_credits, scan=info.scan_credits, plan=info.plan,
                            monitored_ips=limits.monitored_ips if limits else info.monitored_ips)
        return info
