"""A minimal OTLP/HTTP traces receiver for tests: decodes the official opentelemetry-proto messages."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


class Receiver:
    def __init__(self, port: int = 0) -> None:
        self.spans: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":  # collectors compress by default
                    body = gzip.decompress(body)
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                with outer.lock:
                    outer.bodies.append(body)
                    for rs in req.resource_spans:
                        resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
                        for ss in rs.scope_spans:
                            for span in ss.spans:
                                outer.spans.append(
                                    {
                                        "name": span.name,
                                        "kind": span.kind,
                                        "trace_id": span.trace_id.hex(),
                                        "span_id": span.span_id.hex(),
                                        "parent_span_id": span.parent_span_id.hex(),
                                        "start": span.start_time_unix_nano,
                                        "end": span.end_time_unix_nano,
                                        "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
                                        "status": (span.status.code, span.status.message),
                                        "resource": resource,
                                        "scope": ss.scope.name,
                                    }
                                )
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
