"""The table of provider URL spellings the policy is tested over (contracts.url_policy), at save
(tests/platform/test_credentials_url_table.py) and at connect (tests/routing/test_byok_url_table.py).

Production policy: no loopback, ports 80 and 443. Every entry is an IP literal or a name refused
before any lookup, so the table resolves nothing; names that resolve are tested through the seams.
"""

from __future__ import annotations

PRODUCTION_PORTS = (80, 443)

# IPv4 special-purpose blocks (IANA registry), each by an address inside it.
SPECIAL_V4 = [
    "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
    "100.100.100.200",  # Alibaba Cloud metadata, inside the shared 100.64/10
    "127.0.0.1", "127.255.255.254", "169.254.169.254", "169.254.0.1", "172.16.0.1", "172.31.255.255",
    "192.0.0.1", "192.0.0.170", "192.0.0.192", "192.0.2.1", "192.88.99.1", "192.168.0.1", "198.18.0.1",
    "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
    "255.255.255.255",
]  # fmt: skip

# IPv6: special-purpose blocks, and every form that carries one of the IPv4 addresses above.
SPECIAL_V6 = [
    "::1", "::", "0:0:0:0:0:0:0:1", "::2",
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.0.0.192",
    "::127.0.0.1", "::7f00:1", "::10.0.0.1", "::a9fe:a9fe",  # IPv4-compatible
    "::ffff:0:127.0.0.1", "::ffff:0:a00:1",  # SIIT (IPv4-translated)
    "64:ff9b::a9fe:a9fe", "64:ff9b::169.254.169.254", "64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::c000:c0",
    "64:ff9b::c0a8:1", "64:ff9b:1::a00:1", "64:ff9b:1::808:808", "64:ff9b:1:ffff::7f00:1",  # NAT64
    "2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:1::", "2002:a00:1::", "2002:c000:c0::",  # 6to4
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo: client ~0x80fffffe = 127.0.0.1
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo: client 10.0.0.1
    "2001::", "2001:2::1", "2001:db8::1", "3fff::1", "100::1", "fc00::1", "fd00:ec2::254", "fd12:3456::1",
    "fe80::1", "febf::1", "fec0::1", "ff02::1", "ff05::1:3", "5f00::1", "4000::1", "::1:0:0:1",
]  # fmt: skip

ODD_SPELLINGS = [
    # IPv4 hosts a resolver reads as numbers (glibc's inet_aton, WHATWG URL parsing)
    "http://2130706433/", "http://017700000001/", "http://0x7f000001/", "http://0x7f.0.0.1/",
    "http://0177.0.0.1/", "http://127.1/", "http://127.0.1/", "http://0/", "http://127.000.000.001/",
    "http://3232235521/", "http://0xa9fea9fe/", "http://2852039166/", "http://0251.0376.0251.0376/",
    "http://134744072/", "http://8.8.8.010/", "http://1.2.3.4.5/", "http://0x08.0x08.0x08.0x08/",
    # trailing dots, brackets, special-use names, IDN and look-alikes, percent-encoding
    "http://127.0.0.1./", "http://[127.0.0.1]/", "http://[localhost]/", "http://localhost/",
    "http://LOCALHOST/", "http://localhost./", "http://api.localhost/", "http://metadata.google.internal/",
    "http://printer.local/", "http://router.home.arpa/", "http://no-such-host.invalid/", "http://provider.test/",
    "http://\u24dbocalhost/", "http://ex\u0430mple.com/", "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
    "http://%6c%6f%63%61%6c%68%6f%73%74/", "http://127.0.0.1%2f@8.8.8.8/", "http://[fe80::1%25eth0]/",
    "http://under_score-.com/", "http://a..b.com/",
    # user info, fragments, backslashes, whitespace and control characters
    "http://user:pw@8.8.8.8/", "http://8.8.8.8@127.0.0.1/", "http://@8.8.8.8/", "http://8.8.8.8:80@127.0.0.1/",
    "http://127.0.0.1#@8.8.8.8/", "http://8.8.8.8\\@127.0.0.1/", "http://8.8.8.8/v1#frag", "http://8.8.8.8/ v1",
    "http://8.8.8.8\t/", "http://8.8.8.8\x00/", "http://8.8.8.8\r\n/",
    # schemes and missing hosts
    "ftp://8.8.8.8/", "file:///etc/passwd", "gopher://8.8.8.8:70/", "http:///nohost", "//8.8.8.8/", "8.8.8.8",
    # ports (production allows 80 and 443 only)
    "http://8.8.8.8:8080/", "https://8.8.8.8:8443/", "http://8.8.8.8:22/", "http://8.8.8.8:6379/",
    "http://8.8.8.8:0/", "http://8.8.8.8:65536/", "http://8.8.8.8:080/", "http://8.8.8.8:+443/", "http://8.8.8.8:/",
    "https://[2606:4700:4700::1111]:8443/",
]  # fmt: skip


def _url(address: str) -> str:
    return f"http://[{address}]/v1" if ":" in address else f"http://{address}/v1"


REFUSED = [_url(a) for a in SPECIAL_V4 + SPECIAL_V6] + ODD_SPELLINGS

# Public addresses, spelled plainly, on 80/443: a NAT64 or mapped form of a public IPv4 address is public.
ACCEPTED_ADDRESSES = [
    "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1", "192.0.1.1",
    "192.0.3.1", "198.17.255.255", "198.20.0.1", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001::1",
    "64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1",
]  # fmt: skip
ACCEPTED = [_url(a) for a in ACCEPTED_ADDRESSES] + [
    "https://8.8.8.8:443/v1", "http://8.8.8.8:80/", "https://[2606:4700:4700::1111]/v1", "https://1.1.1.1",
    "http://8.8.8.8/v1?api-version=2024-10-21",
]  # fmt: skip

# What a public-looking name may answer (DNS rebinding): every address above, at save and at connect.
PUBLIC_LOOKING_NAME = "api.llm-provider.com"
REFUSED_ANSWERS = SPECIAL_V4 + SPECIAL_V6
