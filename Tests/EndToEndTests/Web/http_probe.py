"""Requests to systoled's web server, as a browser or a script would send them, without following redirects.

usage: http_probe.py URL [--bearer TOKEN] [--cookie NAME=VALUE] [--events N [--ready FILE]] [--streams N [--sources K]]
Prints JSON: {"status", "headers", "body"} (the body's first 64 KiB as text), or with --events the first N
server-sent events' data parsed as JSON (FILE is created once the first arrived), or with --streams the statuses of N event streams opened at once (all kept
open until every one answered; from K loopback addresses in turn, 127.0.0.1 to 127.0.0.K, since the server takes only
so many connections from one address; 0 for a connection it closed unanswered).
"""
import argparse
import http.client
import json
import sys
import urllib.parse


def connect(url, source=None):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(
        parts.hostname, parts.port, timeout=20, source_address=(source, 0) if source else None
    )
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return connection, path


def headers(args):
    result = {}
    if args.bearer:
        result["Authorization"] = "Bearer " + args.bearer
    if args.cookie:
        result["Cookie"] = args.cookie
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--bearer")
    parser.add_argument("--cookie")
    parser.add_argument("--events", type=int, default=0)
    parser.add_argument("--streams", type=int, default=0)
    parser.add_argument("--sources", type=int, default=1)
    parser.add_argument("--ready")
    args = parser.parse_args()

    if args.streams:
        opened = []
        statuses = []
        for index in range(args.streams):
            connection, path = connect(args.url, f"127.0.0.{index % args.sources + 1}")
            try:
                connection.request("GET", path, headers=headers(args))
                response = connection.getresponse()
            except (http.client.HTTPException, OSError):
                statuses.append(0)
                continue
            statuses.append(response.status)
            opened.append((connection, response))
        print(json.dumps({"statuses": statuses}))
        return

    connection, path = connect(args.url)
    connection.request("GET", path, headers=headers(args))
    response = connection.getresponse()
    if args.events and response.status != 200:
        print(json.dumps({"status": response.status, "events": []}))
        return
    if args.events:
        events = []
        data = []
        while len(events) < args.events:
            line = response.fp.readline().decode("utf-8")
            if line == "":
                break
            line = line.rstrip("\n")
            if line.startswith("data: "):
                data.append(line[len("data: "):])
            elif line == "" and data:
                events.append(json.loads("\n".join(data)))
                data = []
                if args.ready and len(events) == 1:
                    open(args.ready, "w").close()
        print(json.dumps({"status": response.status, "events": events}))
        return
    body = response.read(65536)
    print(json.dumps({
        "status": response.status,
        "headers": {k.lower(): v for k, v in response.getheaders()},
        "body": body.decode("utf-8", "replace"),
    }))


if __name__ == "__main__":
    sys.exit(main())
