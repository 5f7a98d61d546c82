// Live updates: wait (long poll) for the console's version to change, then
// fetch this page again and swap its <main>, unless the operator is typing
// in it. The page is rendered and escaped by the server; nothing here
// builds HTML from data.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  if (!main) { return; }
  var version = main.getAttribute("data-version") || "0";
  function busy() {
    var a = document.activeElement;
    return a && main.contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA");
  }
  function later(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
  async function refresh() {
    var page = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
    if (!page.ok) { return; }
    var doc = new DOMParser().parseFromString(await page.text(), "text/html");
    var fresh = doc.querySelector("main");
    var nav = doc.getElementById("nav-approvals");
    if (fresh) { main.replaceChildren.apply(main, Array.from(fresh.childNodes).map(function (n) { return document.importNode(n, true); })); }
    var here = document.getElementById("nav-approvals");
    if (nav && here) { here.replaceChildren.apply(here, Array.from(nav.childNodes).map(function (n) { return document.importNode(n, true); })); }
  }
  async function poll() {
    for (;;) {
      try {
        var r = await fetch("/console/api/version?wait=20&since=" + encodeURIComponent(version), { credentials: "same-origin", cache: "no-store" });
        if (r.status === 401) { location.href = "/console/login"; return; }
        var v = String((await r.json()).version);
        if (v !== version) {
          if (busy()) { await later(1000); continue; }
          version = v;
          await refresh();
        }
      } catch (e) {
        await later(2000);
      }
    }
  }
  poll();
})();
