// graphtasks study pages: one session, from consent to the completion code.
// Written for graphtasks (Apache-2.0); no third-party code. The server steps the task: this page
// shows what it is told, measures response times with performance.now() (onsets at the
// requestAnimationFrame that shows a screen; the timer's resolution measured here and sent with
// each choice), takes keys, touch and mouse alike (every control is a button), counts what the
// browser does while a trial is shown (telemetry: blurs, time away, hidden, full screen left,
// pastes, repeated keys), and posts each choice until the server has committed it (retrying
// through network errors and server restarts).
"use strict";
(() => {
  const token = decodeURIComponent(location.pathname.split("/").pop());
  const api = "/api/s/" + encodeURIComponent(token);
  const storeKey = "graphtasks-session:" + location.host;
  const screen = document.getElementById("screen");
  const status = document.getElementById("status");
  let view = null;
  let screens = 0; // screens shown so far (data-seq: tests and screen readers see each new screen)
  // a touch screen (a phone, a tablet): tapped buttons, no key hints
  const coarse = Boolean(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
  document.documentElement.classList.toggle("coarse", coarse);
  const isolated = self.crossOriginIsolated === true; // performance.now() at full resolution

  // the smallest step of performance.now() (ms): 0.1 where the page is not cross-origin isolated,
  // a few microseconds where it is; stored with each response time
  function timerResolution() {
    let best = Infinity;
    let last = performance.now();
    const end = last + 30;
    for (let steps = 0; steps < 300;) {
      const t = performance.now();
      if (t > last) {
        best = Math.min(best, t - last);
        last = t;
        steps++;
      }
      if (t > end) break;
    }
    return Number.isFinite(best) ? Math.round(best * 1e6) / 1e6 : null;
  }
  const resolution = timerResolution();
  screen.dataset.resolution = String(resolution);
  screen.dataset.isolated = String(isolated);

  // what the browser does while a trial is shown (reset at each trial's onset; sent with the choice)
  const telemetry = {blurs: 0, away_ms: 0, hidden: 0, fullscreen_exits: 0, pastes: 0, key_repeats: 0};
  let awaySince = null; // performance.now() when the window lost focus or was hidden
  const leave = () => { if (awaySince === null) awaySince = performance.now(); };
  const back = () => {
    if (awaySince !== null) telemetry.away_ms += performance.now() - awaySince;
    awaySince = null;
  };
  window.addEventListener("blur", () => { telemetry.blurs += 1; leave(); });
  window.addEventListener("focus", () => { if (!document.hidden) back(); });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      telemetry.hidden += 1;
      leave();
    } else {
      back();
    }
  });
  document.addEventListener("fullscreenchange", () => { if (!document.fullscreenElement) telemetry.fullscreen_exits += 1; });
  document.addEventListener("paste", () => { telemetry.pastes += 1; }, true);
  document.addEventListener("keydown", (ev) => { if (ev.repeat) telemetry.key_repeats += 1; }, true);
  function resetTelemetry() {
    for (const name of Object.keys(telemetry)) telemetry[name] = 0;
    awaySince = document.hidden ? performance.now() : null;
  }
  function readTelemetry() {
    const away = telemetry.away_ms + (awaySince !== null ? performance.now() - awaySince : 0);
    return {...telemetry, away_ms: Math.round(away * 1000) / 1000, webdriver: navigator.webdriver === true};
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function show(kind, ...children) {
    screen.className = kind;
    screen.dataset.screen = kind;
    screen.dataset.seq = String(++screens);
    screen.dataset.ready = "0"; // "1" once keys are listened to (a press before that is not taken)
    screen.replaceChildren(...children);
    screen.focus({preventScroll: true}); // a screen reader starts at the new screen; Tab goes to its first button
  }
  function button(cls, text, label) {
    const node = el("button", cls, text);
    node.type = "button";
    if (label) node.setAttribute("aria-label", label);
    return node;
  }
  const keyName = (key) => ({" ": "space bar", ArrowUp: "up arrow", ArrowDown: "down arrow", ArrowLeft: "left arrow",
                             ArrowRight: "right arrow"}[key] || String(key).toUpperCase());
  function paragraphs(text) {
    return String(text).split(/\n\s*\n/).map((p) => el("p", null, p.trim())).filter((p) => p.textContent);
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // the onset of the screen just built: the timestamp of the animation frame that shows it
  const onset = () => new Promise((resolve) => requestAnimationFrame((t) => resolve(t)));

  async function request(method, url, body) {
    let wait = 200;
    for (let attempt = 0; ; attempt++) {
      let res = null;
      try {
        res = await fetch(url, {
          method, cache: "no-store",
          headers: body ? {"Content-Type": "application/json"} : {},
          body: body ? JSON.stringify(body) : undefined,
        });
      } catch (e) {
        res = null; // the network or the server is down: try again
      }
      if (res && res.status < 500) {
        const data = await res.json().catch(() => ({}));
        status.textContent = "";
        if (res.ok) return data;
        const error = new Error(data.error || res.statusText);
        error.status = res.status;
        throw error;
      }
      if (attempt >= 2) status.textContent = "Saving… please keep this page open.";
      await sleep(wait);
      wait = Math.min(wait * 2, 4000);
    }
  }

  // the event's time (performance.now()'s clock): its own timestamp where the browser gives one
  const when = (ev) => (ev.timeStamp > 0 && ev.timeStamp <= performance.now() ? ev.timeStamp : performance.now());

  // The next response (null after timeoutMs): a press of one of `keys`, or a touch, click or pen
  // on one of `targets` ([button, key]: the button stands for the key). Resolves to the key, the
  // time (performance.now()'s clock) and the input that gave it: key, touch, mouse or pen. A touch
  // or a click counts at its pointerdown; a button activated from the keyboard (Tab, then Enter)
  // counts as a key.
  function press(keys, timeoutMs, targets = []) {
    return new Promise((resolve) => {
      let timer = null;
      const listening = [];
      function finish(result) {
        done();
        resolve(result);
      }
      function onKey(ev) {
        const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
        if (!keys.includes(key) || ev.repeat) return;
        ev.preventDefault();
        finish({key, t: when(ev), input: "key"});
      }
      for (const [target, key] of targets) {
        const down = (ev) => {
          if (ev.button > 0 || !ev.isPrimary) return;
          ev.preventDefault();
          finish({key, t: when(ev), input: ["touch", "pen"].includes(ev.pointerType) ? ev.pointerType : "mouse"});
        };
        const click = (ev) => { if (ev.detail === 0) finish({key, t: when(ev), input: "key"}); };
        target.addEventListener("pointerdown", down);
        target.addEventListener("click", click);
        listening.push(() => {
          target.removeEventListener("pointerdown", down);
          target.removeEventListener("click", click);
        });
      }
      function done() {
        document.removeEventListener("keydown", onKey);
        listening.forEach((stop) => stop());
        if (timer !== null) clearTimeout(timer);
      }
      document.addEventListener("keydown", onKey);
      screen.dataset.ready = "1";
      if (timeoutMs > 0) timer = setTimeout(() => { done(); resolve(null); }, timeoutMs);
    });
  }
  // a hint of how to answer: keys on a computer, taps on a touch screen
  const hint = (keys, taps) => el("p", "hint", coarse ? taps : keys);
  // a screen besides the trials (consent, instructions, a banner, a break): its onset (the frame that
  // showed it) and duration, recorded as a StudyEvent of the session. Awaited: the server places the
  // screen after the trials posted before it, so the next trial's post must not overtake it (a
  // refused post is let go: the page goes on)
  async function reportScreen(kind, at, page) {
    if (!kind) return;
    await request("POST", api + "/screen", {kind, onset: at, duration: performance.now() - at, page: page || 0})
      .catch(() => {});
  }
  async function space(text, kind, page) {
    const go = button("continue", "Continue");
    show("text", ...paragraphs(text), el("p", "buttons"), hint("Press the space bar (or Continue) to go on.",
                                                                "Tap Continue to go on."));
    screen.querySelector("p.buttons").append(go);
    const at = await onset();
    await press([" "], 0, [[go, " "]]);
    await reportScreen(kind, at, page);
  }

  async function consent() {
    const agree = el("button", "agree", "I agree");
    const decline = el("button", "decline", "I do not agree");
    agree.type = decline.type = "button";
    show("consent", el("h1", null, "Consent"), ...paragraphs(view.study.consent), el("p", "buttons"));
    screen.lastChild.append(agree, decline);
    const agreed = await new Promise((resolve) => {
      agree.addEventListener("click", () => resolve(true));
      decline.addEventListener("click", () => resolve(false));
    });
    if (!agreed) {
      show("text", el("h1", null, "Thank you"), el("p", null, "You have not agreed to take part. You may close this page."));
      return false;
    }
    await request("POST", api + "/consent", {agree: true});
    return true;
  }

  // one comprehension question; the number of the option chosen (from 0)
  async function ask(check, i) {
    const {keys, got} = await question("check", `Question ${i + 1} of ${view.study.checks.length}`, check);
    return keys.indexOf(got.key);
  }

  // a question and its options, each a numbered button (its number is its key); the response
  async function question(kind, heading, check, note) {
    const list = el("ol", "options-list");
    const keys = check.options.map((_, j) => String(j + 1));
    const targets = check.options.map((option, j) => {
      const choice = button("choice", `${j + 1}. ${option}`);
      const item = el("li");
      item.append(choice);
      list.append(item);
      return [choice, keys[j]];
    });
    const parts = [el("h1", null, heading)];
    if (note) parts.push(el("p", "note", note));
    show(kind, ...parts, el("p", "question", check.question), list,
         hint("Press the number of your answer, or click it.", "Tap your answer."));
    const shown = await onset();
    const got = await press(keys, 0, targets);
    return {keys, got, rt: got.t - shown};
  }

  // The study's attention checks (instructed-response items) due before trial `pos.trial`: each
  // answer is recorded; a wrong one is asked once more, and the study goes on either way
  async function attentionChecks(pos) {
    const checks = view.study.attention_checks || [];
    while (view.attention.done < checks.length && checks[view.attention.done].after_trial <= pos.trial) {
      const k = view.attention.done;
      const again = view.attention.attempt > 0;
      const {keys, got, rt} = await question("attention", "Please read carefully", checks[k],
                                             again ? "Please read the question again." : null);
      const result = await request("POST", api + "/attention",
                                   {check: k, answer: keys.indexOf(got.key), rt, input: got.input});
      view.attention = result.again ? {done: k, attempt: view.attention.attempt + 1} : {done: k + 1, attempt: 0};
    }
  }

  // The page's drawings of a step, one per kind of screen a family may declare (gym_bridge/screens.py).
  // The server sends each task version's `page` (which drawing), `kind` (the screen's name, marked
  // on the page as data-screen) and what the drawing shows; nothing here knows a family.
  function trialScreen(def, ...children) {
    show(def.kind, ...children);
    screen.className = "trial page-" + def.page; // styled by the drawing, not by the family
  }
  function fill(template, fields) {
    return String(template).replace(/\{(\w+)\}/g, (whole, name) => (name in fields ? String(fields[name]) : whole));
  }

  // WCAG's relative luminance of a #rrggbb colour, and the text colour that reads best on it
  function luminance(hex) {
    const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(String(hex).trim());
    if (!m) return null;
    const [r, g, b] = m.slice(1).map((h) => {
      const c = parseInt(h, 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function textOn(background) {
    const l = luminance(background);
    if (l === null) return "#fff";
    return (1.05 / (l + 0.05)) >= ((l + 0.05) / (0.0137 + 0.05)) ? "#fff" : "#111"; // white's contrast, #111's
  }
  // what option `action` shows: the trial's own look (`position.options`: a label and an image),
  // else the screen's label for it
  function optionLook(pos, state, action) {
    const given = (pos.options || []).find((o) => o.action === action);
    const label = (given && given.label) || (state.labels && state.labels[action])
      || "Option " + String.fromCharCode(65 + action);
    return {label: String(label), image: given && given.image ? given.image : null};
  }

  // a stimulus and one button per available action, each with its key
  function choiceScreen(pos, def) {
    const state = def.states[String(pos.state)] || {stimulus: "state " + pos.state, colour: "#797979"};
    const stimulus = el("div", "stimulus");
    if (state.image) {
      const img = el("img");
      img.src = state.image;
      img.alt = state.stimulus;
      stimulus.append(img);
    } else {
      stimulus.textContent = state.stimulus;
    }
    stimulus.style.borderColor = state.colour;
    const options = el("div", "options");
    const boxes = {};
    const targets = [];
    for (const action of pos.available) {
      const look = optionLook(pos, state, action);
      const key = def.keys[action] || "?";
      const box = button("option", null, `${look.label} (key ${keyName(key)})`);
      if (look.image) { // the picture carries its colours: a white box, framed in the state's colour
        box.classList.add("pictured");
        box.style.borderColor = state.colour;
      } else {
        box.style.background = state.colour;
        box.style.color = textOn(state.colour);
      }
      if (look.image) {
        const img = el("img", "option-image");
        img.src = look.image;
        img.alt = look.label;
        box.append(img);
      } else {
        box.append(el("span", "label", look.label));
      }
      box.append(el("span", "key", key.toUpperCase()));
      boxes[action] = box;
      targets.push([box, key]);
      options.append(box);
    }
    trialScreen(def, stimulus, options, progress(pos));
    return {boxes, targets};
  }

  function progress(pos) {
    const practice = view.practice.includes(pos.phase) ? "Practice · " : "";
    return el("p", "progress", `${practice}round ${pos.episode + 1} of ${pos.episodes}`);
  }

  // the env's text picture as squares: each character's colour, the player a disc, others written
  function arrowsScreen(pos, def) {
    const rows = String(pos.frame || "").split("\n").filter((r) => r.length);
    const width = Math.max(...rows.map((r) => r.length), 1);
    const cell = Math.max(12, Math.min(56, Math.floor(520 / Math.max(width, rows.length))));
    const floor = def.colours[" "] || "#f2f2f2";
    const canvas = el("canvas", "board");
    canvas.width = width * cell;
    canvas.height = rows.length * cell;
    const ctx = canvas.getContext("2d");
    rows.forEach((row, r) => {
      for (let c = 0; c < width; c++) {
        const ch = row[c] || " ";
        ctx.fillStyle = def.colours[ch] || floor;
        ctx.fillRect(c * cell, r * cell, cell, cell);
        ctx.strokeStyle = "#d0d0d0";
        ctx.strokeRect(c * cell + 0.5, r * cell + 0.5, cell - 1, cell - 1);
        if (ch === def.agent) {
          ctx.fillStyle = "#4878d0";
          ctx.beginPath();
          ctx.arc((c + 0.5) * cell, (r + 0.5) * cell, cell * 0.35, 0, 2 * Math.PI);
          ctx.fill();
        } else if (!(ch in def.colours)) {
          ctx.fillStyle = "#222";
          ctx.font = `${Math.floor(cell * 0.6)}px sans-serif`;
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          ctx.fillText(ch, (c + 0.5) * cell, (r + 0.5) * cell);
        }
      }
    });
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", `The grid, ${width} by ${rows.length} squares; you are the blue disc.`);
    // the arrows as buttons (a touch screen's way to move; a mouse's too), each with its key
    const pad = el("div", "arrow-pad");
    const targets = [];
    const names = {ArrowUp: ["up", "\u2191"], ArrowRight: ["right", "\u2192"], ArrowDown: ["down", "\u2193"],
                   ArrowLeft: ["left", "\u2190"]};
    for (const action of pos.available) {
      const key = def.keys[action];
      if (key === undefined) continue;
      const [name, arrow] = names[key] || [String(key), String(key)];
      const go = button("arrow arrow-" + name, arrow, `Move ${name} (${keyName(key)})`);
      targets.push([go, key]);
      pad.append(go);
    }
    trialScreen(def, el("p", "hint", coarse ? def.legend.replace(/arrow keys/, "arrow buttons") : def.legend), canvas,
                pad, progress(pos));
    return {boxes: null, targets};
  }

  // what the env showed this step, the question, and the answers with their keys
  function questionScreen(pos, def) {
    const q = pos.question || {observations: [], question: "?"};
    const seen = el("ul", "observed");
    q.observations.forEach((o) => seen.append(el("li", null, fill(def.seen, o))));
    const answers = el("div", "answers");
    const boxes = {};
    const targets = [];
    for (const action of pos.available) {
      const key = def.keys[action] || "?";
      const box = button("answer", null, `${def.answers[action]} (key ${keyName(key)})`);
      box.append(el("span", "key", key.toUpperCase()), el("span", "label", def.answers[action]));
      boxes[action] = box;
      targets.push([box, key]);
      answers.append(box);
    }
    trialScreen(def, el("p", "hint", def.legend), el("p", "seen-title", def.title), seen,
                el("p", "question", fill(def.ask, q)), answers, el("p", "progress", `question ${pos.step + 1}`));
    return {boxes, targets};
  }

  // the outcome after a step, by drawing (null: none is shown)
  function roundOutcome(answer) { // at the end of a round: what it paid
    if (!answer.terminated) return null;
    const won = answer.reward > 0;
    return [el("p", "big " + (won ? "won" : "lost"), (won ? "+" : "") + answer.reward),
            el("p", null, won ? "You won this round." : "No reward this round.")];
  }
  function rewardOutcome(answer) { // any step that paid or cost
    if (answer.reward === 0) return null;
    const won = answer.reward > 0;
    return [el("p", "big " + (won ? "won" : "lost"), (won ? "+" : "") + answer.reward)];
  }
  function answerOutcome(answer, def) { // every question has its answer: right (a reward) or not
    const won = answer.reward > 0;
    return [el("p", "big " + (won ? "won" : "lost"), won ? def.right : def.wrong)];
  }
  const roundsDone = (next, ended) => (ended ? next.episode : 0);

  // Per drawing: `draw` shows the step and returns the boxes a key marks as chosen; `hold` keeps
  // the choice visible while it is saved (ms); `outcome` the feedback after a step; `counted` the
  // trials of the phase done (rounds, or questions), for study.break_every; `blocks` whether the
  // number of blocks is known (a phase's rounds are; a question screen's questions are not).
  const PAGES = {
    choice: {draw: choiceScreen, hold: 250, outcome: roundOutcome, counted: roundsDone, blocks: true},
    arrows: {draw: arrowsScreen, hold: 0, outcome: rewardOutcome, counted: roundsDone, blocks: true},
    question: {draw: questionScreen, hold: 250, outcome: answerOutcome, counted: (next) => next.step, blocks: false},
  };

  async function phaseBanner(pos, previous) {
    const practice = view.practice.includes(pos.phase);
    if (practice) {
      await space(`Practice: ${pos.episodes} ${pos.episodes === 1 ? "round" : "rounds"}. These let you learn the keys.`,
                  "banner");
    } else if (previous !== null && view.practice.includes(previous)) {
      await space("The practice is over. The task starts now.", "banner");
    } else if (previous !== null) {
      await space("Time for a short break. Continue when you are ready.", "banner");
    }
  }

  async function trials(pos) {
    let timeouts = 0;
    let previous = null;
    let banner = pos.episode === 0 && pos.step === 0;
    let answer = null;
    while (!pos.done) {
      if (banner) await phaseBanner(pos, previous);
      banner = false;
      const def = view.screens[pos.task];
      const page = PAGES[def.page];
      if (!page) {
        show("text", el("h1", null, "This task cannot be shown"),
             el("p", null, `This page draws no ${def.page} screens. Please tell the researcher.`));
        return null;
      }
      await attentionChecks(pos);
      const {boxes, targets} = page.draw(pos, def);
      const keys = pos.available.map((a) => def.keys[a]);
      const shown = await onset();
      resetTelemetry();
      const got = await press(keys, def.timed ? view.study.timeout_ms : 0, targets);
      if (got === null) {
        timeouts += 1;
        show("slow", el("p", "big", "Too slow!"), el("p", null, "Please answer faster."));
        await sleep(view.study.too_slow_ms);
        continue;
      }
      const action = def.keys.indexOf(got.key);
      if (boxes && boxes[action]) boxes[action].classList.add("chosen");
      const body = {index: pos.trial, action, key: got.key, rt: got.t - shown, shown, pressed: got.t, timeouts,
                    resolution, isolated, input: got.input, telemetry: readTelemetry()};
      const minimum = sleep(page.hold); // the choice stays visible while it is saved
      try {
        answer = await request("POST", api + "/trial", body);
      } catch (e) {
        show("text", el("h1", null, "Something went wrong"), el("p", null, e.message));
        return null;
      }
      await minimum;
      timeouts = 0;
      const ended = answer.terminated;
      const outcome = page.outcome(answer, def);
      if (outcome) {
        show("feedback", ...outcome);
        await sleep(view.study.feedback_ms);
      }
      const next = answer.position;
      // a break after every break_every trials of a phase: rounds (episodes), or questions
      const every = view.study.break_every;
      const counted = page.counted(next, ended);
      if (every > 0 && !next.done && next.phase_index === pos.phase_index && counted > 0 && counted % every === 0) {
        const blocks = page.blocks ? Math.ceil(pos.episodes / every) : 0; // a question screen's length: unknown here
        const block = counted / every;
        const go = button("continue", "Continue");
        show("break", el("h1", null, "Time for a short break"),
             el("p", null, blocks ? `Block ${block} of ${blocks} is done.` : `Block ${block} is done.`),
             el("p", "buttons"), hint("Press the space bar (or Continue) when you are ready to go on.",
                                      "Tap Continue when you are ready to go on."));
        screen.querySelector("p.buttons").append(go);
        const at = await onset();
        await press([" "], 0, [[go, " "]]);
        await reportScreen("break", at, block);
      }
      if (ended && !next.done) {
        show("fixation", el("p", "cross", "+"));
        await sleep(view.study.iti_ms);
      }
      if (!next.done && next.phase_index !== pos.phase_index) {
        previous = pos.phase;
        banner = true;
      }
      pos = next;
    }
    return answer;
  }

  function finish(data) {
    const parts = [el("h1", null, "Finished"), ...paragraphs(view.study.completion),
                   el("p", null, "Your completion code:"), el("p", "code", data.code)];
    if (data.redirect) {
      const link = el("a", "redirect", "Return to the study site");
      link.href = data.redirect;
      parts.push(el("p", null), link);
    }
    show("done", ...parts);
  }

  async function main() {
    try {
      view = await request("GET", api);
    } catch (e) {
      if (e.status === 404) localStorage.removeItem(storeKey);
      show("text", el("h1", null, "This session cannot be opened"), el("p", null, e.message));
      return;
    }
    document.title = view.study.title;
    let pos = view.position;
    if (pos.done) return finish(view);
    if (!view.consented && !(await consent())) return;
    if (pos.trial === 0) {
      for (;;) {
        for (const [i, page] of view.study.instructions.entries()) await space(page, "instructions", i);
        if (view.checked || !view.study.checks.length) break;
        const answers = [];
        for (let i = 0; i < view.study.checks.length; i++) answers.push(await ask(view.study.checks[i], i));
        const result = await request("POST", api + "/checks", {answers});
        if (result.passed) break;
        await space("Some answers were not right. Please read the instructions again.");
      }
    }
    const last = await trials(pos);
    if (last) finish(last);
  }
  main();
})();
