// The task-page kit every protocol's task pages use: CSRF-protected JSON posts, the instructions toggle, saved
// work, messages, progress told to assistive technology, focus that follows the steps, keyboard shortcuts
// shown on the page, and on a phone the part being worked on kept in view. Styles: task_kit.css.
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

// ---- the task-page kit
factlab.kit = (function () {
  const phone = window.matchMedia("(max-width: 900px)");

  // Work kept in the browser until it is submitted (localStorage can be full or disabled: the page still works).
  function store(key) {
    return {
      load: function () {
        try { return JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { return null; }
      },
      save: function (value) {
        try { localStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* the page still holds the work */ }
      },
      clear: function () {
        try { localStorage.removeItem(key); } catch (e) { /* nothing kept */ }
      },
    };
  }

  // A message in an alert box (screen readers read role=alert at once), scrolled into view; "" hides it.
  function message(box, text) {
    box.textContent = text;
    box.hidden = !text;
    if (text) box.scrollIntoView({block: "nearest"});
  }

  // The progress bar's element (role=progressbar) gets its value; the polite live region says the new text.
  function progress(done, total, text) {
    const bar = document.querySelector("[data-progress]");
    if (!bar) return;
    bar.setAttribute("aria-valuemax", String(total));
    bar.setAttribute("aria-valuenow", String(done));
    bar.setAttribute("aria-valuetext", text);
    bar.querySelector(".progress-bar").style.width = Math.round(100 * done / Math.max(total, 1)) + "%";
    bar.querySelector(".progress-text").textContent = text;
    const live = document.getElementById(bar.dataset.progress);
    if (live && live.textContent !== text) live.textContent = text;
  }

  // Focus moves to what the worker does next (a step's heading): keyboard and screen-reader users follow it.
  // The heading can take focus from a script only (tabindex -1); scrolling is left to keepInView.
  function focusOn(element) {
    if (!element) return;
    if (!element.hasAttribute("tabindex") && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(element.tagName)) element.setAttribute("tabindex", "-1");
    element.focus({preventScroll: true});
  }

  // On a phone, scroll so that ``element`` starts near the top of what is visible, unless it is on screen
  // already: with ``until`` (what must be seen with it) on screen too, else in the top third, above where an
  // on-screen keyboard opens (the visual viewport is what the keyboard leaves).
  function keepInView(element, until) {
    if (!element || !phone.matches) return;
    const rect = element.getBoundingClientRect();
    const visible = window.visualViewport ? window.visualViewport.height : window.innerHeight;
    if (rect.top >= 0 && (until ? until.getBoundingClientRect().bottom <= visible : rect.top <= visible / 3)) return;
    const shift = rect.top - 8;
    // Near the page's end there is nothing below to scroll up by: room is made where the keyboard will be.
    const room = document.documentElement.scrollHeight - window.innerHeight - window.scrollY;
    if (shift > room) document.body.style.paddingBottom = (parseFloat(getComputedStyle(document.body).paddingBottom) + Math.ceil(shift - room)) + "px";
    window.scrollBy(0, shift);
  }

  // Keyboard shortcuts, written on the page in the element marked data-shortcuts. Each one: {keys: ["y"],
  // label: "Yes", run: function (event) {...}}; a key with "Ctrl+" also works with Cmd and inside a text box,
  // plain keys never do (the worker is typing), nor on a focused button or link (Enter and Space click it).
  function shortcuts(list) {
    const legend = document.querySelector("[data-shortcuts]");
    if (legend) {
      legend.textContent = "";
      legend.appendChild(document.createTextNode("Keyboard: "));
      list.forEach(function (shortcut, n) {
        if (n) legend.appendChild(document.createTextNode(" · "));
        shortcut.keys.forEach(function (key, k) {
          if (k) legend.appendChild(document.createTextNode(shortcut.joiner || "/"));
          const kbd = document.createElement("kbd");
          kbd.textContent = key.length === 1 ? key.toUpperCase() : key.replace("Ctrl+", "Ctrl + ").replace("ArrowLeft", "←");
          legend.appendChild(kbd);
        });
        legend.appendChild(document.createTextNode(" " + shortcut.label));
      });
    }
    document.addEventListener("keydown", function (event) {
      if (event.altKey || event.defaultPrevented) return;
      const target = event.target;
      const typing = target.closest && target.closest("textarea, select, input:not([type=radio]):not([type=checkbox])");
      const onControl = target.closest && target.closest("button, a[href]");
      const ctrl = event.ctrlKey || event.metaKey;
      const name = (ctrl ? "Ctrl+" : "") + (event.key.length === 1 ? event.key.toLowerCase() : event.key);
      for (const shortcut of list) {
        if (shortcut.keys.indexOf(name) < 0 && !(shortcut.match && !ctrl && shortcut.match(event.key))) continue;
        if (!ctrl && (typing || (onControl && (event.key === "Enter" || event.key === " ")))) return;
        if (shortcut.run(event) !== false) event.preventDefault();
        return;
      }
    });
  }

  // The key that picks an option, written beside it (hidden from screen readers: the legend says it once).
  function keyHint(key) {
    const kbd = document.createElement("kbd");
    kbd.className = "key-hint";
    kbd.setAttribute("aria-hidden", "true");
    kbd.textContent = key;
    return kbd;
  }

  return {store: store, message: message, progress: progress, focusOn: focusOn, keepInView: keepInView, shortcuts: shortcuts, keyHint: keyHint};
})();
