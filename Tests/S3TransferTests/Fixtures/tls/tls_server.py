"""A minimal HTTPS object server for the TLS tests: every GET answers with the same body (its MD5 as the ETag),
over HTTP/1.1 keep-alive, with the certificate in this folder (issued by ca.pem, for 127.0.0.1 and localhost).

The certificates are test-only (the CA's key was discarded): made with
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 36500 -subj "/CN=CloudAssets test CA"
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 36500
      -extfile <(printf "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")

Usage: tls_server.py BODY_SIZE — prints the port it listens on, then a line for every connection it accepts
(before the TLS handshake, so refused handshakes count too), and serves until stdin closes.
"""

import hashlib
import http.server
import os
import ssl
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = int(sys.argv[1])
BODY = bytes((i * 31 + 7) % 251 for i in range(SIZE))
ETAG = '"' + hashlib.md5(BODY).hexdigest() + '"'


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("ETag", ETAG)
        self.end_headers()
        self.wfile.write(BODY)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("ETag", ETAG)
        self.end_headers()

    def log_message(self, *args):
        pass


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(HERE, "server.pem"), os.path.join(HERE, "server.key"))


class Server(http.server.ThreadingHTTPServer):
    def get_request(self):
        sock, address = self.socket.accept()
        print("connection", flush=True)
        return context.wrap_socket(sock, server_side=True), address


server = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
sys.stdin.read()  # the test closes stdin (or exits) to stop the server
server.shutdown()
