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
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(button.dataset.copy).then(done, fallback);
    else fallback();
  });
});
