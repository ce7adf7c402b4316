// The span task: select words (click, shift-click, drag, or keyboard), type each selection, submit as JSON.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("task-data").textContent);
  const names = {};
  data.types.forEach(function (t) { names[t.code] = t.name; });
  const wordEls = Array.from(document.querySelectorAll("#span-summary .word"));
  const picker = document.getElementById("span-picker");
  const list = document.getElementById("span-list");
  const noError = document.getElementById("no-error");
  const errorBox = document.getElementById("submit-error");
  // The gold page opens with the current gold; a task page with nothing.
  const spans = (data.initial || []).slice();
  noError.checked = Boolean(data.initial_no_error);
  let anchor = null, focus = null, dragging = false;

  function range() {
    if (anchor === null) return null;
    return [Math.min(anchor, focus), Math.max(anchor, focus) + 1];
  }
  function paint() {
    const r = range();
    wordEls.forEach(function (el, i) {
      const selecting = r !== null && i >= r[0] && i < r[1];
      el.classList.toggle("selecting", selecting);
      el.setAttribute("aria-selected", selecting ? "true" : "false");
      el.classList.toggle("marked", spans.some(function (s) { return i >= s.start && i < s.end; }));
    });
    picker.hidden = r === null;
    if (r !== null) document.getElementById("span-selected").textContent = data.words.slice(r[0], r[1]).join(" ");
    list.innerHTML = "";
    spans.forEach(function (s, k) {
      const li = document.createElement("li");
      li.textContent = "“" + data.words.slice(s.start, s.end).join(" ") + "” — " + names[s.type] + (s.frank ? " (" + s.frank + ")" : "") + " ";
      const remove = document.createElement("button");
      remove.type = "button"; remove.className = "link-button"; remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove error " + (k + 1));
      remove.addEventListener("click", function () { spans.splice(k, 1); paint(); });
      li.appendChild(remove);
      list.appendChild(li);
    });
    document.getElementById("span-empty").hidden = spans.length > 0;
  }
  // Where each sentence starts and ends, so an "entire sentence" error shows the sentence it will stand for (the
  // server widens it the same way: a sentence ends after ".", "!" or "?").
  const sentenceEnds = new Set([".", "!", "?", "...", "\u2026"]);
  function widenToSentences(start, end) {
    while (start > 0 && !sentenceEnds.has(data.words[start - 1])) start -= 1;
    while (end < data.words.length && !sentenceEnds.has(data.words[end - 1])) end += 1;
    return [start, end];
  }
  function select(i, extend) {
    if (extend && anchor !== null) { focus = i; } else { anchor = i; focus = i; }
    if (spans.length || anchor !== null) noError.checked = false;
    paint();
  }
  wordEls.forEach(function (el, i) {
    el.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      el.focus();
      dragging = true;
      // A touch screen has no shift key: while a selection is open, a tap on another word extends it.
      select(i, event.shiftKey || (event.pointerType === "touch" && anchor !== null));
    });
    el.addEventListener("pointerenter", function () { if (dragging) { focus = i; paint(); } });
    el.addEventListener("keydown", function (event) {
      if (event.key === " " || event.key === "Enter") { event.preventDefault(); select(i, event.shiftKey); }
      else if ((event.key === "ArrowRight" || event.key === "ArrowLeft") && i + (event.key === "ArrowRight" ? 1 : -1) in wordEls) {
        event.preventDefault();
        const next = i + (event.key === "ArrowRight" ? 1 : -1);
        wordEls[next].focus();
        if (event.shiftKey) select(next, true);
      }
    });
  });
  // Touch drags: the pointer stays captured by the first word, so the word under the finger is looked up.
  document.addEventListener("pointermove", function (event) {
    if (!dragging || event.pointerType === "mouse") return;
    const el = document.elementFromPoint(event.clientX, event.clientY);
    if (el && el.classList.contains("word")) { focus = Number(el.dataset.index); paint(); }
  });
  document.addEventListener("pointerup", function () { dragging = false; });
  document.getElementById("span-add").addEventListener("click", function () {
    const r = range();
    if (r === null) return;
    const type = document.getElementById("span-type").value;
    const bounds = type === "entire_sentence" ? widenToSentences(r[0], r[1]) : r;
    spans.push({start: bounds[0], end: bounds[1], type: type, frank: document.getElementById("span-frank").value});
    anchor = focus = null;
    noError.checked = false;
    paint();
    wordEls[Math.min(r[1], wordEls.length - 1)].focus();
  });
  document.getElementById("span-cancel").addEventListener("click", function () { anchor = focus = null; paint(); });
  noError.addEventListener("change", function () {
    if (noError.checked) { spans.length = 0; anchor = focus = null; paint(); }
  });
  const submit = document.getElementById("submit-spans");
  submit.addEventListener("click", async function () {
    errorBox.hidden = true;
    submit.disabled = true;
    document.getElementById("submit-status").textContent = "Sending…";
    const response = await factlab.postJSON(data.urls.submit, {
      no_error: noError.checked, spans: spans, submission_key: data.submission_key,
      signals: factlab.attention ? factlab.attention.snapshot() : {},
    });
    if (response.ok) { window.location.href = response.data.next || data.urls.done; return; }
    submit.disabled = false;
    document.getElementById("submit-status").textContent = "";
    errorBox.textContent = response.data.detail || "The answer was not accepted.";
    errorBox.hidden = false;
  });
  paint();
})();
