'use strict';
// compare.html, part 1: the comparison (compare.cpp, embedded as #compare-data) and the two
// profiles (#tilevit-data-a, #tilevit-data-b: model.html's data, timeline_html.cpp), decoded
// into flat arrays with one colour per payload. The parts share one object, CV.
const CV = {};
{
  const report = JSON.parse(document.getElementById('compare-data').textContent);
  const KIND_COLOURS = ['#2ca02c', '#e4e4e4', '#d62728', '#9467bd', '#8f8f8f', '#17becf'];
  const KERNEL_PALETTE = ['#2ca02c', '#8c564b', '#bcbd22', '#1b7837', '#e377c2', '#7b4173', '#98df8a', '#637939',
    '#c49c94', '#ad494a', '#5aae61', '#d6616b', '#8ca252', '#a55194'];
  function rgb(hex) { const v = parseInt(hex.slice(1), 16); return [v >> 16, (v >> 8) & 255, v & 255]; }
  function word(c) { return (0xff000000 | (c[2] << 16) | (c[1] << 8) | c[0]) >>> 0; }

  const raws = ['a', 'b'].map(s => JSON.parse(document.getElementById('tilevit-data-' + s).textContent));
  // One kernel palette over both sides, so a kernel has one colour on both timelines.
  const kernels = [...new Set(raws.flatMap(r => r.meta.filter(m => m[0] === 0).map(m => m[4])))].sort();
  const kernelColour = new Map(kernels.map((k, i) => [k, KERNEL_PALETTE[i % KERNEL_PALETTE.length]]));

  function side(raw) {
    const decode = TVColumns.decode;
    const meta = raw.meta.map(m => ({ kind: m[0], step: m[1], layer: m[2], phase: m[3], kernel: m[4], operation: m[5] }));
    const offsets = decode(raw.columns.offsets), startCol = decode(raw.columns.start), durCol = decode(raw.columns.duration);
    const payload = decode(raw.columns.payload), pMeta = decode(raw.payload_columns.meta);
    const n = raw.samples, start = new Float64Array(n), end = new Float64Array(n);
    for (let i = 0; i < n; i++) { start[i] = startCol[i]; end[i] = startCol[i] + durCol[i]; }
    const pColour = new Uint32Array(pMeta.length);
    for (let p = 0; p < pMeta.length; p++) {
      const m = meta[pMeta[p]];
      pColour[p] = word(rgb(m.kind === 0 ? kernelColour.get(m.kernel) : KIND_COLOURS[m.kind]));
    }
    const firstEndingAfter = (tile, t) => TVColumns.firstEndingAfter(offsets, end, tile, t);
    function sampleAt(tile, t) { const i = firstEndingAfter(tile, t); return i < offsets[tile + 1] && start[i] <= t ? i : -1; }
    function describe(i) {
      const m = meta[pMeta[payload[i]]];
      const what = m.kind === 0 ? m.operation + ' (' + m.kernel + ')' : raw.kinds[m.kind] + (m.phase ? ' ' + m.phase : '');
      return what + (m.layer >= 0 ? ', layer ' + m.layer : '') + '\n' + start[i] + '..' + end[i] + ' (' + (end[i] - start[i]) + ' cycles)';
    }
    let repeatStart = Infinity, repeatEnd = 0;  // the repeat remainder (loop iterations not in detail)
    for (let i = 0; i < n; i++)
      if (meta[pMeta[payload[i]]].kind === 4) repeatStart = Math.min(repeatStart, start[i]), repeatEnd = Math.max(repeatEnd, end[i]);
    return { raw, tiles: raw.tiles, span: raw.span, n, meta, offsets, start, end, payload, pMeta, pColour, repeatStart, repeatEnd,
             firstEndingAfter, sampleAt, describe, rowLabel: TVColumns.rowLabeller(raw) };
  }

  function fmt(v) { return v === null || v === undefined ? '\u2013' : Math.round(v).toLocaleString('en-US'); }
  function signed(v) { return (v > 0 ? '+' : v < 0 ? '\u2212' : '') + Math.abs(Math.round(v)).toLocaleString('en-US'); }
  function esc(s) { return String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]); }

  Object.assign(CV, { report, sides: raws.map(side), kernels, kernelColour, KIND_COLOURS, word, rgb, fmt, signed, esc });
}
