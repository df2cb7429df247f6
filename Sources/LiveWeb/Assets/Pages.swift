/// The pages' HTML. They hold no data: `systole.js` fills them from the JSON API and the event stream, with text
/// only (a sensor's name is the radio's choice and is never read as HTML).
enum Pages {
    private static func page(_ name: String, title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="dark light">
        <title>\(title)</title>
        <link rel="stylesheet" href="/assets/systole.css">
        <script src="/assets/systole.js" defer></script>
        </head>
        <body data-page="\(name)">
        \(body)
        </body>
        </html>

        """
    }

    static let live = page(
        "live",
        title: "systole — live",
        body: """
            <header><h1>systole</h1><nav><a href="/workouts">Workouts</a></nav></header>
            <main>
            <section id="now" class="card">
              <div class="row"><span id="state" class="state">…</span><span id="elapsed" class="elapsed">0:00</span></div>
              <div id="heart" class="heart"><span id="bpm" class="bpm">--</span><span class="unit">bpm</span></div>
              <div class="row"><span id="zone" class="zone"></span><span id="summary" class="summary"></span></div>
              <div id="connection" class="connection"></div>
            </section>
            <section class="card"><h2>This workout</h2>
              <svg id="chart" class="chart" viewBox="0 0 600 200" preserveAspectRatio="none" role="img"
                aria-label="heart rate during the workout"><polyline id="line" points=""/></svg>
              <p id="chart-empty" class="muted">No workout yet: start one with <code>systole start</code>.</p>
            </section>
            <section class="card" id="ecg-card" hidden><h2>ECG <span id="ecg-sensor" class="muted"></span></h2>
              <canvas id="ecg" class="ecg" role="img" aria-label="the sensor's ECG, the last five seconds"></canvas>
            </section>
            <section class="card"><h2>Sensors</h2><ul id="sensors" class="sensors"></ul></section>
            </main>
            """
    )

    static let overlay = page(
        "overlay",
        title: "systole — overlay",
        body: """
            <div id="overlay" class="overlay"><span id="bpm" class="bpm"></span><span id="unit" class="unit"></span></div>
            """
    )

    static let workouts = page(
        "workouts",
        title: "systole — workouts",
        body: """
            <header><h1>Workouts</h1><nav><a href="/">Live</a></nav></header>
            <main><section class="card">
            <table id="workouts" class="workouts"><thead><tr><th>Start</th><th>Activity</th><th>Duration</th>
            <th>Avg</th><th>Max</th></tr></thead><tbody></tbody></table>
            <p id="empty" class="muted" hidden>No finished workouts yet.</p>
            </section></main>
            """
    )

    static let workout = page(
        "workout",
        title: "systole — workout",
        body: """
            <header><h1 id="title">Workout</h1><nav><a href="/workouts">Workouts</a> <a href="/">Live</a></nav></header>
            <main>
            <section class="card"><dl id="facts" class="facts"></dl></section>
            <section class="card" id="chart-card"><h2>Heart rate per minute</h2>
              <svg id="chart" class="chart" viewBox="0 0 600 200" preserveAspectRatio="none" role="img"
                aria-label="heart rate per minute"><polyline id="line" points=""/></svg></section>
            <section class="card" id="zones-card"><h2>Zones</h2><div id="zones" class="zones"></div></section>
            <section class="card" id="hrv-card"><h2>Heart-rate variability</h2><dl id="hrv" class="facts"></dl></section>
            <section class="card" id="exports-card"><h2>Export</h2><p id="exports"></p></section>
            </main>
            """
    )
}
