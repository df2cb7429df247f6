"""Subscribes to every topic of an MQTT broker with paho-mqtt (the Eclipse project's client) and prints what came.

usage: mqtt_watch.py HOST PORT USER PASSWORD SECONDS [--until-live TOPIC] [--until TOPIC=PAYLOAD]
                     [--until-count TOPIC=N] [--publish TOPIC=PAYLOAD] [--ready FILE]
Prints JSON: "messages": [{"topic", "payload" (text), "retain", "time"}], "connected": whether the broker let us
in, and "subscribed": when the subscription to every topic was granted (the watch's SECONDS count from then, so
a machine slow to start Python does not shorten it; at most 60 s are given to get there).
--until-live TOPIC ends early once a message that is not retained came on TOPIC (systole/sensor/ID) after one on
that sensor's ".../systole_ID/heart_rate/config" or ".../battery/config" topic (its discovery, retained or live,
and a live value).
--until TOPIC=PAYLOAD ends early once that payload came on that topic.
--until-count TOPIC=N ends early once N messages that are not retained came on TOPIC.
--publish TOPIC=PAYLOAD publishes PAYLOAD retained (QoS 1) on TOPIC first, and watches for SECONDS.
--ready FILE creates FILE once subscribed, so a test can act knowing the watch sees what follows.
"""
import argparse
import json
import threading
import time

import paho.mqtt.client as mqtt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("user")
    parser.add_argument("password")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--until-live")
    parser.add_argument("--until")
    parser.add_argument("--until-count")
    parser.add_argument("--publish")
    parser.add_argument("--ready")
    args = parser.parse_args()

    received = []
    done = threading.Event()
    connected = threading.Event()
    subscribed = threading.Event()
    state = {"config": False, "counted": 0, "subscribed": None}

    def on_connect(client, userdata, flags, reason, properties):
        if not reason.is_failure:
            connected.set()
            client.subscribe("#", qos=1)

    def on_subscribe(client, userdata, mid, reasons, properties):
        state["subscribed"] = time.time()
        if args.ready:
            open(args.ready, "w").close()
        subscribed.set()

    def on_message(client, userdata, message):
        payload = message.payload.decode("utf-8", "replace")
        received.append({"topic": message.topic, "payload": payload, "retain": bool(message.retain),
                         "time": time.time()})
        # A config comes retained to a watcher that subscribed after it was published, live to one already there.
        sensor = "/systole_" + (args.until_live or "").rsplit("/", 1)[-1] + "/"
        if sensor in message.topic and message.topic.endswith(("/battery/config", "/heart_rate/config")):
            state["config"] = True
        if args.until_live and state["config"] and message.topic == args.until_live and not message.retain:
            done.set()
        if args.until:
            topic, _, wanted = args.until.partition("=")
            if message.topic == topic and payload == wanted:
                done.set()
        if args.until_count:
            topic, _, count = args.until_count.partition("=")
            if message.topic == topic and not message.retain:
                state["counted"] += 1
                if state["counted"] >= int(count):
                    done.set()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"watch-{time.time()}")
    client.username_pw_set(args.user, args.password)
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect(args.host, args.port, keepalive=30)
    client.loop_start()
    if args.publish:
        topic, _, payload = args.publish.partition("=")
        connected.wait(60)
        client.publish(topic, payload, qos=1, retain=True).wait_for_publish(60)
    subscribed.wait(60)
    done.wait(args.seconds)
    client.loop_stop()
    client.disconnect()
    print(json.dumps({"connected": connected.is_set(), "subscribed": state["subscribed"], "messages": received}))


if __name__ == "__main__":
    main()
