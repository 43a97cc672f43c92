'use strict';
// model.html, part 1: decodes the embedded profile (schema: timeline_html.cpp) into flat
// typed arrays, derives colours, filter states, the flame tree and the operation table.
// The parts share one namespace object, TV; each keeps its own names in a block.
const TV = {};
{
  const raw = JSON.parse(document.getElementById('tilevit-data').textContent);

  const decode = TVColumns.decode;

  const K = { compute: 0, idle: 1, sync: 2, exchange: 3, repeat: 4, graph: 5 };
  const meta = raw.meta.map(m => ({ kind: m[0], step: m[1], layer: m[2], phase: m[3], kernel: m[4], operation: m[5], shape: m[6] }));
  const offsets = decode(raw.columns.offsets);
  const startCol = decode(raw.columns.start), durCol = decode(raw.columns.duration);
  const payload = decode(raw.columns.payload);
  const pMeta = decode(raw.payload_columns.meta), pSent = decode(raw.payload_columns.sent);
  const pRecv = decode(raw.payload_columns.received), pFlops = decode(raw.payload_columns.flops);
  // Kernel cycles of a sample that no measurement covers (0: calibrated; docs/FIDELITY.md).
  const pUncal = decode(raw.payload_columns.uncalibrated);
  const n = raw.samples, tiles = raw.tiles;
  // Absolute cycles as doubles: exact up to 2^53 and cheap to compare while drawing.
  const start = new Float64Array(n), end = new Float64Array(n);
  for (let i = 0; i < n; i++) { start[i] = startCol[i]; end[i] = startCol[i] + durCol[i]; }
  const pKind = new Uint8Array(pMeta.length);
  for (let p = 0; p < pMeta.length; p++) pKind[p] = meta[pMeta[p]].kind;

  // "Crop at initial sync": the call starts when the last tile has entered it (the
  // latest first sample over the tiles). The modelled tiles all start at cycle 0, so this
  // is 0 unless a profile records a staggered start.
  let firstSync = 0;
  for (let t = 0; t < tiles; t++) if (offsets[t] < offsets[t + 1]) firstSync = Math.max(firstSync, start[offsets[t]]);

  // Row labels: "tile N", or in a multi-chip profile "chip C tN" and "links N".
  const rowLabel = TVColumns.rowLabeller(raw);

  // The repeat remainder (loop iterations not in detail): [start, end] over the tiles, or null.
  let repeatRange = null;
  for (let i = 0; i < n; i++)
    if (pKind[payload[i]] === K.repeat)
      repeatRange = repeatRange ? [Math.min(repeatRange[0], start[i]), Math.max(repeatRange[1], end[i])] : [start[i], end[i]];

  // Colours: canvas ImageData words are little-endian RGBA, i.e. 0xAABBGGRR.
  function rgb(hex) { const v = parseInt(hex.slice(1), 16); return [v >> 16, (v >> 8) & 255, v & 255]; }
  function word(c) { return (0xff000000 | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0; }
  function fade(c, f) { return c.map(x => Math.round(x + (255 - x) * f)); }
  const COLOURS = {
    idle: '#e4e4e4', sync: '#d62728', transmit: '#ff9f1c', receive: '#1f77b4', both: '#9467bd', exchange: '#b7a6c9',
    repeat: '#8f8f8f', repeatStripe: '#d0d0d0', graph: '#17becf', background: '#ffffff',
    uncalibrated: '#000000',  // the hatching over uncalibrated compute samples
  };
  const KERNEL_PALETTE = ['#2ca02c', '#8c564b', '#bcbd22', '#1b7837', '#e377c2', '#7b4173', '#98df8a', '#637939',
    '#c49c94', '#ad494a', '#5aae61', '#d6616b', '#8ca252', '#a55194'];
  const kernels = [...new Set(meta.filter(m => m.kind === K.compute).map(m => m.kernel))].sort();
  const kernelColour = new Map(kernels.map((k, i) => [k, KERNEL_PALETTE[i % KERNEL_PALETTE.length]]));

  // The colour (hex) of one payload: compute by kernel, exchange by direction.
  function payloadHex(p) {
    const m = meta[pMeta[p]];
    switch (m.kind) {
      case K.compute: return kernelColour.get(m.kernel);
      case K.exchange: {
        const s = pSent[p] > 0, r = pRecv[p] > 0;
        return s && r ? COLOURS.both : s ? COLOURS.transmit : r ? COLOURS.receive : COLOURS.exchange;
      }
      case K.sync: return COLOURS.sync;
      case K.repeat: return COLOURS.repeat;
      case K.graph: return COLOURS.graph;
      default: return COLOURS.idle;
    }
  }
  const pFull = new Uint32Array(pMeta.length), pDim = new Uint32Array(pMeta.length);
  for (let p = 0; p < pMeta.length; p++) { const c = rgb(payloadHex(p)); pFull[p] = word(c); pDim[p] = word(fade(c, 0.82)); }
  const stripe = word(rgb(COLOURS.repeatStripe)), stripeDim = word(fade(rgb(COLOURS.repeatStripe), 0.82));

  // Filters -> per payload draw colour (0 = not drawn) and hatch colour. state per meta:
  // 0 hidden, 1 dimmed, 2 normal. focus: a flame-graph path [kind, kernel, phase, operation].
  const pColour = new Uint32Array(pMeta.length), pStripe = new Uint32Array(pMeta.length);
  const filter = { kinds: [true, true, true, true, true, true], search: '', limit: false, focus: null };
  function metaMatchesFocus(m, focus) {
    const keys = [TV.kindName(m.kind), m.kernel, m.phase, m.operation];
    for (let i = 0; i < focus.length; i++) if (keys[i] !== focus[i]) return false;
    return true;
  }
  function applyFilter() {
    const q = filter.search.trim().toLowerCase();
    const state = meta.map(m => {
      if (!filter.kinds[m.kind]) return 0;
      if (filter.focus && !metaMatchesFocus(m, filter.focus)) return filter.limit ? 0 : 1;
      if (q && !(m.operation.toLowerCase().includes(q) || m.phase.toLowerCase().includes(q) ||
                 m.kernel.toLowerCase().includes(q))) return filter.limit ? 0 : 1;
      return 2;
    });
    for (let p = 0; p < pMeta.length; p++) {
      const s = state[pMeta[p]];
      pColour[p] = s === 0 ? 0 : s === 1 ? pDim[p] : pFull[p];
      pStripe[p] = s === 0 ? 0 : s === 1 ? stripeDim : stripe;
    }
  }

  // First sample of a tile that ends after cycle t (binary search; samples are in time order).
  function firstEndingAfter(tile, t) { return TVColumns.firstEndingAfter(offsets, end, tile, t); }
  // The sample of a tile covering cycle t, or -1.
  function sampleAt(tile, t) {
    const i = firstEndingAfter(tile, t);
    return i < offsets[tile + 1] && start[i] <= t ? i : -1;
  }

  // Flame tree: kind > kernel > phase > operation, tile-cycles summed over all tiles.
  function buildFlame() {
    const root = { name: 'all', value: 0, children: new Map(), path: [] };
    const perPayload = new Float64Array(pMeta.length);
    for (let i = 0; i < n; i++) perPayload[payload[i]] += end[i] - start[i];
    for (let p = 0; p < pMeta.length; p++) {
      const m = meta[pMeta[p]], v = perPayload[p];
      if (!v) continue;
      root.value += v;
      let node = root;
      for (const key of [TV.kindName(m.kind), m.kernel, m.phase, m.operation]) {
        let child = node.children.get(key);
        if (!child) { child = { name: key, value: 0, children: new Map(), path: [...node.path, key] }; node.children.set(key, child); }
        child.value += v;
        node = child;
      }
    }
    return root;
  }

  // Peak FLOP per tile-cycle of a kernel (FP8 kernels have their own peak).
  const peaks = raw.peak_flops_per_tile_cycle;
  function peakOf(kernel) { return /fp8/i.test(kernel) ? peaks.fp8 : peaks.fp16; }

  // part / whole as a percentage that never rounds a non-zero part away (as the CLI prints it).
  function percentText(part, whole) {
    if (!(whole > 0) || part >= whole) return '100.0%';
    if (part <= 0) return '0.0%';
    const share = 100 * part / whole;
    return share < 0.05 ? '<0.1%' : share >= 99.95 ? '>99.9%' : share.toFixed(1) + '%';
  }
  const UNCALIBRATED_NOTE = 'derived from other kernels\' measured rates or from coefficients not fitted to ' +
    'this machine\'s kernel generation, not measured (docs/FIDELITY.md)';

  // Per-operation table over compute samples: count, cycles, per-tile balance, FLOPs.
  function buildOps() {
    const ops = new Map();
    for (let tile = 0; tile < tiles; tile++) {
      for (let i = offsets[tile]; i < offsets[tile + 1]; i++) {
        const p = payload[i], m = meta[pMeta[p]];
        if (m.kind !== K.compute) continue;
        const key = m.operation || m.kernel;
        let o = ops.get(key);
        if (!o) {
          o = { operation: key, kernels: new Set(), count: 0, cycles: 0, uncal: 0, max: 0, flops: 0, peakFlops: 0,
                tiles: 0, tileMax: 0, tileSum: 0, lastTile: -1, tileAcc: 0 };
          ops.set(key, o);
        }
        const d = end[i] - start[i];
        if (o.lastTile !== tile) {
          if (o.lastTile >= 0) { o.tileMax = Math.max(o.tileMax, o.tileAcc); o.tileSum += o.tileAcc; }
          o.lastTile = tile; o.tileAcc = 0; o.tiles++;
        }
        o.tileAcc += d;
        o.kernels.add(m.kernel);
        o.count++; o.cycles += d; o.uncal += pUncal[p]; o.max = Math.max(o.max, d);
        o.flops += pFlops[p]; o.peakFlops += d * peakOf(m.kernel);
      }
    }
    const clock = raw.clock_hz, bounds = raw.bounds ? raw.bounds.operations : {};
    return [...ops.values()].map(o => {
      const b = bounds[o.operation];  // [achieved, bound] tile-cycles over the whole call
      o.tileMax = Math.max(o.tileMax, o.tileAcc); o.tileSum += o.tileAcc;
      const seconds = o.cycles / clock;  // tile-seconds
      return {
        operation: o.operation, kernels: [...o.kernels].sort().join(', '), count: o.count, cycles: o.cycles, max: o.max,
        calibrated: o.cycles > 0 ? 1 - o.uncal / o.cycles : 1, uncal: o.uncal,
        tiles: o.tiles, balance: o.tiles ? o.tileMax / (o.tileSum / o.tiles) : 0, flops: o.flops,
        achieved: seconds > 0 ? o.flops / seconds : 0,  // FLOP/s per tile while it runs
        peak: seconds > 0 ? o.peakFlops / seconds : 0,
        utilisation: o.peakFlops > 0 ? o.flops / o.peakFlops : 0,
        bound: b ? b[1] : 0, ratio: b && b[1] > 0 ? b[0] / b[1] : 0,
      };
    });
  }

  Object.assign(TV, {
    raw, K, meta, offsets, start, end, payload, pMeta, pSent, pRecv, pFlops, pUncal, pKind, pColour, pStripe,
    percentText, UNCALIBRATED_NOTE,
    n, tiles, span: raw.span, clock: raw.clock_hz, firstSync, repeatRange, rowLabel, COLOURS, kernels, kernelColour, word, rgb,
    filter, applyFilter, firstEndingAfter, sampleAt, buildFlame, buildOps, peakOf,
    kindName: k => raw.kinds[k],
  });
  TV.applyFilter();
}
