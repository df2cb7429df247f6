"""Reads systoled's live ECG stream (/api/ecg) and logs each piece with the moment it arrived, a JSON line each.

usage: ecg_client.py URL TOKEN OUTPUT
"""
import http.client
import json
import sys
import time
import urllib.parse

url, token, output = urllib.parse.urlparse(sys.argv[1]), sys.argv[2], open(sys.argv[3], "w")
connection = http.client.HTTPConnection(url.hostname, url.port)
connection.request("GET", url.path, headers={"Authorization": "Bearer " + token})
response = connection.getresponse()
data = []
while True:
    line = response.fp.readline()
    if not line:
        break
    now = time.time()
    line = line.decode().rstrip("\n")
    if line.startswith("data:"):
        data.append(line[5:])
    elif line == "" and data:
        piece = json.loads("".join(data))
        output.write(json.dumps({"received": now, "sensor": piece["sensor"], "start": piece["start"],
                                 "rate": piece["rate"], "uv": piece["uv"][:8], "count": len(piece["uv"])}) + "\n")
        output.flush()
        data = []
