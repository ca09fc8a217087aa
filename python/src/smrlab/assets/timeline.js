// Interactive timeline viewer of the smrlab report: rows = threads, boxes = free events,
// dots = epoch changes (also projected in a strip at the bottom). Wheel or buttons zoom, drag
// pans, hovering shows an event. Data: {rows, end, kinds, events: [{t, s, d, k, v}], ...}.
(function () {
  "use strict";
  const BOX_COLORS = ["#e69f00", "#009e73", "#d55e00", "#cc79a7", "#999933", "#882255", "#44aa99", "#aa4499"];
  const EPOCH = "#1f4fd1";
  const INSTANT_STYLE = { token_pass: "#333333", signal_sent: "#c0392b",
                          neutralized_restart: "#7d3c98", alloc_failure: "#e74c3c" };
  const ROW_MIN = 14, ROW_MAX = 26, AXIS = 26, STRIP = 22, TOP = 6, MIN_SPAN = 1000;

  function fmtMs(ns) { return (ns / 1e6).toFixed(3); }
  function fmtDur(ns) {
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (ns >= 1e3) return (ns / 1e3).toFixed(2) + " µs";
    return ns + " ns";
  }
  function niceStep(span, target) {
    const raw = span / target, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function lowerBound(a, x) { let lo = 0, hi = a.length; while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; } return lo; }

  class Viewer {
    constructor(root, data) {
      this.root = root; this.data = data;
      this.canvas = root.querySelector("canvas");
      this.tip = root.querySelector(".tl-tooltip");
      this.label = root.querySelector(".tl-window");
      this.ctx = this.canvas.getContext("2d");
      this.rows = data.rows;
      this.gutter = 56;
      this.rowIndex = new Map(this.rows.map((t, i) => [t, i]));
      this.full = [0, Math.max(data.end, 1)];
      this.view = this.full.slice();
      this.prepare();
      this.bind();
      this.resize();
    }
    prepare() {
      // Per row: boxes sorted by start with the longest duration (for culling), and instants.
      const kinds = this.data.kinds;
      this.boxes = this.rows.map(() => ({ s: [], e: [], k: [], v: [], maxD: 0 }));
      this.instants = this.rows.map(() => ({ s: [], k: [], v: [] }));
      this.epochTimes = [];
      for (const row of this.data.events) {
        const i = this.rowIndex.get(row.t); if (i === undefined) continue;
        let t = 0;
        for (let j = 0; j < row.s.length; j++) {
          t += row.s[j];  // starts are delta-encoded
          const kind = kinds[row.k[j]], d = row.d[j];
          if (kind === "batch_free" || kind === "free_call") {
            const b = this.boxes[i]; b.s.push(t); b.e.push(t + d); b.k.push(kind); b.v.push(row.v[j]);
            if (d > b.maxD) b.maxD = d;
          } else {
            const n = this.instants[i]; n.s.push(t); n.k.push(kind); n.v.push(row.v[j]);
            if (kind === "epoch_change") this.epochTimes.push(t);
          }
        }
      }
      this.epochTimes.sort((a, b) => a - b);
      this.hasBatch = this.boxes.some(b => b.k.includes("batch_free"));
    }
    bind() {
      this.root.querySelector(".tl-zoom-in").addEventListener("click", () => this.zoom(0.5));
      this.root.querySelector(".tl-zoom-out").addEventListener("click", () => this.zoom(2));
      this.root.querySelector(".tl-left").addEventListener("click", () => this.pan(-0.25));
      this.root.querySelector(".tl-right").addEventListener("click", () => this.pan(0.25));
      this.root.querySelector(".tl-reset").addEventListener("click", () => { this.view = this.full.slice(); this.draw(); });
      this.canvas.addEventListener("wheel", (ev) => {
        ev.preventDefault();
        const factor = Math.pow(1.0015, ev.deltaY);
        this.zoom(factor, this.timeAt(ev.offsetX));
      }, { passive: false });
      this.canvas.addEventListener("mousedown", (ev) => {
        this.drag = { x: ev.clientX, view: this.view.slice() };
        this.canvas.classList.add("dragging");
      });
      window.addEventListener("mouseup", () => { this.drag = null; this.canvas.classList.remove("dragging"); });
      window.addEventListener("mousemove", (ev) => {
        if (!this.drag) return;
        const span = this.drag.view[1] - this.drag.view[0];
        const dt = -(ev.clientX - this.drag.x) / this.plotWidth() * span;
        this.setView(this.drag.view[0] + dt, this.drag.view[1] + dt);
      });
      this.canvas.addEventListener("mousemove", (ev) => { if (!this.drag) this.hover(ev); });
      this.canvas.addEventListener("mouseleave", () => { this.tip.style.display = "none"; });
      this.canvas.addEventListener("dblclick", (ev) => this.zoom(0.5, this.timeAt(ev.offsetX)));
      window.addEventListener("resize", () => this.resize());
    }
    rowLabel(t) {
      const star = this.data.truncated.includes(t) ? "*" : "";
      return (t === this.data.stalled ? "stall" : "thread " + t) + star;
    }
    plotWidth() { return this.width - this.gutter - 10; }
    timeAt(x) { return this.view[0] + (x - this.gutter) / this.plotWidth() * (this.view[1] - this.view[0]); }
    xOf(t) { return this.gutter + (t - this.view[0]) / (this.view[1] - this.view[0]) * this.plotWidth(); }
    // Canvas position (CSS pixels) of time t on row i (what a pointer must hover; used by tests).
    pointOf(i, t) { return { x: this.xOf(t), y: TOP + i * this.rowH + this.rowH / 2 }; }
    setView(a, b) {
      let span = Math.max(b - a, MIN_SPAN);
      const fullSpan = this.full[1] - this.full[0];
      if (span > fullSpan) span = fullSpan;
      a = Math.min(Math.max(a, this.full[0]), this.full[1] - span);
      this.view = [a, a + span];
      this.draw();
    }
    zoom(factor, center) {
      const [a, b] = this.view;
      if (center === undefined) center = (a + b) / 2;
      this.setView(center - (center - a) * factor, center + (b - center) * factor);
    }
    pan(fraction) { const span = this.view[1] - this.view[0]; this.setView(this.view[0] + span * fraction, this.view[1] + span * fraction); }
    resize() {
      const ratio = window.devicePixelRatio || 1;
      this.width = this.canvas.parentElement.clientWidth;
      this.rowH = Math.max(ROW_MIN, Math.min(ROW_MAX, Math.floor(520 / this.rows.length)));
      this.height = TOP + this.rows.length * this.rowH + STRIP + AXIS;
      this.canvas.width = this.width * ratio; this.canvas.height = this.height * ratio;
      this.canvas.style.height = this.height + "px";
      this.ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      this.ctx.font = "11px system-ui, sans-serif";
      this.gutter = 14 + Math.max(this.ctx.measureText("epochs").width,
                             ...this.rows.map((t) => this.ctx.measureText(this.rowLabel(t)).width));
      this.draw();
    }
    draw() {
      const ctx = this.ctx, [a, b] = this.view, rowH = this.rowH;
      ctx.clearRect(0, 0, this.width, this.height);
      ctx.font = "11px system-ui, sans-serif";
      const plotBottom = TOP + this.rows.length * rowH;
      // Row backgrounds and labels.
      for (let i = 0; i < this.rows.length; i++) {
        const y = TOP + i * rowH;
        if (i % 2 === 0) { ctx.fillStyle = "#f6f8fa"; ctx.fillRect(this.gutter, y, this.plotWidth(), rowH); }
        ctx.fillStyle = "#333"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        const t = this.rows[i];
        ctx.fillText(this.rowLabel(t), this.gutter - 6, y + rowH / 2);
      }
      ctx.save();
      ctx.beginPath(); ctx.rect(this.gutter, 0, this.plotWidth(), this.height); ctx.clip();
      for (let i = 0; i < this.rows.length; i++) {
        const y = TOP + i * rowH, box = this.boxes[i];
        const first = lowerBound(box.s, a - box.maxD), last = lowerBound(box.s, b + 1);
        for (let j = first; j < last; j++) {
          if (box.e[j] < a) continue;
          const x0 = this.xOf(box.s[j]), x1 = Math.max(this.xOf(box.e[j]), x0 + 1);
          const nested = box.k[j] === "free_call" && this.hasBatch;
          const h = nested ? rowH * 0.45 : rowH * 0.8;
          ctx.fillStyle = nested ? "#202020" : BOX_COLORS[(j + i) % BOX_COLORS.length];
          ctx.fillRect(x0, y + (rowH - h) / 2, x1 - x0, h);
        }
        const inst = this.instants[i];
        for (let j = lowerBound(inst.s, a), n = lowerBound(inst.s, b + 1); j < n; j++) {
          const x = this.xOf(inst.s[j]);
          ctx.fillStyle = inst.k[j] === "epoch_change" ? EPOCH : (INSTANT_STYLE[inst.k[j]] || "#000");
          ctx.beginPath(); ctx.arc(x, y + rowH / 2, 3, 0, 2 * Math.PI); ctx.fill();
        }
      }
      // Epoch changes of all threads, projected in the strip at the bottom.
      ctx.fillStyle = EPOCH;
      for (let j = lowerBound(this.epochTimes, a), n = lowerBound(this.epochTimes, b + 1); j < n; j++) {
        ctx.beginPath(); ctx.arc(this.xOf(this.epochTimes[j]), plotBottom + STRIP / 2, 3, 0, 2 * Math.PI); ctx.fill();
      }
      ctx.restore();
      ctx.fillStyle = "#333"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
      ctx.fillText("epochs", this.gutter - 6, plotBottom + STRIP / 2);
      // Time axis in ms.
      const axisY = plotBottom + STRIP;
      ctx.strokeStyle = "#888"; ctx.beginPath(); ctx.moveTo(this.gutter, axisY); ctx.lineTo(this.gutter + this.plotWidth(), axisY); ctx.stroke();
      const step = niceStep(b - a, Math.max(2, this.plotWidth() / 110));
      const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step / 1e6))));
      ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillStyle = "#333";
      for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
        const x = this.xOf(t);
        ctx.beginPath(); ctx.moveTo(x, axisY); ctx.lineTo(x, axisY + 4); ctx.stroke();
        const text = (t / 1e6).toFixed(digits) + " ms", half = ctx.measureText(text).width / 2;
        ctx.fillText(text, Math.min(x, this.width - half - 2), axisY + 6);  // last label inside
      }
      this.label.textContent = fmtMs(a) + "–" + fmtMs(b) + " ms";
    }
    hover(ev) {
      const i = Math.floor((ev.offsetY - TOP) / this.rowH);
      let text = null;
      const tol = 3 * (this.view[1] - this.view[0]) / this.plotWidth();
      if (i >= 0 && i < this.rows.length && ev.offsetX >= this.gutter) {
        const t = this.timeAt(ev.offsetX), thread = this.rows[i];
        const inst = this.instants[i];
        for (let j = Math.max(0, lowerBound(inst.s, t - tol) ), n = lowerBound(inst.s, t + tol); j < n && !text; j++) {
          const what = { epoch_change: "epoch change → epoch " + inst.v[j], token_pass: "token passed to slot " + inst.v[j],
                         signal_sent: "signal sent to slot " + inst.v[j], neutralized_restart: "neutralized, restarted",
                         alloc_failure: "allocation failure" }[inst.k[j]] || inst.k[j];
          text = "thread " + thread + " · " + what + " at " + fmtMs(inst.s[j]) + " ms";
        }
        const box = this.boxes[i];
        // The innermost box under the cursor (a free call inside a batch free), and the
        // batch free around it, if any: both are named.
        let best = -1, batch = -1;
        for (let j = lowerBound(box.s, t - box.maxD - tol), n = lowerBound(box.s, t + tol); j < n; j++) {
          if (box.e[j] + tol < t) continue;
          if (best < 0 || box.e[j] - box.s[j] < box.e[best] - box.s[best]) best = j;
          if (box.k[j] === "batch_free" && (batch < 0 || box.e[j] - box.s[j] > box.e[batch] - box.s[batch])) batch = j;
        }
        const describe = (j) => {
          const what = box.k[j] === "batch_free" ? "batch free of " + box.v[j].toLocaleString() + " nodes" : "free call";
          return what + " · " + fmtMs(box.s[j]) + "–" + fmtMs(box.e[j]) + " ms (" + fmtDur(box.e[j] - box.s[j]) + ")";
        };
        if (!text && best >= 0) {
          text = "thread " + thread + " · " + describe(best);
          if (batch >= 0 && batch !== best) text += " · within " + describe(batch);
        }
      }
      if (!text) { this.tip.style.display = "none"; return; }
      this.tip.textContent = text;
      this.tip.style.display = "block";
      const x = Math.min(ev.offsetX + 12, this.width - this.tip.offsetWidth - 4);
      this.tip.style.left = x + "px"; this.tip.style.top = (ev.offsetY + 14) + "px";
    }
  }

  window.smrlabViewers = [];
  document.querySelectorAll(".timeline[data-source]").forEach((root) => {
    const data = JSON.parse(document.getElementById(root.dataset.source).textContent);
    window.smrlabViewers.push(new Viewer(root, data));
  });

  // Sortable tables: click a header to sort by that column.
  document.querySelectorAll("table.sortable").forEach((table) => {
    table.querySelectorAll("th").forEach((th, column) => {
      th.addEventListener("click", () => {
        const body = table.tBodies[0], rows = Array.from(body.rows);
        const asc = !th.classList.contains("sorted-asc");
        table.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        const key = (row) => { const c = row.cells[column]; const v = c.dataset.v ?? c.textContent; const n = parseFloat(v); return isNaN(n) ? v : n; };
        rows.sort((r1, r2) => { const x = key(r1), y = key(r2); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
        rows.forEach((row) => body.appendChild(row));
      });
    });
  });
})();
