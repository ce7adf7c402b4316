// Dashboard: draws the report's chart specifications (JSON in #dashboard-charts) as SVG, and, while the
// campaign runs, reloads the page only when its data changed (the server's fingerprint differs), never
// over filter choices the researcher has changed and not applied yet, nor while the tab is hidden.
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  // 30 colours that stay apart: 10 well-separated hues at three lightness levels.
  const HUES = [210, 30, 120, 0, 270, 180, 60, 330, 90, 240];
  const PALETTE = [];
  [45, 30, 62].forEach(function (light) { HUES.forEach(function (h) { PALETTE.push("hsl(" + h + ",70%," + light + "%)"); }); });
  const SHAPES = ["circle", "square", "triangle"];

  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(width, height) { return el("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img" }); }
  function legend(names, withShapes, title) {
    const box = document.createElement("div");
    box.className = "legend";
    if (title) { const b = document.createElement("strong"); b.textContent = title + ": "; box.appendChild(b); }
    names.forEach(function (name, i) {
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = PALETTE[i % PALETTE.length];
      if (withShapes && SHAPES[Math.floor(i / 10) % 3] === "circle") swatch.style.borderRadius = "50%";
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(name));
      box.appendChild(item);
    });
    return box;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined) return "";
    if (digits < 0) return v < 0.001 ? v.toExponential(0) : v.toFixed(3);
    return v.toFixed(digits);
  }
  function colour(spec, v) {
    if (v === null || v === undefined) return "#eee";
    const lo = spec.range[0], hi = spec.range[1];
    const t = Math.max(0, Math.min(1, (v - lo) / ((hi - lo) || 1)));
    if (spec.scheme === "sequential") return "hsl(210,70%," + Math.round(96 - 50 * t) + "%)";
    if (spec.scheme === "pvalue") return v < 0.05 ? "hsl(140,55%," + Math.round(35 + 300 * v) + "%)" : "hsl(0,0%,93%)";
    return t < 0.5 ? "hsl(5,70%," + Math.round(55 + 80 * t) + "%)" : "hsl(130,55%," + Math.round(95 - 80 * (t - 0.5)) + "%)";
  }

  // Text is drawn at 14px (CHAR: its average width), readable when the figure is not scaled down.
  const CHAR = 7.6;
  function longest(labels) { return Math.max.apply(null, labels.map(function (r) { return String(r).length; })); }

  function heatmap(spec) {
    const axis = spec.y_label ? 22 : 0;
    const cell = 58, rowH = 24, left = axis + 12 + CHAR * longest(spec.rows);
    // Column labels are turned by 40 degrees: the longest one sets the room above the cells.
    const top = (spec.x_label ? 24 : 0) + 16 + Math.ceil(CHAR * longest(spec.columns) * 0.66);
    const s = svg(left + cell * spec.columns.length + 10 + CHAR * 6, top + rowH * spec.rows.length + 10);
    if (spec.x_label) s.appendChild(el("text", { x: left + cell * spec.columns.length / 2, y: 16, "text-anchor": "middle", "font-weight": "bold" }, spec.x_label));
    if (spec.y_label) {
      const yy = top + rowH * spec.rows.length / 2;
      s.appendChild(el("text", { x: 14, y: yy, "text-anchor": "middle", "font-weight": "bold", transform: "rotate(-90 14 " + yy + ")" }, spec.y_label));
    }
    spec.columns.forEach(function (c, j) {
      s.appendChild(el("text", { x: left + cell * j + cell / 2, y: top - 6, transform: "rotate(-40 " + (left + cell * j + cell / 2) + " " + (top - 6) + ")" }, c));
    });
    spec.rows.forEach(function (r, i) {
      s.appendChild(el("text", { x: left - 6, y: top + rowH * i + 17, "text-anchor": "end" }, r));
      spec.columns.forEach(function (c, j) {
        const v = spec.values[i][j];
        const rect = el("rect", { x: left + cell * j, y: top + rowH * i, width: cell - 1, height: rowH - 1, fill: colour(spec, v) });
        rect.appendChild(el("title", {}, r + " × " + c + ": " + (v === null ? "–" : v)));
        s.appendChild(rect);
        s.appendChild(el("text", { x: left + cell * j + cell / 2, y: top + rowH * i + 17, "text-anchor": "middle" }, fmt(v, spec.digits)));
      });
    });
    return [s];
  }

  function bars(spec) {
    const groups = spec.categories.length, per = spec.series.length, band = Math.max(48, per * 9 + 12);
    const left = 70, top = 10, height = 200, bottom = 30 + Math.ceil(CHAR * longest(spec.categories) * 0.5) + (spec.x_label ? 24 : 0);
    const s = svg(left + band * groups + 10 + CHAR * longest(spec.categories) * 0.87, top + height + bottom);
    if (spec.y_label) {
      const yy = top + height / 2;
      s.appendChild(el("text", { x: 16, y: yy, "text-anchor": "middle", "font-weight": "bold", transform: "rotate(-90 16 " + yy + ")" }, spec.y_label));
    }
    if (spec.x_label) s.appendChild(el("text", { x: left + band * groups / 2, y: top + height + bottom - 6, "text-anchor": "middle", "font-weight": "bold" }, spec.x_label));
    const y = function (v) { return top + height - height * (v - spec.y_range[0]) / (spec.y_range[1] - spec.y_range[0]); };
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      const v = spec.y_range[0] + t * (spec.y_range[1] - spec.y_range[0]);
      s.appendChild(el("line", { x1: left, x2: left + band * groups, y1: y(v), y2: y(v), stroke: "#ddd" }));
      s.appendChild(el("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(2)));
    });
    spec.categories.forEach(function (cat, g) {
      spec.series.forEach(function (series, k) {
        const v = series.values[g] || 0, w = (band - 12) / per;
        const rect = el("rect", { x: left + band * g + 6 + k * w, y: y(v), width: Math.max(1, w - 1), height: y(spec.y_range[0]) - y(v), fill: PALETTE[k % PALETTE.length] });
        rect.appendChild(el("title", {}, cat + " · " + series.name + ": " + fmt(v, 3)));
        s.appendChild(rect);
      });
      const x = left + band * g + band / 2, yy = top + height + 12;
      s.appendChild(el("text", { x: x, y: yy, transform: "rotate(30 " + x + " " + yy + ")" }, cat));
    });
    return [s, legend(spec.series.map(function (x) { return x.name; }), false, "Error category")];
  }

  function marker(shape, x, y, fill) {
    if (shape === "square") return el("rect", { x: x - 2.5, y: y - 2.5, width: 5, height: 5, fill: fill, "fill-opacity": 0.55 });
    if (shape === "triangle") return el("path", { d: "M" + x + "," + (y - 3) + "l3,5.5h-6z", fill: fill, "fill-opacity": 0.55 });
    return el("circle", { cx: x, cy: y, r: 2.5, fill: fill, "fill-opacity": 0.55 });
  }

  function scatter(spec) {
    const all = [].concat.apply([], spec.series.map(function (s) { return s.x; }));
    const lo = Math.min.apply(null, all), hi = Math.max.apply(null, all);
    const left = 64, top = 10, width = 520, height = 260;
    const s = svg(left + width + 10, top + height + 40);
    const yMid = top + height / 2;
    s.appendChild(el("text", { x: 16, y: yMid, "text-anchor": "middle", "font-weight": "bold", transform: "rotate(-90 16 " + yMid + ")" }, spec.y_label || "human factuality"));
    const sx = function (v) { return left + width * (v - lo) / ((hi - lo) || 1); };
    const sy = function (v) { return top + height - height * v; };
    [0, 0.5, 1].forEach(function (v) { s.appendChild(el("text", { x: left - 4, y: sy(v) + 4, "text-anchor": "end" }, v)); });
    s.appendChild(el("text", { x: left + width / 2, y: top + height + 32, "text-anchor": "middle", "font-weight": "bold" }, spec.x_label + " (" + lo.toFixed(2) + " – " + hi.toFixed(2) + ")"));
    spec.series.forEach(function (series, k) {
      const shape = SHAPES[Math.floor(k / 10) % 3], fill = PALETTE[k % PALETTE.length];
      series.x.forEach(function (x, i) { s.appendChild(marker(shape, sx(x), sy(series.y[i]), fill)); });
    });
    return [s, legend(spec.series.map(function (x) { return x.name; }), true, "System")];
  }

  const DRAW = { heatmap: heatmap, bars: bars, scatter: scatter };
  const data = document.getElementById("dashboard-charts");
  if (data) {
    const charts = JSON.parse(data.textContent);
    document.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      const spec = charts[figure.dataset.chart];
      if (!spec || !DRAW[spec.type]) return;
      DRAW[spec.type](spec).forEach(function (node) { figure.appendChild(node); });
      figure.dataset.drawn = "1";
    });
  }

  const root = document.querySelector("[data-live-refresh]");
  if (!root) return;
  const seconds = Number(root.dataset.liveRefresh) || 60;
  const form = root.querySelector("form.filters");
  let dirty = false;
  if (form) form.addEventListener("change", function () { dirty = true; });
  const note = root.querySelector("[data-refresh-note]");
  const url = new URL(window.location.href);
  url.searchParams.set("fingerprint", "1");
  window.setInterval(function () {
    if (dirty) {
      if (note) note.textContent = "Automatic refresh paused: apply or reset your filter changes.";
      return;
    }
    if (document.visibilityState !== "visible") return;
    fetch(url.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (body && body.fingerprint !== root.dataset.fingerprint && !dirty) window.location.reload();
      })
      .catch(function () { /* offline for a moment: try again at the next tick */ });
  }, seconds * 1000);
})();
