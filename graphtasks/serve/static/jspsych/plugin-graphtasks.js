// graphtasks' jsPsych 8 plugins and timeline: a study exported by `graphtasks serve --export-jspsych`.
// Written for graphtasks (Apache-2.0); no third-party code. jsPsych itself (MIT) is in ../jspsych/.
//
// graphtasks-episode plays one round of a graph task: the env's rules of gym_bridge/graph/env.py
// (GraphTaskEnv.step, _advance, _move; the reward sources of tasks/rewards.py), on the tables and
// random numbers the export wrote (study.js). graphtasks-text shows a text screen (instructions,
// consent, a phase banner, a break, the completion code) and records its onset and duration.
"use strict";
(function () {
  const {ParameterType} = jsPsychModule;
  const UNDEFINED = -2;
  const STOCHASTIC = -1;

  // RandomStream of tasks/rewards.py: the numbers in the order the env draws them
  class Stream {
    constructor(uniforms, normals) {
      this.u = uniforms;
      this.n = normals;
      this.ui = 0;
      this.ni = 0;
    }
    uniform() {
      if (this.ui >= this.u.length) throw new Error("the export's random numbers ran out: export the study again");
      return this.u[this.ui++];
    }
    normal() {
      if (this.ni >= this.n.length) throw new Error("the export's random numbers ran out: export the study again");
      return this.n[this.ni++];
    }
    below(n) {
      return Math.min(Math.floor(this.uniform() * n), n - 1);
    }
    shuffled(items) {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = this.below(i + 1);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    }
  }

  // the reward sources of tasks/rewards.py that the export plays
  function makeSource(spec) {
    if (spec === null) return null;
    const kind = spec.kind;
    if (kind === "fixed") return {reset() {}, draw() { return spec.value; }};
    if (kind === "probabilistic") {
      return {reset() {}, draw(stream) {
        const u = stream.uniform();
        for (let i = 0; i < spec.values.length; i++) if (u < spec.cumulative[i]) return spec.values[i];
        return spec.values[spec.values.length - 1];
      }};
    }
    if (kind === "drifting") {
      const source = {p: (spec.low + spec.high) / 2};
      source.reset = (stream) => { source.p = spec.low + (spec.high - spec.low) * stream.uniform(); };
      source.draw = (stream) => {
        const value = stream.uniform() < source.p ? spec.high_value : spec.low_value;
        let p = source.p + spec.sd * stream.normal();
        while (p < spec.low || p > spec.high) p = p < spec.low ? 2 * spec.low - p : 2 * spec.high - p;
        source.p = p;
        return value;
      };
      return source;
    }
    if (kind === "pseudorandom") {
      const source = {pending: []};
      source.reset = (stream) => { source.pending = stream.shuffled(spec.deck); };
      source.draw = (stream) => {
        if (!source.pending.length) source.pending = stream.shuffled(spec.deck);
        return source.pending.pop();
      };
      return source;
    }
    if (kind === "sequence") {
      const source = {position: 0};
      source.reset = () => { source.position = 0; };
      source.draw = () => {
        const value = spec.cards[source.position];
        source.position = (source.position + 1) % spec.cards.length;
        return value;
      };
      return source;
    }
    throw new Error("reward kind " + kind + " is not played here");
  }

  // one phase's env: GraphTaskEnv's reset and step on the exported tables
  class PhaseEnv {
    constructor(phase) {
      this.phase = phase;
      this.stream = new Stream(phase.uniforms, phase.normals);
      this.sources = phase.sources.map(makeSource);
      for (const source of this.sources) if (source) source.reset(this.stream); // a new session: sources afresh
      this.state = phase.start;
      this.steps = 0;
    }
    reset(trial) {
      this.t = this.phase.tables[trial.table];
      const start = trial.start === null ? this.phase.start : trial.start;
      this.state = this.advance(start);
      this.steps = 0;
      return this.state;
    }
    available() {
      return this.t.avail[this.state];
    }
    move(s, action) {
      const t = this.t.det[s][action];
      if (t === STOCHASTIC) return this.draw(s, action);
      return t === UNDEFINED ? s : t;
    }
    draw(s, action) {
      const [targets, cumulative] = this.t.dist[s + "," + action];
      const u = this.stream.uniform();
      let i = 0;
      while (u >= cumulative[i]) i++;
      return targets[i];
    }
    advance(t) {
      for (let k = 0; k <= this.phase.terminal.length; k++) {
        if (!this.phase.skip[t] || this.phase.terminal[t]) return t;
        t = this.move(t, this.phase.skip_first[t]);
      }
      throw new Error("skip states form a cycle at state " + t);
    }
    step(action) {
      const p = this.phase;
      const s = this.state;
      if (p.stochasticity && this.stream.uniform() < p.stochasticity) action = this.stream.below(p.n_actions);
      let t = this.t.det[s][action];
      let reward;
      let paid = false;
      if (t === UNDEFINED) {
        t = s;
        reward = 0 - p.time_penalty;
      } else {
        if (t === STOCHASTIC) t = this.draw(s, action);
        if (p.skip[t]) t = this.advance(t);
        paid = this.t.src[t];
        reward = this.t.rew[t];
      }
      if (paid) {
        reward = this.sources[t].draw(this.stream);
        if (this.t.outcome !== null && p.terminal[t]) reward = this.t.outcome;
        reward -= p.time_penalty;
      }
      this.state = t;
      this.steps += 1;
      const terminated = p.terminal[t];
      const truncated = p.limit !== null && this.steps >= p.limit && !terminated;
      return {next_state: t, reward, terminated, truncated};
    }
  }

  const envs = new Map(); // phase index -> its env, for the session's rounds in order
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const painted = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
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
      if (timeoutMs > 0) timer = setTimeout(() => { done(); resolve(null); }, timeoutMs);
    });
  }
  let shownSeq = 0; // screens shown so far (data-seq: a test or a screen reader sees each new screen)
  function show(root, kind, ...children) {
    const box = el("div", "graphtasks " + kind);
    box.dataset.screen = kind;
    box.dataset.seq = String(++shownSeq);
    box.append(...children);
    root.replaceChildren(box);
    return box;
  }

  class GraphtasksTextPlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }
    async trial(root, trial) {
      const parts = String(trial.text).split(/\n\s*\n/).map((p) => el("p", null, p.trim())).filter((p) => p.textContent);
      const children = trial.title ? [el("h1", null, trial.title), ...parts] : parts;
      const box = show(root, trial.kind, ...children, el("p", "hint", trial.hint));
      await painted();
      const onset = performance.now();
      box.dataset.ready = "1";
      if (trial.keys.length) await press(trial.keys, 0);
      this.jsPsych.finishTrial({graphtasks: trial.kind, page: trial.page, phase_index: trial.phase_index,
                                onset, duration: performance.now() - onset});
    }
  }
  GraphtasksTextPlugin.info = {
    name: "graphtasks-text", version: "1.0.0",
    parameters: {
      kind: {type: ParameterType.STRING, default: "instructions"},
      title: {type: ParameterType.STRING, default: ""},
      text: {type: ParameterType.STRING, default: ""},
      hint: {type: ParameterType.STRING, default: "Press the space bar to continue."},
      keys: {type: ParameterType.KEYS, default: [" "], array: true},
      page: {type: ParameterType.INT, default: 0},
      phase_index: {type: ParameterType.INT, default: null},
    },
    data: {
      graphtasks: {type: ParameterType.STRING}, page: {type: ParameterType.INT},
      onset: {type: ParameterType.FLOAT}, duration: {type: ParameterType.FLOAT},
    },
  };

  class GraphtasksEpisodePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }
    async trial(root, trial) {
      const study = trial.study;
      const phase = trial.phase;
      if (!envs.has(phase.index)) envs.set(phase.index, new PhaseEnv(phase));
      const env = envs.get(phase.index);
      const spec = phase.trials[trial.episode];
      const start = env.reset(spec);
      const steps = [];
      let timeouts = 0;
      for (;;) {
        const state = env.state;
        const looks = phase.states[String(state)] || {stimulus: "state " + state, colour: "#797979"};
        const options = phase.options[String(state)] || [];
        const available = env.available();
        const stimulus = el("div", "stimulus", looks.image ? null : looks.stimulus);
        if (looks.image) {
          const img = el("img");
          img.src = looks.image;
          img.alt = looks.stimulus;
          stimulus.append(img);
        }
        stimulus.style.borderColor = looks.colour;
        const row = el("div", "options");
        const boxes = {};
        for (const a of available) {
          const option = options[a] || {label: "Option " + (a + 1), image: null};
          const box = el("div", "option");
          box.dataset.action = String(a);
          if (option.image) {
            const img = el("img");
            img.src = option.image;
            img.alt = option.label;
            box.append(img);
          } else {
            box.style.background = looks.colour;
            box.append(el("div", "label", option.label));
          }
          box.append(el("div", "key", (phase.keys[a] || "?").toUpperCase()));
          boxes[a] = box;
          row.append(box);
        }
        const practice = study.practice.includes(phase.name) ? "Practice · " : "";
        show(root, "choice", stimulus, row,
             el("p", "progress", `${practice}round ${trial.episode + 1} of ${phase.episodes}`));
        await painted();
        const shown = performance.now();
        root.firstChild.dataset.ready = "1";
        const got = await press(available.map((a) => phase.keys[a]), study.timeout_ms);
        if (got === null) {
          timeouts += 1;
          show(root, "slow", el("p", "big", "Too slow!"), el("p", null, "Please answer faster."));
          await sleep(study.too_slow_ms);
          continue;
        }
        const action = phase.keys.indexOf(got.key);
        boxes[action].classList.add("chosen");
        const out = env.step(action);
        steps.push({step: steps.length, state, action, reward: out.reward, next_state: out.next_state,
                    rt: got.t - shown, key: got.key, shown, pressed: got.t, timeouts});
        timeouts = 0;
        await sleep(250);
        if (out.terminated || out.truncated) break;
      }
      const total = steps.reduce((sum, s) => sum + s.reward, 0);
      const won = total > 0;
      show(root, "feedback", el("p", "big " + (won ? "won" : "lost"), (won ? "+" : "") + total),
           el("p", null, won ? "You won this round." : "No reward this round."));
      await sleep(study.feedback_ms);
      show(root, "fixation", el("p", "cross", "+"));
      await sleep(study.iti_ms);
      this.jsPsych.finishTrial({
        graphtasks: "episode", task: phase.task, task_hash: phase.task_hash, phase: phase.name,
        phase_index: phase.index, episode: trial.episode, condition: spec.condition, start_state: start,
        steps, return: total, length: steps.length,
      });
    }
  }
  GraphtasksEpisodePlugin.info = {
    name: "graphtasks-episode", version: "1.0.0",
    parameters: {
      study: {type: ParameterType.OBJECT, default: null},
      phase: {type: ParameterType.OBJECT, default: null},
      episode: {type: ParameterType.INT, default: 0},
    },
    data: {
      graphtasks: {type: ParameterType.STRING}, task: {type: ParameterType.STRING},
      phase: {type: ParameterType.STRING}, phase_index: {type: ParameterType.INT},
      episode: {type: ParameterType.INT}, steps: {type: ParameterType.COMPLEX, array: true},
      return: {type: ParameterType.FLOAT}, length: {type: ParameterType.INT},
    },
  };

  // the session's timeline: consent, instructions, then per phase a banner, its rounds and breaks
  function graphtasksTimeline(study, slot) {
    const text = (kind, body, extra) => ({type: GraphtasksTextPlugin, kind, text: body, ...(extra || {})});
    const timeline = [];
    if (study.consent) {
      timeline.push(text("consent", study.consent, {title: "Consent", hint: "Press Y to agree and take part.",
                                                    keys: ["y"]}));
    }
    study.instructions.forEach((page, i) => timeline.push(text("instructions", page, {page: i})));
    let previous = null;
    for (const phase of slot.phases) {
      if (study.practice.includes(phase.name)) {
        timeline.push(text("banner", `Practice: ${phase.episodes} ${phase.episodes === 1 ? "round" : "rounds"}. ` +
                           "These let you learn the keys.", {phase_index: phase.index}));
      } else if (previous !== null && study.practice.includes(previous)) {
        timeline.push(text("banner", "The practice is over. The task starts now.", {phase_index: phase.index}));
      } else if (previous !== null) {
        timeline.push(text("banner", "Time for a short break. Continue when you are ready.", {phase_index: phase.index}));
      }
      const every = study.break_every;
      const blocks = every > 0 ? Math.ceil(phase.episodes / every) : 0;
      for (let e = 0; e < phase.episodes; e++) {
        timeline.push({type: GraphtasksEpisodePlugin, study, phase, episode: e});
        if (every > 0 && (e + 1) % every === 0 && e + 1 < phase.episodes) {
          timeline.push(text("break", `Block ${(e + 1) / every} of ${blocks} is done.`,
                             {title: "Time for a short break", page: (e + 1) / every, phase_index: phase.index,
                              hint: "Press the space bar when you are ready to go on."}));
        }
      }
      previous = phase.name;
    }
    return timeline;
  }

  function randomId() {
    const bytes = new Uint8Array(5);
    crypto.getRandomValues(bytes);
    return "js-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // runs the study: the slot from ?session=K (else one at random), the data kept on finish
  async function graphtasksRun(study) {
    const params = new URLSearchParams(location.search);
    const jatos = window.jatos;
    if (jatos) await new Promise((resolve) => jatos.onLoad(resolve));
    let k = Number.parseInt(params.get("session") || "", 10);
    if (!(k >= 0 && k < study.sessions.length)) k = Math.floor(Math.random() * study.sessions.length);
    const slot = study.sessions[k];
    const participant = params.get("participant") || randomId();
    const code = study.completion_code || randomId().slice(3).toUpperCase();
    const jsPsych = initJsPsych({
      on_finish: async () => {
        const json = jsPsych.data.get().json();
        const kept = el("textarea", null, json); // what a test (or a lab's own script) reads back
        kept.id = "graphtasks-data";
        kept.hidden = true;
        const keptCsv = el("textarea", null, jsPsych.data.get().csv());
        keptCsv.id = "graphtasks-data-csv";
        keptCsv.hidden = true;
        const link = el("a", "download", "Download the data (JSON)");
        link.href = URL.createObjectURL(new Blob([json], {type: "application/json"}));
        link.download = `graphtasks-${participant}.json`;
        const box = show(jsPsych.getDisplayElement(), "done", el("h1", null, "Finished"),
                         ...String(study.completion).split(/\n\s*\n/).map((p) => el("p", null, p)),
                         el("p", null, "Your completion code:"), el("p", "code", code), link, kept, keptCsv);
        box.dataset.finished = "1";
        if (jatos) await jatos.submitResultData(json).then(() => jatos.endStudy());
      },
    });
    jsPsych.data.addProperties({
      graphtasks_participant: participant, graphtasks_experiment: study.experiment, graphtasks_slot: slot.slot,
      graphtasks_run: slot.run, graphtasks_task: slot.task, graphtasks_condition: slot.condition,
      graphtasks_seed: slot.seed, graphtasks_code: code,
    });
    document.title = study.title;
    await jsPsych.run(graphtasksTimeline(study, slot));
  }

  window.GraphtasksTextPlugin = GraphtasksTextPlugin;
  window.GraphtasksEpisodePlugin = GraphtasksEpisodePlugin;
  window.graphtasksTimeline = graphtasksTimeline;
  window.graphtasksRun = graphtasksRun;
})();
