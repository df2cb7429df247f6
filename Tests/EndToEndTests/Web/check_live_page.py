"""systoled's web page and overlay in a real headless Chromium (Debian's, driven by Playwright).

usage: check_live_page.py live BASE TOKEN EMIT_LOG SENSOR SHOTS SECONDS
       check_live_page.py finished BASE TOKEN WORKOUT_ID SHOTS
       check_live_page.py ecg BASE TOKEN SHOTS

live: an address with a token no header can carry (a mistyped one) makes the page ask for its token and keep none;
the token in the address moves into the page's storage and leaves the address; no cookie is set, and a page
on another port of the same host gets neither a cookie nor the token; a sensor name made of HTML shows as text;
the bpm shown follows every notification the simulator sent in SECONDS (its emit log), each on the page within 5 s
(recorded by the page itself, so a busy machine cannot hide a value from the check); the chart draws; a reload mid-workout resumes the chart and the elapsed
time; the overlay's background is transparent in its screenshot. finished: the workouts list links the workout, its
page draws the chart and the zones, and its FIT export downloads. ecg: the live page's ECG card appears with the
sensor's address, its canvas draws a trace (pixels other than the background) that moves from one moment to the
next. Prints a JSON summary; exits non-zero on a failure.
Screenshots go into SHOTS.
"""
import http.server
import io
import json
import socket
import sys
import threading
import time

from PIL import Image
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 412, "height": 915}


def fail(message):
    print(json.dumps({"failure": message}))
    sys.exit(1)


def bpm_of(payload_hex):
    payload = bytes.fromhex(payload_hex)
    return payload[1] | (payload[2] << 8) if payload[0] & 1 else payload[1]


def seconds_of(clock):
    parts = [int(p) for p in clock.split(":")]
    value = 0
    for part in parts:
        value = value * 60 + part
    return value


def wait_until(condition, what, timeout=60.0):
    """Polls from here: the pages' Content-Security-Policy forbids the string evaluation wait_for_function uses."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    fail("timed out waiting for " + what)


def shows_bpm(page):
    return (page.text_content("#bpm") or "").isdigit()


def chart_points(page):
    return int(page.get_attribute("#chart", "data-points") or "0")


def emitted_by(emit_log, sensor):
    emitted = []
    with open(emit_log) as log:
        for line in log:
            entry = json.loads(line)
            if entry["sensor"] == sensor and not entry.get("malformed"):
                emitted.append((entry["unix"], bpm_of(entry["payload"])))
    return emitted


# The page records every value #bpm shows, with when (a MutationObserver: reading the page from here, a busy machine
# could miss a value shown for less than a second). Evaluated as a function, which the page's CSP allows.
RECORD_SHOWN = """() => {
    const bpm = document.getElementById("bpm");
    window.systoleShown = [[Date.now() / 1000, bpm.textContent]];
    new MutationObserver(() => window.systoleShown.push([Date.now() / 1000, bpm.textContent]))
        .observe(bpm, {childList: true, characterData: true, subtree: true});
}"""

# How late a value may show and still count as live: far more than the page takes, as little as a busy machine allows.
LIVE_WITHIN = 5.0


def shown_within(shown, unix, bpm):
    """Whether `bpm` was on the page at some moment from `unix` to LIVE_WITHIN s later (shown: [(since, text)])."""
    for index, (since, text) in enumerate(shown):
        until = shown[index + 1][0] if index + 1 < len(shown) else float("inf")
        if text == str(bpm) and since <= unix + LIVE_WITHIN and until >= unix:
            return True
    return False


def other_port_sees(page, token):
    """Opens a page on another port of the host (a service beside systoled) and returns what reached it of the
    token: the request headers that carry a cookie or the token."""
    seen = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.extend(f"{k}: {v}" for k, v in self.headers.items() if k.lower() == "cookie" or token in v)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"another service")

        def log_message(self, *args):
            pass

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = http.server.HTTPServer(("127.0.0.1", port), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        other = page.context.new_page()
        other.goto(f"http://127.0.0.1:{port}/")
        other.close()
    finally:
        server.shutdown()
    return seen


def live(page, base, token, emit_log, sensor, shots, seconds):
    # A mistyped address (a token no header can carry): the page says the token is needed, and keeps none of it.
    page.goto(f"{base}/#token=bad%0Atok%C3%A9n")
    wait_until(lambda: "needs its token" in (page.text_content("#connection") or ""), "the page asking for its token")
    if page.evaluate("() => localStorage.getItem('systole-token')"):
        fail("a token no header can carry was kept")
    page.goto(f"{base}/?token={token}")
    wait_until(lambda: "token" not in page.url, "the token out of the address")
    wait_until(lambda: shows_bpm(page), "a bpm on the page")
    cookies = page.context.cookies()
    if cookies:
        fail(f"the page set cookies, which the browser sends to every port of the host: {cookies}")
    leaked = other_port_sees(page, token)
    if leaked:
        fail(f"a service on another port of the host got: {leaked}")
    page.evaluate(RECORD_SHOWN)
    start = time.time()
    # The strap's notifications of `seconds`, each shown on the page (waited for, as long as a busy machine needs).
    time.sleep(seconds)
    end = time.time()
    checked = [e for e in emitted_by(emit_log, sensor) if start + 0.5 <= e[0] <= end]
    if len(checked) < seconds - 2:
        fail(f"only {len(checked)} notifications in the window of {seconds} s")

    def late():
        shown = page.evaluate("() => window.systoleShown")
        return [{"unix": unix, "bpm": bpm} for unix, bpm in checked if not shown_within(shown, unix, bpm)]

    wait_until(lambda: not late() or time.time() > end + LIVE_WITHIN + 1, "the window's values on the page", 60)
    missing = late()
    if missing:
        fail(f"{len(missing)} of {len(checked)} notifications not shown within {LIVE_WITHIN} s: {missing[:5]}")
    observations = page.evaluate("() => window.systoleShown")

    # A sensor's name is the radio's choice: HTML in it shows as text, nothing in it runs.
    names = page.text_content("#sensors") or ""
    if "<img" not in names or page.locator("#sensors img").count() != 0 or page.title() != "systole — live":
        fail(f"the sensor's name was not shown as text: {names!r}, title {page.title()!r}")
    if "\x1b" in names:
        fail("an escape sequence from the sensor's name reached the page")

    points = chart_points(page)
    if points < 3 or not page.get_attribute("#line", "points"):
        fail(f"the chart has {points} points")
    elapsed_before = seconds_of(page.text_content("#elapsed"))
    page.screenshot(path=f"{shots}/live-page.png")

    page.reload()
    wait_until(lambda: shows_bpm(page), "a bpm after the reload")
    wait_until(lambda: chart_points(page) >= points, f"the chart's {points} points after the reload")
    elapsed_after = seconds_of(page.text_content("#elapsed"))
    # The page shows a status's elapsed time plus the time since the status arrived: the reloaded page's first status
    # may be up to a second old when it arrives (statuses go out once a second), so a second less is not going back.
    if elapsed_after < elapsed_before - 1:
        fail(f"the elapsed time went back after a reload: {elapsed_before} s, then {elapsed_after} s")

    overlay = page.context.new_page()
    overlay.set_viewport_size({"width": 400, "height": 200})
    overlay.goto(f"{base}/overlay?token={token}&zone")
    wait_until(lambda: "token" not in overlay.url, "the token out of the overlay's address")
    if not overlay.url.endswith("/overlay?zone"):
        fail("the overlay's address after the token: " + overlay.url)
    wait_until(lambda: shows_bpm(overlay), "a bpm on the overlay")
    shot = overlay.screenshot(omit_background=True)
    with open(f"{shots}/overlay.png", "wb") as out:
        out.write(shot)
    image = Image.open(io.BytesIO(shot)).convert("RGBA")
    width, height = image.size
    corners = [image.getpixel((x, y))[3] for x, y in [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)]]
    opaque = sum(1 for pixel in image.get_flattened_data() if pixel[3] == 255)
    if any(alpha != 0 for alpha in corners):
        fail(f"the overlay is not transparent: corner alphas {corners}")
    if opaque < 100:
        fail(f"the overlay shows nothing opaque ({opaque} pixels)")
    print(json.dumps({
        "notifications": len(checked), "observations": len(observations), "chartPoints": points,
        "elapsedBefore": elapsed_before, "elapsedAfter": elapsed_after, "overlayOpaquePixels": opaque,
    }))


def finished(page, base, token, workout_id, shots):
    page.goto(f"{base}/workouts?token={token}")
    link = page.locator(f"a[href='/workouts/{workout_id}']")
    link.wait_for(timeout=60000)
    link.click()
    wait_until(lambda: chart_points(page) > 0, "the workout's chart")
    bars = page.locator("#zones .bar").count()
    if bars != 5:
        fail(f"{bars} zone bars")
    hrefs = page.eval_on_selector_all("#exports a", "links => links.map(a => a.getAttribute('href'))")
    if len(hrefs) != 4:
        fail(f"export links: {hrefs}")
    # The page fetches the file with the token (there is no cookie) and saves it.
    with page.expect_download(timeout=60000) as info:
        page.click("#exports a[href$='/fit']")
    download = info.value
    with open(download.path(), "rb") as saved:
        body = saved.read()
    if body[8:12] != b".FIT" or not download.suggested_filename.endswith(".fit"):
        fail(f"the FIT download: {download.suggested_filename!r}, {body[:16]!r}")
    page.screenshot(path=f"{shots}/workout-page.png", full_page=True)
    print(json.dumps({"zoneBars": bars, "exports": hrefs, "fitBytes": len(body)}))


CANVAS_INK = """() => {
  const c = document.getElementById("ecg");
  const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let ink = 0, sum = 0;
  for (let i = 3; i < data.length; i += 4) { if (data[i] > 0) { ink++; sum += i; } }
  return [ink, sum];
}"""


def ecg(page, base, token, shots):
    page.goto(f"{base}/?token={token}")
    wait_until(lambda: page.is_visible("#ecg-card"), "the ECG card")
    sensor = page.text_content("#ecg-sensor") or ""
    if len(sensor) != 17:
        fail(f"the ECG card names {sensor!r}")
    wait_until(lambda: page.evaluate(CANVAS_INK)[0] > 500, "a trace on the ECG strip")
    first = page.evaluate(CANVAS_INK)
    time.sleep(0.5)
    second = page.evaluate(CANVAS_INK)
    if first == second:
        fail(f"the ECG strip stood still: {first}")
    page.screenshot(path=f"{shots}/ecg-strip.png")
    print(json.dumps({"sensor": sensor, "ink": second[0]}))


def main():
    phase, base, token = sys.argv[1], sys.argv[2], sys.argv[3]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_context(viewport=PHONE).new_page()
            if phase == "live":
                emit_log, sensor, shots, seconds = sys.argv[4], sys.argv[5], sys.argv[6], int(sys.argv[7])
                live(page, base, token, emit_log, sensor, shots, seconds)
            elif phase == "ecg":
                ecg(page, base, token, sys.argv[4])
            else:
                finished(page, base, token, sys.argv[4], sys.argv[5])
        finally:
            browser.close()


if __name__ == "__main__":
    main()
