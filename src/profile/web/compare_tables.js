// compare.html, part 3: the header (both runs and what differs), the step, operation and
// kernel tables, the flame-graph difference and the memory peaks per tile.
{
  const $ = id => document.getElementById(id);
  const R = CV.report, names = R.names, esc = CV.esc;

  function sideText(s, key) {
    return `<b class="${key}">${key.toUpperCase()}</b> ${esc(names[key])}: ${esc(s.model)} on ${esc(s.machine)} (${esc(s.rows || s.tiles + ' tiles')})` +
      (s.plan ? `, plan: ${esc(s.plan)}` : '') + `, span <b>${CV.fmt(s.span_cycles)}</b> cycles` +
      (s.memory_peak ? `, fullest ${esc(s.memory_peak.row || 'tile ' + s.memory_peak.tile)}: ${CV.fmt(s.memory_peak.bytes)} B` : '');
  }
  $('names').innerHTML = `<div>${sideText(R.sides.a, 'a')}</div><div>${sideText(R.sides.b, 'b')}</div>` +
    `<div>B &minus; A: <b>${CV.signed(R.span_delta)}</b> cycles (${(100 * R.span_delta / Math.max(1, R.span_a)).toFixed(3)}%)</div>`;
  $('differences').textContent = R.differences.length ? 'differs: ' + R.differences.join('; ') : 'same model, machine, plan and package';
  $('label-a').innerHTML = `<b class="a">A</b> ${esc(names.a)}`;
  $('label-b').innerHTML = `<b class="b">B</b> ${esc(names.b)}`;
  $('legend').innerHTML = CV.kernels.map(k => `<span><span class="swatch" style="background:${CV.kernelColour.get(k)}"></span> ${esc(k)}</span>`).join('') +
    ['idle', 'sync', 'exchange', 'repeat', 'graph'].map((k, i) =>
      `<span><span class="swatch" style="background:${CV.KIND_COLOURS[i + 1]}"></span> ${k}</span>`).join('');

  const SHOWN = 40;
  // A table of rows {key, cycles_a, cycles_b, delta}, ordered as given; the first SHOWN
  // rows, "show all" for the rest, and a total row over every row when asked.
  function table(el, rows, first, total) {
    let all = false;
    function render() {
      const shown = all ? rows : rows.slice(0, SHOWN);
      const cls = d => d > 0 ? 'up' : d < 0 ? 'down' : '';
      let h = `<div class="table-wrap"><table><thead><tr><th>${first}</th><th>A</th><th>B</th><th>B &minus; A</th><th>%</th></tr></thead><tbody>`;
      shown.forEach((r, i) => {
        const pct = r.cycles_a > 0 && r.cycles_b !== null ? (100 * r.delta / r.cycles_a).toFixed(1) + '%' : '';
        h += `<tr data-row="${i}"><td class="key" title="${esc(r.key)}">${esc(r.key)}</td><td>${CV.fmt(r.cycles_a)}</td>` +
             `<td>${CV.fmt(r.cycles_b)}</td><td class="${cls(r.delta)}">${CV.signed(r.delta)}</td><td>${pct}</td></tr>`;
      });
      if (total) h += `<tr class="total"><td>total (${rows.length} rows)</td><td>${CV.fmt(total.a)}</td><td>${CV.fmt(total.b)}</td>` +
                      `<td class="${cls(total.b - total.a)}">${CV.signed(total.b - total.a)}</td><td></td></tr>`;
      h += '</tbody></table></div>';
      if (rows.length > SHOWN) h += `<button class="more">${all ? 'show the first ' + SHOWN : 'show all ' + rows.length + ' rows'}</button>`;
      el.innerHTML = h;
      const more = el.querySelector('button.more');
      if (more) more.onclick = () => { all = !all; render(); };
    }
    render();
  }
  const steps = R.steps.rows;
  const stepTotal = steps.reduce((t, r) => ({ a: t.a + (r.cycles_a || 0), b: t.b + (r.cycles_b || 0) }), { a: 0, b: 0 });
  table($('steps'), steps, 'step', stepTotal);
  table($('ops'), R.operations, 'operation', null);
  table($('kernels'), R.kernels, 'kernel', null);
  $('steps').addEventListener('click', e => {
    const tr = e.target.closest('tr[data-row]');
    if (tr) CV.alignOn(steps[+tr.dataset.row].key);
  });

  // Flame-graph difference: a tree over both sides, each node as wide as its larger side.
  function buildTree() {
    const root = { name: 'all', a: 0, b: 0, children: new Map() };
    for (const f of R.flame) {
      let node = root;
      root.a += f.a; root.b += f.b;
      for (const key of [f.kind, f.kernel, f.phase, f.operation]) {
        let c = node.children.get(key);
        if (!c) { c = { name: key, a: 0, b: 0, children: new Map(), parent: node }; node.children.set(key, c); }
        c.a += f.a; c.b += f.b;
        node = c;
      }
    }
    return root;
  }
  const tree = buildTree();
  let flameRoot = tree, flameBoxes = [];
  function flameColour(n) {
    const m = Math.max(n.a, n.b), d = m > 0 ? (n.b - n.a) / m : 0, f = Math.min(1, Math.abs(d) * 3);
    const base = d > 0 ? [214, 39, 40] : [31, 95, 168];
    return `rgb(${base.map(c => Math.round(235 + (c - 235) * f)).join(',')})`;
  }
  function drawFlame() {
    const c = $('flame'), W = c.clientWidth, rowH = 22, depth = 5;
    c.width = W; c.height = rowH * depth; c.style.height = rowH * depth + 'px';
    const ctx = c.getContext('2d');
    ctx.clearRect(0, 0, W, c.height);
    ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    flameBoxes = [];
    const width = n => Math.max(n.a, n.b);
    function place(n, x, w, level) {
      if (w < 0.5 || level >= depth) return;
      ctx.fillStyle = flameColour(n); ctx.fillRect(x, level * rowH, Math.max(1, w - 1), rowH - 1);
      flameBoxes.push({ n, x, w, y: level * rowH });
      const d = n.b - n.a, label = `${n.name || '(none)'} ${CV.signed(d)}`;
      if (w > 40) { ctx.fillStyle = '#111'; ctx.fillText(label.slice(0, Math.floor(w / 6)), x + 3, level * rowH + rowH / 2); }
      let cx = x;
      const kids = [...n.children.values()].sort((p, q) => width(q) - width(p)), total = kids.reduce((t, k) => t + width(k), 0);
      for (const k of kids) { const kw = total > 0 ? w * width(k) / total : 0; place(k, cx, kw, level + 1); cx += kw; }
    }
    place(flameRoot, 0, W, 0);
  }
  $('flame').addEventListener('click', e => {
    const r = $('flame').getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    const hit = flameBoxes.find(b => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + 22);
    if (!hit) return;
    flameRoot = hit.n === flameRoot ? (flameRoot.parent || tree) : hit.n;
    drawFlame();
  });

  // Memory peaks per tile: two series over the tiles (A blue, B orange).
  function drawMemory() {
    const pa = R.peaks_a, pb = R.peaks_b, c = $('memory');
    if (!pa.length && !pb.length) {
      $('memory-note').textContent = 'not recorded in these profiles (written by tilevit run from this version on)';
      c.style.display = 'none';
      return;
    }
    const max = Math.max(1, ...pa, ...pb), W = c.clientWidth, H = c.clientHeight;
    $('memory-note').textContent = `A: ${pa.length ? 'fullest ' + CV.fmt(Math.max(...pa)) + ' B' : 'not recorded'}; ` +
      `B: ${pb.length ? 'fullest ' + CV.fmt(Math.max(...pb)) + ' B' : 'not recorded'}; scale 0 \u2013 ${CV.fmt(max)} B`;
    c.width = W; c.height = H;
    const ctx = c.getContext('2d'), tiles = Math.max(pa.length, pb.length);
    for (const [series, colour] of [[pa, '#1f5fa8'], [pb, '#d9822b']]) {
      ctx.strokeStyle = colour; ctx.beginPath();
      series.forEach((v, t) => { const x = (t + 0.5) / tiles * W, y = H - 2 - v / max * (H - 4); t ? ctx.lineTo(x, y) : ctx.moveTo(x, y); });
      ctx.stroke();
    }
  }
  Object.assign(CV, { drawFlame, drawMemory, stepTotal, flameTree: tree });
}
