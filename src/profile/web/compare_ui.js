// compare.html, part 4: zoom and pan (locked: one view for both timelines), alignment on a
// step, hover, the first draw and the test hook window.tilevitCompare.
{
  const $ = id => document.getElementById(id);
  const view = CV.view, tooltip = $('tooltip');
  const rows = CV.report.steps.rows.filter(r => r.start_a !== null && r.start_b !== null);

  function zoomBy(f, at) {
    const a = at === undefined ? (view.t0 + view.t1) / 2 : at;
    CV.setRange(a - (a - view.t0) * f, a + (view.t1 - a) * f);
    CV.requestDraw();
  }
  function fit() { CV.setRange(CV.lo(), CV.hi()); CV.requestDraw(); }
  // Shift B so that the step `key` starts where it starts in A ('' = the start of the call).
  function alignOn(key) {
    const r = rows.find(x => x.key === key);
    view.shift = r ? r.start_a - r.start_b : 0;
    $('align').value = r ? key : '';
    const w = view.t1 - view.t0, at = r ? r.start_a : 0;
    CV.setRange(at - w * 0.1, at + w * 0.9);
    CV.requestDraw();
  }
  $('align').innerHTML = '<option value="">start of the call</option>' +
    rows.slice().sort((x, y) => x.start_a - y.start_a).map(r => `<option value="${CV.esc(r.key)}">${CV.esc(r.key)}</option>`).join('');
  $('align').onchange = e => alignOn(e.target.value);
  $('zoom-in').onclick = () => zoomBy(0.5);
  $('zoom-out').onclick = () => zoomBy(2);
  $('zoom-fit').onclick = fit;
  document.addEventListener('keydown', e => {
    if (e.target.tagName === 'SELECT' || e.target.tagName === 'INPUT') return;
    if (e.key === '+' || e.key === '=') zoomBy(0.5);
    else if (e.key === '-') zoomBy(2);
    else if (e.key === '0') fit();
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const d = (view.t1 - view.t0) / 10 * (e.key === 'ArrowLeft' ? -1 : 1);
      CV.setRange(view.t0 + d, view.t1 + d); CV.requestDraw();
    }
  });

  let drag = null;
  CV.canvases.forEach((canvas, k) => {
    canvas.addEventListener('wheel', e => {
      e.preventDefault();
      const r = canvas.getBoundingClientRect(), at = CV.xToT(e.clientX - r.left);
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const d = (view.t1 - view.t0) * (e.deltaX || e.deltaY) / 1000;
        CV.setRange(view.t0 + d, view.t1 + d); CV.requestDraw();
      } else zoomBy(Math.pow(1.0015, e.deltaY), at);
    }, { passive: false });
    canvas.addEventListener('mousedown', e => { drag = { x: e.clientX, t0: view.t0, t1: view.t1 }; });
    canvas.addEventListener('dblclick', fit);
    canvas.addEventListener('mousemove', e => {
      if (drag) return;
      const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      const s = CV.sides[k], nRows = Math.min(s.tiles, canvas.height), tile = Math.floor(Math.floor(y / (canvas.height / nRows)) * s.tiles / nRows);
      const i = x > CV.LABEL_W && tile < s.tiles ? s.sampleAt(tile, CV.xToT(x) - (k ? view.shift : 0)) : -1;
      if (i < 0) { tooltip.style.display = 'none'; return; }
      tooltip.textContent = (k ? 'B' : 'A') + ', ' + s.rowLabel(tile) + ': ' + s.describe(i);
      tooltip.style.left = (e.clientX + 12) + 'px'; tooltip.style.top = (e.clientY + 12) + 'px'; tooltip.style.display = 'block';
    });
    canvas.addEventListener('mouseleave', () => { tooltip.style.display = 'none'; });
  });
  window.addEventListener('mousemove', e => {
    if (!drag) return;
    const d = (e.clientX - drag.x) * (drag.t1 - drag.t0) / Math.max(1, CV.canvases[0].clientWidth - CV.LABEL_W);
    CV.setRange(drag.t0 - d, drag.t1 - d); CV.requestDraw();
  });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('resize', () => { CV.requestDraw(); CV.drawFlame(); CV.drawMemory(); });

  window.tilevitCompare = {
    drawnRows: () => view.rows.slice(),
    paintedPixels: () => view.painted.slice(),  // per side: painted pixel columns summed over drawn rows
    rowLabels: () => view.labels.map(l => l.slice()),  // per side: the row labels drawn
    visibleRange: () => [view.t0, view.t1],
    shift: () => view.shift,
    zoomTo: (a, b) => { CV.setRange(a, b); CV.draw(); },
    zoomBy: f => { zoomBy(f); CV.draw(); },
    fit: () => { fit(); CV.draw(); },
    alignOn: key => { alignOn(key); CV.draw(); },
    stepTotal: () => Object.assign({}, CV.stepTotal),
    stepRows: () => document.querySelectorAll('#steps tbody tr[data-row]').length,
    get drawMs() { return view.drawMs; },
    get firstDrawAt() { return view.firstDrawMs; },
    draws: () => view.draws,
  };
  CV.alignOn = alignOn;
  // As model.html: open on the steps in detail when the repeat remainder is most of both calls ("fit": all).
  const [a, b] = CV.sides, detailEnd = Math.max(a.repeatStart, b.repeatStart);
  const mostlyRepeat = a.repeatEnd - a.repeatStart > 0.2 * a.span && b.repeatEnd - b.repeatStart > 0.2 * b.span;
  CV.setRange(CV.lo(), mostlyRepeat ? detailEnd * 1.04 : CV.hi());
  CV.draw();
  CV.drawFlame();
  CV.drawMemory();
}
