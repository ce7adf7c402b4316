// The "Copy code" buttons of the way back to the crowd platform (templates/annotate/_exit.html): copy the
// completion or screen-out code, or select it where the clipboard is not available.
"use strict";

document.querySelectorAll(".copy-code").forEach(function (button) {
  button.addEventListener("click", function () {
    const status = button.parentElement.querySelector(".copy-status");
    const done = function () { status.textContent = "Copied."; };
    const fallback = function () {
      const range = document.createRange();
      range.selectNodeContents(button.parentElement.querySelector(".exit-code"));
      const selection = window.getSelection();
      selection.removeAllRanges(); selection.addRange(range);
      status.textContent = document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (or Cmd+C) to copy.";
    };
    if (!(navigator.clipboard && window.isSecureContext)) { fallback(); return; }
    // A clipboard request may never answer (a page without focus, a browser waiting on a permission): after a
    // moment the code is selected instead, so the worker is never left without a way to copy it.
    let settled = false;
    const once = function (then) { return function () { if (!settled) { settled = true; then(); } }; };
    navigator.clipboard.writeText(button.dataset.copy).then(once(done), once(fallback));
    setTimeout(once(fallback), 1500);
  });
});
