'use strict';
// Shared by model.html and compare.html: one base64 column of the embedded profile data
// (timeline_html.cpp, "columns") into its typed array (little-endian, as written), and the
// rows' labels.
const TVColumns = {
  // A row's label: "tile N", or in a multi-chip profile (row_groups [name, rows, loop
  // count]: the chips, then the links) "chip C tN" and "links N", as profile/rows.hpp names them.
  rowLabeller(raw) {
    const names = [];
    for (const [name, rows] of raw.row_groups || []) for (let r = 0; r < rows; r++) names.push(name + (name === 'links' ? ' ' : ' t') + r);
    return row => names[row] || 'tile ' + row;
  },
  decode(column) {
    const text = atob(column.base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const n = column.length;
    switch (column.type) {
      case 'u8': return bytes;
      case 'u16': return new Uint16Array(bytes.buffer, 0, n);
      case 'u32': return new Uint32Array(bytes.buffer, 0, n);
      case 'f64': return new Float64Array(bytes.buffer, 0, n);
    }
    throw new Error('unknown column type ' + column.type);
  },
  // Index of a tile's first sample ending after cycle t (samples of a tile are in time
  // order, tile t's at offsets[t] .. offsets[t+1]-1): a binary search.
  firstEndingAfter(offsets, end, tile, t) {
    let lo = offsets[tile], hi = offsets[tile + 1];
    while (lo < hi) { const mid = (lo + hi) >> 1; if (end[mid] <= t) lo = mid + 1; else hi = mid; }
    return lo;
  },
};
