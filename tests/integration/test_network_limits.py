"""Per-network limits: new crowd identities and qualification attempts count an IPv6 /64 as one network,
exactly like one IPv4 address (one key function for both), through the real entry and qualification views."""
from __future__ import annotations

import uuid

import pytest
from django.test import Client, RequestFactory

from annotate.models import Worker
from annotate.ratelimits import network_key
from annotate.services.participation import client_address
from tests.factories import make_campaign, make_document, make_worker
from tests.integration.test_crowd_identity import an_ip, prolific_url, uid
from tests.integration.test_qualification_pool import _take

pytestmark = pytest.mark.django_db

IDENTITIES = 24


def a_v6_network() -> str:
    """A fresh documentation-range /64 prefix, unique to the test (rate counters never carry over)."""
    n = uuid.uuid4().int
    return f"2001:db8:{n % 0xFFFF:x}:{(n >> 16) % 0xFFFF:x}"


def host(prefix: str, i: int) -> str:
    """The i-th address of a /64 (every one different in its last 64 bits, as an attacker would rotate them)."""
    n = uuid.uuid4().int
    return f"{prefix}:{(n >> 32) % 0xFFFF:x}:{i:x}:{n % 0xFFFF:x}:{(n >> 16) % 0xFFFF:x}"


def test_network_key_is_the_ipv4_address_or_the_ipv6_slash_64():
    assert network_key("203.0.113.7") == "203.0.113.7"
    assert network_key("2001:db8:1:2:aaaa::1") == network_key("2001:db8:1:2:ffff:1:2:3") == "2001:db8:1:2::/64"
    assert network_key("2001:db8:1:3::1") != network_key("2001:db8:1:2::1")
    assert network_key("::ffff:203.0.113.7") == "203.0.113.7"  # an IPv4 client seen through a dual stack
    assert network_key("") == network_key("not an address") == ""
    factory = RequestFactory()
    same = {client_address(factory.get("/", REMOTE_ADDR=a)) for a in ("2001:db8:9:9::1", "2001:db8:9:9:1:2:3:4")}
    assert len(same) == 1 and "" not in same
    assert client_address(factory.get("/", REMOTE_ADDR="2001:db8:9:8::1")) not in same


def _arrive(campaign, addresses: list[str]) -> list[int]:
    return [Client().get(prolific_url(campaign, uid()), REMOTE_ADDR=address).status_code for address in addresses]


def test_24_identities_from_one_ipv6_slash_64_are_limited_like_24_from_one_ipv4_address(settings):
    settings.FACTLAB_RATELIMIT_CROWD_IDENTITY = "20/h"
    campaign = make_campaign(new_crowd_workers_per_hour=1000)
    ipv4 = an_ip()
    from_v4 = _arrive(campaign, [ipv4] * IDENTITIES)
    prefix = a_v6_network()
    v6_addresses = [host(prefix, i) for i in range(IDENTITIES)]
    assert len(set(v6_addresses)) == IDENTITIES
    from_v6 = _arrive(campaign, v6_addresses)
    assert from_v4 == [302] * 20 + [429] * 4
    assert from_v6 == from_v4
    # Only the admitted ones exist; another /64 (another subscriber) is not affected.
    assert Worker.objects.filter(provider="prolific").count() == 40
    assert _arrive(campaign, [host(a_v6_network(), 0)]) == [302]


def test_qualification_attempts_count_one_ipv6_slash_64_like_one_ipv4_address(settings):
    settings.FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS = 3
    campaign = make_campaign(qualification_required=True, qualification_attempts=1)
    make_document(campaign)
    prefix = a_v6_network()
    for addresses in (["198.51.100.23"] * 4, [host(prefix, i) for i in range(4)]):
        outcomes = [_take(Client(), campaign, make_worker(), address, flip=13).status_code for address in addresses]
        assert outcomes == [200, 200, 200, 403], addresses
