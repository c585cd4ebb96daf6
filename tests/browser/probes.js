// Measurements taken inside a built page (evaluated by tests/browser/conftest.py).
window.gotwProbe = window.gotwProbe || (function () {
  "use strict";
  var started = Date.now();
  var DEADLINE_MS = 20000;  // after this, ready() gives up waiting and measure() reports what is missing
  var mathDone = false;
  var mathHooked = false;
  var RAW_TEX = ["$$", "\\(", "\\)", "\\[", "\\]", "\\begin{", "\\frac", "\\mathrm"];

  function norm(s) { return (s || "").replace(/\s+/g, " ").trim(); }
  function viewScripts() {
    return Array.prototype.slice.call(
      document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'));
  }
  function subareaOf(script) {
    var prev = script.previousElementSibling;
    return prev && prev.classList.contains("widget-subarea") ? prev : null;
  }
  function mathReady() {
    var mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) { return document.readyState === "complete"; }
    if (!mathHooked) {
      mathHooked = true;
      mj.startup.promise.then(function () { mathDone = true; }, function () { mathDone = true; });
    }
    return mathDone;
  }
  function widgetsReady() {
    return viewScripts().every(function (s) {
      var area = subareaOf(s);
      return area && area.children.length > 0;
    });
  }
  function widgetState() {
    var tag = document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]');
    if (!tag) { return {}; }
    try { return JSON.parse(tag.textContent).state || {}; } catch (e) { return {}; }
  }
  function htmlText(markup) {
    var doc = new DOMParser().parseFromString(markup, "text/html");
    return norm(doc.body.textContent);
  }
  function resultsOf(state, modelId, seen) {
    // The calculator results (HTML widgets holding a results table or an error) under a model.
    if (seen[modelId] || !state[modelId]) { return []; }
    seen[modelId] = true;
    var s = state[modelId].state || {};
    var found = [];
    if (typeof s.value === "string" && /gotw-(results|error)/.test(s.value)) { found.push(htmlText(s.value)); }
    (s.children || []).forEach(function (ref) {
      found = found.concat(resultsOf(state, String(ref).replace(/^IPY_MODEL_/, ""), seen));
    });
    return found;
  }
  function luminance(rgb) {
    var c = rgb.map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function parseColor(s) {
    var m = (s || "").match(/rgba?\(([^)]+)\)/);
    if (!m) { return null; }
    var p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat);
    return { rgb: p.slice(0, 3), alpha: p.length > 3 ? p[3] : 1 };
  }
  function contrast() {
    var el = document.querySelector("main p, article p, .bd-article p") || document.body;
    var fg = parseColor(getComputedStyle(el).color);
    var bg = null, node = el;
    while (node && node.nodeType === 1) {
      var c = parseColor(getComputedStyle(node).backgroundColor);
      if (c && c.alpha > 0.5) { bg = c; break; }
      node = node.parentElement;
    }
    if (!bg) { bg = { rgb: [255, 255, 255], alpha: 1 }; }
    var l1 = luminance(fg.rgb), l2 = luminance(bg.rgb);
    return { ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05),
             color: fg.rgb, background: bg.rgb };
  }
  function rawTex() {
    var main = (document.querySelector("main") || document.body).cloneNode(true);
    main.querySelectorAll("pre, code, script, style, textarea, mjx-container, .highlight, .cell_input, .widget-subarea")
      .forEach(function (n) { n.remove(); });
    var text = main.textContent || "";
    var hits = [];
    RAW_TEX.forEach(function (t) {
      var i = text.indexOf(t);
      if (i >= 0) { hits.push(norm(text.slice(Math.max(0, i - 40), i + 40))); }
    });
    return hits;
  }
  function hash(s) {
    var h = 0;
    for (var i = 0; i < s.length; i++) { h = (h * 31 + s.charCodeAt(i)) | 0; }
    return s.length + ":" + h;
  }

  return {
    ready: function () {
      var m = mathReady(), w = widgetsReady();
      return (m && w) || Date.now() - started > DEADLINE_MS;
    },
    measure: function () {
      var state = widgetState();
      var maths = Array.prototype.slice.call(document.querySelectorAll(".math"));
      var views = viewScripts().map(function (s) {
        var id = "";
        try { id = JSON.parse(s.textContent).model_id; } catch (e) { id = ""; }
        var area = subareaOf(s);
        var shown = area ? norm(area.textContent) : "";
        var expected = resultsOf(state, id, {});
        var out = s.closest(".cell_output") || s.parentElement;
        var rest = out.cloneNode(true);
        rest.querySelectorAll("script, .widget-subarea, style").forEach(function (n) { n.remove(); });
        return {
          model: id,
          inState: Boolean(state[id]),
          rendered: Boolean(area && area.children.length > 0),
          controls: area ? area.querySelectorAll("input, select, button, textarea").length : 0,
          expected: expected,
          missing: expected.filter(function (t) { return shown.indexOf(t) < 0; }),
          fallback: norm(rest.textContent)
        };
      });
      return {
        theme: document.documentElement.dataset.theme || "",
        mode: document.documentElement.dataset.mode || "",
        mathjax: Boolean(window.MathJax && window.MathJax.startup),
        math: maths.length,
        mathRendered: maths.filter(function (m) { return m.querySelector("mjx-container"); }).length,
        mathUnrendered: maths.filter(function (m) { return !m.querySelector("mjx-container"); })
          .slice(0, 5).map(function (m) { return norm(m.textContent).slice(0, 80); }),
        rawTex: rawTex(),
        views: views,
        players: document.querySelectorAll(".gotw-player").length,
        contrast: contrast(),
        waitedMs: Date.now() - started
      };
    },
    player: function (id) {
      var p = document.getElementById(id);
      var frames = Array.prototype.slice.call(p.querySelectorAll(".gotw-frame"));
      var shown = frames.filter(function (f) { return f.style.display !== "none"; });
      var label = p.querySelector(".gotw-label");
      return {
        frame: p.dataset.frame,
        frames: frames.length,
        shown: shown.length,
        image: shown.length ? hash(shown[0].getAttribute("src") || "") : "",
        label: label ? label.textContent : "",
        timer: Boolean(p._timer)
      };
    }
  };
})();
