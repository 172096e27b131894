"""A minimal HTTP/2 object server (TLS, ALPN "h2" only) for the HTTP/2 tests, built on the `h2` protocol
library: every GET answers with the same body (its MD5 as the ETag), sent in DATA frames as the client's flow
control windows allow. Uses the certificate in this folder (see tls_server.py).

Usage: h2_server.py BODY_SIZE — prints the port it listens on, then `connection PROTOCOL` for every TLS
connection (the protocol ALPN chose; a client that does not offer h2 is refused) and `stream METHOD PATH` for
every request, and serves until stdin closes.
"""

import hashlib
import os
import socket
import ssl
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = int(sys.argv[1])
BODY = bytes((i * 31 + 7) % 251 for i in range(SIZE))
ETAG = '"' + hashlib.md5(BODY).hexdigest() + '"'
lock = threading.Lock()

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(HERE, "server.pem"), os.path.join(HERE, "server.key"))
context.set_alpn_protocols(["h2"])


def report(line):
    with lock:
        print(line, flush=True)


def serve(sock):
    try:
        tls = context.wrap_socket(sock, server_side=True)
    except (ssl.SSLError, OSError):
        report("connection refused-handshake")
        return
    protocol = tls.selected_alpn_protocol()
    report("connection %s" % protocol)
    if protocol != "h2":
        tls.close()
        return
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    tls.sendall(conn.data_to_send())
    sending = {}  # stream id -> offset of the next body byte
    try:
        while True:
            data = tls.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = dict(event.headers)
                    report("stream %s %s" % (headers[":method"], headers[":path"]))
                    head = [(":status", "200"), ("content-length", str(SIZE)), ("etag", ETAG)]
                    if headers[":method"] == "HEAD":
                        conn.send_headers(event.stream_id, head, end_stream=True)
                    else:
                        conn.send_headers(event.stream_id, head)
                        sending[event.stream_id] = 0
                elif isinstance(event, h2.events.StreamReset):
                    sending.pop(event.stream_id, None)
            for stream_id in list(sending):
                offset = sending[stream_id]
                while offset < SIZE:
                    n = min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size, SIZE - offset)
                    if n <= 0:
                        break  # wait for the client's WINDOW_UPDATE
                    conn.send_data(stream_id, BODY[offset : offset + n], end_stream=offset + n == SIZE)
                    offset += n
                if offset == SIZE:
                    del sending[stream_id]
                else:
                    sending[stream_id] = offset
            out = conn.data_to_send()
            if out:
                tls.sendall(out)
    except (OSError, h2.exceptions.ProtocolError):
        pass
    finally:
        tls.close()


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)


def accept():
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=serve, args=(sock,), daemon=True).start()


threading.Thread(target=accept, daemon=True).start()
print(listener.getsockname()[1], flush=True)
sys.stdin.read()  # the test closes stdin (or exits) to stop the server
