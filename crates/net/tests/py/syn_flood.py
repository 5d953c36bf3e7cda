"""A bounded SYN flood from spoofed sources, for the real-wire tests.

    syn_flood.py DST PORT SRC_PREFIX COUNT SECONDS

Sends COUNT SYNs (raw socket, IP_HDRINCL) to DST:PORT from random sources
SRC_PREFIX.10 to SRC_PREFIX.250 and random ports, spread evenly over SECONDS
(never longer). Prints "flooding" once a tenth are out, then one JSON line
with how many were sent. Needs root (CAP_NET_RAW)."""
import json, random, socket, sys, time

from rawsyn import syn

dst, port, prefix, count, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])


sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
sock.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
start = time.monotonic()
sent = 0
for i in range(count):
    src = "%s.%d" % (prefix, random.randint(10, 250))
    try:
        sock.sendto(syn(src, random.randint(1024, 65535), dst, port, random.getrandbits(32)), (dst, 0))
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
