"""Hand-built IPv4 SYNs from any source address, for the raw-socket test
peers (syn_flood.py, martian.py): sent with IP_HDRINCL, so the kernel adds
nothing and checks nothing."""
import random, socket, struct


def csum(b):
    """The Internet checksum (RFC 1071) of b."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def syn(src, sport, dst, dport, seq):
    """An IPv4 packet carrying a SYN from src:sport to dst:dport with an MSS option."""
    d = socket.inet_aton(dst)
    s = socket.inet_aton(src)
    opts = struct.pack("!BBH", 2, 4, 1460)  # MSS 1460
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, (5 + 1) << 4, 0x02, 64240, 0, 0) + opts
    pseudo = s + d + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), random.getrandbits(16), 0, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp
