"""Downloads a file from systoled's web server slowly, as a client on a poor link would.

usage: slow_download.py URL --bearer TOKEN --out FILE --ready FILE [--hold FILE] [--chunk BYTES] [--pause SECONDS]
Reads the body CHUNK bytes at a time with PAUSE seconds between reads, writes it to FILE, creates the --ready file
once the first bytes arrived, and prints JSON: {"status", "bytes", "headers"}. With --hold, stops reading after
the first bytes until that file exists (at most 60 s), so the server's sending stays under way meanwhile.
"""
import argparse
import http.client
import json
import os
import time
import urllib.parse


def wait_for(path, seconds):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--bearer", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--chunk", type=int, default=32 * 1024)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--hold")
    args = parser.parse_args()
    parts = urllib.parse.urlsplit(args.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request("GET", parts.path, headers={"Authorization": "Bearer " + args.bearer})
    response = connection.getresponse()
    count = 0
    with open(args.out, "wb") as out:
        while True:
            data = response.read(args.chunk)
            if not data:
                break
            if count == 0:
                open(args.ready, "w").close()
                if args.hold:
                    wait_for(args.hold, 60)
            out.write(data)
            count += len(data)
            time.sleep(args.pause)
    print(json.dumps({
        "status": response.status,
        "bytes": count,
        "headers": {name.lower(): value for name, value in response.getheaders()},
    }))


main()
