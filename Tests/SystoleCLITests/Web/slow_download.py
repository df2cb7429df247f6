"""Downloads a file from systoled's web server slowly, as a client on a poor link would.

usage: slow_download.py URL --bearer TOKEN --out FILE --ready FILE [--chunk BYTES] [--pause SECONDS]
Reads the body CHUNK bytes at a time with PAUSE seconds between reads, writes it to FILE, creates the --ready file
once the first bytes arrived, and prints JSON: {"status", "bytes", "headers"}.
"""
import argparse
import http.client
import json
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--bearer", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--chunk", type=int, default=32 * 1024)
    parser.add_argument("--pause", type=float, default=0.05)
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
            out.write(data)
            count += len(data)
            time.sleep(args.pause)
    print(json.dumps({
        "status": response.status,
        "bytes": count,
        "headers": {name.lower(): value for name, value in response.getheaders()},
    }))


main()
