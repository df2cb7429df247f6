"""Clients that try to hold systoled's web server without its token, and the token holder beside them.

usage: slow_clients.py HOST PORT --bearer TOKEN [--idle N] [--slow-body N] [--slow-head N] [--deadline S]
From 127.0.0.2 it opens N idle connections (nothing sent); from 127.0.0.3 N that send a POST head with a large
Content-Length and then one body byte every 2 s; from 127.0.0.4 N that send a request head one byte every 2 s.
While they try, the token holder (127.0.0.1) asks for /api/status. Every connection is watched until the server
closes it or the deadline passes. Prints JSON: per kind, how many the server closed, how many it answered 401 (the
slow bodies), how many were still open at the deadline, and the holder's status.
"""
import argparse
import json
import select
import socket
import sys
import time


def open_from(source, host, port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(5)
    try:
        sock.connect((host, port))
    except OSError:
        sock.close()
        return None
    sock.setblocking(False)
    return sock


def holder_status(host, port, token):
    sock = socket.create_connection((host, port), timeout=20)
    sock.sendall(
        f"GET /api/status HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n".encode()
    )
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--bearer", required=True)
    parser.add_argument("--idle", type=int, default=0)
    parser.add_argument("--slow-body", type=int, default=0)
    parser.add_argument("--slow-head", type=int, default=0)
    parser.add_argument("--deadline", type=float, default=60)
    args = parser.parse_args()

    clients = []  # [kind, socket, pending bytes to dribble, received bytes, closed]
    head = f"GET / HTTP/1.1\r\nHost: {args.host}\r\nUser-Agent: slow\r\nAccept: */*\r\n\r\n".encode()
    for kind, source, count in (
        ("idle", "127.0.0.2", args.idle),
        ("slowBody", "127.0.0.3", args.slow_body),
        ("slowHead", "127.0.0.4", args.slow_head),
    ):
        for _ in range(count):
            sock = open_from(source, args.host, args.port)
            if sock is None:
                clients.append([kind, None, b"", b"", True])
                continue
            pending = b""
            if kind == "slowBody":
                sock.send(
                    f"POST /api/status HTTP/1.1\r\nHost: {args.host}\r\nContent-Length: 10000000\r\n\r\n".encode()
                )
                pending = b"x" * 10000
            elif kind == "slowHead":
                pending = head
            clients.append([kind, sock, pending, b"", False])

    holder = holder_status(args.host, args.port, args.bearer)
    deadline = time.monotonic() + args.deadline
    next_drip = time.monotonic()
    while time.monotonic() < deadline and not all(client[4] for client in clients):
        now = time.monotonic()
        if now >= next_drip:
            next_drip = now + 2
            for client in clients:
                if not client[4] and client[2]:
                    try:
                        client[1].send(client[2][:1])
                        client[2] = client[2][1:]
                    except OSError:
                        client[4] = True
        sockets = [client[1] for client in clients if not client[4]]
        readable, _, _ = select.select(sockets, [], [], 0.5)
        for client in clients:
            if client[1] in readable:
                try:
                    chunk = client[1].recv(65536)
                except OSError:
                    chunk = b""
                if chunk:
                    client[3] += chunk
                else:
                    client[4] = True
    result = {"holder": holder}
    for kind in ("idle", "slowBody", "slowHead"):
        mine = [client for client in clients if client[0] == kind]
        result[kind] = {
            "closed": sum(1 for client in mine if client[4]),
            "open": sum(1 for client in mine if not client[4]),
            "unauthorized": sum(1 for client in mine if client[3].startswith(b"HTTP/1.1 401")),
        }
    for client in clients:
        if client[1] is not None:
            client[1].close()
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
