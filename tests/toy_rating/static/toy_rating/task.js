// The rating task: one radio button of 1 to 5, posted as JSON to the shared submit view.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("task-data").textContent);
  const errorBox = document.getElementById("submit-error");
  const submit = document.getElementById("submit-rating");
  submit.addEventListener("click", async function () {
    const chosen = document.querySelector("input[name=rating]:checked");
    submit.disabled = true;
    const response = await factlab.postJSON(data.urls.submit, {
      rating: chosen ? Number(chosen.value) : null, submission_key: data.submission_key,
    });
    if (response.ok) { window.location.href = response.data.next || data.urls.done; return; }
    submit.disabled = false;
    errorBox.textContent = response.data.detail || "The rating was not accepted.";
    errorBox.hidden = false;
  });
})();
