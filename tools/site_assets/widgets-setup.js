/*
 * Loaded after require.js and before the widget manager (embed-amd.js) on
 * pages that embed widgets; see nb_ipywidgets_js in _config.yml.
 *
 * 1. The manager fetches its icon fonts relative to the AMD module
 *    "@jupyter-widgets/html-manager/dist/..."; point that module path at the
 *    folder this file sits in (absolute URL computed from this script's own
 *    address, so it works from any page depth, served or from disk).
 * 2. The widgets call the MathJax 2 API (MathJax.Hub.Queue) to typeset
 *    labels; the site runs MathJax 3. Give every MathJax object a small Hub
 *    that forwards to MathJax 3's typesetPromise.
 */
(function () {
  "use strict";
  var here = document.currentScript.src.replace(/[?#].*$/, "");
  var lib = here.substring(0, here.lastIndexOf("/"));
  require.config({ paths: { "@jupyter-widgets/html-manager/dist": lib + "/html-manager" } });

  var hub = {
    Queue: function (job) {
      var element = job && job[2];
      var mj = window.MathJax;
      if (!element || !mj || !mj.startup || !mj.startup.promise) {
        return; // MathJax has not started: its first pass typesets the whole page.
      }
      mj.startup.promise.then(function () {
        return mj.typesetPromise ? mj.typesetPromise([element]) : null;
      });
    }
  };
  function withHub(value) {
    if (value && typeof value === "object" && !value.Hub) {
      try { value.Hub = hub; } catch (e) { /* frozen object: nothing to do */ }
    }
    return value;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); }
  });
})();
