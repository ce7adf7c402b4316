// Tutorial: each answer is checked by the server, which returns feedback (the key is never in the page).
"use strict";

(function () {
  // The page passes its check URL on the script element (no inline script: the CSP allows none).
  const config = {checkUrl: document.getElementById("frank-tutorial").dataset.checkUrl};
  const progress = document.getElementById("tutorial-progress");

  document.querySelectorAll(".tutorial-sentence").forEach(function (box) {
    const button = box.querySelector("button.check");
    const feedback = box.querySelector(".feedback");
    button.addEventListener("click", async function () {
      const choice = box.querySelector("input[type=radio]:checked");
      if (!choice) { feedback.textContent = "Choose Yes or No first."; feedback.className = "feedback bad"; return; }
      const factual = choice.value === "yes";
      const categories = factual ? [] : Array.from(box.querySelectorAll(".cats input:checked")).map(function (c) { return c.value; });
      if (!factual && categories.length === 0) { feedback.textContent = "Select at least one kind of error."; feedback.className = "feedback bad"; return; }
      button.disabled = true;
      const result = await factlab.postJSON(config.checkUrl, {
        summary: Number(box.dataset.summary), index: Number(box.dataset.index), factual: factual, categories: categories,
      });
      button.disabled = false;
      if (!result.ok) { feedback.textContent = result.data.detail || "Something went wrong."; feedback.className = "feedback bad"; return; }
      feedback.textContent = result.data.message;
      feedback.className = "feedback " + (result.data.correct ? "good" : "bad");
      box.classList.toggle("answered-right", result.data.correct);
      progress.textContent = result.data.answered + " of " + result.data.total + " sentences answered.";
    });
  });
})();
