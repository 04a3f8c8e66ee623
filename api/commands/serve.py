"""``tableref serve``: the referee service (FastAPI under uvicorn)."""

from __future__ import annotations

import argparse
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0 picks a free one); binding first lets us print the real URL."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"tableref: error: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run_app(app: FastAPI, sock: socket.socket, *, duration_s: float | None = None, log_level: str = "info",
            on_started: Callable[[], None] | None = None) -> int:
    """Serve ``app`` on ``sock`` until Ctrl-C, or for ``duration_s`` seconds."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, ws="auto", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)

    def watch() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        start = time.monotonic()  # the duration counts serving time, not start-up
        if server.started and on_started is not None:
            on_started()
        if duration_s is not None:
            time.sleep(max(0.0, duration_s - (time.monotonic() - start)))
            server.should_exit = True

    threading.Thread(target=watch, name="serve-watch", daemon=True).start()
    server.run(sockets=[sock])
    return 0 if server.started else 1


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}"


def print_token(app: FastAPI) -> None:
    if app.state.token_generated:
        print(f"token (for endpoints that change things; set TABLEREF_TOKEN to fix it): {app.state.token}",
              flush=True)
    else:
        print("token: from TABLEREF_TOKEN", flush=True)


def handle(args: argparse.Namespace) -> int:
    from api.app import create_app
    from api.settings import Settings

    overrides = {}
    if args.db is not None:
        overrides["db_path"] = Path(args.db)
    settings = Settings(**overrides)
    app = create_app(settings)
    sock = bind_socket(args.host, args.port)
    base = url_of(sock)

    def started() -> None:
        print(f"tableref referee service on {base}  (umpire page: {base}/umpire, API docs: {base}/docs)",
              flush=True)
        print(f"database: {settings.db_path}", flush=True)
        print_token(app)

    return run_app(app, sock, duration_s=args.duration, log_level=args.log_level, on_started=started)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="run the referee service (HTTP API, WebSocket, umpire page)",
                              description="Run the referee service. Settings come from TABLEREF_* environment "
                                          "variables (TABLEREF_TOKEN, TABLEREF_DB_PATH, ...).")
    p.add_argument("--host", default=os.environ.get("TABLEREF_HOST", "127.0.0.1"),
                   help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--db", default=None, help="SQLite file (default TABLEREF_DB_PATH or var/tableref.sqlite)")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop by itself after S seconds")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(handler=handle)
