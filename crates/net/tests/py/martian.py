"""SYNs from martian sources, for the real-wire tests.

    martian.py DST PORT LIMIT_S SRC...

Sends three SYNs (raw socket, IP_HDRINCL) to DST:PORT from each SRC, and
watches tg0 (AF_PACKET) for SYN-ACKs sent back to each until LIMIT_S has
passed or every source has one. Prints one JSON line: SYNs sent and
SYN-ACKs seen per source. Needs root (CAP_NET_RAW)."""
import json, random, socket, sys, time

from rawsyn import syn

dst, port, limit, sources = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
DEADLINE = time.monotonic() + limit


sn = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
sn.bind(("tg0", 0))
sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
sock.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
out = {"sent": {s: 0 for s in sources}, "synacks": {s: 0 for s in sources}}
for i, src in enumerate(sources):
    for k in range(3):
        try:
            sock.sendto(syn(src, 42000 + 10 * i + k, dst, port, random.getrandbits(32)), (dst, 0))
            out["sent"][src] += 1
        except OSError as e:
            out.setdefault("errors", []).append("%s: %s" % (src, e))
while time.monotonic() < DEADLINE and not all(out["synacks"].values()):
    sn.settimeout(max(0.05, DEADLINE - time.monotonic()))
    try:
        pkt = sn.recv(70000)
    except socket.timeout:
        break
    if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6 or pkt[12:16] != socket.inet_aton(dst):
        continue
    to = socket.inet_ntoa(pkt[16:20])
    tcp = pkt[(pkt[0] & 0x0F) * 4:]
    if to in out["synacks"] and tcp[13] & 0x12 == 0x12:
        out["synacks"][to] += 1
print(json.dumps(out), flush=True)
