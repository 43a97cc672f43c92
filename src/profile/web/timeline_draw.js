// model.html, part 2: the view (visible cycle range, row height, origin) and the canvas
// drawing of the tile rows, the overview strip and the two axes. Rows are rendered into
// an ImageData buffer one pixel line at a time: only visible rows, and where samples are
// narrower than a pixel, each pixel column takes the kind covering most of it (level of
// detail), so 1,472 tiles x hundreds of samples stay a few tens of ms per frame.
{
  const LABEL_W = 64;  // the tile-label gutter left of the rows, axis and overview
  const KINDS = 6;
  const view = {
    t0: 0, t1: 1, rowH: 4, origin: 'sync', history: [],
    pinned: -1, pinnedTile: -1, cursor: null,  // pinned sample, clicked cycle
    lastDrawMs: 0, firstDrawMs: 0, draws: 0, drawnRows: 0,
  };
  const $ = id => document.getElementById(id);
  const rowsCanvas = $('rows'), scroller = $('rows-scroll'), spacer = $('rows-spacer');
  const overview = $('overview'), axis = $('axis');

  function minT() { return view.origin === 'sync' ? TV.firstSync : 0; }
  function maxT() { return Math.max(TV.span, minT() + 1); }
  function originT() { return minT(); }
  function plotWidth() { return Math.max(1, rowsCanvas.clientWidth - LABEL_W); }
  function cyclesPerPixel() { return (view.t1 - view.t0) / plotWidth(); }
  function xToT(x) { return view.t0 + (x - LABEL_W) * cyclesPerPixel(); }
  function tToX(t) { return LABEL_W + (t - view.t0) / cyclesPerPixel(); }

  // Keeps [t0, t1] inside the span, at least 4 cycles wide.
  function setRange(a, b) {
    const lo = minT(), hi = maxT();
    let w = Math.max(4, Math.min(b - a, hi - lo));
    a = Math.max(lo, Math.min(a, hi - w));
    view.t0 = a; view.t1 = a + w;
  }

  // Scratch buffers of the line renderer, grown as needed.
  let line = new Uint32Array(0), solid = new Uint32Array(0), touched = new Uint32Array(0);
  let acc = new Float32Array(0), best = new Float32Array(0), bestCol = new Uint32Array(0);
  let partial = new Int32Array(0), stamp = 0, uncalMark = new Uint32Array(0);
  function ensure(w) {
    if (line.length >= w) return;
    line = new Uint32Array(w); solid = new Uint32Array(w); touched = new Uint32Array(w); uncalMark = new Uint32Array(w);
    acc = new Float32Array(w * KINDS); best = new Float32Array(w * KINDS); bestCol = new Uint32Array(w * KINDS);
    partial = new Int32Array(w);
  }

  // One tile's pixel line over [t0, t1) into `line` (width w, background bg). Returns the
  // hatched (repeat) column range [h0, h1) and its stripe colour, and marks in uncalMark
  // (== hatch.stamp) the columns whose centre lies in an uncalibrated compute sample.
  const hatch = { h0: 0, h1: 0, colour: 0, stamp: 0, uncalibrated: false };
  function renderLine(tile, t0, t1, w, bg) {
    ensure(w);
    line.fill(bg, 0, w);
    hatch.h0 = hatch.h1 = 0;
    hatch.uncalibrated = false;
    const st = ++stamp;
    hatch.stamp = st;
    const cpp = (t1 - t0) / w;
    const { start, end, payload, pColour, pKind, pStripe } = TV;
    const stop = TV.offsets[tile + 1];
    let nPartial = 0;
    const touch = (c, cov, k, col) => {
      if (touched[c] !== st) {
        touched[c] = st; partial[nPartial++] = c;
        const b = c * KINDS;
        for (let j = 0; j < KINDS; j++) { acc[b + j] = 0; best[b + j] = 0; }
      }
      const j = c * KINDS + k;
      acc[j] += cov;
      if (cov > best[j]) { best[j] = cov; bestCol[j] = col; }
    };
    for (let i = TV.firstEndingAfter(tile, t0); i < stop && start[i] < t1; i++) {
      const p = payload[i], col = pColour[p];
      if (col === 0) continue;
      const x0 = Math.max(0, (start[i] - t0) / cpp), x1 = Math.min(w, (end[i] - t0) / cpp);
      if (!(x1 > x0)) continue;
      const k = pKind[p];
      if (TV.pUncal[p] > 0 && k === TV.K.compute) {
        for (let c = Math.round(x0), e = Math.min(w, Math.round(x1)); c < e; c++) uncalMark[c] = st;
        hatch.uncalibrated = true;
      }
      const c0 = Math.floor(x0), c1 = Math.ceil(x1);
      if (c1 - c0 === 1) { touch(c0, x1 - x0, k, col); continue; }
      touch(c0, c0 + 1 - x0, k, col);
      for (let c = c0 + 1; c < c1 - 1; c++) { line[c] = col; solid[c] = st; }
      touch(c1 - 1, x1 - (c1 - 1), k, col);
      if (k === TV.K.repeat) { hatch.h0 = c0; hatch.h1 = c1; hatch.colour = pStripe[p]; }
    }
    for (let q = 0; q < nPartial; q++) {
      const c = partial[q];
      if (solid[c] === st) continue;
      const b = c * KINDS;
      let bk = 0;
      for (let j = 1; j < KINDS; j++) if (acc[b + j] > acc[b + bk]) bk = j;
      line[c] = bestCol[b + bk];
    }
  }

  let image = null, image32 = null;
  const BG = TV.word([255, 255, 255]), GUTTER = TV.word([246, 246, 246]);
  const UNCAL = TV.word(TV.rgb(TV.COLOURS.uncalibrated));

  function sizeCanvas(canvas, w, h) {
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  }

  function drawRows() {
    const W = Math.max(LABEL_W + 1, rowsCanvas.clientWidth);
    const total = TV.tiles * view.rowH;
    const main = document.getElementById('main'), fits = Math.max(120, Math.min(total + 1, Math.round(window.innerHeight * 0.62)));
    if (main.style.height !== fits + "px") main.style.height = fits + "px";
    const H = Math.max(1, scroller.clientHeight);
    spacer.style.height = Math.max(0, total - H) + 'px';
    sizeCanvas(rowsCanvas, W, H);
    const ctx = rowsCanvas.getContext('2d');
    if (!image || image.width !== W || image.height !== H) { image = ctx.createImageData(W, H); image32 = new Uint32Array(image.data.buffer); }
    image32.fill(BG);
    const plotW = W - LABEL_W, rowH = view.rowH, gap = rowH >= 4 ? 1 : 0;
    const top = scroller.scrollTop;
    const first = Math.floor(top / rowH), last = Math.min(TV.tiles, Math.ceil((top + H) / rowH));
    let uncalPixels = 0;
    for (let row = first; row < last; row++) {
      renderLine(row, view.t0, view.t1, plotW, BG);
      const y0 = row * rowH - top;
      for (let y = Math.max(0, y0); y < Math.min(H, y0 + rowH - gap); y++) {
        const o = y * W;
        image32.fill(GUTTER, o, o + LABEL_W);
        image32.set(line.subarray(0, plotW), o + LABEL_W);
        if (hatch.h1 > hatch.h0) {  // repeat remainder: diagonal stripes
          for (let c = hatch.h0; c < hatch.h1; c++) if (((c + y) & 7) < 3) image32[o + LABEL_W + c] = hatch.colour;
        }
        if (hatch.uncalibrated) {  // uncalibrated kernels: thin dark stripes the other way, every 8th pixel
          for (let c = 0; c < plotW; c++)
            if (uncalMark[c] === hatch.stamp && ((c - y) & 7) === 0) { image32[o + LABEL_W + c] = UNCAL; uncalPixels++; }
        }
      }
    }
    view.drawnRows = last - first;
    view.uncalibratedPixels = uncalPixels;
    ctx.putImageData(image, 0, 0);
    // Tile labels: every row when tall enough, else every k-th row.
    ctx.fillStyle = '#555'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    const every = Math.max(1, Math.ceil(12 / rowH));
    for (let row = Math.ceil(first / every) * every; row < last; row += every)
      ctx.fillText(TV.rowLabel(row), 4, Math.max(6, row * rowH - top + rowH / 2));
    ctx.strokeStyle = '#ccc'; ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
    // Pinned sample outline and the clicked-cycle cursor.
    if (view.pinned >= 0) {
      const i = view.pinned, x0 = tToX(TV.start[i]), x1 = tToX(TV.end[i]);
      const y = view.pinnedTile * rowH - top;
      ctx.strokeStyle = '#000'; ctx.lineWidth = 2;
      ctx.strokeRect(Math.max(LABEL_W, x0) - 1, y - 1, Math.max(2, Math.min(W, x1) - Math.max(LABEL_W, x0)) + 2, rowH + 1);
      ctx.lineWidth = 1;
    }
    if (view.cursor !== null) {
      const x = Math.round(tToX(view.cursor)) + 0.5;
      if (x >= LABEL_W && x <= W) {
        ctx.strokeStyle = '#000b'; ctx.setLineDash([4, 3]);
        ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, H); ctx.stroke(); ctx.setLineDash([]);
      }
    }
  }

  // The overview strip: whole span, every k-th tile per pixel row; cached per filter/origin/size.
  let overviewImage = null, overviewKey = '';
  function drawOverview() {
    const W = Math.max(LABEL_W + 1, overview.clientWidth), H = Math.max(1, overview.clientHeight);
    sizeCanvas(overview, W, H);
    const ctx = overview.getContext('2d');
    const key = [W, H, view.origin, TV.filterVersion].join();
    if (key !== overviewKey) {
      overviewKey = key;
      overviewImage = ctx.createImageData(W, H);
      const px = new Uint32Array(overviewImage.data.buffer);
      px.fill(GUTTER);
      const plotW = W - LABEL_W;
      for (let y = 0; y < H && TV.tiles > 0; y++) {
        const tile = Math.min(TV.tiles - 1, Math.floor((y + 0.5) * TV.tiles / H));
        renderLine(tile, minT(), maxT(), plotW, BG);
        px.set(line.subarray(0, plotW), y * W + LABEL_W);
      }
    }
    ctx.putImageData(overviewImage, 0, 0);
    const span = maxT() - minT(), plotW = W - LABEL_W;
    const a = LABEL_W + (view.t0 - minT()) / span * plotW, b = LABEL_W + (view.t1 - minT()) / span * plotW;
    ctx.fillStyle = '#0000001f';
    ctx.fillRect(LABEL_W, 0, Math.max(0, a - LABEL_W), H); ctx.fillRect(b, 0, Math.max(0, W - b), H);
    ctx.strokeStyle = '#1f4fbf'; ctx.lineWidth = 2;
    ctx.strokeRect(a, 1, Math.max(2, b - a), H - 2); ctx.lineWidth = 1;
    ctx.fillStyle = '#555'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    ctx.fillText('overview', 4, H / 2);
  }

  // A "nice" tick step (1, 2 or 5 x 10^k) giving ticks at least minPx apart.
  function niceStep(unitsPerPixel, minPx) {
    const raw = unitsPerPixel * minPx, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  // A tick label with as many decimals as the step needs, so neighbours never read alike.
  function fmt(v, step) {
    for (const [unit, suffix] of [[1e9, 'G'], [1e6, 'M'], [1e4, 'k'], [1, '']]) {
      if (Math.abs(v) < unit && unit > 1) continue;
      const scaled = unit === 1e4 ? 1e3 : unit;
      const decimals = Math.min(9, Math.max(0, Math.ceil(-Math.log10(step / scaled) - 1e-9)));
      return (v / scaled).toFixed(decimals) + suffix;
    }
    return String(v);
  }

  // Two axes, relative to the origin: cycles (top half) and microseconds at the clock.
  function drawAxis() {
    const dpr = window.devicePixelRatio || 1;
    const W = Math.max(LABEL_W + 1, axis.clientWidth), H = Math.max(1, axis.clientHeight);
    sizeCanvas(axis, Math.round(W * dpr), Math.round(H * dpr));
    const ctx = axis.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'top'; ctx.fillStyle = '#333'; ctx.strokeStyle = '#888';
    ctx.fillText('cycles', 4, 2); ctx.fillText('\u00b5s', 4, H / 2 + 2);
    const cpp = cyclesPerPixel(), origin = originT(), usPerCycle = 1e6 / TV.clock;
    const axes = [[1, 0], [usPerCycle, H / 2]];
    for (const [scale, y] of axes) {
      const step = scale === 1 ? Math.max(1, niceStep(cpp, 90)) : niceStep(cpp * scale, 90);  // whole cycles
      const v0 = (view.t0 - origin) * scale, v1 = (view.t1 - origin) * scale;
      ctx.beginPath();
      for (let v = Math.ceil(v0 / step) * step; v <= v1; v += step) {
        const x = Math.round(tToX(origin + v / scale)) + 0.5;
        ctx.moveTo(x, y); ctx.lineTo(x, y + 5);
        ctx.fillText(fmt(v, step), x + 2, y + 3);
      }
      ctx.stroke();
    }
    ctx.beginPath(); ctx.moveTo(LABEL_W, H / 2 + 0.5); ctx.lineTo(W, H / 2 + 0.5); ctx.stroke();
  }

  function draw() {
    const t = performance.now();
    drawRows(); drawOverview(); drawAxis();
    if (TV.onDrawn) TV.onDrawn();
    view.lastDrawMs = performance.now() - t;
    view.draws++;
    if (view.draws === 1) { view.firstDrawMs = performance.now(); document.body.dataset.drawn = '1'; }
  }
  let pending = false;
  function requestDraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  // The tile and sample under a canvas point (nearest within 3 px when none covers it).
  function hit(x, y) {
    if (x < LABEL_W) return null;
    const tile = Math.floor((y + scroller.scrollTop) / view.rowH);
    if (tile < 0 || tile >= TV.tiles) return null;
    const t = xToT(x), slack = 3 * cyclesPerPixel();
    let i = TV.sampleAt(tile, t);
    if (i < 0 || TV.pColour[TV.payload[i]] === 0) {
      i = -1;
      const j = TV.firstEndingAfter(tile, t - slack);
      if (j < TV.offsets[tile + 1] && TV.start[j] <= t + slack && TV.pColour[TV.payload[j]] !== 0) i = j;
    }
    return { tile, t, sample: i };
  }

  Object.assign(TV, { view, LABEL_W, minT, maxT, originT, setRange, xToT, tToX, cyclesPerPixel, plotWidth,
                      draw, requestDraw, hit, fmt, filterVersion: 0 });
}
