// model.html, part 4: controls and interaction (zoom, pan, undo, filters, clicks), the
// first draw and the test hook window.tilevitTimeline.
{
  const $ = id => document.getElementById(id);
  const view = TV.view, rows = $('rows'), scroller = $('rows-scroll'), dragBox = $('drag-box');

  // Zoom history for undo (right-click, Backspace, u, the undo button).
  function pushHistory() {
    view.history.push([view.t0, view.t1]);
    if (view.history.length > 200) view.history.shift();
  }
  function zoomTo(a, b, remember = true) {
    if (remember) pushHistory();
    TV.setRange(a, b);
    changed();
  }
  function zoomBy(factor, anchorT) {
    const a = anchorT === undefined ? (view.t0 + view.t1) / 2 : anchorT;
    zoomTo(a - (a - view.t0) * factor, a + (view.t1 - a) * factor);
  }
  function fit() { zoomTo(TV.minT(), TV.maxT()); }
  function undo() {
    const prev = view.history.pop();
    if (prev) { TV.setRange(prev[0], prev[1]); changed(); }
  }
  function pan(cycles) { TV.setRange(view.t0 + cycles, view.t1 + cycles); changed(); }
  function changed() { TV.updateStats(); TV.requestDraw(); }
  function filtersChanged() { TV.applyFilter(); TV.filterVersion++; TV.drawFlame(); focusChip(); changed(); }

  $('zoom-in').onclick = () => zoomBy(0.5);
  $('zoom-out').onclick = () => zoomBy(2);
  $('zoom-fit').onclick = fit;
  $('zoom-undo').onclick = undo;

  // Kind filter check boxes (graph only when the profile has it).
  const present = new Set(TV.meta.map(m => m.kind));
  const kindColour = { compute: '#2ca02c', sync: TV.COLOURS.sync, exchange: TV.COLOURS.both, idle: TV.COLOURS.idle,
                       repeat: TV.COLOURS.repeat, graph: TV.COLOURS.graph };
  $('kinds').innerHTML = ['compute', 'sync', 'exchange', 'idle', 'repeat', 'graph']
    .filter(k => k !== 'graph' || present.has(TV.K.graph))
    .map(k => `<label><input type="checkbox" data-kind="${k}" checked><span class="swatch" style="background:${kindColour[k]}"></span>${k}</label>`).join('');
  $('kinds').addEventListener('change', e => {
    const k = e.target.dataset.kind;
    if (k) { TV.filter.kinds[TV.K[k]] = e.target.checked; filtersChanged(); }
  });

  let searchTimer = 0;
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { TV.filter.search = $('search').value; filtersChanged(); }, 120);
  });
  $('search-limit').addEventListener('change', e => { TV.filter.limit = e.target.checked; filtersChanged(); });
  TV.setSearch = q => { $('search').value = q; TV.filter.search = q; filtersChanged(); };

  function setRowHeight(h) {
    h = Math.max(1, Math.min(16, Math.round(h)));
    const topTile = scroller.scrollTop / view.rowH;
    view.rowH = h; $('row-height').value = h; $('row-height-value').textContent = h;
    TV.draw();  // resizes the spacer first, so the scroll position can be restored
    scroller.scrollTop = topTile * h;
    changed();
  }
  function setRowHeightControl(h) { view.rowH = h; $('row-height').value = h; $('row-height-value').textContent = h; }
  $('row-height').addEventListener('input', e => setRowHeight(+e.target.value));

  function setOrigin(mode) {
    view.origin = mode; $('origin').value = mode;
    view.history = [];
    TV.setRange(TV.minT(), TV.maxT());
    TV.filterVersion++;  // the overview spans a different range
    if (view.cursor !== null) TV.showAt(view.cursor);
    changed();
  }
  $('origin').addEventListener('change', e => setOrigin(e.target.value));

  function focusChip() {
    const f = TV.filter.focus;
    $('focus').innerHTML = f ? `<span class="chip">focus: ${TV.esc(f.map(x => x || '(none)').join(' > '))}</span> <button id="focus-clear">clear</button>` : '';
    if (f) $('focus-clear').onclick = () => { TV.filter.focus = null; filtersChanged(); };
  }
  const flameCanvas = $('flame'), tooltip = $('tooltip');
  flameCanvas.addEventListener('click', e => {
    const b = TV.flameAt(e.offsetX, e.offsetY);
    if (!b) return;
    TV.filter.focus = b.node.path.length ? b.node.path : null;
    filtersChanged();
  });
  flameCanvas.addEventListener('mousemove', e => {
    const b = TV.flameAt(e.offsetX, e.offsetY);
    if (!b) { tooltip.style.display = 'none'; return; }
    const n = b.node;
    showTooltip(e, `${n.path.map(x => x || '(none)').join(' > ') || 'all'}\n${Math.round(n.value).toLocaleString('en-US')} tile-cycles`);
  });
  flameCanvas.addEventListener('mouseleave', () => { tooltip.style.display = 'none'; });

  function showTooltip(e, text) {
    tooltip.textContent = text; tooltip.style.display = 'block';
    tooltip.style.left = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 4) + 'px';
    tooltip.style.top = Math.min(e.clientY + 14, window.innerHeight - tooltip.offsetHeight - 4) + 'px';
  }

  // Timeline mouse: drag = zoom to range; shift-drag or middle-drag = pan; click = inspect.
  let drag = null;
  rows.addEventListener('mousedown', e => {
    if (e.button === 2) return;
    e.preventDefault();
    scroller.focus({ preventScroll: true });
    const panMode = e.button === 1 || e.shiftKey;
    drag = { x: e.offsetX, y: e.offsetY, cx: e.clientX, cy: e.clientY, pan: panMode, t0: view.t0, t1: view.t1,
             top: scroller.scrollTop, moved: false };
  });
  window.addEventListener('mousemove', e => {
    if (!drag) {
      if (e.target !== rows) return;
      const h = TV.hit(e.offsetX, e.offsetY);
      if (!h || h.sample < 0) { tooltip.style.display = 'none'; return; }
      const m = TV.meta[TV.pMeta[TV.payload[h.sample]]];
      const d = TV.end[h.sample] - TV.start[h.sample];
      const u = TV.pUncal[TV.payload[h.sample]];
      const note = u > 0 ? `\nuncalibrated: ${Math.round(u).toLocaleString('en-US')} cycles ${TV.UNCALIBRATED_NOTE}` : '';
      showTooltip(e, `${TV.rowLabel(h.tile)}: ${TV.kindName(m.kind)} ${m.kernel}\n${m.operation || m.phase}\n${Math.round(d).toLocaleString('en-US')} cycles${note}`);
      return;
    }
    tooltip.style.display = 'none';
    const dx = e.clientX - drag.cx, dy = e.clientY - drag.cy;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.pan) {
      const cpp = (drag.t1 - drag.t0) / TV.plotWidth();
      TV.setRange(drag.t0 - dx * cpp, drag.t1 - dx * cpp);
      scroller.scrollTop = drag.top - dy;
      changed();
    } else if (drag.moved) {
      const x0 = Math.max(TV.LABEL_W, Math.min(drag.x, drag.x + dx)), x1 = Math.min(rows.clientWidth, Math.max(drag.x, drag.x + dx));
      dragBox.style.display = 'block'; dragBox.style.left = x0 + 'px'; dragBox.style.width = Math.max(1, x1 - x0) + 'px';
    }
  });
  window.addEventListener('mouseup', e => {
    if (!drag) return;
    const d = drag; drag = null;
    dragBox.style.display = 'none';
    if (d.pan) {
      if (d.moved) { view.history.push([d.t0, d.t1]); }
      return;
    }
    const dx = e.clientX - d.cx;
    if (d.moved && Math.abs(dx) > 4) {
      const a = TV.xToT(Math.min(d.x, d.x + dx)), b = TV.xToT(Math.max(d.x, d.x + dx));
      zoomTo(a, b);
    } else if (!d.moved) {
      const h = TV.hit(d.x, d.y);
      view.cursor = TV.xToT(d.x);
      TV.showAt(view.cursor);
      view.pinned = h ? h.sample : -1; view.pinnedTile = h ? h.tile : -1;
      TV.showDetails(view.pinned, view.pinnedTile);
      TV.requestDraw();
    }
  });
  rows.addEventListener('mouseleave', () => { tooltip.style.display = 'none'; });
  rows.addEventListener('contextmenu', e => { e.preventDefault(); undo(); });
  rows.addEventListener('auxclick', e => { if (e.button === 1) e.preventDefault(); });

  // Wheel: zoom at the pointer; one undo step per wheel gesture.
  let lastWheel = 0;
  rows.addEventListener('wheel', e => {
    e.preventDefault();
    if (e.shiftKey) { scroller.scrollTop += e.deltaY || e.deltaX; return; }
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) { pan(e.deltaX * TV.cyclesPerPixel()); return; }
    const now = performance.now();
    if (now - lastWheel > 400) pushHistory();
    lastWheel = now;
    const scale = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
    const factor = Math.exp(Math.max(-1, Math.min(1, e.deltaY * scale * 0.002)));
    const anchor = TV.xToT(Math.max(TV.LABEL_W, e.offsetX));
    TV.setRange(anchor - (anchor - view.t0) * factor, anchor + (view.t1 - anchor) * factor);
    changed();
  }, { passive: false });
  scroller.addEventListener('scroll', () => TV.requestDraw());
  window.addEventListener('resize', () => TV.requestDraw());

  // Overview strip: click or drag to centre the window there.
  const overview = $('overview');
  let overviewDrag = false;
  function overviewMove(e) {
    const r = overview.getBoundingClientRect(), w = r.width - TV.LABEL_W;
    const t = TV.minT() + (e.clientX - r.left - TV.LABEL_W) / w * (TV.maxT() - TV.minT());
    const half = (view.t1 - view.t0) / 2;
    TV.setRange(t - half, t + half); changed();
  }
  overview.addEventListener('mousedown', e => { e.preventDefault(); pushHistory(); overviewDrag = true; overviewMove(e); });
  window.addEventListener('mousemove', e => { if (overviewDrag) overviewMove(e); });
  window.addEventListener('mouseup', () => { overviewDrag = false; });

  document.addEventListener('keydown', e => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const w = view.t1 - view.t0;
    switch (e.key) {
      case '+': case '=': zoomBy(0.5); break;
      case '-': case '_': zoomBy(2); break;
      case '0': fit(); break;
      case 'Backspace': case 'u': undo(); break;
      case 'ArrowLeft': pan(-0.1 * w); break;
      case 'ArrowRight': pan(0.1 * w); break;
      case 'ArrowUp': scroller.scrollTop -= 3 * view.rowH; break;
      case 'ArrowDown': scroller.scrollTop += 3 * view.rowH; break;
      case 'PageUp': scroller.scrollTop -= scroller.clientHeight * 0.9; break;
      case 'PageDown': scroller.scrollTop += scroller.clientHeight * 0.9; break;
      case 'Escape':
        if (drag) { drag = null; dragBox.style.display = 'none'; break; }
        view.pinned = -1; view.cursor = null; TV.showDetails(-1); TV.showAt(null);
        if (TV.filter.focus) { TV.filter.focus = null; filtersChanged(); } else TV.requestDraw();
        break;
      default: return;
    }
    e.preventDefault();
  });

  // The hook for tests and scripts.
  window.tilevitTimeline = {
    rowCount: () => TV.tiles,
    drawnRows: () => view.drawnRows,
    visibleRange: () => [view.t0, view.t1],
    get drawMs() { return view.lastDrawMs; },
    get firstDrawAt() { return view.firstDrawMs; },  // performance.now() when first drawn
    draws: () => view.draws,
    samples: () => TV.n,
    // Pixels of the last frame hatched as uncalibrated kernels, and the samples that are.
    uncalibratedPixels: () => view.uncalibratedPixels,
    uncalibratedSamples: () => { let c = 0; for (let i = 0; i < TV.n; i++) if (TV.pUncal[TV.payload[i]] > 0) c++; return c; },
    firstUncalibrated: () => {  // [tile, sample] of the first uncalibrated sample, or null
      for (let t = 0; t < TV.tiles; t++)
        for (let i = TV.offsets[t]; i < TV.offsets[t + 1]; i++) if (TV.pUncal[TV.payload[i]] > 0) return [t, i];
      return null;
    },
    // Pins sample i of a tile (as a click on it does) and returns the details text.
    pin: (tile, i) => { view.pinned = i; view.pinnedTile = tile; TV.showDetails(i, tile); TV.requestDraw();
                        return document.getElementById('details').textContent; },
    zoomBy, zoomTo, fit, undo, setRowHeight, setOrigin, setSearch: TV.setSearch, draw: TV.draw,
  };

  // First draw right away, so the page is usable (and data-drawn set) without waiting a frame.
  // Rows fill the timeline when the tiles fit at 1-16 px, else 1 px and a scroll bar.
  setRowHeightControl(Math.max(1, Math.min(16, Math.floor(window.innerHeight * 0.62 / TV.tiles))));
  // The first screen shows where the time goes: the steps in detail (the repeat remainder,
  // when it is most of the call, a click away) and the largest compute costs.
  const rep = TV.repeatRange, whole = TV.maxT() - TV.minT();
  const skipRepeat = rep && rep[1] - rep[0] > 0.2 * whole;
  TV.setRange(TV.minT(), skipRepeat ? rep[0] + 0.04 * (rep[0] - TV.minT()) : TV.maxT());
  const ops = TV.buildOps().sort((a, b) => b.cycles - a.cycles), opCycles = ops.reduce((t, o) => t + o.cycles, 0);
  $('first-view').innerHTML = (skipRepeat ? `Showing the steps recorded in detail; the repeat remainder (cycles ${Math.round(rep[0]).toLocaleString('en-US')}\u2013${Math.round(rep[1]).toLocaleString('en-US')}) ` +
      `and the steps after it: <button id="whole-call" title="Show the whole call (0)">whole call</button> ` : '') +
    'Largest costs (compute tile-cycles in detail):' + ops.slice(0, 5).map(o =>
      `<span class="cost" data-op="${TV.esc(o.operation)}" title="search it">${TV.esc(o.operation)} ${TV.percentText(o.cycles, opCycles)}</span>`).join('');
  if (skipRepeat) $('whole-call').onclick = fit;
  $('first-view').addEventListener('click', e => { const c = e.target.closest('.cost'); if (c) TV.setSearch(c.dataset.op); });
  window.tilevitTimeline.repeatRange = () => rep && rep.slice();
  TV.legend(); TV.updateStats(); TV.drawFlame(); TV.drawSteps(); TV.drawOps(); focusChip();
  TV.draw();
}
