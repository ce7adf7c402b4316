// Tells the server the task page is open, so the worker's item stays reserved (see
// release_unattended_assignments). A 410 means the item is no longer this page's to submit: either it was
// submitted already (the page came back through Back or a restored tab) or it was released; the page then
// says which, hides the stale task and goes on to the next item.
(function () {
  const script = document.getElementById("heartbeat");
  if (!script) return;
  const url = script.dataset.url;
  const every = Number(script.dataset.seconds || 60) * 1000;
  function token() {
    const input = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (input) return input.value;
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  let timer = null;
  let ended = false;
  function endPage(info) {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    const main = document.querySelector("main") || document.body;
    Array.from(main.children).forEach(function (child) { child.hidden = true; });
    const box = document.createElement("section");
    box.className = "card narrow-wide";
    const title = document.createElement("h1");
    const notice = document.createElement("p");
    const submitted = info.error === "submitted";
    box.id = submitted ? "already-submitted" : "released-notice";
    title.textContent = submitted ? "Already submitted" : "This item is no longer yours";
    notice.className = "notice";
    notice.textContent = (info.detail || "This item is closed.") + " Taking you to the next item…";
    const next = document.createElement("a");
    next.className = "button";
    next.id = "next-after-closed";
    next.href = info.next || window.location.pathname;
    next.textContent = "On to the next item";
    box.append(title, notice, next);
    main.prepend(box);
    window.scrollTo(0, 0);
    setTimeout(function () { window.location.replace(next.href); }, 2500);
  }
  function beat() {
    if (ended) return;
    fetch(url, {method: "POST", credentials: "same-origin", headers: {"X-CSRFToken": token()}}).then(function (response) {
      if (response.status !== 410) return;
      return response.json().catch(function () { return {}; }).then(endPage);
    }).catch(function () { /* offline for a moment: the next beat retries */ });
  }
  beat();
  timer = setInterval(beat, every);
  // Back/forward restores the page from the browser's cache without running it again: ask at once.
  window.addEventListener("pageshow", function (event) { if (event.persisted) beat(); });
})();
