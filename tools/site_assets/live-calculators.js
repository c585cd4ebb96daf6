/*
 * Live calculators on the website: the page recomputes a calculator by running
 * the book's own Python function in Pyodide (Python compiled to WebAssembly,
 * vendored under lib/pyodide), never a copy of it in JavaScript.
 *
 * Loaded after the widget manager (see nb_ipywidgets_js in _config.yml). Each
 * calculator embeds a `_gotw_spec` (written by commlib.views.calculator.web_spec):
 * the "module:function" that computes it, its controls (name, kind, position,
 * range, dropdown values) and whether that function runs without numpy.
 *
 * - live: when a live calculator first comes into view (or at the first change
 *   of a control, whichever is first), Pyodide loads in the background (a quiet
 *   "preparing" line), the commlib modules the site ships (gotw-commlib.js, built
 *   with the book) are written into its file system, and each live calculator of
 *   the page is computed once, unseen, so that its modules and caches are warm.
 *   From then on every change calls commlib.views.results.run_spec, whose HTML
 *   replaces the results: the same text, and the same error message, as in a
 *   kernel. After each change a polite live region beside the results (aria-live,
 *   visually hidden) says the first result in one line ("Results: time per update
 *   1.3"), not the whole table; a bad entry's message is announced by its own
 *   role="alert". Sliders get their label as accessible name (widgets-setup.js).
 * - not live (simulations that need numpy, or a computation that is not a
 *   module-level function): the controls are disabled and a line says the
 *   calculator needs a live kernel, and why; the results shown are those stored.
 *
 * A page opened from disk (file://) cannot fetch files, so there Pyodide's data
 * files come from pyodide-files.js (base64, loaded with a <script> tag).
 */
(function () {
  "use strict";
  var here = document.currentScript.src.replace(/[?#].*$/, "");
  var lib = here.substring(0, here.lastIndexOf("/"));
  var pyodideDir = lib + "/pyodide/";
  var python = null;  // a promise of the ready Pyodide

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { resolve(); };
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  function serveFromScript() {
    // file://: answer Pyodide's fetches of its own data files from pyodide-files.js.
    var files = window.gotwPyodideFiles || {};
    var original = window.fetch;
    window.fetch = function (input, init) {
      var url = String(input && input.url ? input.url : input);
      var name = url.replace(/[?#].*$/, "").split("/").pop();
      if (url.indexOf(pyodideDir) === 0 && Object.prototype.hasOwnProperty.call(files, name)) {
        var raw = atob(files[name]);
        var bytes = new Uint8Array(raw.length);
        for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
        var type = /\.wasm$/.test(name) ? "application/wasm" : (/\.json$/.test(name) ? "application/json" : "application/zip");
        return Promise.resolve(new Response(bytes, { status: 200, headers: { "Content-Type": type } }));
      }
      return original.apply(this, arguments);
    };
  }

  function startPython() {
    if (python) { return python; }
    var fromDisk = location.protocol === "file:";
    // Pyodide's loader must not see RequireJS's define() (it is not an AMD module).
    var define = window.define, amd = define && define.amd;
    if (amd) { define.amd = undefined; }
    var scripts = [pyodideDir + "pyodide.js", pyodideDir + "pyodide-asm.js", lib + "/gotw-commlib.js"];
    if (fromDisk) { scripts.push(pyodideDir + "pyodide-files.js"); }
    python = scripts.reduce(function (p, src) { return p.then(function () { return loadScript(src); }); },
                            Promise.resolve())
      .then(function () {
        if (amd) { define.amd = amd; }
        if (fromDisk) { serveFromScript(); }
        return window.loadPyodide({
          indexURL: pyodideDir,
          createPyodideModule: window.gotwCreatePyodideModule,
          stdout: function () {}, stderr: function (s) { console.warn(s); }
        });
      })
      .then(function (py) {
        var sources = window.gotwCommlib || {};
        var root = "/home/pyodide/gotw/";
        Object.keys(sources).forEach(function (path) {
          var dir = (root + path).replace(/\/[^/]*$/, "");
          py.FS.mkdirTree(dir);
          py.FS.writeFile(root + path, sources[path]);
        });
        py.runPython("import sys\nsys.path.insert(0, '" + root + "')\n" +
                     "from commlib.views.results import run_spec, run_choices");
        return py;
      });
    python.catch(function (err) { if (amd) { define.amd = amd; } console.warn("Python did not start:", err); });
    return python;
  }
  window.gotwStartPython = startPython;

  function banner(text, cls) {
    return "<div class='" + cls + "' role='status' style='font-size:85%;font-style:italic;margin:0.3em 0'>" +
      text + "</div>";
  }

  function rawValue(model, control) {
    if (control.kind !== "choice") { return model.get("value"); }
    var index = model.get("index");
    return control.shown ? control.shown[index] : index;
  }

  // Dropdowns whose options depend on the other controls (spec.choices, a commlib function):
  // control.shown lists the indices into the control's full options that the dropdown offers now.
  function readShown(spec, children) {
    if (!spec.choices) { return; }
    spec.controls.forEach(function (c) {
      if (c.kind !== "choice") { return; }
      var labels = children[c.index].get("_options_labels") || [];
      c.shown = labels.map(function (label) { return c.labels.indexOf(label); });
    });
  }

  function applyChoices(py, spec, children, values) {
    // Narrow the dependent dropdowns as the kernel does (commlib.views.results.run_choices); returns
    // the values with any option no longer offered replaced.
    if (!spec.choices) { return values; }
    var run = py.globals.get("run_choices");
    var answer = JSON.parse(run(JSON.stringify(spec), JSON.stringify(values)));
    run.destroy();
    spec.controls.forEach(function (c) {
      var shown = answer.shown[c.name];
      if (!shown) { return; }
      var model = children[c.index];
      c.shown = shown;
      model.set("_options_labels", shown.map(function (k) { return c.labels[k]; }));
      model.set("index", shown.indexOf(answer.values[c.name]));
      values[c.name] = answer.values[c.name];
    });
    return values;
  }

  function valuesOf(spec, children) {
    var values = {};
    spec.controls.forEach(function (c) { values[c.name] = rawValue(children[c.index], c); });
    return values;
  }

  // Every live calculator of the page: {spec, children, output, state} (state.shown: the results on screen).
  var live = [];

  function warm(py) {
    // Compute each live calculator once, unseen: its modules are imported and its caches filled.
    var run = py.globals.get("run_spec");
    try {
      live.forEach(function (c) {
        try { run(JSON.stringify(c.spec), JSON.stringify(valuesOf(c.spec, c.children))); } catch (e) { /* shown on use */ }
      });
    } finally { run.destroy(); }
  }

  var PREPARING = "Preparing the calculators of this page…";
  var prepared = null;
  function prepare() {
    // Load Python in the background (a quiet line on each live calculator while it loads).
    if (prepared) { return prepared; }
    live.forEach(function (c) {
      if (!window.gotwPythonReady) { c.output.set("value", banner(PREPARING, "gotw-preparing") + c.state.shown); }
    });
    prepared = startPython().then(function (py) {
      warm(py);
      window.gotwPythonReady = true;
      window.gotwPreparedBy = window.gotwPreparedBy || "view";
      live.forEach(function (c) {
        if (c.output.get("value").indexOf("gotw-preparing") >= 0) { c.output.set("value", c.state.shown); }
      });
      return py;
    });
    prepared.catch(function () { /* reported by the first change */ });
    return prepared;
  }

  function whenRendered(model, then) {
    // The views of a model are created after its state is set: wait for the first, then hand over its element.
    var tries = 0;
    (function poll() {
      var views = model.views ? Object.values(model.views) : [];
      if (views.length) {
        views[0].then(function (view) { then(view.el); });
      } else if (++tries < 600) {
        setTimeout(poll, 100);
      }
    })();
  }

  var watcher = null;
  function watchInView(el) {
    if (!window.IntersectionObserver) { prepare(); return; }
    if (!watcher) {
      watcher = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) {
          watcher.disconnect();
          prepare();
        }
      }, { rootMargin: "200px 0px" });
    }
    watcher.observe(el);
  }

  function attachLive(spec, children, output, model) {
    var stored = output.get("value");
    var pending = 0;
    var applying = false;
    readShown(spec, children);
    var state = { shown: stored };
    live.push({ spec: spec, children: children, output: output, state: state });
    whenRendered(model, watchInView);
    var announcer = null;
    whenRendered(output, function (el) {
      // A quiet live region beside the results says what changed in one line; the results area itself
      // is not live, so a screen reader does not re-read the whole table on every change.
      announcer = document.createElement("div");
      announcer.className = "gotw-announce";
      announcer.setAttribute("aria-live", "polite");
      announcer.setAttribute("aria-atomic", "true");
      announcer.style.cssText = "position:absolute;width:1px;height:1px;margin:-1px;padding:0;border:0;" +
        "overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap";
      el.parentNode.insertBefore(announcer, el.nextSibling);
    });
    function announce(html) {
      // The first result, in words ("Results: time per update 1.3"); an error is announced by its own
      // role="alert", so nothing is added for it.
      if (!announcer) { return; }
      var doc = new DOMParser().parseFromString(html, "text/html");
      var row = doc.querySelector(".gotw-results tr");
      var th = row && row.querySelector("th"), td = row && row.querySelector("td");
      announcer.textContent = doc.querySelector(".gotw-error") || !th || !td ? "" :
        "Results: " + th.textContent.trim() + " " + td.textContent.trim();
    }
    function recompute() {
      if (applying) { return; }
      var ticket = ++pending;
      var values = valuesOf(spec, children);
      var started = performance.now();
      var loading = !window.gotwPythonReady;
      if (loading) { window.gotwPreparedBy = window.gotwPreparedBy || "change"; }
      var ready = prepare();   // (the first call puts the quiet "preparing" line on every live calculator)
      if (loading) {
        output.set("value", banner("Loading Python in this page (first time only)…", "gotw-loading") + state.shown);
      }
      ready.then(function (py) {
        if (ticket !== pending) { return; }
        applying = true;
        try { values = applyChoices(py, spec, children, values); } finally { applying = false; }
        var run = py.globals.get("run_spec");
        var html = run(JSON.stringify(spec), JSON.stringify(values));
        run.destroy();
        state.shown = html;
        output.set("value", html);
        announce(html);
        window.gotwLastRecompute = { ms: performance.now() - started, loading: loading };
      }, function () {
        output.set("value", banner("This calculator could not start Python in this page; " +
          "the results below are the stored ones.", "gotw-kernel-only") + stored);
      });
    }
    spec.controls.forEach(function (c) {
      children[c.index].on(c.kind === "choice" ? "change:index" : "change:value", recompute);
    });
  }

  function attachKernelOnly(spec, children, output) {
    spec.controls.forEach(function (c) { children[c.index].set("disabled", true); });
    output.set("value", banner("This calculator needs a live Python kernel (" + spec.why + "): open the " +
      "notebook in JupyterLab, Binder or Colab to change it. On this page its controls are fixed and the " +
      "results are those of the values shown.", "gotw-kernel-only") + output.get("value"));
  }

  window.gotwCalculators = [];
  function attach(models) {
    window.gotwStates = (window.gotwStates || 0) + 1;
    (models || []).forEach(function (model) {
      var raw = model.get && model.get("_gotw_spec");
      if (!raw) { return; }
      var spec = JSON.parse(raw);
      var children = model.get("children") || [];
      var output = children[spec.output];
      if (!output) { return; }
      if (spec.live) { attachLive(spec, children, output, model); } else { attachKernelOnly(spec, children, output); }
      window.gotwCalculators.push({ spec: spec, model: model });
    });
  }

  function patch(hm) {
    var proto = hm && hm.HTMLManager && hm.HTMLManager.prototype;
    if (!proto || proto.gotwPatched) { return; }
    proto.gotwPatched = true;
    var setState = proto.set_state;
    proto.set_state = function () {
      return setState.apply(this, arguments).then(function (models) {
        attach(models);
        return models;
      });
    };
  }

  // Patch the manager as soon as RequireJS defines it, before it renders anything (requiring it
  // here would run its module early, which changes where it looks for its icon fonts).
  var defined = window.requirejs.s.contexts._.defined;
  if (defined["@jupyter-widgets/html-manager"]) {
    patch(defined["@jupyter-widgets/html-manager"]);
  } else {
    var previous = window.requirejs.onResourceLoad;
    window.requirejs.onResourceLoad = function (context, map, deps) {
      if (previous) { previous.apply(this, arguments); }
      if (map && map.name === "@jupyter-widgets/html-manager") { patch(context.defined[map.name]); }
    };
  }
})();
