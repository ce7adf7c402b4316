// Live dashboard: reload every minute while the campaign runs, but never over filter choices
// the researcher has changed and not applied yet, nor while the tab is hidden.
(function () {
  "use strict";
  const root = document.querySelector("[data-live-refresh]");
  if (!root) return;
  const seconds = Number(root.dataset.liveRefresh) || 60;
  const form = root.querySelector("form.filters");
  let dirty = false;
  if (form) form.addEventListener("change", function () { dirty = true; });
  const note = root.querySelector("[data-refresh-note]");
  window.setInterval(function () {
    if (dirty) {
      if (note) note.textContent = "Automatic refresh paused: apply or reset your filter changes.";
      return;
    }
    if (document.visibilityState === "visible") window.location.reload();
  }, seconds * 1000);
})();
