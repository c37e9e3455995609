// graphtasks study pages: one session, from consent to the completion code.
// Written for graphtasks (Apache-2.0); no third-party code. The server steps the task: this page
// shows what it is told, measures response times with performance.now(), and posts each choice
// until the server has committed it (retrying through network errors and server restarts).
"use strict";
(() => {
  const token = decodeURIComponent(location.pathname.split("/").pop());
  const api = "/api/s/" + encodeURIComponent(token);
  const storeKey = "graphtasks-session:" + location.host;
  const screen = document.getElementById("screen");
  const status = document.getElementById("status");
  let view = null;
  let screens = 0; // screens shown so far (data-seq: tests and screen readers see each new screen)

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
  }
  function paragraphs(text) {
    return String(text).split(/\n\s*\n/).map((p) => el("p", null, p.trim())).filter((p) => p.textContent);
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // resolves once the screen just built has been painted
  const painted = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));

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

  // the next press of one of `keys` (null after timeoutMs), with performance.now() at the press
  function press(keys, timeoutMs) {
    return new Promise((resolve) => {
      let timer = null;
      function onKey(ev) {
        const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
        if (!keys.includes(key) || ev.repeat) return;
        const t = performance.now();
        ev.preventDefault();
        done();
        resolve({key, t});
      }
      function done() {
        document.removeEventListener("keydown", onKey);
        if (timer !== null) clearTimeout(timer);
      }
      document.addEventListener("keydown", onKey);
      screen.dataset.ready = "1";
      if (timeoutMs > 0) timer = setTimeout(() => { done(); resolve(null); }, timeoutMs);
    });
  }
  async function space(text) {
    show("text", ...paragraphs(text), el("p", "hint", "Press the space bar to continue."));
    await press([" "], 0);
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
    const list = el("ol", "options-list");
    check.options.forEach((option) => list.append(el("li", null, option)));
    show("check", el("h1", null, `Question ${i + 1} of ${view.study.checks.length}`), el("p", "question", check.question),
         list, el("p", "hint", "Press the number of your answer."));
    const keys = check.options.map((_, j) => String(j + 1));
    const got = await press(keys, 0);
    return keys.indexOf(got.key);
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

  // a stimulus and one box per available action, each with its key
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
    for (const action of pos.available) {
      const box = el("div", "option");
      box.style.background = state.colour;
      const label = (state.labels && state.labels[action]) || "Option " + String.fromCharCode(65 + action);
      box.append(el("div", "label", label), el("div", "key", (def.keys[action] || "?").toUpperCase()));
      boxes[action] = box;
      options.append(box);
    }
    trialScreen(def, stimulus, options, progress(pos));
    return boxes;
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
    trialScreen(def, el("p", "hint", def.legend), canvas, progress(pos));
    return null;
  }

  // what the env showed this step, the question, and the answers with their keys
  function questionScreen(pos, def) {
    const q = pos.question || {observations: [], question: "?"};
    const seen = el("ul", "observed");
    q.observations.forEach((o) => seen.append(el("li", null, fill(def.seen, o))));
    const answers = el("div", "answers");
    const boxes = {};
    for (const action of pos.available) {
      const box = el("div", "answer");
      box.append(el("span", "key", (def.keys[action] || "?").toUpperCase()), el("span", "label", def.answers[action]));
      boxes[action] = box;
      answers.append(box);
    }
    trialScreen(def, el("p", "hint", def.legend), el("p", "seen-title", def.title), seen,
                el("p", "question", fill(def.ask, q)), answers, el("p", "progress", `question ${pos.step + 1}`));
    return boxes;
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
      await space(`Practice: ${pos.episodes} ${pos.episodes === 1 ? "round" : "rounds"}. These let you learn the keys.`);
    } else if (previous !== null && view.practice.includes(previous)) {
      await space("The practice is over. The task starts now.");
    } else if (previous !== null) {
      await space("Time for a short break. Continue when you are ready.");
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
      const boxes = page.draw(pos, def);
      const keys = pos.available.map((a) => def.keys[a]);
      await painted();
      const shown = performance.now();
      const got = await press(keys, def.timed ? view.study.timeout_ms : 0);
      if (got === null) {
        timeouts += 1;
        show("slow", el("p", "big", "Too slow!"), el("p", null, "Please answer faster."));
        await sleep(view.study.too_slow_ms);
        continue;
      }
      const action = def.keys.indexOf(got.key);
      if (boxes && boxes[action]) boxes[action].classList.add("chosen");
      const body = {index: pos.trial, action, key: got.key, rt: got.t - shown, shown, pressed: got.t, timeouts};
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
        show("break", el("h1", null, "Time for a short break"),
             el("p", null, blocks ? `Block ${block} of ${blocks} is done.` : `Block ${block} is done.`),
             el("p", "hint", "Press the space bar when you are ready to go on."));
        await press([" "], 0);
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
        for (const page of view.study.instructions) await space(page);
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
