'use strict';
// memory.html, memory over time: per superstep, the live bytes of the fullest tile and of
// the whole chip by purpose (stacked bars), the peak step named with its largest
// allocations (#memory-time: memory_map_json.cpp, over_time_json). Test hook:
// window.tilevitMemoryTime.
(function () {
  const T = JSON.parse(document.getElementById('memory-time').textContent);
  const COLOURS = { weights: '#4e79a7', activations: '#f28e2b', exchange: '#b07aa1', scratch: '#e15759', support: '#59a14f' };
  const $ = id => document.getElementById(id);
  const fmt = v => Math.round(v).toLocaleString('en-US');
  const esc = s => String(s).replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  const steps = T.fullest.length, sum = a => a.reduce((x, y) => x + y, 0);
  const peak = T.peak;
  $('time-note').textContent = `per superstep, at its fuller phase; left: tile ${T.fullest_tile} (the fullest), right: the whole chip`;
  $('time-legend').innerHTML = T.purposes.map(p => `<span><span class="swatch" style="background:${COLOURS[p]}"></span>${p}</span>`).join(' ');
  $('time-peak').innerHTML = `Peak: <b>${fmt(peak.bytes)} B</b> on tile ${T.fullest_tile} at step ${peak.step} ` +
    `(<b>${esc(peak.label)}</b>, ${peak.phase % 2 ? 'exchange' : 'compute'} phase). Largest allocations live there:` +
    `<table>${peak.largest.map(a => `<tr><td class="n">${fmt(a.bytes)} B</td><td>${esc(a.purpose)}</td><td>${esc(a.name)}</td></tr>`).join('')}</table>`;

  function chart(canvas, series, title) {
    const W = canvas.clientWidth, H = canvas.clientHeight;
    canvas.width = W; canvas.height = H;
    const ctx = canvas.getContext('2d'), top = 16, left = 4, plotH = H - top - 14;
    const max = Math.max(1, ...series.map(sum)), bw = (W - left) / Math.max(1, steps);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    series.forEach((values, s) => {
      let y = top + plotH;
      values.forEach((v, p) => {
        const h = v / max * plotH;
        ctx.fillStyle = COLOURS[T.purposes[p]];
        ctx.fillRect(left + s * bw, y - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
        y -= h;
      });
    });
    const x = left + (peak.step + 0.5) * bw;
    ctx.strokeStyle = '#000'; ctx.setLineDash([3, 3]); ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + plotH); ctx.stroke();
    ctx.setLineDash([]); ctx.fillStyle = '#222'; ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'top';
    ctx.fillText(`${title}: up to ${fmt(max)} B`, left, 1);
    ctx.fillText(`steps 0\u2013${steps - 1}`, left, top + plotH + 2);
    return max;
  }
  let maxima = [0, 0];
  function draw() { maxima = [chart($('time-fullest'), T.fullest, 'tile ' + T.fullest_tile), chart($('time-chip'), T.chip, 'chip')]; }
  function stepAt(canvas, e) {
    const r = canvas.getBoundingClientRect(), s = Math.floor((e.clientX - r.left - 4) / ((r.width - 4) / Math.max(1, steps)));
    return s >= 0 && s < steps ? s : -1;
  }
  const tooltip = $('tooltip');
  for (const [id, series] of [['time-fullest', T.fullest], ['time-chip', T.chip]]) {
    $(id).addEventListener('mousemove', e => {
      const s = stepAt($(id), e);
      if (s < 0) { tooltip.style.display = 'none'; return; }
      tooltip.textContent = `step ${s}: ${T.step_labels[s]}\n` + T.purposes.map((p, i) => `${p}: ${fmt(series[s][i])} B`).join('\n') +
        `\ntotal: ${fmt(sum(series[s]))} B`;
      tooltip.style.left = (e.clientX + 12) + 'px'; tooltip.style.top = (e.clientY + 12) + 'px'; tooltip.style.display = 'block';
    });
    $(id).addEventListener('mouseleave', () => { tooltip.style.display = 'none'; });
  }
  window.addEventListener('resize', draw);
  draw();
  window.tilevitMemoryTime = {
    steps: () => steps, peakStep: () => peak.step, peakBytes: () => peak.bytes, fullestTile: () => T.fullest_tile,
    maxFullest: () => Math.max(...T.fullest.map(sum)), drawnMaxima: () => maxima.slice(),
  };
})();
