"""Doupnik's web server (draft section 3) on the kernel's TCP: each GET is
answered with two short writes (server line, headers) and the body in 4 KB
writes. Nagle stays on unless argv[4] is "nodelay". Serves one connection,
exits when the client closes or after argv[5] seconds."""
import socket, sys

addr, port, body_len = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
nodelay = sys.argv[4] == "nodelay"
limit = float(sys.argv[5])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, port))
ls.listen(1)
ls.settimeout(limit)
print("listening", flush=True)
c, _ = ls.accept()
c.settimeout(limit)
if nodelay:
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
body = bytes(i % 251 for i in range(body_len))
buf = b""
while True:
    while b"\r\n\r\n" not in buf:
        chunk = c.recv(65536)
        if not chunk:
            sys.exit(0)
        buf += chunk
    _, buf = buf.split(b"\r\n\r\n", 1)
    c.sendall(b"HTTP/1.1 200 OK\r\nServer: kernel\r\n")
    c.sendall(b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % body_len)
    for i in range(0, body_len, 4096):
        c.sendall(body[i:i + 4096])
