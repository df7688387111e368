"""The labelling page: one self-contained HTML document (inline style and script, no network asset).

The page asks the server for its state (``GET /api/state``), shows one edit, plays its audio
window on arrival, and posts each choice (``POST /api/label``) or an undo (``POST /api/undo``);
the server answers with the next state, so a reload or a restarted server resumes where the
labels file stopped. Keys: 1 "A is right", 2 "B is right", 3 neither, 4 can't tell, space
replays, w plays the whole clip, u (or Backspace) undoes. For tests, ``body`` carries
``data-state`` (``loading``, ``ready``, ``busy``, ``done``), ``data-index`` (the edit shown) and
``data-played`` (the index whose audio last started playing).
"""

from __future__ import annotations

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>asr-audit annotate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
  body { font: 18px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
  header { display: flex; justify-content: space-between; color: #555; font-size: 15px; }
  #sentence { font-size: 22px; margin: 1.5rem 0; }
  #sentence .slot { border-bottom: 3px solid #2b6cb0; padding: 0 .3rem; font-weight: 600; }
  .options { display: flex; gap: 1rem; margin: 1rem 0; }
  .option { flex: 1; border: 1px solid #bbb; border-radius: 6px; padding: .8rem; font-size: 22px; }
  .option b { color: #2b6cb0; margin-right: .5rem; }
  .choices button { font-size: 17px; margin: .3rem .3rem .3rem 0; padding: .5rem .9rem; cursor: pointer; }
  kbd { border: 1px solid #999; border-radius: 3px; padding: 0 .3rem; font-size: 14px; }
  #help, #note { color: #555; font-size: 15px; }
  #done { display: none; font-size: 20px; }
</style>
</head>
<body data-state="loading" data-index="" data-played="">
<header><span id="progress">loading…</span><span>annotator: <b id="annotator"></b></span></header>
<main id="task">
  <p id="help">Listen, then say which rendering of the underlined span the speaker said.</p>
  <audio id="audio" controls preload="auto"></audio>
  <p><button id="replay">replay <kbd>space</kbd></button> <button id="whole">whole clip <kbd>w</kbd></button>
     <span id="note"></span></p>
  <audio id="clip" controls preload="none" hidden></audio>
  <p id="sentence"><span id="before"></span> <span class="slot">A / B</span> <span id="after"></span></p>
  <div class="options">
    <div class="option"><b>A</b><span id="optA"></span></div>
    <div class="option"><b>B</b><span id="optB"></span></div>
  </div>
  <div class="choices">
    <button data-choice="A"><kbd>1</kbd> A is right</button>
    <button data-choice="B"><kbd>2</kbd> B is right</button>
    <button data-choice="neither"><kbd>3</kbd> neither</button>
    <button data-choice="cant-tell"><kbd>4</kbd> can't tell</button>
    <button id="undo"><kbd>u</kbd> undo</button>
  </div>
</main>
<p id="done">Every edit of this sample is labelled. <a href="/api/export" download="labels.json">export the labels</a>
  · <button id="undo2"><kbd>u</kbd> undo the last</button></p>
<p id="error" role="alert" style="color:#b00"></p>
<script>
(function () {
  "use strict";
  var body = document.body, audio = document.getElementById("audio"), clip = document.getElementById("clip");
  var item = null;
  function text(id, s) { document.getElementById(id).textContent = s; }
  function show(state) {
    text("annotator", state.annotator);
    text("error", "");
    item = state.item;
    if (!item) {
      text("progress", state.done + " of " + state.n + " labelled");
      document.getElementById("task").style.display = "none";
      document.getElementById("done").style.display = "block";
      body.dataset.index = "";
      body.dataset.state = "done";
      audio.pause();
      return;
    }
    document.getElementById("task").style.display = "";
    document.getElementById("done").style.display = "none";
    text("progress", (state.done + 1) + " of " + state.n);
    text("before", item.before);
    text("after", item.after);
    text("optA", item.options[0].text);
    text("optB", item.options[1].text);
    text("note", item.timed ? "" : "no word timings for this clip: the whole clip plays");
    clip.hidden = true;
    clip.removeAttribute("src");
    audio.src = item.audio;
    body.dataset.index = String(item.index);
    body.dataset.state = "ready";
    play();
  }
  function play() {
    if (!item) { return; }
    audio.currentTime = 0;
    var p = audio.play();
    if (p && p.catch) { p.catch(function () { text("note", "press space to play"); }); }
  }
  audio.addEventListener("playing", function () { if (item) { body.dataset.played = String(item.index); } });
  function request(method, url, data) {
    body.dataset.state = "busy";
    return fetch(url, {method: method, headers: {"Content-Type": "application/json"},
                       body: data === undefined ? undefined : JSON.stringify(data)})
      .then(function (r) { return r.json().then(function (j) { if (!r.ok) { throw new Error(j.error || r.status); } return j; }); })
      .then(show)
      .catch(function (e) { body.dataset.state = item ? "ready" : "done"; text("error", String(e.message || e)); });
  }
  function choose(choice) {
    if (!item || body.dataset.state !== "ready") { return; }
    request("POST", "/api/label", {index: item.index, choice: choice});
  }
  function undo() {
    if (body.dataset.state === "busy") { return; }
    request("POST", "/api/undo", {});
  }
  function whole() {
    if (!item) { return; }
    audio.pause();
    clip.hidden = false;
    clip.src = item.clip;
    clip.play();
  }
  document.querySelectorAll("[data-choice]").forEach(function (b) {
    b.addEventListener("click", function () { choose(b.dataset.choice); });
  });
  document.querySelectorAll("button").forEach(function (b) {  // keys stay the page's after a click
    b.addEventListener("click", function () { b.blur(); });
  });
  document.getElementById("undo").addEventListener("click", undo);
  document.getElementById("undo2").addEventListener("click", undo);
  document.getElementById("replay").addEventListener("click", play);
  document.getElementById("whole").addEventListener("click", whole);
  var KEYS = {"1": "A", "2": "B", "3": "neither", "4": "cant-tell"};
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (KEYS[ev.key]) { ev.preventDefault(); choose(KEYS[ev.key]); }
    else if (ev.key === " ") { ev.preventDefault(); play(); }
    else if (ev.key === "w") { ev.preventDefault(); whole(); }
    else if (ev.key === "u" || ev.key === "Backspace") { ev.preventDefault(); undo(); }
  });
  request("GET", "/api/state");
})();
</script>
</body>
</html>
"""
