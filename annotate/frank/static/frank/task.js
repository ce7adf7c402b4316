// FRANK annotation page: read the article, reading check, then every summary sentence in turn.
// Answers, the reading check's included, live in the page and in localStorage (keyed by assignment) until
// the final submit, which sends them all in one request.
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("task-data").textContent);
  const $ = function (id) { return document.getElementById(id); };
  const saved = factlab.kit.store("factlab-frank-" + data.assignment);
  const flat = [];
  data.summaries.forEach(function (summary, s) {
    summary.sentences.forEach(function (_, i) { flat.push({s: s, i: i}); });
  });

  function freshState() {
    return {
      step: "read",
      cursor: 0,
      answers: flat.map(function () { return null; }),
      seconds: flat.map(function () { return 0; }),
      key: data.submission_key,
      entityChoice: null,
    };
  }

  function load() {
    if (data.preview) return freshState();
    const kept = saved.load();
    if (kept && Array.isArray(kept.answers) && kept.answers.length === flat.length) return kept;
    return freshState();
  }

  const state = load();
  // The reading check is answered once: on the server already, or in this page, kept until the submit.
  const entityAnswered = function () { return data.entity_done || typeof state.entityChoice === "number"; };
  if (entityAnswered() && (state.step === "read" || state.step === "entity") && data.entity_options.length) state.step = "annotate";
  if (!entityAnswered() && state.step !== "read" && state.step !== "entity") state.step = "entity";

  function save() {
    if (!data.preview) saved.save(state);
  }

  // ---- timing: seconds spent on each sentence while it is shown
  let shownAt = null;
  function startClock() { shownAt = performance.now(); }
  function stopClock() {
    if (shownAt !== null && state.step === "annotate") {
      state.seconds[state.cursor] += (performance.now() - shownAt) / 1000;
      save();
    }
    shownAt = null;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) stopClock(); else if (state.step === "annotate") startClock();
  });
  window.addEventListener("pagehide", stopClock);

  function showError(message) { factlab.kit.message($("error-box"), message); }

  function complete(a) { return !!a && (a.factual || a.categories.length > 0); }
  // A final message with one way forward (blocked worker, closed task): hide the task's steps.
  function endPage(message, href, label, id) {
    stopClock();
    document.querySelectorAll("section[id^=step-]").forEach(function (s) { s.hidden = true; });
    document.querySelector(".progress").hidden = true;
    $("toggle-instructions").hidden = true;
    $("instructions").hidden = true;
    showError(message);
    const p = document.createElement("p");
    const link = document.createElement("a");
    link.href = href; link.textContent = label; link.id = id; link.className = "button";
    p.appendChild(link);
    $("error-box").appendChild(p);
  }

  function answeredCount() { return state.answers.filter(complete).length; }

  function renderProgress() {
    const done = answeredCount();
    const stepText = {read: "Step 1 of 3: read the article", entity: "Step 2 of 3: reading check"}[state.step];
    factlab.kit.progress(done, flat.length, stepText || (done + " of " + flat.length + " sentences answered"));
  }

  // The article in paragraphs (captions apart) as the server laid it out; sentence k keeps its index for the underlines.
  const paragraphs = data.paragraphs || data.article.map(function (_, k) { return {caption: false, lines: [k]}; });
  function articleHtml(container, relevant) {
    container.textContent = "";
    paragraphs.forEach(function (paragraph) {
      const p = document.createElement("p");
      p.className = "article-paragraph" + (paragraph.caption ? " caption" : "");
      paragraph.lines.forEach(function (k, n) {
        const span = document.createElement("span");
        span.className = "article-sentence" + (relevant && relevant.indexOf(k) >= 0 ? " relevant" : "");
        span.textContent = data.article[k];
        if (n) p.appendChild(document.createTextNode(" "));
        p.appendChild(span);
      });
      container.appendChild(p);
    });
  }

  function show(step) {
    state.step = step;
    save();
    ["read", "entity", "annotate", "submit"].forEach(function (name) { $("step-" + name).hidden = name !== step; });
    renderProgress();
    if (step === "read") articleHtml($("read-article"), null);
    if (step === "entity") articleHtml($("entity-article"), null);  // a check answered with the article in view
    if (step === "annotate") { renderSentence(); startClock(); }
    // Focus goes to what comes next: the sentence's heading, or the step's. On a phone the sentence under
    // judgement and its evidence start below the page head: they are brought up.
    const heading = step === "annotate" ? $("summary-title") : $("step-" + step).querySelector("h2");
    factlab.kit.focusOn(heading);
    window.scrollTo(0, 0);
    if (step === "annotate") bringUp();
  }

  // On a phone: the sentence's heading at the top when it fits on one screen with the Yes/No, else the sentence
  // itself (a long summary), the article box between them made shorter if they still do not fit (never under
  // 120 px); then its evidence, now that the window has scrolled.
  const phone = window.matchMedia("(max-width: 900px)");
  function bringUp() {
    const box = $("annotate-article");
    box.style.maxHeight = "";
    const title = $("summary-title");
    const room = window.innerHeight - 16;
    const bottom = function () { return $("answer-no").getBoundingClientRect().bottom; };
    const from = bottom() - title.getBoundingClientRect().top < room ? title : document.querySelector(".summary-sentence.current");
    const over = bottom() - from.getBoundingClientRect().top - room;
    if (phone.matches && over > 0) box.style.maxHeight = Math.max(120, box.clientHeight - over) + "px";
    factlab.kit.keepInView(from, $("answer-no"));
    showEvidence();
  }

  // ---- step 2: the reading check (the article stays on screen: no memory recall, as Prolific requires)
  data.entity_options.forEach(function (option, k) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "radio"; input.name = "entity"; input.value = String(k);
    input.addEventListener("change", function () { $("entity-submit").disabled = false; });
    label.appendChild(input);
    label.appendChild(document.createTextNode(" " + option + " "));
    label.appendChild(factlab.kit.keyHint(String(k + 1)));
    $("entity-options").appendChild(label);
  });

  $("done-reading").addEventListener("click", function () {
    show(data.entity_options.length && !entityAnswered() && !data.preview ? "entity" : "annotate");
  });

  $("entity-submit").addEventListener("click", function () {
    const choice = document.querySelector("input[name=entity]:checked");
    if (!choice) return;
    // Checked with the submission (the page after it says whether it was right); not changeable after this.
    state.entityChoice = Number(choice.value);
    save();
    show("annotate");
  });

  // ---- step 3: sentence by sentence
  data.categories.forEach(function (category, k) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "checkbox"; input.value = category.code; input.name = "category";
    label.appendChild(input);
    label.appendChild(document.createTextNode(" " + category.label + " "));
    label.appendChild(factlab.kit.keyHint(String(k + 1)));  // its shortcut
    $("categories").appendChild(label);
  });

  function currentAnswerFromForm() {
    const yes = $("answer-yes").checked, no = $("answer-no").checked;
    if (!yes && !no) return null;
    const categories = no ? Array.from(document.querySelectorAll("#categories input:checked")).map(function (c) { return c.value; }) : [];
    return {factual: yes, categories: categories};
  }

  function renderSentence() {
    const pos = flat[state.cursor];
    const summary = data.summaries[pos.s];
    const sentence = summary.sentences[pos.i];
    $("summary-title").textContent = "Summary " + (pos.s + 1) + " of " + data.summaries.length + " · sentence " + (pos.i + 1) + " of " + summary.sentences.length;
    const text = $("summary-text");
    text.textContent = "";
    summary.sentences.forEach(function (s, i) {
      const span = document.createElement("span");
      span.className = "summary-sentence" + (i === pos.i ? " current" : "");
      span.dataset.index = String(i);
      span.textContent = s.text;
      text.appendChild(span);
      text.appendChild(document.createTextNode(" "));
    });
    articleHtml($("annotate-article"), sentence.relevant);
    const answer = state.answers[state.cursor];
    $("answer-yes").checked = !!(answer && answer.factual);
    $("answer-no").checked = !!(answer && !answer.factual);
    document.querySelectorAll("#categories input").forEach(function (c) {
      c.checked = !!(answer && answer.categories.indexOf(c.value) >= 0);
    });
    factlab.limitCategories($("categories"));
    $("question").classList.toggle("says-no", !!(answer && !answer.factual));
    $("answer-hint").textContent = "";
    $("prev-sentence").disabled = state.cursor === 0;
    $("next-sentence").textContent = state.cursor === flat.length - 1 ? "Finish" : "Next sentence";
    showEvidence();
  }

  // Bring the first related article sentence into view inside the article box only (scrollIntoView would
  // also scroll the window and hide the progress bar on every "Next sentence"). The box can reach below the
  // window, so only the part of it on screen counts as visible.
  function showEvidence() {
    const box = $("annotate-article");
    const first = box.querySelector(".relevant");
    if (!first) return;
    const boxTop = box.getBoundingClientRect().top;
    const onScreen = Math.min(box.clientHeight, Math.max(80, window.innerHeight - Math.max(boxTop, 0)));
    const top = first.getBoundingClientRect().top - boxTop + box.scrollTop;
    if (top < box.scrollTop || top > box.scrollTop + onScreen - 40) box.scrollTop = Math.max(0, top - 20);
  }

  $("question").addEventListener("change", function () {
    const answer = currentAnswerFromForm();
    state.answers[state.cursor] = answer && (answer.factual || answer.categories.length) ? answer : (answer ? {factual: false, categories: []} : null);
    $("question").classList.toggle("says-no", !!(answer && !answer.factual));
    $("answer-hint").textContent = "";
    save();
    renderProgress();
  });

  function validCurrent() {
    const answer = state.answers[state.cursor];
    if (!answer) { $("answer-hint").textContent = "Answer Yes or No first."; return false; }
    if (!answer.factual && answer.categories.length === 0) { $("answer-hint").textContent = "Select at least one kind of error."; return false; }
    return true;
  }

  function move(delta) {
    stopClock();
    state.cursor = Math.max(0, Math.min(flat.length - 1, state.cursor + delta));
    save();
    renderSentence();
    renderProgress();
    // The next sentence is where the worker is now: focus on its heading, and on a phone back in view.
    factlab.kit.focusOn($("summary-title"));
    bringUp();
    startClock();
  }

  $("prev-sentence").addEventListener("click", function () { move(-1); });
  $("next-sentence").addEventListener("click", function () {
    if (!validCurrent()) return;
    if (state.cursor === flat.length - 1) { stopClock(); show("submit"); return; }
    move(1);
  });
  $("back-to-sentences").addEventListener("click", function () { show("annotate"); });

  $("submit-answers").addEventListener("click", async function () {
    if (data.preview) { showError("This is a preview: accept the HIT to submit answers."); return; }
    const missing = state.answers.findIndex(function (a) { return !a || (!a.factual && a.categories.length === 0); });
    if (missing >= 0) {
      state.cursor = missing;
      show("annotate");
      showError("Sentence " + (flat[missing].i + 1) + " of summary " + (flat[missing].s + 1) + " is not answered yet.");
      return;
    }
    const payload = {
      submission_key: state.key,
      entity_choice: data.entity_done ? null : state.entityChoice,
      signals: factlab.attention.snapshot(),
      summaries: data.summaries.map(function (summary, s) {
        return {answers: summary.sentences.map(function (_, i) {
          const k = flat.findIndex(function (p) { return p.s === s && p.i === i; });
          const a = state.answers[k];
          return {factual: a.factual, categories: a.categories, seconds: Math.round(state.seconds[k] * 100) / 100};
        })};
      }),
    };
    this.disabled = true;
    this.textContent = "Submitting…";
    const result = await factlab.postJSON(data.urls.submit, payload);
    this.disabled = false;
    this.textContent = "Submit answers";
    if (result.status === 409 || result.status === 403) {
      // The task is closed (expired, released, submitted elsewhere) or no longer this worker's: retrying cannot help.
      saved.clear();
      endPage("Your answers were not submitted: " + (result.data.detail || "this task is closed."), window.location.pathname, "Get a new article", "closed-continue");
      return;
    }
    if (!result.ok) {
      showError("Your answers were not submitted: " + (result.data.detail || "unknown error") + (result.status === 0 ? "" : " Your answers are still in this page; you can try again."));
      return;
    }
    saved.clear();
    window.location.href = result.data.next;
  });

  // ---- keyboard: every step without the mouse (the legend is written on the page)
  function choose(input) {
    if (!input || input.disabled) return false;
    input.checked = input.type === "checkbox" ? !input.checked : true;
    input.dispatchEvent(new Event("change", {bubbles: true}));
    return true;
  }
  const advance = {read: "done-reading", entity: "entity-submit", annotate: "next-sentence", submit: "submit-answers"};
  factlab.kit.shortcuts([
    {keys: ["y"], label: "yes", run: function () { return state.step === "annotate" && choose($("answer-yes")); }},
    {keys: ["n"], label: "no", run: function () { return state.step === "annotate" && choose($("answer-no")); }},
    {keys: ["1", "8"], joiner: "–", label: "kind of error (after No), or the reading check's option",
     match: function (key) { return /^[1-9]$/.test(key); },
     run: function (event) {
       const k = Number(event.key) - 1;
       if (state.step === "entity") return choose(document.querySelectorAll("#entity-options input")[k]);
       return state.step === "annotate" && $("answer-no").checked && choose(document.querySelectorAll("#categories input")[k]);
     }},
    {keys: ["Enter"], label: "next step, next sentence or submit", run: function () {
      const button = $(advance[state.step]);
      if (!button || button.disabled || button.closest("[hidden]")) return false;
      button.click();
    }},
    {keys: ["ArrowLeft"], label: "previous sentence", run: function () {
      if (state.step !== "annotate" || state.cursor === 0) return false;
      $("prev-sentence").click();
    }},
  ]);

  show(state.step);
})();
