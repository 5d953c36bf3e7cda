"""Doupnik's web client (draft section 3): keep-alive GETs, one at a time,
each response read in full before the next request. Bounded by a request
count and a time limit. Prints one JSON line: requests, seconds, rps, and
slow: how many requests took 30 ms or more (a delayed-ACK stall is 40 ms or
more, however idle the machine; a request that flows takes a millisecond)."""
import json, socket, sys, time

host, port = sys.argv[1], int(sys.argv[2])
max_requests, max_seconds = int(sys.argv[3]), float(sys.argv[4])
s = socket.create_connection((host, port), timeout=10)
req = b"GET / HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n"
buf = b""
done = 0
start = time.monotonic()
slow = 0
while done < max_requests and time.monotonic() - start < max_seconds:
    t0 = time.monotonic()
    s.sendall(req)
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("server closed mid-response")
        buf += chunk
    head, buf = buf.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(buf) < length:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("server closed mid-body")
        buf += chunk
    buf = buf[length:]
    done += 1
    if time.monotonic() - t0 >= 0.030:
        slow += 1
elapsed = time.monotonic() - start
s.close()
print(json.dumps({"requests": done, "seconds": elapsed, "rps": done / elapsed, "slow": slow}))
