// BUMP editing page: live word-level diff against the reference, N/A, checkpoint, submit without losing the edit.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("task-data").textContent);
  const editor = document.getElementById("edited-summary");
  const diffBox = document.getElementById("live-diff");
  const diffCount = document.getElementById("diff-count");
  const checkpoint = document.getElementById("checkpoint");
  const notApplicable = document.getElementById("not-applicable");
  const errorBox = document.getElementById("submit-error");
  const submitButton = document.getElementById("submit-edit");
  const status = document.getElementById("submit-status");
  const saved = factlab.kit.store("factlab-bump-" + data.assignment);

  // Tokens independent of spacing, as annotate/bump/edits.py: a split clitic ("could n't") joins its word,
  // then words (inner apostrophes and hyphens kept, numbers such as 5,000 whole) and single punctuation marks.
  function tokens(text) {
    return text.replace(/\s+(?=(?:n['\u2019]t|['\u2019](?:s|re|ve|ll|d|m))(?![\p{L}\p{N}_]))/giu, "")
      .match(/[\p{L}\p{N}_]+(?:['\u2019-][\p{L}\p{N}_]+|(?<=\p{N})[.,]\p{N}+)*|[^\p{L}\p{N}_\s]/gu) || [];
  }
  // A run of tokens written as text (edits.py join_tokens): no space before closing marks, none after opening ones.
  function joinTokens(run) {
    let out = "", glueNext = false;
    const open = {};  // a straight quote opens, the next one of its kind closes
    run.forEach(function (token, k) {
      let closing = /^[.,;:!?%)\]}\u2019\u201d\u2026]$/.test(token);
      let opening = /^[(\[{\u2018\u201c$\u00a3\u20ac]$/.test(token);
      if (token === "'" || token === '"') { closing = !!open[token]; opening = !closing; open[token] = !open[token]; }
      if (k && !closing && !glueNext) out += " ";
      out += token;
      glueNext = opening;
    });
    return out;
  }
  function isWord(token) { return /[\p{L}\p{N}]/u.test(token); }

  // Word-level Levenshtein alignment (same rule as annotate/bump/edits.py): returns [[op, word], ...] and the distance.
  function diff(a, b) {
    const n = a.length, m = b.length;
    const d = [];
    for (let i = 0; i <= n; i++) { d.push(new Array(m + 1).fill(0)); d[i][0] = i; }
    for (let j = 0; j <= m; j++) d[0][j] = j;
    for (let i = 1; i <= n; i++) {
      for (let j = 1; j <= m; j++) {
        const same = a[i - 1] === b[j - 1] ? 0 : 1;
        d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + same);
      }
    }
    const ops = [];
    let i = n, j = m;
    while (i > 0 || j > 0) {
      if (i > 0 && j > 0 && a[i - 1] === b[j - 1] && d[i][j] === d[i - 1][j - 1]) { ops.push(["equal", a[i - 1]]); i--; j--; }
      else if (i > 0 && j > 0 && d[i][j] === d[i - 1][j - 1] + 1) { ops.push(["insert", b[j - 1]]); ops.push(["delete", a[i - 1]]); i--; j--; }
      else if (j > 0 && d[i][j] === d[i][j - 1] + 1) { ops.push(["insert", b[j - 1]]); j--; }
      else { ops.push(["delete", a[i - 1]]); i--; }
    }
    ops.reverse();
    return {ops: ops, distance: d[n][m]};
  }

  function render() {
    const result = diff(tokens(data.reference), tokens(editor.value));
    // The distance counts words only (punctuation and spacing do not count), like the server.
    result.distance = diff(tokens(data.reference).filter(isWord), tokens(editor.value).filter(isWord)).distance;
    diffBox.textContent = "";
    // Deletions of a changed span before its insertions, like the review page.
    let dels = [], ins = [];
    function flush() {
      if (dels.length) { const el = document.createElement("del"); el.textContent = joinTokens(dels); diffBox.append(el, " "); }
      if (ins.length) { const el = document.createElement("ins"); el.textContent = joinTokens(ins); diffBox.append(el, " "); }
      dels = []; ins = [];
    }
    let same = [];
    function flushSame() { if (same.length) { diffBox.append(joinTokens(same) + " "); same = []; } }
    result.ops.forEach(function (op) {
      if (op[0] === "equal") { flush(); same.push(op[1]); }
      else { flushSame(); if (op[0] === "delete") dels.push(op[1]); else ins.push(op[1]); }
    });
    flushSame();
    flush();
    diffCount.textContent = String(result.distance);
    diffCount.classList.toggle("error", result.distance > data.max_edit_distance);
    saved.save({edited: editor.value});
  }

  const kept = saved.load();
  if (kept && typeof kept.edited === "string" && kept.edited) editor.value = kept.edited;

  editor.addEventListener("input", render);
  // On a phone the on-screen keyboard takes the lower half: the text being edited is brought up above it.
  editor.addEventListener("focus", function () { factlab.kit.keepInView(editor); });
  editor.addEventListener("input", function () { factlab.kit.keepInView(editor); });
  if (notApplicable) {
    notApplicable.addEventListener("change", function () { editor.disabled = notApplicable.checked; });
  }
  render();

  function showError(message, fields) {
    factlab.kit.message(errorBox, message);
    editor.classList.toggle("invalid", Boolean(fields && fields.edited));
    checkpoint.classList.toggle("invalid", Boolean(fields && fields.checkpoint));
  }

  submitButton.addEventListener("click", async function () {
    errorBox.hidden = true;
    const na = Boolean(notApplicable && notApplicable.checked);
    if (!checkpoint.value.trim()) { showError("Copy the checkpoint code from the instructions into the checkpoint box.", {checkpoint: true}); return; }
    submitButton.disabled = true;
    status.textContent = "Submitting…";
    const response = await factlab.postJSON(data.urls.submit, {
      edited: editor.value, not_applicable: na, checkpoint: checkpoint.value, submission_key: data.submission_key,
      signals: factlab.attention.snapshot(),
    });
    submitButton.disabled = false;
    status.textContent = "";
    if (response.ok) {
      saved.clear();
      window.location.href = response.data.next || data.urls.done;
      return;
    }
    // The edit stays in the box: only the message changes.
    showError(response.data.detail || "The submission was refused.", response.data.fields);
  });

  // Submitting from the keyboard, even while typing in the editor (the legend is written on the page).
  factlab.kit.shortcuts([
    {keys: ["Ctrl+Enter"], label: "submit", run: function () { if (submitButton.disabled) return false; submitButton.click(); }},
  ]);
})();
