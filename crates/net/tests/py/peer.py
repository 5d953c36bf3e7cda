"""The kernel's side of the real-wire tests: one TCP socket, bounded in time.

    peer.py listen ADDR PORT ACTION LIMIT_S
    peer.py connect ADDR PORT ACTION LIMIT_S

ACTION: sink (read to EOF, then close), source:N (write N random bytes, then
close and read to EOF), echo:TEXT (write TEXT, read it back, close, read to
EOF), abort:TEXT (write TEXT, read it back, then close with a RST), hold (read
until the peer resets or closes). Prints one JSON line with what happened and
the kernel's TCP_INFO after the handshake (negotiated options, MSS), the wall
clock when the transfer started and ended; source also reports the kernel's
retransmissions (tcpi_total_retrans) at the end. A listener first prints
{"listening": PORT}, and {"accepted": PORT} once a connection is set up.
With PEER_GATE=FILE in the environment, a connecting peer prints
{"connected": PORT} and waits for FILE to exist before it starts."""
import hashlib, json, os, socket, struct, sys, time

role, addr, port, action, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
out = {"bytes_in": 0, "bytes_out": 0}


def tcp_info(s):
    b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    opts = b[5]
    return {
        "timestamps": bool(opts & 1), "sack": bool(opts & 2), "wscale": bool(opts & 4),
        "snd_wscale": b[6] & 0x0F, "rcv_wscale": b[6] >> 4,
        "snd_mss": struct.unpack_from("I", b, 16)[0], "rcv_mss": struct.unpack_from("I", b, 20)[0],
    }


def total_retrans(s):
    b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return struct.unpack_from("I", b, 100)[0]


def read_to_eof(s, h):
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            return
        h.update(chunk)
        out["bytes_in"] += len(chunk)


try:
    if role == "listen":
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # IP_FREEBIND: the address appears when tinygram configures its device.
        ls.setsockopt(socket.SOL_IP, 15, 1)
        ls.bind((addr, port))
        ls.listen(1)
        ls.settimeout(limit)
        print(json.dumps({"listening": port}), flush=True)
        s, _ = ls.accept()
        # The handshake is complete at both ends: a test may now act on the
        # connection (the final JSON line still comes last).
        print(json.dumps({"accepted": port}), flush=True)
    else:
        s = socket.create_connection((addr, port), timeout=limit)
        gate = os.environ.get("PEER_GATE")
        if gate:
            # Connected; start only once the test opens the gate (creates
            # the file), so that several peers are connected at once.
            print(json.dumps({"connected": port}), flush=True)
            deadline = time.monotonic() + limit
            while not os.path.exists(gate):
                if time.monotonic() > deadline:
                    raise socket.timeout("the gate never opened")
                time.sleep(0.01)
    s.settimeout(limit)
    out["tcp_info"] = tcp_info(s)
    h_in, h_out = hashlib.sha256(), hashlib.sha256()
    start = time.monotonic()
    out["started"] = time.time()
    if action == "sink":
        read_to_eof(s, h_in)
        s.close()
    elif action.startswith("source:"):
        n = int(action.split(":")[1])
        block = os.urandom(1 << 20)
        while out["bytes_out"] < n:
            b = block[: min(len(block), n - out["bytes_out"])]
            s.sendall(b)
            h_out.update(b)
            out["bytes_out"] += len(b)
        s.shutdown(socket.SHUT_WR)
        read_to_eof(s, h_in)
        out["total_retrans"] = total_retrans(s)
        s.close()
    elif action.startswith("echo:") or action.startswith("abort:"):
        text = action.split(":", 1)[1].encode()
        s.sendall(text)
        out["bytes_out"] = len(text)
        got = b""
        while len(got) < len(text):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            got += chunk
        out["echoed"] = got.decode(errors="replace")
        if action.startswith("abort:"):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        else:
            s.shutdown(socket.SHUT_WR)
            read_to_eof(s, h_in)
            s.close()
    elif action == "hold":
        read_to_eof(s, h_in)
        s.close()
    out["seconds"] = time.monotonic() - start
    out["ended"] = time.time()
    out["sha256_in"] = h_in.hexdigest()
    out["sha256_out"] = h_out.hexdigest()
except ConnectionResetError:
    out["error"] = "reset"
except ConnectionRefusedError:
    out["error"] = "refused"
except socket.timeout:
    out["error"] = "timeout"
print(json.dumps(out), flush=True)
