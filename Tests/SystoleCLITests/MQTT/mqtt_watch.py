"""Subscribes to every topic of an MQTT broker with paho-mqtt (the Eclipse project's client) and prints what came.

usage: mqtt_watch.py HOST PORT USER PASSWORD SECONDS [--until-live TOPIC] [--until TOPIC=PAYLOAD]
                     [--publish TOPIC=PAYLOAD]
Prints JSON: [{"topic", "payload" (text), "retain", "time"}] and "connected": whether the broker let us in.
--until-live TOPIC ends early once a message that is not retained came on TOPIC after a retained one on a
".../heart_rate/config" or ".../battery/config" topic (a republished discovery and a live value).
--until TOPIC=PAYLOAD ends early once that payload came on that topic.
--publish TOPIC=PAYLOAD publishes PAYLOAD retained (QoS 1) on TOPIC first, and watches for SECONDS.
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
    parser.add_argument("--publish")
    args = parser.parse_args()

    received = []
    done = threading.Event()
    connected = threading.Event()
    state = {"config": False}

    def on_connect(client, userdata, flags, reason, properties):
        if not reason.is_failure:
            connected.set()
            client.subscribe("#", qos=1)

    def on_message(client, userdata, message):
        payload = message.payload.decode("utf-8", "replace")
        received.append({"topic": message.topic, "payload": payload, "retain": bool(message.retain),
                         "time": time.time()})
        if message.retain and message.topic.endswith(("/battery/config", "/heart_rate/config")):
            state["config"] = True
        if args.until_live and state["config"] and message.topic == args.until_live and not message.retain:
            done.set()
        if args.until:
            topic, _, wanted = args.until.partition("=")
            if message.topic == topic and payload == wanted:
                done.set()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"watch-{time.time()}")
    client.username_pw_set(args.user, args.password)
    client.on_connect = on_connect
    client.on_message = on_message
    client.connect(args.host, args.port, keepalive=30)
    client.loop_start()
    if args.publish:
        topic, _, payload = args.publish.partition("=")
        connected.wait(10)
        client.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)
    done.wait(args.seconds)
    client.loop_stop()
    client.disconnect()
    print(json.dumps({"connected": connected.is_set(), "messages": received}))


if __name__ == "__main__":
    main()
