// compare.html, part 2: the two timelines on one time axis. The view [t0, t1] is in A's
// cycles; B is drawn shifted by view.shift cycles (0, or so that a chosen step starts at
// the same place in both), so zoom and pan move both together. A row per tile while the
// tiles fit, else every k-th tile; where samples are narrower than a pixel, each pixel
// column takes the sample covering most of it.
{
  const LABEL_W = 68;  // "chip 1 t1471" in 10 px
  const view = { t0: 0, t1: 1, shift: 0, drawMs: 0, firstDrawMs: 0, draws: 0, rows: [0, 0], painted: [0, 0], labels: [[], []] };
  const $ = id => document.getElementById(id);
  const canvases = [$('timeline-a'), $('timeline-b')], axis = $('axis');
  const BG = CV.word([255, 255, 255]), GUTTER = CV.word([246, 246, 246]);

  function offset(k) { return k === 0 ? 0 : view.shift; }
  function lo() { return Math.min(0, view.shift); }
  function hi() { return Math.max(CV.sides[0].span, CV.sides[1].span + view.shift, lo() + 4); }
  function plotWidth() { return Math.max(1, axis.clientWidth - LABEL_W); }
  function xToT(x) { return view.t0 + (x - LABEL_W) * (view.t1 - view.t0) / plotWidth(); }
  function setRange(a, b) {
    const w = Math.max(4, Math.min(b - a, hi() - lo()));
    a = Math.max(lo(), Math.min(a, hi() - w));
    view.t0 = a; view.t1 = a + w;
  }

  let line = new Uint32Array(0), best = new Float32Array(0), stamp = new Uint32Array(0), st = 0;
  function ensure(w) {
    if (line.length >= w) return;
    line = new Uint32Array(w); best = new Float32Array(w); stamp = new Uint32Array(w);
  }
  // One tile's pixel line over [t0, t1) (axis cycles) into `line`; returns painted columns.
  function renderLine(s, tile, off, w) {
    ensure(w);
    line.fill(BG, 0, w);
    const cpp = (view.t1 - view.t0) / w, mark = ++st;
    const stop = s.offsets[tile + 1];
    let painted = 0;
    for (let i = s.firstEndingAfter(tile, view.t0 - off); i < stop && s.start[i] + off < view.t1; i++) {
      const col = s.pColour[s.payload[i]];
      const x0 = Math.max(0, (s.start[i] + off - view.t0) / cpp), x1 = Math.min(w, (s.end[i] + off - view.t0) / cpp);
      if (!(x1 > x0)) continue;
      if (x1 - x0 >= 1) {
        for (let c = Math.floor(x0), e = Math.min(w, Math.ceil(x1)); c < e; c++) {
          if (stamp[c] !== mark) painted++;
          line[c] = col; stamp[c] = mark; best[c] = 1;
        }
        continue;
      }
      const c = Math.min(w - 1, Math.floor(x0)), cov = x1 - x0;
      if (stamp[c] !== mark) { stamp[c] = mark; best[c] = 0; painted++; }
      if (cov > best[c]) { best[c] = cov; line[c] = col; }
    }
    return painted;
  }

  function drawSide(k) {
    const canvas = canvases[k], s = CV.sides[k];
    const W = Math.max(LABEL_W + 1, canvas.clientWidth), H = Math.max(1, canvas.clientHeight);
    if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
    const ctx = canvas.getContext('2d'), image = ctx.createImageData(W, H), px = new Uint32Array(image.data.buffer);
    px.fill(BG);
    const plotW = W - LABEL_W, nRows = Math.min(s.tiles, H), rowH = H / nRows, gap = rowH >= 4 ? 1 : 0;
    let painted = 0;
    for (let r = 0; r < nRows; r++) {
      const tile = Math.floor(r * s.tiles / nRows);
      painted += renderLine(s, tile, offset(k), plotW);
      const y0 = Math.floor(r * rowH), y1 = Math.max(y0 + 1, Math.floor((r + 1) * rowH) - gap);
      for (let y = y0; y < Math.min(H, y1); y++) {
        px.fill(GUTTER, y * W, y * W + LABEL_W);
        px.set(line.subarray(0, plotW), y * W + LABEL_W);
      }
    }
    ctx.putImageData(image, 0, 0);
    ctx.fillStyle = '#555'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    const every = Math.max(1, Math.ceil(14 / rowH)), labels = [];
    for (let r = 0; r < nRows; r += every) {
      labels.push(s.rowLabel(Math.floor(r * s.tiles / nRows)));
      ctx.fillText(labels[labels.length - 1], 3, Math.max(6, (r + 0.5) * rowH));
    }
    view.rows[k] = nRows; view.painted[k] = painted; view.labels[k] = labels;
  }

  function niceStep(range, target) {
    const raw = range / target, p = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map(m => m * p).find(v => v >= raw) || 10 * p;
  }
  function drawAxis() {
    const W = Math.max(LABEL_W + 1, axis.clientWidth), H = axis.clientHeight;
    if (axis.width !== W || axis.height !== H) { axis.width = W; axis.height = H; }
    const ctx = axis.getContext('2d');
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = '#333'; ctx.strokeStyle = '#999'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'top';
    ctx.fillText('cycles', 3, 3);
    const step = niceStep(view.t1 - view.t0, Math.max(2, plotWidth() / 110));
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = LABEL_W + (t - view.t0) / (view.t1 - view.t0) * plotWidth();
      ctx.beginPath(); ctx.moveTo(x + 0.5, 0); ctx.lineTo(x + 0.5, 6); ctx.stroke();
      ctx.fillText(Math.round(t).toLocaleString('en-US'), x + 2, 8);
    }
    if (view.shift !== 0) ctx.fillText('B shifted by ' + CV.signed(view.shift) + ' cycles', LABEL_W + 4, 20);
  }

  let pending = false;
  function draw() {
    const t = performance.now();
    drawSide(0); drawSide(1); drawAxis();
    view.drawMs = performance.now() - t;
    view.draws++;
    $('range').textContent = 'view: cycles ' + CV.fmt(view.t0) + ' \u2013 ' + CV.fmt(view.t1) + ' (' + CV.fmt(view.t1 - view.t0) + ')';
    if (view.draws === 1) { view.firstDrawMs = performance.now(); document.body.dataset.drawn = '1'; }
  }
  function requestDraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }
  Object.assign(CV, { view, setRange, xToT, lo, hi, draw, requestDraw, canvases, LABEL_W });
}
