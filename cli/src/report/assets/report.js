// loopguard report: opens a session's calls from its JSON block when the session is opened.
// Every string from the transcript is set with textContent, never parsed as HTML.
"use strict";
(function () {
  var NAMES = { a: "allow", w: "warn", b: "block", e: "ended (abort on its result)" };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function row(pre, label, text) {
    var p = el("div");
    p.appendChild(el("b", "", label + " "));
    p.appendChild(el(pre ? "pre" : "span", "", text));
    return p;
  }

  function showCall(data, byCall, pane, n) {
    pane.textContent = "";
    var c = byCall[n];
    var box = el("div", "call");
    box.setAttribute("data-call", String(n));
    box.appendChild(el("div", "", "Call #" + n + (c ? " · " + c.tool : "")));
    data.verdicts.forEach(function (letters, k) {
      var label = data.verdicts.length > 1 ? "Config " + "AB"[k] + ":" : "Verdict:";
      var v = c && c.verdicts[k];
      var text = NAMES[letters.charAt(n - 1)] || "allow";
      if (v) text += " · " + v.detector + (v.count != null ? " (count " + v.count + ")" : "");
      box.appendChild(row(false, label, text));
      if (v && v.message != null) {
        var m = row(true, "The model would have read:", data.messages[v.message]);
        m.className = "msg";
        box.appendChild(m);
      }
    });
    if (c) {
      box.appendChild(row(true, "Arguments:", c.args));
      box.appendChild(row(true, c.error ? "Error:" : "Outcome:", c.outcome == null ? "(no result recorded)" : c.outcome));
    } else {
      box.appendChild(el("div", "hint", "The page keeps the excerpts of the first calls of a long session and of the calls with a verdict; this one is not kept."));
    }
    pane.appendChild(box);
  }

  function render(d) {
    var body = d.querySelector(".body");
    if (!body || body.getAttribute("data-done")) return;
    body.setAttribute("data-done", "1");
    var block = document.getElementById("d" + d.getAttribute("data-i"));
    if (!block) return;
    var data = JSON.parse(block.textContent);
    var byCall = {};
    data.calls.forEach(function (c) { byCall[c.call] = c; });
    var pane = el("div");
    data.verdicts.forEach(function (letters, k) {
      var lane = el("div", "lane");
      lane.setAttribute("data-c", String(k));
      if (data.verdicts.length > 1) lane.appendChild(el("b", "", "AB"[k]));
      for (var i = 0; i < letters.length; i++) {
        var b = el("button", "v-" + letters.charAt(i));
        var c = byCall[i + 1];
        b.title = "#" + (i + 1) + (c ? " " + c.tool : "") + ": " + NAMES[letters.charAt(i)];
        b.setAttribute("data-call", String(i + 1));
        lane.appendChild(b);
      }
      body.appendChild(lane);
    });
    body.appendChild(pane);
    body.addEventListener("click", function (ev) {
      var t = ev.target;
      if (t.tagName !== "BUTTON") return;
      var old = body.querySelectorAll("button.sel");
      for (var j = 0; j < old.length; j++) old[j].classList.remove("sel");
      t.classList.add("sel");
      showCall(data, byCall, pane, Number(t.getAttribute("data-call")));
    });
    // Opened on the first block (else the first end, else the first warning) of config A.
    var first = body.querySelector("button.v-b") || body.querySelector("button.v-e") || body.querySelector("button:not(.v-a)");
    if (first) first.click();
  }

  document.addEventListener("toggle", function (ev) {
    var d = ev.target;
    if (d.tagName === "DETAILS" && d.open) render(d);
  }, true);

  function openHash() {
    var d = location.hash && document.getElementById(location.hash.slice(1));
    if (d && d.tagName === "DETAILS") { d.open = true; render(d); }
  }
  window.addEventListener("hashchange", openHash);
  openHash();
})();
