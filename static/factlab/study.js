// The admin's study pages: an import's progress, and the campaign page's job list, polled while a job is open.
(function () {
  "use strict";
  const POLL_MS = 1500;

  function pollImport(section) {
    const url = section.dataset.statusUrl;
    const tick = () => fetch(url, { credentials: "same-origin" }).then((r) => r.json()).then((state) => {
      const status = document.getElementById("import-status");
      status.textContent = state.status_display;
      status.dataset.status = state.status;
      const { done, total } = state.progress;
      document.getElementById("import-progress").textContent = `${done}${total ? " / " + total : ""} records read`;
      document.getElementById("import-bar").style.width = total ? `${Math.min(100, (100 * done) / total)}%` : (state.finished ? "100%" : "5%");
      if (!state.finished) { setTimeout(tick, POLL_MS); return; }
      if (state.status === "succeeded") {
        const report = document.getElementById("import-report");
        report.textContent = JSON.stringify(state.report, null, 2);
        report.hidden = false;
        if (state.report && state.report.public_labels) {
          document.getElementById("public-labels-source").textContent = state.report.public_labels;
          document.getElementById("public-labels").hidden = false;
        }
        document.getElementById("import-next").hidden = false;
      } else if (state.error && state.error.message) {
        const box = document.getElementById("import-error");
        box.textContent = "";
        const lines = [
          ["Nothing was stored.", state.error.error || state.error.message],
          ["File", state.error.file || "–"], ["Record", state.error.record ?? "–"], ["Field", state.error.field || "–"],
        ];
        for (const [label, value] of lines) {
          const p = document.createElement("p");
          const strong = document.createElement("strong");
          strong.textContent = label + " ";
          p.append(strong, String(value));
          box.append(p);
        }
        const problems = state.error.problems || [];
        if (problems.length) {
          const heading = document.createElement("p");
          heading.innerHTML = "<strong></strong>";
          heading.firstChild.textContent = `Every wrong record found (${problems.length}):`;
          const list = document.createElement("ol");
          list.id = "error-problems";
          for (const problem of problems) {
            const item = document.createElement("li");
            item.textContent = problem.error;
            list.append(item);
          }
          box.append(heading, list);
        }
        box.hidden = false;
      }
    }).catch(() => setTimeout(tick, POLL_MS * 2));
    if (section.dataset.finished !== "1") tick();
  }

  function pollJobs(holder) {
    const tick = () => {
      const state = document.getElementById("jobs-state");
      if (!state || state.dataset.open !== "1") return;
      setTimeout(() => fetch(holder.dataset.jobsUrl, { credentials: "same-origin" })
        .then((r) => r.text()).then((html) => { holder.innerHTML = html; tick(); })
        .catch(tick), POLL_MS);
    };
    tick();
  }

  const section = document.getElementById("import");
  if (section) pollImport(section);
  const holder = document.getElementById("jobs");
  if (holder) pollJobs(holder);
})();
