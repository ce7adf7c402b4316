// Helpers shared by every protocol's task pages: CSRF-protected JSON posts and the instructions toggle.
"use strict";

window.factlab = window.factlab || {};

factlab.csrfToken = function () {
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
};

// POST JSON; resolves to {ok, status, data}. Network failures resolve with ok=false and a readable message.
factlab.postJSON = async function (url, body) {
  try {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": factlab.csrfToken()},
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {detail: "The server answered " + response.status + "."}; }
    return {ok: response.ok, status: response.status, data: data};
  } catch (e) {
    return {ok: false, status: 0, data: {detail: "The server could not be reached. Check your connection and try again; your answers are kept."}};
  }
};

document.addEventListener("click", function (event) {
  const toggle = event.target.closest("[data-toggle]");
  if (!toggle) return;
  const panel = document.getElementById(toggle.dataset.toggle);
  if (panel) panel.hidden = !panel.hidden;
});

// At most data-max categories: once that many are ticked, the others are disabled (the rule the server applies).
function limitCategories(fieldset) {
  const max = Number(fieldset.dataset.max || 0);
  if (!max) return;
  const boxes = Array.from(fieldset.querySelectorAll("input[type=checkbox]"));
  const full = boxes.filter(function (b) { return b.checked; }).length >= max;
  boxes.forEach(function (b) { b.disabled = full && !b.checked; });
}
factlab.limitCategories = limitCategories;
document.addEventListener("change", function (event) {
  const fieldset = event.target.closest("fieldset[data-max]");
  if (fieldset) limitCategories(fieldset);
});
document.querySelectorAll("fieldset[data-max]").forEach(limitCategories);

// Category checkboxes are enabled only after "No".
document.addEventListener("change", function (event) {
  const question = event.target.closest(".question");
  if (!question || event.target.type !== "radio") return;
  question.classList.toggle("says-no", event.target.value === "no" && event.target.checked);
});
document.querySelectorAll(".question input[type=radio][value=no]:checked").forEach(function (r) {
  r.closest(".question").classList.add("says-no");
});

// Signals of outside help, sent with a submission for the admin to see beside the worker's quality (never a
// reason to refuse): how long the page had the focus, how often the worker left it, copy and paste events, and
// the characters pasted into an element marked data-paste-count (the BUMP edit box).
factlab.attention = (function () {
  const started = performance.now();
  let focused = document.hasFocus() && document.visibilityState === "visible";
  let since = started;
  let focusMs = 0;
  const counts = {tab_switches: 0, copies: 0, pastes: 0, pasted_characters: 0};
  function settle(now) { if (focused) focusMs += now - since; since = now; }
  function setFocus(value) {
    const now = performance.now();
    settle(now);
    if (focused && !value) counts.tab_switches += 1;
    focused = value;
  }
  window.addEventListener("blur", function () { setFocus(false); });
  window.addEventListener("focus", function () { setFocus(document.visibilityState === "visible"); });
  document.addEventListener("visibilitychange", function () { setFocus(document.visibilityState === "visible" && document.hasFocus()); });
  document.addEventListener("copy", function () { counts.copies += 1; });
  document.addEventListener("paste", function (event) {
    counts.pastes += 1;
    if (event.target && event.target.closest && event.target.closest("[data-paste-count]")) {
      const text = (event.clipboardData || window.clipboardData);
      counts.pasted_characters += text ? (text.getData("text") || "").length : 0;
    }
  });
  return {
    snapshot: function () {
      const now = performance.now();
      settle(now);
      return Object.assign({
        focus_seconds: Math.round(focusMs / 10) / 100, page_seconds: Math.round((now - started) / 10) / 100,
      }, counts);
    },
  };
})();
