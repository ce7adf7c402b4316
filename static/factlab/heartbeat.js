// Tells the server the task page is open, so the worker's item stays reserved (see
// release_unattended_assignments); a 410 means the item was released: say so instead of failing on submit.
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
  function beat() {
    fetch(url, {method: "POST", credentials: "same-origin", headers: {"X-CSRFToken": token()}}).then(function (response) {
      if (response.status === 410) {
        clearInterval(timer);
        const notice = document.createElement("p");
        notice.className = "notice error";
        notice.id = "released-notice";
        notice.textContent = "This item is no longer reserved for you (the page was left unattended). Reload the page for another one.";
        document.querySelector("main") ? document.querySelector("main").prepend(notice) : document.body.prepend(notice);
      }
    }).catch(function () { /* offline for a moment: the next beat retries */ });
  }
  beat();
  timer = setInterval(beat, every);
})();
