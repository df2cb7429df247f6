"""Reads systoled's /metrics with the Prometheus project's own text-format parser (prometheus-client) and prints
every sample as JSON: [{"name", "labels", "value", "type"}]. Fails if the exposition does not parse.

usage: parse_metrics.py URL TOKEN
"""
import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main():
    url, token = sys.argv[1], sys.argv[2]
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=20) as response:
        content_type = response.headers.get("Content-Type", "")
        if not content_type.startswith("text/plain"):
            raise SystemExit("unexpected content type " + content_type)
        text = response.read().decode("utf-8")
    samples = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.append({
                "name": sample.name,
                "labels": sample.labels,
                "value": sample.value,
                "type": family.type,
            })
    print(json.dumps(samples))


if __name__ == "__main__":
    main()
