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
            const response = await fetch("/api/history", { cache: "no-store" });
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

        function connect() {
          const events = new EventSource("/api/events");
          events.addEventListener("status", (event) => {
            if ($("connection")) $("connection").textContent = "";
            onStatus(JSON.parse(event.data));
          });
          events.onerror = () => { if ($("connection")) $("connection").textContent = "reconnecting to systoled…"; };
        }

        async function workoutsPage() {
          const response = await fetch("/api/workouts", { cache: "no-store" });
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
          const response = await fetch("/api/workouts/" + encodeURIComponent(id), { cache: "no-store" });
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
            link.href = "/api/workouts/" + encodeURIComponent(s.id) + "/export/" + format;
            link.className = "export";
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
