// trae-mem viewer: the live feed and search as you type. Pages work
// without this script; it only saves reloads. Everything it inserts is
// HTML the server rendered and escaped.
"use strict";

// The live feed: new observations arrive as server-sent events, newest on top.
function startLive(feed) {
  const pause = document.getElementById("pause");
  const held = [];
  let paused = false;
  const show = (html) => {
    const t = document.createElement("template");
    t.innerHTML = html;
    feed.prepend(t.content);
    document.getElementById("empty")?.remove();
    while (feed.children.length > 200) feed.lastElementChild.remove();
  };
  const source = new EventSource(feed.dataset.events);
  source.addEventListener("observation", (e) => {
    if (feed.querySelector(`[data-id="${CSS.escape(e.lastEventId)}"]`)) return;
    if (paused) {
      held.push(e.data);
      pause.textContent = `Resume (${held.length} new)`;
    } else {
      show(e.data);
    }
  });
  pause.addEventListener("click", () => {
    paused = !paused;
    if (!paused) held.splice(0).forEach(show);
    pause.textContent = paused ? "Resume" : "Pause";
    pause.classList.toggle("paused", paused);
  });
}

// Search as you type: the results are fetched as a fragment and replaced.
function startSearch(form) {
  const results = document.getElementById("results");
  let timer = null;
  let latest = 0;
  const run = async () => {
    const params = new URLSearchParams(new FormData(form));
    for (const [k, v] of [...params]) if (!v) params.delete(k);
    const url = "/search?" + params.toString();
    const asked = ++latest;
    const response = await fetch(url + (params.toString() ? "&" : "") + "fragment=true");
    if (asked !== latest) return; // a newer search is on its way
    results.innerHTML = await response.text();
    history.replaceState(null, "", url);
  };
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 250);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const feed = document.getElementById("feed");
  if (feed) startLive(feed);
  const search = document.getElementById("search");
  if (search) startSearch(search);
});
