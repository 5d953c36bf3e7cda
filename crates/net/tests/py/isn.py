"""The ISNs of tinygram's SYN-ACKs, read off tg0 with an AF_PACKET socket
(real-wire tests, as root, inside the test's network namespace).

    isn.py PORT FIRST_CLIENT_PORT COUNT LIMIT_S

Connects COUNT times to 10.7.0.2:PORT from client ports FIRST_CLIENT_PORT,
+1, ..., then once more from FIRST_CLIENT_PORT (the first 4-tuple again);
each connection is reset by the client right after the handshake (SO_LINGER
0, so no TIME_WAIT blocks the reuse). Prints one JSON line: every SYN-ACK's
ISN and the time it was seen, in connection order."""
import json, socket, struct, sys, time

port, first, count, limit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
DEADLINE = time.monotonic() + limit
sn = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
sn.bind(("tg0", 0))
out = {"isns": [], "seen_at": [], "client_ports": []}


def synack_isn(cport):
    """The ISN of the SYN-ACK tinygram sends to cport (bounded wait)."""
    while time.monotonic() < DEADLINE:
        sn.settimeout(max(0.05, DEADLINE - time.monotonic()))
        pkt = sn.recv(70000)
        if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6 or pkt[12:16] != socket.inet_aton("10.7.0.2"):
            continue
        tcp = pkt[(pkt[0] & 0x0F) * 4:]
        dport, seq, flags = struct.unpack("!H", tcp[2:4])[0], struct.unpack("!I", tcp[4:8])[0], tcp[13]
        if dport == cport and flags & 0x12 == 0x12:
            return seq, time.monotonic()
    raise RuntimeError("no SYN-ACK to port %d before the deadline" % cport)


try:
    for cport in [first + i for i in range(count)] + [first]:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.bind(("10.7.0.1", cport))
        s.settimeout(max(0.1, DEADLINE - time.monotonic()))
        s.connect(("10.7.0.2", port))
        isn, at = synack_isn(cport)
        s.close()  # RST: the 4-tuple is free again at once
        out["isns"].append(isn)
        out["seen_at"].append(at)
        out["client_ports"].append(cport)
        time.sleep(0.05)
    out["ok"] = True
except (OSError, RuntimeError) as e:
    out["ok"] = False
    out["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out), flush=True)
