#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A test OTLP profiles receiver on 127.0.0.1 that records what it gets.

  otlp_receiver.py http|grpc PORT OUTDIR [--fail N] [--fail-code C]
                   [--retry-after S] [--max-seconds T] [--tls CERT KEY]

http: POST /v1development/profiles (Python's http.server).
grpc: /opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export
      served by grpcio (Debian's python3-grpcio, for /usr/bin/python3) with a
      generic handler: the real gRPC stack, HTTP/2 and all.

Request n (from 1) is saved as OUTDIR/req-n.bin (uncompressed body) and
OUTDIR/req-n.hdr (headers or metadata, one "key: value" a line).  The first
N requests fail: HTTP C (default 503, with Retry-After S when given) or gRPC
status C (default UNAVAILABLE).  PORT 0 binds any port; the port is written
to OUTDIR/port once listening.  Exits by itself after T seconds (default 60).
With --tls it serves HTTPS / gRPC over TLS (ALPN h2) with that certificate.
"""
import argparse
import gzip
import os
import sys
import threading
import time

EXPORT = ("/opentelemetry.proto.collector.profiles.v1development."
          "ProfilesService/Export")

lock = threading.Lock()
count = [0]


def record(outdir, body, headers):
    with lock:
        count[0] += 1
        n = count[0]
    with open(os.path.join(outdir, "req-%d.hdr" % n), "w") as f:
        for k, v in headers:
            f.write("%s: %s\n" % (k.lower(), v))
    tmp = os.path.join(outdir, ".req-%d.bin" % n)
    with open(tmp, "wb") as f:
        f.write(body)
    os.rename(tmp, os.path.join(outdir, "req-%d.bin" % n))
    return n


def announce(outdir, port):
    tmp = os.path.join(outdir, ".port")
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, os.path.join(outdir, "port"))


def serve_http(a):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != "/v1development/profiles":
                return self.reply(404, b"not found")
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            n = record(a.outdir, body, self.headers.items())
            if n <= a.fail:
                extra = {}
                if a.retry_after is not None:
                    extra["Retry-After"] = str(a.retry_after)
                return self.reply(a.fail_code or 503, b"try later", extra)
            self.reply(200, b"", {"Content-Type": "application/x-protobuf"})

        def reply(self, code, body, extra=None):
            self.send_response(code)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), H)
    if a.tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    announce(a.outdir, srv.server_address[1])
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def serve_grpc(a):
    from concurrent import futures
    import grpc

    code = grpc.StatusCode.UNAVAILABLE
    if a.fail_code:
        code = [c for c in grpc.StatusCode if c.value[0] == a.fail_code][0]

    def export(request, context):
        n = record(a.outdir, request, context.invocation_metadata())
        if n <= a.fail:
            context.abort(code, "test receiver: failing on purpose")
        return b""  # an empty ExportProfilesServiceResponse

    class Handler(grpc.GenericRpcHandler):
        def service(self, details):
            if details.method == EXPORT:
                # No (de)serializers: the handler sees the raw message bytes.
                return grpc.unary_unary_rpc_method_handler(export)
            return None

    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2),
                      handlers=(Handler(),))
    if a.tls:
        creds = grpc.ssl_server_credentials(
            [(open(a.tls[1], "rb").read(), open(a.tls[0], "rb").read())])
        port = srv.add_secure_port("127.0.0.1:%d" % a.port, creds)
    else:
        port = srv.add_insecure_port("127.0.0.1:%d" % a.port)
    srv.start()
    announce(a.outdir, port)
    return srv


def main():
    p = argparse.ArgumentParser()
    p.add_argument("transport", choices=("http", "grpc"))
    p.add_argument("port", type=int)
    p.add_argument("outdir")
    p.add_argument("--fail", type=int, default=0)
    p.add_argument("--fail-code", type=int, default=0)
    p.add_argument("--retry-after", type=int)
    p.add_argument("--max-seconds", type=float, default=60)
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = p.parse_args()
    keep = serve_http(a) if a.transport == "http" else serve_grpc(a)
    time.sleep(a.max_seconds)
    del keep
    sys.exit(0)


main()
