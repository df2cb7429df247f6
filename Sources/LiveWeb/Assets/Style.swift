extension Assets {
    static let style = """
        :root { --zone: #9e9e9e; font-family: system-ui, sans-serif; }
        body { margin: 0; background: #121417; color: #e8eaed; }
        header { display: flex; justify-content: space-between; align-items: baseline; padding: .5rem 1rem; }
        header h1 { font-size: 1.2rem; margin: 0; }
        nav a { color: #8ab4f8; margin-left: 1rem; }
        main { display: grid; gap: 1rem; padding: 0 1rem 1rem; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); }
        .card { background: #1e2126; border-radius: 12px; padding: 1rem; }
        .card h2 { font-size: 1rem; margin: 0 0 .5rem; color: #bdc1c6; }
        .row { display: flex; justify-content: space-between; gap: 1rem; }
        .state { text-transform: uppercase; letter-spacing: .1em; color: #bdc1c6; }
        .elapsed { font-variant-numeric: tabular-nums; font-size: 1.5rem; }
        .heart { text-align: center; color: var(--zone); }
        .heart .bpm { font-size: clamp(5rem, 28vw, 11rem); font-weight: 700; font-variant-numeric: tabular-nums; }
        .heart .unit { font-size: 1.5rem; margin-left: .3rem; }
        .zone { font-weight: 600; color: var(--zone); }
        .muted, .summary, .connection { color: #9aa0a6; }
        .chart { width: 100%; height: 200px; background: #15171b; border-radius: 8px; }
        .ecg { display: block; width: 100%; height: 160px; background: #15171b; border-radius: 8px; color: #4caf50; }
        .chart polyline { fill: none; stroke: var(--zone); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .sensors { list-style: none; padding: 0; margin: 0; }
        .sensors li { padding: .4rem 0; border-bottom: 1px solid #2d3036; }
        .sensors .detail { color: #9aa0a6; font-size: .9rem; }
        table { width: 100%; border-collapse: collapse; }
        td, th { text-align: left; padding: .3rem; border-bottom: 1px solid #2d3036; }
        a { color: #8ab4f8; }
        .facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
        .facts dt { color: #9aa0a6; }
        .facts dd { margin: 0; }
        .zones .bar { height: 1.4rem; margin: .2rem 0; border-radius: 4px; min-width: 2px; }
        .zones .label { font-size: .9rem; color: #bdc1c6; }
        body[data-page="overlay"] { background: transparent; }
        .overlay { display: inline-flex; align-items: baseline; gap: .3rem; padding: .2rem .6rem; color: #fff;
          font-weight: 700; text-shadow: 0 0 6px #000, 0 0 2px #000; }
        .overlay .bpm { font-size: 6rem; font-variant-numeric: tabular-nums; }
        .overlay .unit { font-size: 2rem; }
        .overlay.zoned .bpm { color: var(--zone); }
        @media (prefers-color-scheme: light) {
          body:not([data-page="overlay"]) { background: #f1f3f4; color: #202124; }
          .card { background: #fff; }
          .chart { background: #f8f9fa; }
          .card h2, .state, .muted, .summary, .connection, .sensors .detail, .facts dt, .zones .label { color: #5f6368; }
        }

        """
}
