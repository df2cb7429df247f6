extension Assets {
    /// What `/assets/systole.js` serves: the pages' script and the ECG strip's.
    static let pageScript = script + ecgScript

    /// The live page's ECG strip: a sweeping trace as a bedside monitor draws it, five seconds wide, from
    /// `/api/ecg`. Drawn ``delay`` behind the newest sample, so that pieces arriving every half second run on
    /// smoothly; a gap in the ECG leaves a gap in the trace. Hidden until ECG arrives (and for good when the server
    /// says it does not show ECG).
    static let ecgScript = #"""
        const ecg = { sensor: null, samples: [], newest: 0, offset: null, width: 5, delay: 0.8 };

        function onECGPiece(piece) {
          if (ecg.sensor === null) ecg.sensor = piece.sensor;
          if (piece.sensor !== ecg.sensor) return;
          if (piece.gap) ecg.samples.push(null);
          piece.uv.forEach((uv, i) => ecg.samples.push([piece.start + i / piece.rate, uv]));
          ecg.newest = Math.max(ecg.newest, piece.start + piece.uv.length / piece.rate);
          // The strip follows the sensor's time: the page's clock may differ from systoled's.
          ecg.offset = ecg.newest - Date.now() / 1000;
          const keep = ecg.newest - 2 * ecg.width;
          while (ecg.samples.length > 0 && (ecg.samples[0] === null || ecg.samples[0][0] < keep)) ecg.samples.shift();
          const card = $("ecg-card");
          if (card && card.hidden) { card.hidden = false; $("ecg-sensor").textContent = piece.sensor; }
        }

        function drawECG() {
          const canvas = $("ecg");
          if (!canvas || ecg.offset === null) { requestAnimationFrame(drawECG); return; }
          const width = canvas.clientWidth, height = canvas.clientHeight;
          if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
          const context = canvas.getContext("2d");
          const now = Date.now() / 1000 + ecg.offset - ecg.delay;
          const from = now - ecg.width;
          const shown = ecg.samples.filter((s) => s === null || (s[0] > from && s[0] <= now));
          const values = shown.filter((s) => s !== null).map((s) => s[1]);
          const low = Math.min(-500, ...values), high = Math.max(1000, ...values);
          const y = (uv) => height - 4 - (uv - low) / (high - low) * (height - 8);
          // A sweep: the newest sample at the cursor, older ones wrapping round behind it.
          const x = (t) => ((t % ecg.width) + ecg.width) % ecg.width / ecg.width * width;
          context.clearRect(0, 0, width, height);
          context.strokeStyle = getComputedStyle(canvas).color;
          context.lineWidth = 2;
          context.beginPath();
          let previous = null;
          for (const sample of shown) {
            if (sample === null) { previous = null; continue; }
            const px = x(sample[0]);
            if (previous === null || px < previous) context.moveTo(px, y(sample[1]));
            else context.lineTo(px, y(sample[1]));
            previous = px;
          }
          context.stroke();
          const cursor = x(now);
          context.clearRect(cursor, 0, width * 0.04, height);
          requestAnimationFrame(drawECG);
        }

        async function connectECG() {
          for (;;) {
            try {
              const response = await api("/api/ecg");
              if (response.status === 404 || response.status === 401) return;
              if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
              await readEvents(response, (name, piece) => { if (name === "ecg") onECGPiece(piece); });
            } catch (e) { /* reconnect below */ }
            await new Promise((resolve) => setTimeout(resolve, 3000));
          }
        }

        document.addEventListener("DOMContentLoaded", () => {
          if (document.body.dataset.page === "live") { connectECG(); requestAnimationFrame(drawECG); }
        });

        """#
}
