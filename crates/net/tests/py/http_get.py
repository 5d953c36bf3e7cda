"""GETs each path on one keep-alive connection (http.client) and prints the
sha256 of all bodies: the curl stand-in where curl is not installed."""
import hashlib, http.client, sys

host, port = sys.argv[1], int(sys.argv[2])
c = http.client.HTTPConnection(host, port, timeout=10)
h = hashlib.sha256()
for path in sys.argv[3:]:
    c.request("GET", path)
    h.update(c.getresponse().read())
c.close()
print(h.hexdigest())
