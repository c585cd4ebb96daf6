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
 * 3. A slider's handle (role "slider") has no accessible name of its own: the
 *    widget's visible label sits beside it, not tied to it. Name every handle
 *    after its label as the widgets render, so a screen reader says
 *    "learners P, slider, 8", not just "slider". The editable number box beside
 *    it (".widget-readout", contenteditable) is named "<label> (value)" and, when
 *    it has no role, given role "textbox": not an unnamed text field.
 * 4. A disabled slider (ipywidgets marks it with a "disabled" attribute on the
 *    slider and a readout that is no longer editable) keeps its handle in the tab
 *    order and says nothing of being disabled: while disabled, its handle and
 *    readout get aria-disabled="true" and the handle tabindex="-1" (given back
 *    when it is enabled again).
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

  var SLIDER_BOX = ".widget-slider, .jupyter-widget-slider, .widget-hslider, .widget-vslider";
  function labelOf(box) {
    var label = box && box.querySelector("label");
    return label ? label.textContent.replace(/\s+/g, " ").trim() : "";
  }
  function setAttr(el, name, value) {
    if (value === null) {
      if (el.hasAttribute(name)) { el.removeAttribute(name); }
    } else if (el.getAttribute(name) !== value) {
      el.setAttribute(name, value);
    }
  }
  function nameSliders() {
    var handles = document.querySelectorAll('.noUi-handle[role="slider"]');
    Array.prototype.forEach.call(handles, function (handle) {
      var box = handle.closest(SLIDER_BOX);
      var name = labelOf(box);
      if (name && !handle.hasAttribute("aria-label")) { handle.setAttribute("aria-label", name); }
      var slider = handle.closest(".noUi-target");
      var disabled = Boolean(slider && slider.hasAttribute("disabled"));
      setAttr(handle, "aria-disabled", disabled ? "true" : null);
      setAttr(handle, "tabindex", disabled ? "-1" : "0");
    });
    var readouts = document.querySelectorAll(".widget-readout");
    Array.prototype.forEach.call(readouts, function (readout) {
      var box = readout.closest(SLIDER_BOX);
      if (!box) { return; }   // (a Valid widget's readout is plain text, not a box)
      var name = labelOf(box);
      if (name && !readout.hasAttribute("aria-label")) { readout.setAttribute("aria-label", name + " (value)"); }
      if (!readout.hasAttribute("role")) { readout.setAttribute("role", "textbox"); }
      var slider = box.querySelector(".noUi-target");
      var disabled = readout.getAttribute("contenteditable") === "false" ||
        Boolean(slider && slider.hasAttribute("disabled"));
      setAttr(readout, "aria-disabled", disabled ? "true" : null);
    });
  }
  function watchSliders() {
    nameSliders();
    var queued = false;
    new MutationObserver(function () {
      if (queued) { return; }
      queued = true;
      setTimeout(function () { queued = false; nameSliders(); }, 0);
    }).observe(document.body, { childList: true, subtree: true, attributes: true,
                                attributeFilter: ["disabled", "contenteditable"] });
  }
  if (document.body) { watchSliders(); } else { document.addEventListener("DOMContentLoaded", watchSliders); }
})();
