// model.html, part 3: the text around the timeline: header stats, legend, the pinned
// sample's details, what the tiles do at a clicked cycle, the flame graph and the
// per-operation table.
{
  const $ = id => document.getElementById(id);
  const esc = s => String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  const int = v => Math.round(v).toLocaleString('en-US');
  const us = cycles => (cycles / TV.clock * 1e6).toLocaleString('en-US', { maximumFractionDigits: 3 }) + ' \u00b5s';
  function si(v, unit) {
    const units = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [f, p] of units) if (Math.abs(v) >= f) return (v / f).toFixed(2) + ' ' + p + unit;
    return v.toFixed(2) + ' ' + unit;
  }

  // Loop iterations in detail: the profile's loop, or each chip's in a multi-chip profile.
  function loopText(r) {
    const detail = count => `${r.iterations_in_detail >= count ? 'all' : r.iterations_in_detail} of ${count}`;
    const chips = (r.row_groups || []).filter(g => g[2] > 0);
    if (!chips.length) return `${detail(r.loop[2])} iteration(s) in detail`;
    return chips.map(g => `${esc(g[0])}: ${detail(g[2])}`).join(', ') + ' iteration(s) in detail';
  }

  // Header: identity of the profile and the visible (selected) range, relative to the origin.
  function updateStats() {
    const r = TV.raw, v = TV.view, o = TV.originT();
    const sha = r.package_sha256 ? `<span class="sha" title="${esc(r.package_sha256)}">${esc(r.package_sha256.slice(0, 12))}</span>` : 'unknown';
    const items = [
      ['tiles', r.rows_text ? esc(r.rows_text) : int(r.tiles)], ['samples', int(r.samples)],
      ['selected', `${int(v.t0 - o)}\u2013${int(v.t1 - o)} (${int(v.t1 - v.t0)} cycles, ${us(v.t1 - v.t0)})`],
      ['cycles', `${int(r.span)} (${us(r.span)})`], ['clock', (r.clock_hz / 1e9).toFixed(3) + ' GHz'],
      ['machine', esc(r.machine)], ['model', esc(r.model || 'unknown')], ['plan', esc(r.plan || 'unknown')], ['package', sha],
      ['compute tile-cycles calibrated', `<span id="calibrated-share" title="of the compute tile-cycles of every tile and iteration; exchange and sync come from machine rules">${
        TV.percentText(r.tile_cycles[TV.K.compute] - r.uncalibrated_compute_cycles, r.tile_cycles[TV.K.compute])}</span>`],
      ['granularity', `${esc(r.granularity)}, ${loopText(r)}`],
      ['model validation', `<span id="model-validation">${esc(r.model_validation || 'unknown')}</span>`],
      ['origin', v.origin === 'sync' ? `initial sync, cycle ${int(TV.firstSync)}` : 'cycle 0'],
    ];
    if (r.bounds && r.bounds.call[1] > 0)
      items.push(['lower bound', `<span title="the plan search's: all tiles at peak, no exchange or sync">${int(r.bounds.call[1])} cycles, achieved ${(r.span / r.bounds.call[1]).toFixed(2)}x</span>`]);
    $('stats').innerHTML = items.map(([k, val]) => `<span>${k}: <b>${val}</b></span>`).join('');
  }

  function legend() {
    const C = TV.COLOURS, sw = c => `<span class="swatch" style="background:${c}"></span>`;
    const hatch = `<span class="swatch" style="background:repeating-linear-gradient(135deg,${C.repeat} 0 2px,${C.repeatStripe} 2px 4px)"></span>`;
    const parts = TV.kernels.map(k => `${sw(TV.kernelColour.get(k))} ${esc(k || '(compute)')}`);
    parts.push(`${sw(C.transmit)} transmit`, `${sw(C.receive)} receive`, `${sw(C.both)} transmit+receive`,
               `${sw(C.sync)} sync`, `${sw(C.idle)} idle`, `${hatch} repeat remainder`);
    if (TV.meta.some(m => m.kind === TV.K.graph)) parts.push(`${sw(C.graph)} whole graph`);
    if (TV.pUncal.some(v => v > 0)) {
      const mark = `<span class="swatch" style="background:repeating-linear-gradient(45deg,${C.uncalibrated} 0 1px,#fff 1px 4px)"></span>`;
      parts.push(`<span id="legend-uncalibrated" title="${esc(TV.UNCALIBRATED_NOTE)}">${mark} uncalibrated kernel (docs/FIDELITY.md)</span>`);
    }
    $('legend').innerHTML = parts.map(p => `<span>${p}</span>`).join('');
  }

  // The pinned sample: everything the profile knows about it.
  function showDetails(i, tile) {
    if (i < 0) { $('details').innerHTML = '&mdash;'; return; }
    const p = TV.payload[i], m = TV.meta[TV.pMeta[p]], o = TV.originT();
    const s = TV.start[i], e = TV.end[i], d = e - s, flops = TV.pFlops[p];
    const rows = [
      ['tile', TV.raw.row_groups ? TV.rowLabel(tile) : tile], ['kind', TV.kindName(m.kind)], ['kernel', m.kernel], ['operation', m.operation], ['phase', m.phase],
      ['layer', m.layer < 0 ? 'outside the loop' : m.layer], ['superstep', m.step < 0 ? '' : m.step], ['shape', m.shape],
      ['start', `${int(s - o)} cycles (${us(s - o)})${o ? `; absolute ${int(s)}` : ''}`],
      ['end', `${int(e - o)} cycles (${us(e - o)})${o ? `; absolute ${int(e)}` : ''}`],
      ['duration', `${int(d)} cycles (${us(d)})`],
      ['words sent', int(TV.pSent[p])], ['words received', int(TV.pRecv[p])], ['FLOPs', int(flops)],
    ];
    if (m.kind === TV.K.compute || m.kind === TV.K.graph) {
      const u = TV.pUncal[p];
      rows.push(['calibration', u > 0 ? `uncalibrated: ${int(u)} of ${int(d)} cycles ${TV.UNCALIBRATED_NOTE}`
                                      : 'calibrated: every term from measured kernels']);
    }
    if (flops > 0 && d > 0) {
      const peak = TV.peakOf(m.kernel);
      rows.push(['achieved', `${si(flops / (d / TV.clock), 'FLOP/s')} (${(100 * flops / (d * peak)).toFixed(1)}% of ${peak} FLOP/cycle)`]);
    }
    $('details').innerHTML = '<table>' + rows.filter(r => r[1] !== '')
      .map(([k, v]) => `<tr><td>${k}</td><td>${esc(v)}</td></tr>`).join('') + '</table>';
  }

  // What every tile does at cycle t: active tiles, per-kind counts, top operations.
  function showAt(t) {
    if (t === null) { $('at').innerHTML = '&mdash;'; return; }
    const kinds = new Array(6).fill(0), ops = new Map();
    let active = 0, none = 0;
    for (let tile = 0; tile < TV.tiles; tile++) {
      const i = TV.sampleAt(tile, t);
      if (i < 0) { none++; continue; }
      const m = TV.meta[TV.pMeta[TV.payload[i]]];
      kinds[m.kind]++;
      if (m.kind !== TV.K.idle) active++;
      const label = m.kind === TV.K.compute ? (m.operation || m.kernel) : `${TV.kindName(m.kind)} ${m.phase}`;
      ops.set(label, (ops.get(label) || 0) + 1);
    }
    const o = TV.originT();
    const top = [...ops.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
    const kindText = kinds.map((c, k) => c ? `${TV.kindName(k)} ${c}` : '').filter(Boolean).join(', ');
    $('at').innerHTML = `<table><tr><td>cycle</td><td>${int(t - o)} (${esc(us(t - o))})</td></tr>` +
      `<tr><td>active tiles</td><td>${active} of ${TV.tiles}${none ? ` (${none} without a sample)` : ''}</td></tr>` +
      `<tr><td>kinds</td><td>${esc(kindText || 'none')}</td></tr>` +
      `<tr><td>top operations</td><td>${top.map(([k, c]) => `${esc(k)}: ${c} tiles`).join('<br>') || '&mdash;'}</td></tr></table>`;
  }

  // Flame graph (icicle, root on top), widths in tile-cycles; click a node to focus on it.
  const flame = { root: null, boxes: [] };
  function drawFlame() {
    if (!flame.root) flame.root = TV.buildFlame();
    const canvas = $('flame'), dpr = window.devicePixelRatio || 1;
    const W = canvas.clientWidth, rowH = 21, H = rowH * 5;
    canvas.style.height = H + 'px';
    if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
      canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    flame.boxes = [];
    const focus = TV.filter.focus;
    const total = flame.root.value || 1;
    const visit = (node, x, depth) => {
      const w = node.value / total * W;
      if (w < 0.5) return;
      const y = depth * rowH;
      const onPath = !focus || focus.every((k, i) => node.path[i] === undefined || node.path[i] === k);
      const kind = node.path[0];
      let colour = '#c8c8c8';
      if (kind === 'compute') colour = node.path[1] !== undefined ? TV.kernelColour.get(node.path[1]) : '#2ca02c';
      else if (kind) colour = { sync: TV.COLOURS.sync, exchange: TV.COLOURS.both, idle: '#d0d0d0', repeat: TV.COLOURS.repeat, graph: TV.COLOURS.graph }[kind] || '#aaa';
      ctx.globalAlpha = onPath ? 1 : 0.3;
      ctx.fillStyle = colour; ctx.fillRect(x, y, Math.max(0.5, w - 1), rowH - 1);
      if (w > 40) {
        ctx.fillStyle = '#000';
        const label = `${node.name || '(none)'} ${(100 * node.value / total).toFixed(1)}%`;
        ctx.save(); ctx.beginPath(); ctx.rect(x, y, w - 1, rowH); ctx.clip();
        ctx.fillText(label, x + 3, y + rowH / 2); ctx.restore();
      }
      ctx.globalAlpha = 1;
      flame.boxes.push({ x, y, w, h: rowH, node });
      let cx = x;
      for (const child of [...node.children.values()].sort((a, b) => b.value - a.value)) {
        visit(child, cx, depth + 1);
        cx += child.value / total * W;
      }
    };
    visit(flame.root, 0, 0);
  }
  function flameAt(x, y) { return flame.boxes.find(b => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) || null; }

  // Operation table, sortable by any column.
  const ops = { rows: null, key: 'cycles', desc: true };
  const COLUMNS = [
    ['operation', 'operation', r => esc(r.operation)], ['kernels', 'kernel', r => esc(r.kernels)],
    ['count', 'samples', r => int(r.count)], ['tiles', 'tiles', r => int(r.tiles)],
    ['cycles', 'total cycles', r => int(r.cycles)], ['max', 'max cycles', r => int(r.max)],
    ['balance', 'balance', r => r.balance.toFixed(2)], ['flops', 'FLOPs', r => si(r.flops, '')],
    ['calibrated', 'calibrated', r => TV.percentText(r.cycles - r.uncal, r.cycles)],
    ['achieved', 'achieved FLOP/s/tile', r => si(r.achieved, '')], ['peak', 'peak FLOP/s/tile', r => si(r.peak, '')],
    ['utilisation', '% of peak', r => (100 * r.utilisation).toFixed(1)],
    ['bound', 'bound', r => r.bound ? int(r.bound) : '\u2013'], ['ratio', 'achieved/bound', r => r.ratio ? r.ratio.toFixed(2) : '\u2013'],
  ];
  const TIPS = { calibrated: 'share of the cycles from measured kernels (the rest is derived: docs/FIDELITY.md)', balance: 'max over tiles of the per-tile total cycles / mean over the tiles that ran it',
                 achieved: 'FLOPs / (total cycles / clock): the rate of a tile while it runs the operation',
                 bound: 'lower bound in tile-cycles over the whole call (the plan search\'s: all tiles at peak, no exchange or sync; docs/PROFILE_FORMAT.md)',
                 ratio: 'compute tile-cycles of the whole call / bound (1.00 = at the bound)',
                 peak: 'matrix-unit peak of the kernels (FP8 or FP16) x clock', utilisation: 'FLOPs / (cycles x peak FLOP per cycle)' };
  function drawOps() {
    if (!ops.rows) ops.rows = TV.buildOps();
    const sign = ops.desc ? -1 : 1, key = ops.key;
    const rows = [...ops.rows].sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * sign ||
                                             (a.operation < b.operation ? -1 : 1));
    const head = COLUMNS.map(([k, title]) => `<th data-key="${k}"${TIPS[k] ? ` title="${TIPS[k]}"` : ''}>${title}${k === key ? (ops.desc ? ' \u25be' : ' \u25b4') : ''}</th>`).join('');
    const body = rows.map(r => `<tr data-op="${esc(r.operation)}">` +
      COLUMNS.map(([k, , f]) => `<td${k === 'operation' ? ` class="op" title="${esc(r.operation)}"` : ''}>${f(r)}</td>`).join('') + '</tr>').join('');
    $('ops').innerHTML = rows.length ? `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>` : 'no compute samples';
  }
  $('ops').addEventListener('click', e => {
    const th = e.target.closest('th');
    if (th) { const k = th.dataset.key; ops.desc = ops.key === k ? !ops.desc : k !== 'operation' && k !== 'kernels'; ops.key = k; drawOps(); return; }
    const tr = e.target.closest('tr[data-op]');
    if (tr && TV.setSearch) TV.setSearch(tr.dataset.op);
  });

  // Step table (ideal against achieved per step, profile/bounds.hpp): sortable; without
  // recorded bounds the panel says so.
  const steps = { key: 'order', desc: false };
  const STEP_COLUMNS = [
    ['key', 'step', r => esc(r.key)], ['cycles', 'cycles', r => int(r.cycles)],
    ['share', '% of span', r => (100 * r.share).toFixed(1)],
    ['bound', 'bound', r => r.bound > 0 ? int(r.bound) : '\u2013'], ['ratio', 'achieved/bound', r => r.ratio ? r.ratio.toFixed(2) : '\u2013'],
  ];
  const STEP_TIPS = { bound: 'lower bound in cycles: the step\'s operations over its chip\'s tiles at peak, no exchange or sync (docs/PROFILE_FORMAT.md)',
                      ratio: 'cycles / bound (1.00 = at the bound)', share: 'the step\'s cycles over the whole call / the span' };
  function drawSteps() {
    const raw = TV.raw.bounds && TV.raw.bounds.steps;
    if (!raw) { $('steps').textContent = 'no bounds recorded in this profile'; return; }
    const all = raw.map(([key, cycles, bound], order) => ({ order, key, cycles, bound, share: cycles / TV.span,
                                                             ratio: bound > 0 && cycles > 0 ? cycles / bound : 0 }));
    const sign = steps.desc ? -1 : 1, key = steps.key;
    const rows = all.sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0) * sign || a.order - b.order);
    const head = STEP_COLUMNS.map(([k, title]) => `<th data-key="${k}"${STEP_TIPS[k] ? ` title="${STEP_TIPS[k]}"` : ''}>${title}${k === key ? (steps.desc ? ' \u25be' : ' \u25b4') : ''}</th>`).join('');
    const body = rows.map(r => '<tr>' + STEP_COLUMNS.map(([, , f]) => `<td>${f(r)}</td>`).join('') + '</tr>').join('');
    $('steps').innerHTML = `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }
  $('steps').addEventListener('click', e => {
    const th = e.target.closest('th');
    if (!th) return;
    const k = th.dataset.key === 'key' ? 'order' : th.dataset.key;
    steps.desc = steps.key === k ? !steps.desc : k !== 'order';
    steps.key = k;
    drawSteps();
  });

  Object.assign(TV, { updateStats, legend, showDetails, showAt, drawFlame, flameAt, drawOps, drawSteps, esc });
}
