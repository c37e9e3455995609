// graphtasks study pages: the landing page. Starts a session (or resumes this browser's own) and opens it.
// Written for graphtasks (Apache-2.0); no third-party code.
"use strict";
(() => {
  const storeKey = "graphtasks-session:" + location.host;
  const message = document.getElementById("message");
  const saved = localStorage.getItem(storeKey);
  if (saved) {
    location.replace("/s/" + encodeURIComponent(saved));
    return;
  }
  // the study's title, and the URL parameters it records (the recruiting site's ids; others are not sent)
  const about = fetch("/api/study").then((res) => res.json()).then((study) => {
    document.title = study.title;
    document.querySelector("h1").textContent = study.title;
    return study;
  });
  let busy = false;
  async function start() {
    if (busy) return;
    busy = true;
    const names = await about.then((study) => study.params).catch(() => null);
    const params = Object.fromEntries([...new URLSearchParams(location.search)].filter(
      ([name]) => names === null || names.includes(name)));
    try {
      const res = await fetch("/api/start", {
        method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({params}),
      });
      const data = await res.json();
      if (!res.ok) throw new Error(data.error || res.statusText);
      localStorage.setItem(storeKey, data.token);
      location.replace(data.url);
    } catch (e) {
      message.textContent = "Could not start: " + e.message;
      busy = false;
    }
  }
  document.getElementById("start").addEventListener("click", start);
  document.addEventListener("keydown", (ev) => { if (ev.key === " ") { ev.preventDefault(); start(); } });
})();
