/// The pages' script and style, served by systoled itself.
enum Assets {
    static let script = #"""
        "use strict";
        // systole's pages: text only from the JSON API (names come from the radio and are never parsed as HTML).
        const $ = (id) => document.getElementById(id);
        const el = (tag, text, cls) => {
          const e = document.createElement(tag);
          if (text !== undefined) e.textContent = text;
          if (cls) e.className = cls;
          return e;
        };
        const clock = (seconds) => {
          seconds = Math.max(0, Math.floor(seconds));
          const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
          const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
          return (h > 0 ? h + ":" : "") + mm + ":" + String(s).padStart(2, "0");
        };
        const whole = (x) => (x === null || x === undefined) ? "–" : String(Math.round(x));
        const setZone = (colour) => document.documentElement.style.setProperty("--zone", colour || "#9e9e9e");

        // The token: from the address (`#token=…`, as `systole web` prints it) into this origin's storage, which no
        // page of another port on this host can read, then out of the address; each request for data sends it as a
        // header. No cookie: a browser sends cookies to every port of a host (Home Assistant, Grafana beside us).
        // A token holds only these (systoled refuses others in its configuration); one with anything else is a
        // mistyped address, which no header could carry: the page says the token is needed.
        const isToken = (text) => /^[A-Za-z0-9._~-]+$/.test(text);
        const token = (() => {
          const hash = new URLSearchParams(location.hash.slice(1));
          const given = hash.get("token");
          if (given) {
            if (isToken(given)) {
              try { localStorage.setItem("systole-token", given); } catch (e) { /* storage off: this page only */ }
            }
            // What else followed the token (the overlay's `&zone`) joins the query.
            hash.delete("token");
            const query = new URLSearchParams(location.search);
            for (const [key, value] of hash) query.append(key, value);
            const rest = query.toString().replace(/=(&|$)/g, "$1");
            history.replaceState(null, "", location.pathname + (rest ? "?" + rest : ""));
            return given;
          }
          try { return localStorage.getItem("systole-token") || ""; } catch (e) { return ""; }
        })();
        const api = (path) => isToken(token)
          ? fetch(path, { cache: "no-store", headers: { Authorization: "Bearer " + token } })
          : Promise.resolve(new Response("", { status: 401 }));
        const needsToken = (response) => {
          if (response.status !== 401) return false;
          const note = $("connection") || $("title");
          if (note) note.textContent = "systoled needs its token: open the address 'systole web' prints";
          return true;
        };

        // Draws points [{t, bpm}] into the chart's polyline; its data-points attribute counts them.
        function draw(svg, points) {
          const line = svg.querySelector("polyline");
          const shown = points.filter((p) => p.bpm !== null && isFinite(p.bpm));
          svg.dataset.points = String(shown.length);
          if (shown.length === 0) { line.setAttribute("points", ""); return; }
          const t0 = shown[0].t, t1 = Math.max(shown[shown.length - 1].t, t0 + 1);
          let lo = Math.min(...shown.map((p) => p.bpm)), hi = Math.max(...shown.map((p) => p.bpm));
          if (hi - lo < 20) { lo -= 10; hi += 10; }
          line.setAttribute("points", shown.map((p) =>
            ((p.t - t0) / (t1 - t0) * 600).toFixed(1) + "," + (190 - (p.bpm - lo) / (hi - lo) * 180).toFixed(1)
          ).join(" "));
        }

        // The live status as the event stream last sent it, and when it arrived (the elapsed time moves on from there
        // with this device's clock, which need not agree with the server's).
        let status = null, receivedAt = 0, points = [], workoutID = null;
        const elapsedNow = () => !status ? 0 :
          status.elapsed + (status.state === "running" ? (Date.now() - receivedAt) / 1000 : 0);

        async function loadHistory() {
          try {
            const response = await api("/api/history");
            if (response.ok) points = await response.json();
          } catch (e) { points = []; }
        }

        async function onStatus(next) {
          status = next; receivedAt = Date.now();
          if (status.workoutID !== workoutID) {
            workoutID = status.workoutID;
            points = [];
            if (workoutID && status.showsHeartRate) await loadHistory();
          }
          const hr = status.heartRate;
          if (hr && workoutID && status.state === "running") {
            const last = points[points.length - 1];
            if (!last || status.at - last.t >= 1) points.push({ t: status.at, bpm: hr.bpm });
          }
          render();
        }

        function renderLive() {
          const hr = status.heartRate;
          $("state").textContent = status.state;
          $("elapsed").textContent = clock(elapsedNow());
          $("bpm").textContent = hr ? String(hr.bpm) : (status.showsHeartRate ? "--" : "");
          $("heart").hidden = !status.showsHeartRate;
          setZone(hr ? hr.colour : null);
          $("zone").textContent = hr ? (hr.zone > 0 ? "Zone " + hr.zone : "Below zone 1") : "";
          $("summary").textContent = status.average ? "avg " + whole(status.average) + " · max " + whole(status.maximum) : "";
          const chart = $("chart");
          chart.hidden = !workoutID || !status.showsHeartRate;
          $("chart-empty").hidden = !!workoutID;
          if (!chart.hidden) draw(chart, points);
          const list = $("sensors");
          list.replaceChildren(...status.sensors.map((s) => {
            const item = el("li");
            item.append(el("strong", s.name || s.address || "any sensor"));
            const parts = [s.state];
            if (s.address && s.name) parts.push(s.address);
            if (s.battery !== undefined && s.battery !== null) parts.push("battery " + s.battery + "%");
            if (s.contact) parts.push("contact: " + s.contact);
            if (s.bpm !== undefined && s.bpm !== null) parts.push(s.bpm + " bpm");
            item.append(el("div", parts.join(" · "), "detail"));
            return item;
          }));
        }

        function renderOverlay() {
          const hr = status.heartRate;
          const zoned = new URLSearchParams(location.search).has("zone");
          $("overlay").classList.toggle("zoned", zoned);
          if (status.showsHeartRate) {
            $("bpm").textContent = hr ? String(hr.bpm) : "--";
            $("unit").textContent = "bpm";
            setZone(hr ? hr.colour : null);
          } else {
            $("bpm").textContent = status.workoutID ? clock(elapsedNow()) : "";
            $("unit").textContent = "";
          }
        }

        function render() {
          if (!status) return;
          if (document.body.dataset.page === "live") renderLive(); else renderOverlay();
        }

        function tick() {
          if (status && document.body.dataset.page === "live") $("elapsed").textContent = clock(elapsedNow());
          if (status && !status.showsHeartRate && document.body.dataset.page === "overlay") renderOverlay();
        }

        // The server-sent events, read with fetch (EventSource cannot send the token as a header); after an error or
        // the end, again in 3 s, as EventSource would.
        // Reads a response of server-sent events to its end, handing each event's name and parsed data to `handle`.
        async function readEvents(response, handle) {
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            buffer += value;
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              let name = "message";
              const data = [];
              for (const line of block.split("\n")) {
                if (line.startsWith("event:")) name = line.slice(6).trim();
                else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
              }
              if (data.length > 0) await handle(name, JSON.parse(data.join("\n")));
            }
          }
        }

        async function connect() {
          for (;;) {
            try {
              const response = await api("/api/events");
              if (needsToken(response)) return;
              if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
              if ($("connection")) $("connection").textContent = "";
              await readEvents(response, async (name, data) => { if (name === "status") await onStatus(data); });
            } catch (e) { /* reconnect below */ }
            if ($("connection")) $("connection").textContent = "reconnecting to systoled…";
            await new Promise((resolve) => setTimeout(resolve, 3000));
          }
        }

        // A workout's file: fetched with the token, then saved under the server's name.
        async function download(path, fallback) {
          const response = await api(path);
          if (needsToken(response)) return;
          // Another export under way, or a workout too large: systoled says which.
          if (!response.ok) { alert(await response.text()); return; }
          const disposition = response.headers.get("Content-Disposition") || "";
          const named = disposition.match(/filename="([^"]+)"/);
          const url = URL.createObjectURL(await response.blob());
          const save = el("a");
          save.href = url;
          save.download = named ? named[1] : fallback;
          document.body.append(save);
          save.click();
          save.remove();
          setTimeout(() => URL.revokeObjectURL(url), 60000);
        }

        async function workoutsPage() {
          const response = await api("/api/workouts");
          if (needsToken(response)) return;
          const workouts = await response.json();
          const body = $("workouts").querySelector("tbody");
          $("empty").hidden = workouts.length > 0;
          body.replaceChildren(...workouts.map((w) => {
            const row = el("tr");
            const link = el("a", new Date(w.start * 1000).toLocaleString());
            link.href = "/workouts/" + encodeURIComponent(w.id);
            const first = el("td"); first.append(link); row.append(first);
            row.append(el("td", w.activity), el("td", clock(w.duration)),
              el("td", whole(w.averageHeartRate)), el("td", whole(w.maximumHeartRate)));
            return row;
          }));
        }

        async function workoutPage() {
          const id = decodeURIComponent(location.pathname.split("/").pop());
          const response = await api("/api/workouts/" + encodeURIComponent(id));
          if (needsToken(response)) return;
          if (!response.ok) { $("title").textContent = "No such workout"; return; }
          const w = await response.json(), s = w.summary;
          $("title").textContent = s.activity + ", " + new Date(s.start * 1000).toLocaleString();
          const facts = [["Duration", clock(s.duration)], ["Average", whole(s.averageHeartRate) + " bpm"],
            ["Maximum", whole(s.maximumHeartRate) + " bpm"]];
          if (w.trimp !== undefined && w.trimp !== null) facts.push(["TRIMP", w.trimp.toFixed(1)]);
          if (w.energyKilojoules) facts.push(["Energy", Math.round(w.energyKilojoules / 4.184) + " kcal" +
            (w.energyEstimated ? " (estimated)" : "")]);
          $("facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));
          const minutes = w.heartRatePerMinute.map((bpm, i) => ({ t: i * 60, bpm }));
          $("chart-card").hidden = minutes.length === 0;
          draw($("chart"), minutes);
          $("zones-card").hidden = w.zones.length === 0;
          const longest = Math.max(1, ...w.zones.map((z) => z.seconds));
          $("zones").replaceChildren(...w.zones.slice().reverse().flatMap((z) => {
            const bar = el("div", undefined, "bar");
            bar.style.width = (z.seconds / longest * 100).toFixed(1) + "%";
            bar.style.background = z.colour;
            const range = whole(z.lower) + (z.upper ? "–" + whole(z.upper) : "+") + " bpm";
            return [el("div", "Zone " + z.number + " · " + range + " · " + clock(z.seconds), "label"), bar];
          }));
          $("hrv-card").hidden = !w.hrv;
          if (w.hrv) {
            $("hrv").replaceChildren(...[["RMSSD", w.hrv.rmssd.toFixed(1) + " ms"], ["SDNN", w.hrv.sdnn.toFixed(1) + " ms"],
              ["Mean NN", w.hrv.meanNN.toFixed(0) + " ms"], ["pNN50", w.hrv.pnn50.toFixed(1) + " %"],
              ["Beats", w.hrv.beats + " (" + w.hrv.corrected + " corrected)"]].flatMap(([k, v]) => [el("dt", k), el("dd", v)]));
          }
          $("exports-card").hidden = w.exports.length === 0;
          $("exports").replaceChildren(...w.exports.map((format) => {
            const link = el("a", format.toUpperCase());
            const path = "/api/workouts/" + encodeURIComponent(s.id) + "/export/" + format;
            link.href = path;
            link.className = "export";
            link.addEventListener("click", (event) => { event.preventDefault(); download(path, format); });
            const span = el("span"); span.append(link, " ");
            return span;
          }));
        }

        document.addEventListener("DOMContentLoaded", () => {
          const page = document.body.dataset.page;
          if (page === "live" || page === "overlay") { connect(); setInterval(tick, 250); }
          if (page === "workouts") workoutsPage();
          if (page === "workout") workoutPage();
        });

        """#
}
