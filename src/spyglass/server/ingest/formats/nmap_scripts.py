"""What nmap says beyond a port's service, as banner members (read by :mod:`.nmap`).

Of a host, kept on every banner of it: ``host_scripts`` (``<hostscript>``: smb-os-discovery, clock-skew,
...: ``{id: {"output", "elems"}}``, the script's text and its table), ``traceroute`` (``{"proto",
"port", "hops": [{"ttl", "ip", "rtt", "host"}]}``, as nmap wrote them), ``uptime`` (``{"seconds",
"lastboot"}``), ``distance`` (hops), ``mac`` (``{"address", "vendor"}``) and ``os_classes`` (``-O``'s
``<osclass>`` elements, most accurate first, each once: ``{"vendor", "family", "generation", "type",
"accuracy"}``, those nmap wrote); smb-os-discovery's OS where nmap matched none. Of a port: every
``ssh-hostkey`` key in ``ssh.keys``; ``ssh2-enum-algos`` in ``ssh.kex`` (the service's five lists); the
vulnerabilities nmap's vulns library reports (state VULNERABLE or LIKELY VULNERABLE; host scripts' on
every banner of the host) and ``vulners``' list in ``vulns``, keyed by CVE id as the service keys them:
``{"verified", "cvss", "summary", "references"}``. nmap's files are from the wild: every member is read
defensively.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

_CVE = re.compile(r"(?:CVE:)?(CVE-\d{4}-\d{4,})\Z", re.IGNORECASE)
# ssh2-enum-algos' tables, named as the service's ssh.kex names them (the same names).
KEX_LISTS = (
    "kex_algorithms",
    "server_host_key_algorithms",
    "encryption_algorithms",
    "mac_algorithms",
    "compression_algorithms",
)


def elems(table: ET.Element) -> dict:
    """A script's (or a table's) structured output as nmap's Lua table was: keyed ``elem``s and
    ``table``s as members, unkeyed ones numbered from 1."""
    out: dict = {}
    n = 0
    for child in table:
        if child.tag == "elem":
            value: str | dict = child.text or ""
        elif child.tag == "table":
            value = elems(child)
        else:
            continue
        n += 1
        out[child.get("key") or str(n)] = value
    return out


def _texts(value: object) -> list[str]:
    """The strings of a table's values (an unkeyed list, as nmap writes one), in order."""
    return [v for v in value.values() if isinstance(v, str)] if isinstance(value, dict) else []


def _int(text: object) -> int | None:
    """A count nmap wrote (hops, seconds, bits); None for anything else, or past what JSON keeps exactly."""
    if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) < 16):
        return None
    return int(text)


def _float(text: object) -> float | None:
    """A finite number nmap wrote (a round trip's milliseconds, a score); None for anything else."""
    try:
        value = float(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def host_members(host: ET.Element) -> dict:
    """The members every banner of ``host`` carries (those of them nmap said)."""
    out: dict = {}
    scripts = {}
    for script in (s for h in host.findall("hostscript") for s in h.findall("script")):
        scripts[script.get("id", "")] = {"output": script.get("output", ""), "elems": elems(script)}
    if scripts:
        out["host_scripts"] = scripts
    trace = host.find("trace")
    if trace is not None:
        hops = []
        for hop in trace.findall("hop"):
            one: dict = {"ttl": _int(hop.get("ttl")), "ip": hop.get("ipaddr"), "rtt": _float(hop.get("rtt"))}
            if hop.get("host"):
                one["host"] = hop.get("host")
            hops.append(one)
        route = {"proto": trace.get("proto"), "port": _int(trace.get("port"))}  # (none for a neighbour)
        out["traceroute"] = {**{k: v for k, v in route.items() if v is not None}, "hops": hops}
    uptime = host.find("uptime")
    if uptime is not None and _int(uptime.get("seconds")) is not None:
        out["uptime"] = {"seconds": _int(uptime.get("seconds")), "lastboot": uptime.get("lastboot")}
    distance = host.find("distance")
    if distance is not None and _int(distance.get("value")) is not None:
        out["distance"] = _int(distance.get("value"))
    classes = os_classes(host)
    if classes:
        out["os_classes"] = classes
    mac = next((a for a in host.findall("address") if a.get("addrtype") == "mac" and a.get("addr")), None)
    if mac is not None:
        out["mac"] = {"address": mac.get("addr"), "vendor": mac.get("vendor")}
    return out


_CLASS = (("vendor", "vendor"), ("osfamily", "family"), ("osgen", "generation"), ("type", "type"))


def os_classes(host: ET.Element) -> list[dict]:
    """The OS classes of ``-O`` (``<osclass>`` in each ``<osmatch>``, or alone as nmap 5 wrote them),
    the most accurate first (a tie in nmap's order), each class once at its best accuracy. A class's
    accuracy is its own, else its match's; a class that names nothing is left out."""
    found: list[tuple[int, int, dict]] = []
    for parent in [*host.iter("osmatch"), *host.findall("os")]:
        for osclass in parent.findall("osclass"):
            one: dict[str, str | int] = {
                member: text for attr, member in _CLASS if (text := (osclass.get(attr) or "").strip())
            }
            if not one:
                continue
            accuracy = _int(osclass.get("accuracy"))
            accuracy = accuracy if accuracy is not None else _int(parent.get("accuracy"))
            if accuracy is None or accuracy > 100:
                accuracy = -1  # none said (or past 100): after every class that says one
            else:
                one["accuracy"] = accuracy
            found.append((-accuracy, len(found), one))
    out: dict[tuple, dict] = {}
    for _, _, one in sorted(found, key=lambda f: f[:2]):
        out.setdefault(tuple(one.get(m) for _, m in _CLASS), one)
    return list(out.values())


def smb_os(members: dict) -> str | None:
    """The OS smb-os-discovery names (``Windows Server 2008 R2 Standard 7601 Service Pack 1``)."""
    smb = members.get("host_scripts", {}).get("smb-os-discovery", {}).get("elems", {})
    name = smb.get("os") if isinstance(smb, dict) else None
    return name.strip() or None if isinstance(name, str) else None


def ssh_keys(table: dict) -> list[dict]:
    """Every key ``ssh-hostkey`` read, in nmap's order: type, bits, key (base64) and the MD5
    fingerprint with colons, as the service writes ``ssh.fingerprint``."""
    keys = []
    for key in table.values():
        if not isinstance(key, dict) or not isinstance(key.get("fingerprint"), str):
            continue
        hexes = key["fingerprint"].lower()
        one: dict = {"type": key.get("type"), "bits": _int(key.get("bits")), "key": key.get("key")}
        one["fingerprint"] = ":".join(hexes[i : i + 2] for i in range(0, len(hexes), 2))
        keys.append({k: v for k, v in one.items() if v is not None})
    return keys


def kex(table: dict) -> dict[str, list[str]] | None:
    """``ssh2-enum-algos``' lists as the service's ``ssh.kex``; None where it listed none."""
    lists = {name: _texts(table.get(name)) for name in KEX_LISTS}
    return lists if any(lists.values()) else None


def vulns(scripts: list[tuple[str, dict]]) -> dict:
    """``vulns`` of scripts' tables (``(script id, table)``): the vulns library's reports and
    ``vulners``' list, by CVE id; one id said twice keeps the higher score and any verification."""
    out: dict[str, dict] = {}
    for name, table in scripts:
        found = _vulners(table) if name == "vulners" else _reported(table)
        for cve, about in found:
            before = out.get(cve)
            if before is not None:
                about["verified"] = about["verified"] or before["verified"]
                if (_float(before["cvss"]) or -1) > (_float(about["cvss"]) or -1):
                    about["cvss"] = before["cvss"]
                about["references"] = list(dict.fromkeys(before["references"] + about["references"]))
                about["summary"] = before["summary"] or about["summary"]
            out[cve] = about
    return out


def _vulners(table: dict) -> list[tuple[str, dict]]:
    """``vulners``: a table per CPE, each a list of ``{id, cvss, type, is_exploit}``."""
    found = []
    for listed in table.values():
        for one in listed.values() if isinstance(listed, dict) else ():
            if not isinstance(one, dict) or not isinstance(one.get("id"), str):
                continue
            cve = _CVE.match(one["id"])
            if cve is None:
                continue  # (exploits and advisories: kept in the port's record)
            cvss = one.get("cvss") if isinstance(one.get("cvss"), str) and one.get("cvss") else None
            refs = [f"https://vulners.com/{one.get('type') or 'cve'}/{one['id']}"]
            found.append((cve[1].upper(), {"verified": False, "cvss": cvss, "summary": "", "references": refs}))
    return found


def _reported(table: dict) -> list[tuple[str, dict]]:
    """The vulns library's reports: a table per vulnerability with ``title``, ``state``, ``ids``
    (``CVE:CVE-2011-3192``), ``description``, ``refs`` and, in some scripts, ``scores``."""
    found = []
    for key, report in table.items():
        if not isinstance(report, dict) or not isinstance(report.get("state"), str):
            continue
        state = report["state"].upper()
        if "VULNERABLE" not in state or state.startswith("NOT"):
            continue
        ids = [m[1].upper() for m in map(_CVE.match, [key, *_texts(report.get("ids"))]) if m]
        scores = [s for s in map(_float, _texts(report.get("scores"))) if s is not None]
        title = report.get("title") if isinstance(report.get("title"), str) else ""
        described = " ".join(" ".join(_texts(report.get("description"))).split())
        about = {
            "verified": state.startswith("VULNERABLE"),  # tested; LIKELY VULNERABLE is inferred
            "cvss": str(max(scores)) if scores else None,
            "summary": f"{title}: {described}" if title and described else title or described,
            "references": _texts(report.get("refs")),
        }
        found += [(cve, dict(about)) for cve in dict.fromkeys(ids)]
    return found
