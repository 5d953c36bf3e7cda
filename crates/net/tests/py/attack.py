"""Crafted-segment attacks on tinygram over its TUN device, and a legitimate
kernel client that must keep working through them (real-wire tests, as root,
inside the test's network namespace).

    attack.py MODE PORT LIMIT_S

The attacker reads live sequence numbers from an AF_PACKET socket on tg0 and
sends hand-built IPv4/TCP packets (struct-packed, real checksums) through a
raw socket. tinygram is 10.7.0.2 and serves echo on PORT; the kernel is
10.7.0.1. MODE:

  farsack   a raw-socket peer from 10.7.0.3 (an address nobody owns, so the
            kernel never answers for it) opens a connection with SACK and
            timestamps, sends a line and its FIN, lets tinygram's FIN go
            unacknowledged, then sends ACKs whose SACK block lies 2^31 past
            SND.UNA; then acknowledges the FIN.
  inject    data at RCV.NXT with an ACK 2^30 below SND.UNA into the kernel
            client's connection (blind injection, RFC 5961 5.2).
  tspoison  a data-less segment at RCV.NXT that acknowledges data never sent,
            with TSval = TS.Recent + 2^31 - 1 (RFC 7323 5.3: TS.Recent only
            from acceptable segments).
  storm     a burst of segments outside the receive window into the kernel
            client's connection, most data-less, a few with 500 bytes; counts
            tinygram's replies (RFC 5961 7 rate limit).
  ackloop   a raw-socket peer from 10.7.0.3 sends 500 bytes and then acts as
            if it never had (as one forged segment leaves a connection):
            it answers every segment from tinygram with an ACK at its old
            sequence number, for 2 s, never rate-limited; then resets the
            connection with an RST at exactly RCV.NXT.

Every mode then runs the legitimate client: echo round trips on its
connection (after the attack for inject/tspoison/storm) and on a second new
connection, each read bounded by a timeout. Prints one JSON line."""
import json, os, socket, struct, sys, threading, time

mode, port, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
TG, KERNEL, GHOST = "10.7.0.2", "10.7.0.1", "10.7.0.3"
DEADLINE = time.monotonic() + limit
out = {"mode": mode}
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
READ_TIMEOUT = min(5.0, limit / 4)


def left():
    return max(0.1, DEADLINE - time.monotonic())


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ts_option(val, ecr):
    return b"\x01\x01\x08\x0a" + struct.pack("!II", val & 0xFFFFFFFF, ecr & 0xFFFFFFFF)


def packet(src, sport, dst, dport, seq, ack, flags, win=65535, opts=b"", payload=b""):
    """One IPv4/TCP packet with correct IP and TCP checksums."""
    opts += b"\x01" * (-len(opts) % 4)
    off = (20 + len(opts)) // 4
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      off << 4, flags, win, 0, 0) + opts + payload
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    c = csum(s + d + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), os.getpid() & 0xFFFF, 0x4000,
                     64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


RAW = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)


def send(*a, **k):
    RAW.sendto(packet(*a, **k), (TG, 0))


class Seg:
    """A TCP segment seen on tg0."""

    def __init__(self, t, pkt):
        ihl = (pkt[0] & 0x0F) * 4
        self.t = t
        self.src, self.dst = socket.inet_ntoa(pkt[12:16]), socket.inet_ntoa(pkt[16:20])
        tcp = pkt[ihl:struct.unpack("!H", pkt[2:4])[0]]
        (self.sport, self.dport, self.seq, self.ack, off, self.flags, self.win) = struct.unpack(
            "!HHIIBBH", tcp[:16])
        hl = (off >> 4) * 4
        self.payload = tcp[hl:]
        self.tsval = self.tsecr = None
        self.sack_ok = False
        o, i = tcp[20:hl], 0
        while i < len(o):
            k = o[i]
            if k == 0:
                break
            if k == 1:
                i += 1
                continue
            if i + 1 >= len(o) or o[i + 1] < 2:
                break
            n = o[i + 1]
            if k == 8 and n == 10:
                self.tsval, self.tsecr = struct.unpack("!II", o[i + 2:i + 10])
            if k == 4:
                self.sack_ok = True
            i += n

    def end(self):
        """The sequence number after this segment (SYN and FIN count one)."""
        return (self.seq + len(self.payload) + bool(self.flags & SYN) + bool(self.flags & FIN)) & 0xFFFFFFFF


class Sniffer:
    """Every TCP segment on tg0, both ways, in order, with its arrival time."""

    def __init__(self):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
        self.s.bind(("tg0", 0))
        self.s.settimeout(0.05)
        self.segs, self.lock, self.stop = [], threading.Lock(), False
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while not self.stop:
            try:
                pkt = self.s.recv(70000)
            except socket.timeout:
                continue
            if len(pkt) >= 40 and pkt[0] >> 4 == 4 and pkt[9] == 6:
                seg = Seg(time.monotonic(), pkt)
                with self.lock:
                    self.segs.append(seg)

    def flow(self, src, sport, dst, dport, since=0.0):
        with self.lock:
            return [s for s in self.segs if s.src == src and s.sport == sport and s.dst == dst
                    and s.dport == dport and s.t >= since]

    def wait(self, what, pred, secs=5.0):
        end = time.monotonic() + min(secs, left())
        while time.monotonic() < end:
            with self.lock:
                for s in self.segs:
                    if pred(s):
                        return s
            time.sleep(0.005)
        raise RuntimeError("did not see " + what)


def seq_max(segs):
    """The highest sequence end among segs (mod 2^32, relative to the first)."""
    base = segs[0].seq
    return max(segs, key=lambda s: (s.end() - base) & 0xFFFFFFFF).end()


def recv_exact(s, n):
    got = b""
    while len(got) < n:
        chunk = s.recv(n - len(got))
        if not chunk:
            raise RuntimeError("connection closed after %d of %d bytes" % (len(got), n))
        got += chunk
    return got


def round_trips(s, tag, count):
    """Echo round trips; each reply must be exactly what was sent."""
    done = 0
    out.setdefault("bytes_" + tag, 0)
    for i in range(count):
        msg = ("%s-%d-" % (tag, i)).encode() + os.urandom(8).hex().encode() + b"\n"
        s.sendall(msg)
        got = recv_exact(s, len(msg))
        if got != msg:
            raise RuntimeError("%s round trip %d echoed %r, sent %r" % (tag, i, got, msg))
        out["bytes_" + tag] += len(msg)
        done += 1
    return done


def nothing_extra(s, secs=0.3):
    """No bytes beyond the echoes (injected data would be echoed back)."""
    s.settimeout(secs)
    try:
        extra = s.recv(4096)
    except socket.timeout:
        extra = b""
    s.settimeout(READ_TIMEOUT)
    return extra


def legit_conn():
    s = socket.create_connection((TG, port), timeout=READ_TIMEOUT)
    s.settimeout(READ_TIMEOUT)
    return s


def kernel_view(sn, cport):
    """(kernel's SND.NXT, tinygram's SND.NXT, last kernel segment, last tinygram segment)."""
    k = sn.flow(KERNEL, cport, TG, port)
    t = sn.flow(TG, port, KERNEL, cport)
    return seq_max(k), seq_max(t), k[-1], t[-1]


def attack_on_kernel_conn(sn, craft):
    """Opens the legitimate connection, echoes, runs `craft` against it while
    it is idle, then echoes again and checks the stream carried nothing else."""
    s = legit_conn()
    cport = s.getsockname()[1]
    out["client_port"] = cport
    out["before"] = round_trips(s, "before", 3)
    time.sleep(0.3)  # the last ACKs settle, so the numbers read are current
    k_nxt, t_nxt, k_last, t_last = kernel_view(sn, cport)
    t0 = time.monotonic()
    craft(cport, k_nxt, t_nxt, k_last, t_last)
    time.sleep(1.0)
    out["replies"] = [
        {"flags": r.flags, "len": len(r.payload), "t": round(r.t - t0, 4)}
        for r in sn.flow(TG, port, KERNEL, cport, since=t0)
    ]
    extra = nothing_extra(s)
    out["extra_bytes"] = extra.decode("latin-1")
    out["after"] = round_trips(s, "after", 10)
    s.shutdown(socket.SHUT_WR)
    if s.recv(1) != b"":
        raise RuntimeError("bytes after the echoes on the attacked connection")
    s.close()


def ts(last_k, last_t):
    """A timestamp option as the kernel would send next (empty when not in use)."""
    if last_k.tsval is None:
        return b""
    return ts_option(last_k.tsval + 1, last_t.tsval or 0)


def mode_inject(sn):
    def craft(cport, k_nxt, t_nxt, k_last, t_last):
        data = b"INJECTED-BY-A-BLIND-ATTACKER\n"
        out["injected"] = len(data)
        send(KERNEL, cport, TG, port, k_nxt, t_nxt - (1 << 30), PSH | ACK, k_last.win,
             ts(k_last, t_last), data)
    attack_on_kernel_conn(sn, craft)


def mode_tspoison(sn):
    def craft(cport, k_nxt, t_nxt, k_last, t_last):
        if k_last.tsval is None:
            raise RuntimeError("timestamps are not in use on the connection")
        out["ts_recent"] = k_last.tsval
        send(KERNEL, cport, TG, port, k_nxt, t_nxt + 5000, ACK, k_last.win,
             ts_option(k_last.tsval + (1 << 31) - 1, t_last.tsval or 0))
    attack_on_kernel_conn(sn, craft)


def mode_storm(sn, dataless=20, data=3):
    def craft(cport, k_nxt, t_nxt, k_last, t_last):
        out["forged_dataless"], out["forged_data"] = dataless, data
        every = dataless // data
        start = time.monotonic()
        for i in range(dataless + data):
            payload = b"x" * 500 if i % (every + 1) == every else b""
            send(KERNEL, cport, TG, port, k_nxt + (1 << 30) + 1000 * i, t_nxt, ACK, k_last.win,
                 ts(k_last, t_last), payload)
            time.sleep(0.002)
        out["burst_s"] = time.monotonic() - start
    attack_on_kernel_conn(sn, craft)


def mode_farsack(sn):
    gport, iss, tsv = 40001, 0x1000, 1000
    opts = struct.pack("!BBH", 2, 4, 1460) + b"\x04\x02" + ts_option(tsv, 0)
    send(GHOST, gport, TG, port, iss, 0, SYN, 65535, opts)
    synack = sn.wait("tinygram's SYN-ACK", lambda s: s.src == TG and s.dport == gport
                     and s.flags & (SYN | ACK) == SYN | ACK)
    if not synack.sack_ok or synack.tsval is None:
        raise RuntimeError("tinygram did not agree to SACK and timestamps")
    irs = synack.seq
    out["tg_isn"] = irs
    line = b"one line, then FIN\n"
    send(GHOST, gport, TG, port, iss + 1, irs + 1, ACK, 65535, ts_option(tsv + 1, synack.tsval))
    send(GHOST, gport, TG, port, iss + 1, irs + 1, PSH | ACK | FIN, 65535,
         ts_option(tsv + 2, synack.tsval), line)
    fin = sn.wait("tinygram's FIN", lambda s: s.src == TG and s.dport == gport and s.flags & FIN)
    ours = sn.flow(TG, port, GHOST, gport)
    by_seq = {s.seq: s.payload for s in ours if s.payload}  # retransmissions overlap
    echoed = b"".join(by_seq[k] for k in sorted(by_seq, key=lambda q: (q - irs) & 0xFFFFFFFF))
    if echoed != line:
        raise RuntimeError("tinygram echoed %r, sent %r" % (echoed, line))
    una = (fin.seq + len(fin.payload)) & 0xFFFFFFFF  # every byte acknowledged, the FIN not
    rcv = (iss + 2 + len(line)) & 0xFFFFFFFF
    t0 = time.monotonic()
    # Blocks 2^31 past SND.UNA: one starting 2^31 - 1 past it, and one 4 KB
    # block ending 2^31 past it, each on an ACK of every byte but the FIN.
    for k, (left_, right_) in enumerate([(una + (1 << 31) - 1, una + (1 << 31) - 1 + 4096),
                                         (una + (1 << 31) - 4096, una + (1 << 31))]):
        sack = b"\x01\x01\x05\x0a" + struct.pack("!II", left_ & 0xFFFFFFFF, right_ & 0xFFFFFFFF)
        send(GHOST, gport, TG, port, rcv, una, ACK, 65535,
             ts_option(tsv + 3 + k, fin.tsval) + sack)
        time.sleep(0.05)
    time.sleep(1.0)
    after = sn.flow(TG, port, GHOST, gport, since=t0)
    out["segments_after_attack"] = len(after)
    out["fin_retransmissions_after_attack"] = sum(1 for s in after if s.flags & FIN)
    # The legitimate client, while the attacked connection is still open.
    s = legit_conn()
    out["before"] = round_trips(s, "legit", 10)
    s.close()
    # Now the FIN is acknowledged: the attacked connection closes normally.
    send(GHOST, gport, TG, port, rcv, fin.end(), ACK, 65535, ts_option(tsv + 9, fin.tsval))


def mode_ackloop(sn, secs=2.0):
    gport, iss = 40002, 0x2000
    send(GHOST, gport, TG, port, iss, 0, SYN, 65535, struct.pack("!BBH", 2, 4, 1460))
    synack = sn.wait("tinygram's SYN-ACK", lambda s: s.src == TG and s.dport == gport
                     and s.flags & (SYN | ACK) == SYN | ACK)
    irs = synack.seq
    send(GHOST, gport, TG, port, iss + 1, irs + 1, ACK)
    time.sleep(0.2)
    # 500 bytes tinygram takes; from here on the peer behaves as if it had
    # never sent them (a connection desynchronized by one forged segment):
    # every segment from tinygram gets an ACK at the old sequence number.
    send(GHOST, gport, TG, port, iss + 1, irs + 1, PSH | ACK, 65535, b"", b"y" * 500)
    t0 = time.monotonic()
    seen, answered = 0, 0
    while time.monotonic() - t0 < secs:
        flow = sn.flow(TG, port, GHOST, gport, since=t0)
        for _ in flow[seen:]:
            send(GHOST, gport, TG, port, iss + 1, irs + 1, ACK)
            answered += 1
        seen = len(flow)
        time.sleep(0.001)
    out["tg_segments"] = len(sn.flow(TG, port, GHOST, gport, since=t0))
    out["peer_acks"] = answered
    out["loop_s"] = secs
    # An RST at exactly RCV.NXT resets the connection (RFC 5961 3.2).
    send(GHOST, gport, TG, port, iss + 501, 0, RST, 0)


def main():
    try:
        sn = Sniffer()
        time.sleep(0.1)
        {"inject": mode_inject, "tspoison": mode_tspoison, "storm": mode_storm,
         "farsack": mode_farsack, "ackloop": mode_ackloop}[mode](sn)
        s = legit_conn()
        out["second_conn"] = round_trips(s, "second", 5)
        s.close()
        out["ok"] = True
    except (OSError, RuntimeError, KeyError) as e:
        out["ok"] = False
        out["error"] = "%s: %s" % (type(e).__name__, e)
    if "sn" in locals():
        sn.stop = True
    print(json.dumps(out), flush=True)


main()
