from __future__ import annotations

import ipaddress

import pytest

from contracts.env import EnvError
from contracts.url_policy import UnsafeUrl, allowed_ports_setting, embedded_ipv4, refusal, validate_public_url
from tests.contracts import url_spellings as table

REFUSED = [
    "http://127.0.0.1:8100/x",
    "http://localhost/",
    "http://[::1]/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://169.254.10.10/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    "http://[::ffff:10.0.0.1]/",
    "http://0.0.0.0/",
    "http://100.64.0.1/",
    "ftp://8.8.8.8/",
    "http:///nohost",
    "http://user:pw@8.8.8.8/",
    "http://no-such-host.invalid/",
    "http://224.0.0.251/",  # multicast
    "http://239.255.255.250:1900/",
    "http://[ff02::1]/",
    "http://8.8.8.8#@127.0.0.1/",  # fragment trick
    "http://8.8.8.8/v1#frag",
    "http://@8.8.8.8/",  # empty userinfo
    "http://8.8.8.8\\@127.0.0.1/",  # backslash: parsers disagree on the host
    "http://8.8.8.8/ v1",
]


@pytest.mark.parametrize("url", REFUSED)
def test_internal_and_malformed_urls_are_refused(url):
    with pytest.raises(UnsafeUrl):
        validate_public_url(url)


def test_public_address_is_accepted():
    assert validate_public_url("https://8.8.8.8/v1") == "https://8.8.8.8/v1"
    assert validate_public_url("http://[2606:4700:4700::1111]:8443/v1")


def test_loopback_only_when_allowed_and_never_metadata_or_private():
    assert validate_public_url("http://127.0.0.1:8100/deepseek/v1", allow_loopback=True)
    assert validate_public_url("http://localhost:8100/", allow_loopback=True)
    for url in ("http://169.254.169.254/", "http://10.0.0.1/", "http://[fd00:ec2::254]/"):
        with pytest.raises(UnsafeUrl):
            validate_public_url(url, allow_loopback=True)


# --- the table (tests/contracts/url_spellings.py): production policy, by what an address reaches ---


def test_the_table_is_at_least_a_hundred_spellings():
    assert len(table.REFUSED) + len(table.ACCEPTED) >= 100
    assert len(set(table.REFUSED)) == len(table.REFUSED)


@pytest.mark.parametrize("url", table.REFUSED)
def test_every_refused_spelling_is_refused_in_production(url):
    with pytest.raises(UnsafeUrl):
        validate_public_url(url, allowed_ports=table.PRODUCTION_PORTS, resolve=_no_lookup)


@pytest.mark.parametrize("url", table.ACCEPTED)
def test_public_addresses_spelled_plainly_are_accepted_in_production(url):
    assert validate_public_url(url, allowed_ports=table.PRODUCTION_PORTS, resolve=_no_lookup) == url


@pytest.mark.parametrize("answer", table.REFUSED_ANSWERS)
def test_a_public_looking_name_answering_an_inside_address_is_refused(answer):
    url = f"https://{table.PUBLIC_LOOKING_NAME}/v1"
    with pytest.raises(UnsafeUrl, match="resolves to"):
        validate_public_url(url, allowed_ports=table.PRODUCTION_PORTS, resolve=lambda host, port: [answer])


def test_one_inside_answer_among_public_ones_refuses_the_name():
    def answers(host, port):
        return ["8.8.8.8", "64:ff9b::a9fe:a9fe"]

    with pytest.raises(UnsafeUrl, match=r"cloud metadata address \(carried in an IPv6 address\)"):
        validate_public_url(f"https://{table.PUBLIC_LOOKING_NAME}/", resolve=answers)
    assert validate_public_url(f"https://{table.PUBLIC_LOOKING_NAME}/", resolve=lambda h, p: ["8.8.8.8"])


def _no_lookup(host, port):
    raise AssertionError(f"the table resolves nothing, asked for {host!r}")


@pytest.mark.parametrize(
    ("address", "inner"),
    [
        ("::ffff:127.0.0.1", "127.0.0.1"),  # mapped
        ("::127.0.0.1", "127.0.0.1"),  # compatible
        ("::ffff:0:10.0.0.1", "10.0.0.1"),  # SIIT
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64 well-known
        ("64:ff9b:1::a00:1", "10.0.0.1"),  # NAT64 local-use, read as a /96
        ("2002:7f00:1::", "127.0.0.1"),  # 6to4
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),  # Teredo: the client, bits inverted
        ("2606:4700:4700::1111", None),
        ("::1", None),
        ("::", None),
    ],
)
def test_embedded_ipv4_addresses_are_unwrapped(address, inner):
    found = embedded_ipv4(ipaddress.IPv6Address(address))
    assert (str(found) if found else None) == inner


def test_loopback_is_allowed_in_development_in_every_form_but_metadata_and_private_never():
    for text in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1"):
        assert refusal(ipaddress.ip_address(text), allow_loopback=True) is None
    for text in ("64:ff9b::a9fe:a9fe", "2002:a00:1::", "192.0.0.192"):
        assert refusal(ipaddress.ip_address(text), allow_loopback=True) is not None


def test_ports_beyond_80_and_443_only_when_allow_listed():
    assert validate_public_url("https://8.8.8.8:8443/v1", allowed_ports=(80, 443, 8443))
    with pytest.raises(UnsafeUrl, match="port 8443 is not allowed"):
        validate_public_url("https://8.8.8.8:8443/v1", allowed_ports=(80, 443))
    assert validate_public_url("https://8.8.8.8:8443/v1")  # development: any port


def test_the_port_allow_list_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("TOKENWAY_ENV", "production")
    monkeypatch.delenv("TOKENWAY_BYOK_ALLOWED_PORTS", raising=False)
    assert allowed_ports_setting() == (80, 443)
    monkeypatch.setenv("TOKENWAY_BYOK_ALLOWED_PORTS", "8443, 9000")
    assert allowed_ports_setting() == (80, 443, 8443, 9000)
    monkeypatch.setenv("TOKENWAY_BYOK_ALLOWED_PORTS", "https")
    with pytest.raises(EnvError, match="TOKENWAY_BYOK_ALLOWED_PORTS"):
        allowed_ports_setting()
    monkeypatch.setenv("TOKENWAY_ENV", "development")
    monkeypatch.delenv("TOKENWAY_BYOK_ALLOWED_PORTS")
    assert allowed_ports_setting() is None
