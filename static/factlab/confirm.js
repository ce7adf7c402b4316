// Buttons with data-confirm ask before their form is sent (e.g. finishing a campaign, which cannot be undone).
"use strict";

document.querySelectorAll("[data-confirm]").forEach(function (button) {
  button.addEventListener("click", function (event) {
    if (!window.confirm(button.dataset.confirm)) event.preventDefault();
  });
});
