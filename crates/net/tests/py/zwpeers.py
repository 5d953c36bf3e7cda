"""Peers that pin a TCP host's buffers, and legitimate clients beside them
(the memory-budget tests and measurement; root, in the test's namespace).

    zwpeers.py PORT SILENT ANSWER PUSH LIMIT_S [BATCH [HOLD_S]]

tinygram is 10.7.0.2 and serves echo on PORT. SILENT + ANSWER raw-socket
peers, from addresses on tg0's subnet that nobody owns (10.7.0.10 up, so the
kernel never answers for them), each open a connection advertising a zero
window from their SYN on (no options beyond MSS 1460), push PUSH bytes into
it as far as tinygram's window lets them (its echo can send none back, so its
send buffer fills, then its receive buffer) and stop pushing once everything
is acknowledged or the window has stayed shut for a second. From then on a
SILENT peer sends nothing at all, so tinygram's zero-window probes go
unanswered; an ANSWER peer answers every segment tinygram sends with an ACK
advertising a zero window, forever. Connections open BATCH at a time (default
50), a batch once the one before has its SYN-ACKs or a second has passed;
SYNs go unanswered are sent again after a second, three times in all.

Beside them, legitimate kernel clients: one connected before the peers,
doing an echo round trip every 100 ms while they push and hold (each must
come back within 5 s); and once every peer is done pushing and HOLD_S
(default 3) seconds have passed, a new one, which must connect (the kernel
retries its SYN for up to 127 s) and do 5 round trips. Runs at most LIMIT_S; prints one JSON
line with what every peer saw (SYN-ACKs, bytes pushed and acknowledged,
RSTs from tinygram) and how the clients fared. Needs root (CAP_NET_RAW)."""
import json, os, socket, struct, sys, threading, time

port, n_silent, n_answer, push, limit = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                         int(sys.argv[4]), float(sys.argv[5]))
batch = int(sys.argv[6]) if len(sys.argv) > 6 else 50
hold = float(sys.argv[7]) if len(sys.argv) > 7 else 3.0
TG = "10.7.0.2"
TG_B = socket.inet_aton(TG)
START = time.monotonic()
DEADLINE = START + limit
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
MSS = 1460
FILL = b"z" * MSS
out = {"silent": n_silent, "answer": n_answer, "push": push}


def fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def words(b):
    if len(b) % 2:
        b += b"\0"
    return sum(struct.unpack("!%dH" % (len(b) // 2), b))


FILL_SUM = [0] * (MSS + 1)  # the checksum sum of FILL[:n], every n
for n in range(1, MSS + 1):
    FILL_SUM[n] = FILL_SUM[n - 1] + (0x7A00 if n % 2 else 0x007A)

RAW = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
RAW.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
SNIFF = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
SNIFF.setsockopt(socket.SOL_SOCKET, 33, 1 << 26)  # SO_RCVBUFFORCE: 64 MiB
SNIFF.bind(("tg0", 0))
SNIFF.setblocking(False)
send_errors = 0


def send(src, sport, seq, ack, flags, opts=b"", n=0):
    """One segment to tinygram with `n` bytes of FILL; the kernel fills in the
    IP checksum, length and identification (IP_HDRINCL)."""
    global send_errors
    s = socket.inet_aton(src)
    tcp = struct.pack("!HHIIBBHHH", sport, port, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (5 + len(opts) // 4) << 4, flags, 0, 0, 0) + opts
    total = len(tcp) + n
    c = fold(words(s + TG_B + struct.pack("!BBH", 0, 6, total) + tcp) + FILL_SUM[n])
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + total, 0, 0x4000, 64, 6, 0, s, TG_B)
    try:
        RAW.sendto(ip + tcp + FILL[:n], (TG, 0))
        return True
    except OSError:
        send_errors += 1  # the device queue is full: lost, as on a link
        return False


class Peer:
    def __init__(self, i, answer):
        self.src = "10.7.0.%d" % (10 + i % 240)
        self.sport = 20000 + i // 240
        self.answer = answer
        self.iss = (i * 7919 * 65536) % (1 << 30)
        self.irs = None
        self.una = self.nxt = self.edge = self.iss + 1
        self.end = self.iss + 1 + push
        self.state = "new"  # syn, push, held, reset
        self.syns = 0
        self.syn_at = 0.0
        self.progress_at = 0.0  # the last time tinygram acknowledged more or opened its window
        self.probes_seen = self.answers = 0

    def seq(self, v):
        """A sequence number from tinygram's ACK field, as an offset past our ISS."""
        return self.iss + ((v - self.iss) & 0xFFFFFFFF)


peers = [Peer(i, i >= n_silent) for i in range(n_silent + n_answer)]
by_key = {(p.src, p.sport): p for p in peers}


def on_segment(pkt):
    if len(pkt) < 40 or pkt[9] != 6 or pkt[12:16] != TG_B:
        return
    ihl = (pkt[0] & 0x0F) * 4
    dst = socket.inet_ntoa(pkt[16:20])
    sport, dport, seq, ack, off, flags, win = struct.unpack_from("!HHIIBBH", pkt, ihl)
    p = by_key.get((dst, dport))
    if p is None or sport != port:
        return
    now = time.monotonic()
    if flags & RST:
        p.state = "reset"
        return
    if flags & SYN and flags & ACK and p.state == "syn":
        p.irs = seq
        p.una = p.nxt = p.seq(ack)
        p.edge = p.una + win
        p.state = "push"
        p.progress_at = now
        send(p.src, p.sport, p.nxt, p.irs + 1, ACK)
        return
    if p.irs is None or not flags & ACK:
        return
    a = p.seq(ack)
    if a > p.una or a + win > p.edge:
        p.progress_at = now
    p.una = max(p.una, a)
    p.edge = max(p.edge, a + win)
    if p.state == "held":
        p.probes_seen += 1
        if p.answer:
            send(p.src, p.sport, p.nxt, p.irs + 1, ACK)
            p.answers += 1


def pump(p, now):
    """Sends what tinygram's window takes; go-back-N after 300 ms without progress."""
    if p.una >= p.end or (p.edge <= p.una and now - p.progress_at > 1.0):
        p.state = "held"
        return
    if p.nxt > p.una and now - p.progress_at > 0.3:
        p.nxt = p.una
        p.progress_at = now
    sent = 0
    while p.nxt < min(p.edge, p.end) and sent < 16:
        n = min(MSS, p.edge - p.nxt, p.end - p.nxt)
        if not send(p.src, p.sport, p.nxt, p.irs + 1, ACK | PSH, b"", n):
            return
        p.nxt += n
        sent += 1


def open_syn(p, now):
    p.state = "syn"
    p.syns += 1
    p.syn_at = now
    send(p.src, p.sport, p.iss, 0, SYN, struct.pack("!BBH", 2, 4, MSS))


legit = {"round_trips": 0, "failures": [], "slowest_s": 0.0}
stop_legit = threading.Event()


def round_trip(s, i):
    msg = ("legit-%d-" % i).encode() + os.urandom(6).hex().encode() + b"\n"
    t = time.monotonic()
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        chunk = s.recv(len(msg) - len(got))
        if not chunk:
            raise RuntimeError("closed after %d bytes" % len(got))
        got += chunk
    if got != msg:
        raise RuntimeError("echoed %r for %r" % (got, msg))
    return time.monotonic() - t


def legit_loop(s):
    i = 0
    while not stop_legit.is_set() and time.monotonic() < DEADLINE:
        try:
            dt = round_trip(s, i)
            legit["round_trips"] += 1
            legit["slowest_s"] = max(legit["slowest_s"], round(dt, 4))
        except (OSError, RuntimeError) as e:
            legit["failures"].append("%s: %s" % (type(e).__name__, e))
            return
        i += 1
        time.sleep(0.1)


def main():
    first = socket.create_connection((TG, port), timeout=5)
    first.settimeout(5)
    legit_thread = threading.Thread(target=legit_loop, args=(first,), daemon=True)
    legit_thread.start()
    pending = list(reversed(peers))
    wave, wave_at = [], 0.0
    done_at = None
    while time.monotonic() < DEADLINE:
        now = time.monotonic()
        if pending and (now - wave_at > 1.0 or all(p.state != "syn" for p in wave)):
            wave = [pending.pop() for _ in range(min(batch, len(pending)))]
            wave_at = now
            for p in wave:
                open_syn(p, now)
        for _ in range(4096):
            try:
                pkt = SNIFF.recv(2048)
            except BlockingIOError:
                break
            on_segment(pkt)
        now = time.monotonic()
        busy = False
        for p in peers:
            if p.state == "syn" and now - p.syn_at > 1.0:
                if p.syns < 3:
                    open_syn(p, now)
                else:
                    p.state = "unanswered"
            if p.state == "push":
                pump(p, now)
                busy = True
            busy |= p.state in ("new", "syn")
        if not busy:
            done_at = done_at or now
            if now - done_at >= hold:
                break
        else:
            time.sleep(0.001)
    out["pushing_s"] = round(time.monotonic() - START, 3)
    stop_legit.set()
    legit_thread.join(6)
    first.close()
    out["first_client"] = legit
    # A new client once the peers hold what they pushed.
    new = {"round_trips": 0}
    t = time.monotonic()
    try:
        # The kernel retries its SYN at 1, 3, 7, 15, 31 and 63 s; a host past
        # its accept threshold may let it in only after reclaiming stalled peers.
        s = socket.create_connection((TG, port), timeout=max(1.0, min(135.0, DEADLINE - t)))
        new["connect_s"] = round(time.monotonic() - t, 3)
        s.settimeout(5)
        for i in range(5):
            round_trip(s, i)
            new["round_trips"] += 1
        s.close()
    except (OSError, RuntimeError) as e:
        new["error"] = "%s: %s" % (type(e).__name__, e)
    out["new_client"] = new
    for kind, group in (("silent", peers[:n_silent]), ("answer", peers[n_silent:])):
        out[kind + "_peers"] = {
            "synacks": sum(p.irs is not None for p in group),
            "unanswered": sum(p.state == "unanswered" for p in group),
            "pushed_acked": sum(p.una - p.iss - 1 for p in group if p.irs is not None),
            "reset": sum(p.state == "reset" for p in group),
            "probes_seen": sum(p.probes_seen for p in group),
            "answers": sum(p.answers for p in group),
        }
    out["send_errors"] = send_errors
    out["seconds"] = round(time.monotonic() - START, 3)


try:
    main()
    out["ok"] = True
except (OSError, RuntimeError) as e:
    out["ok"] = False
    out["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out), flush=True)
