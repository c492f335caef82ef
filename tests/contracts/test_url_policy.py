from __future__ import annotations

import pytest

from contracts.url_policy import UnsafeUrl, validate_public_url

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
