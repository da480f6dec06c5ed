"""The backend's own networks, in every spelling an IPv6 address can carry an IPv4 one in."""

from __future__ import annotations

import ipaddress

import pytest

from spyglass.netools.networks import Reach, internal

INSIDE = [
    "127.0.0.1", "10.9.9.9", "192.168.1.1", "172.16.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1",
    "2002:7f00:1::", "2002:a09:909::1",  # 6to4 of 127.0.0.1 and 10.9.9.9
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "64:ff9b::7f00:1", "64:ff9b::a09:909",  # NAT64 of 127.0.0.1 and 10.9.9.9
]  # fmt: skip
OUTSIDE = ["8.8.8.8", "2606:4700::1111", "2002:808:808::1"]  # the last: 6to4 of 8.8.8.8


@pytest.mark.parametrize("address", INSIDE)
def test_inside(address):
    assert internal(ipaddress.ip_address(address))
    assert not Reach().permitted(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", OUTSIDE)
def test_outside(address):
    assert not internal(ipaddress.ip_address(address)) and Reach().permitted(ipaddress.ip_address(address))


def test_an_opened_network_is_reached_and_only_it():
    loopback = Reach(["127.0.0.0/8", "::1/128"])
    assert loopback.permitted(ipaddress.ip_address("127.0.0.1")) and loopback.permitted(ipaddress.ip_address("::1"))
    assert not loopback.permitted(ipaddress.ip_address("10.9.9.9"))
    assert not loopback.permitted(ipaddress.ip_address("2002:a09:909::1"))  # 6to4 of 10.9.9.9
