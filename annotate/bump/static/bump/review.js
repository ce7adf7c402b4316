// BUMP review page: the Enter key never submits a decision (only a click on a decision button does).
(function () {
  "use strict";
  document.querySelectorAll("form.review-form").forEach(function (form) {
    form.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && event.target.tagName !== "BUTTON" && event.target.tagName !== "TEXTAREA") {
        event.preventDefault();
      }
    });
    // A decision needs a button; an implicit submission (no submitter) is refused.
    form.addEventListener("submit", function (event) {
      if (!event.submitter) event.preventDefault();
    });
  });
})();
