"""Schema fragment of experiment records (entry point `graphtasks.schema: experiments`).

Records are shared nodes (they outlive any one version of a task): an `Experiment` with its
`Phase`s, a `Run` per cell (task x agent setting x seed), an `Episode` per episode and, where
steps are recorded, a `Trial` per step. Every record's `owner` property is the uid of the
experiment it belongs to ('experiment/<name>'); the task a run ran on is its `task` (the
task's id, as a task's own nodes hold it), an episode's task version its `task_version` and
`task_hash`, joined to the stored `Task` by uid and content hash. A stored edge to the Task
node would be cut whenever the task is put again (a changed built-in, a new variant), so
the records keep the ids instead.

Changed in this version: the owner was in `task` and a run's task in `task_id`; a store
written before is renamed when it is opened (`RENAMED`, graphstore's `NodeType.renamed`).
"""

from __future__ import annotations

from graphstore.schema import OWNER_PROPERTY, OWNER_RENAMED, Property, Schema

MLS = "http://www.w3.org/ns/mls#"  # W3C ML-Schema: the RDF view types records with it where it fits
# what an experiment owns (deleted with it)
RECORD_LABELS = (
    "Posterior", "CrossValidation", "GroupFit", "Fit", "Model", "Trial", "Probe", "Episode", "Chunk", "Run",
    "Participant", "Phase", "Experiment",
)
KEY = Property("key", "str", True, "'<from uid>|<to uid>': one edge per pair")
OWNER = OWNER_PROPERTY  # the property holding a record's experiment uid
# what a store written before the owner was `owner` renames: the owner out of `task`, then a
# run's task into it
RENAMED = {"Run": OWNER_RENAMED + (("task_id", "task"),)}


def add_schema(s: Schema) -> None:
    s.add_node(
        "Experiment",
        [
            Property("name", "str", True, "the spec's experiment.name"),
            Property("spec_hash", "str", True, "hash of the spec's content: a changed spec is a new experiment"),
            Property("spec", "str", False, "the spec file's text"),
            Property("description", "str", False, "the spec's description"),
            Property("reference", "str", False, "the paper the protocol comes from"),
            Property("created_at", "str", False, "UTC time the experiment was first recorded"),
        ],
        "An experiment: a spec of tasks, agents, seeds and phases; its runs hang off it.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Experiment", OWNER_RENAMED),
        also=(MLS + "Experiment",),
    )
    s.add_node(
        "Phase",
        [
            Property("name", "str", True, "the phase's name in the spec"),
            Property("condition", "str", False, "the condition whose version of the phase this is"),
            Property("index", "int", True, "position in the protocol, from 0"),
            Property("episodes", "int", True, "episodes per run"),
            Property("max_steps", "int", False, "episode length (none: the env's default, or one per task)"),
            Property("max_steps_by_task", "json", False, "episode length per task id, where the spec gives a table"),
            Property("learn", "bool", True, "false: a test phase (the agent does not learn)"),
            Property("greedy", "bool", False, "true: every agent takes the argmax of its values (ties: its stream)"),
            Property("changes", "json", False, "the task changes of this phase (tasks.variants)"),
            Property("agent_settings", "json", False, "agent settings in this phase only (e.g. epsilon 0)"),
            Property("env_settings", "json", False, "environment settings in this phase only"),
        ],
        "One phase of an experiment's protocol.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Phase", OWNER_RENAMED),
    )
    s.add_node(
        "Run",
        [
            Property("index", "int", True, "the cell's index in the sweep"),
            Property(
                "status", "str", True,
                "running | completed | failed (it raised) | interrupted (stopped from outside: Ctrl-C, a dead worker)",
            ),
            Property("task", "str", True, "the run's task id (phases may run variants of it: Episode.task_version)"),
            Property("agent", "str", True, "reference agent name"),
            Property("label", "str", True, "agent label with its swept settings"),
            Property("params", "json", True, "agent settings"),
            Property("seed", "int", True, "the run's seed"),
            Property("condition", "str", False, "the protocol's condition the run is in ([[conditions]])"),
            Property("error", "str", False, "what went wrong, for a failed run"),
            Property("version", "str", False, "graphtasks version that ran it"),
            Property("host", "str", False, "machine that ran it"),
            Property("driver", "int", False, "process id of the sweep's driver on that machine"),
            Property("started_at", "str", False, "UTC start time"),
            Property("ended_at", "str", False, "UTC end time"),
        ],
        "One cell of an experiment: a task, an agent setting and a seed through every phase.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Run", OWNER_RENAMED),
        also=(MLS + "Run",),
    )
    s.add_node(
        "Episode",
        [
            Property("experiment", "str", True, "the experiment's name"),
            Property("run", "int", True, "the run's index"),
            Property("phase", "str", True, "the phase's name"),
            Property("phase_index", "int", True, "the phase's position"),
            Property("index", "int", True, "episode number within the phase, from 0"),
            Property("reward", "float", True, "total reward of the episode (its return)"),
            Property("length", "int", True, "steps"),
            Property("start_state", "int", True, "state index the episode started in"),
            Property("task_version", "str", True, "id of the task version it ran (a variant id when changed)"),
            Property("task_hash", "str", True, "content hash of that task version"),
        ],
        "One episode of a run.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Episode", OWNER_RENAMED),
    )
    s.add_node(
        "Trial",
        [
            Property("experiment", "str", True, "the experiment's name"),
            Property("run", "int", True, "the run's index"),
            Property("phase_index", "int", True, "the phase's position"),
            Property("episode", "int", True, "the episode's number within the phase"),
            Property("step", "int", True, "step within the episode, from 0"),
            Property("state", "int", True, "state index before the action"),
            Property("action", "int", True, "the action taken"),
            Property("reward", "float", True, "what the step paid"),
            Property("next_state", "int", True, "state index after the step"),
            Property("p_action", "float", False, "the probability the agent gave the action it took"),
            Property("condition", "str", False, "the trial's condition (scheduled phases)"),
        ],
        "One step of an episode (recorded for trial tasks, and for any task with record = 'steps').",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Trial", OWNER_RENAMED),
    )
    s.add_node(
        "Chunk",
        [
            Property("experiment", "str", True, "the experiment's name"),
            Property("kind", "str", True, "episodes | trials: what its rows are"),
            Property("file", "str", True, "its path in the store's records folder (<store>.records/)"),
            Property("sha256", "str", True, "hash of the file's bytes"),
            Property("rows", "int", True, "rows it holds"),
            Property("runs", "json", True, "indices of the runs whose rows it holds"),
            Property("bytes", "int", True, "size of the file"),
            Property("created_at", "str", False, "UTC time it was catalogued"),
        ],
        "A columnar file (Parquet) of a sweep's episode or trial rows, catalogued once it was durable; "
        "Cypher reads it with LOAD FROM $episodes / $trials.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Chunk", OWNER_RENAMED),
    )
    s.add_node(
        "Probe",
        [
            Property("experiment", "str", True, "the experiment's name"),
            Property("run", "int", True, "the run's index"),
            Property("phase", "str", True, "the phase's name"),
            Property("phase_index", "int", True, "the phase's position"),
            Property("preference", "float", True, "softmax preference for the first probe option"),
            Property("values", "json", True, "the agent's value of each probe option, in order"),
        ],
        "The agent's preference among a phase's probe options at the end of the phase.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Probe", OWNER_RENAMED),
    )
    s.add_node(
        "Participant",
        [
            Property("participant_id", "str", True, "the participant's id in the imported file (BIDS sub-)"),
            Property("source", "str", False, "the file the behaviour was imported from"),
        ],
        "A person whose recorded choices were imported (graphtasks fit import); their runs hang off it.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Participant", OWNER_RENAMED),
        also=("http://xmlns.com/foaf/0.1/Person",),
    )
    s.add_node(
        "Model",
        [
            Property("name", "str", True, "the model's name (graphtasks fit models, or the agent's)"),
            Property("agent", "str", True, "the agent it fits"),
            Property("bounds", "json", True, "the free settings and the bounds the optimiser keeps to"),
            Property("fixed", "json", True, "the settings held fixed"),
        ],
        "A model fitted to an experiment's runs: an agent, its free settings with bounds, its fixed ones.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Model", OWNER_RENAMED),
    )
    s.add_node(
        "Fit",
        [
            Property("model", "str", True, "the fitted model's name"),
            Property("agent", "str", True, "the agent the model fits"),
            Property("params", "json", True, "the fitted free settings: maximum likelihood, or an EM fit's MAP"),
            Property("stderr", "json", False, "their standard errors (null: at a bound, or no curvature)"),
            Property("fixed", "json", True, "the settings held fixed"),
            Property("log_likelihood", "float", True, "log-likelihood of the run's choices at `params`"),
            Property("aic", "float", True, "2k - 2 log L"),
            Property("bic", "float", True, "k ln n - 2 log L, n the number of choices"),
            Property("choices", "int", True, "choices fitted"),
            Property("starts", "int", True, "optimiser starts"),
            Property("seed", "int", True, "seed of the starting points"),
            Property("method", "str", False, "mle (none: mle) | em, nuts: a run's part of a hierarchical fit"),
            Property("log_evidence", "float", False, "em: the Laplace approximation of log p(choices | group prior)"),
            Property("phases", "json", False, "the phases whose trials were fitted (null: every phase)"),
            Property("created_at", "str", False, "UTC time of the fit"),
            Property("version", "str", False, "graphtasks version that fitted it"),
        ],
        "A fit of a model to one run's choices (graphtasks fit): maximum likelihood, or one participant's part "
        "of a hierarchical fit.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Fit", OWNER_RENAMED),
    )
    s.add_node(
        "GroupFit",
        [
            Property("model", "str", True, "the fitted model's name"),
            Property("agent", "str", True, "the agent the model fits"),
            Property("method", "str", True, "em: expectation-maximisation with Laplace approximations; nuts: sampled"),
            Property("transform", "str", True, "how free settings map to the real line (where the prior is Gaussian)"),
            Property("mean", "json", True, "the group prior's mean of each free setting, transformed"),
            Property("variance", "json", True, "the group prior's variance of each free setting, transformed"),
            Property("mean_stderr", "json", True, "the standard error of each mean, sqrt(variance / participants)"),
            Property("median", "json", True, "each mean mapped back to the setting: the median participant"),
            Property("fixed", "json", True, "the settings held fixed"),
            Property("participants", "int", True, "runs fitted together"),
            Property("choices", "int", True, "choices fitted, over all runs"),
            Property("log_evidence", "float", True, "the sum of the runs' Laplace log evidences"),
            Property("integrated_bic", "float", True, "-2 log evidence + 2d ln(choices) (Huys et al. 2011)"),
            Property("iterations", "int", True, "EM iterations"),
            Property("converged", "bool", True, "false: stopped by the iteration limit"),
            Property("starts", "int", True, "starting points of each run's first E-step"),
            Property("seed", "int", True, "seed of the starting points"),
            Property("diagnostics", "json", False, "nuts: r-hat, effective sample sizes, divergences, seconds"),
            Property("phases", "json", False, "the phases whose trials were fitted (null: every phase)"),
            Property("created_at", "str", False, "UTC time of the fit"),
            Property("version", "str", False, "graphtasks version that fitted it"),
        ],
        "A hierarchical fit of a model to a set of runs: the group prior; its runs' fits hang off it.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("GroupFit", OWNER_RENAMED),
    )
    s.add_node(
        "Posterior",
        [
            Property("model", "str", True, "the fitted model's name"),
            Property("chains", "int", True, "Markov chains sampled"),
            Property("samples", "int", True, "draws kept per chain"),
            Property("warmup", "int", True, "adaptation steps per chain before them"),
            Property("seed", "int", True, "the sampler's seed (chain c: jax.random.split(PRNGKey(seed), chains)[c])"),
            Property("chain_method", "str", True, "parallel | vectorized | sequential: how the chains ran"),
            Property("parameterisation", "str", True, "non-centred (x = mu + sigma z) | centred"),
            Property("settings", "json", True, "the free settings, in the order of the draws' last axis"),
            Property("runs", "json", True, "the run indices, in the order of the draws' participant axis"),
            Property("divergences", "json", True, "divergent transitions of each chain"),
            Property("mu", "json", True, "draws of the group means, transformed: [chain][draw][setting]"),
            Property("sigma", "json", True, "draws of the group sds, transformed: [chain][draw][setting]"),
            Property("x", "json", True, "draws of each participant's settings, transformed: "
                     "[chain][draw][participant][setting]"),
            Property("log_lik", "json", True, "each draw's log-likelihood of each participant's choices: "
                     "[chain][draw][participant]"),
            Property("loo", "json", False, "PSIS-LOO over participants: elpd, se, p_loo, looic, pareto_k"),
            Property("created_at", "str", False, "UTC time of the fit"),
            Property("version", "str", False, "graphtasks version that fitted it"),
        ],
        "Every chain's draws of a NUTS fit (graphtasks fit run --method nuts), beside its GroupFit.",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("Posterior", OWNER_RENAMED),
    )
    s.add_node(
        "CrossValidation",
        [
            Property("model", "str", True, "the model's name (a shipped model, an agent's, or gru-N[-shared])"),
            Property("kind", "str", True, "rl: an agent fitted by maximum likelihood (EM for participant folds); "
                     "gru: a recurrent network"),
            Property("by", "str", True, "what a fold holds out: block | session | participant"),
            Property("folds", "int", True, "how many folds"),
            Property("seed", "int", True, "seed of the folds, the fits' starting points and the networks' weights"),
            Property("plan", "str", True, "digest of the folds and the runs: results with the same plan share folds"),
            Property("assignment", "json", True, "per participant: its pieces [session, first choice, end choice, "
                     "fold]"),
            Property("heldout", "json", True, "held-out log-likelihood of each fold"),
            Property("choices", "json", True, "held-out choices of each fold"),
            Property("runs", "json", True, "the run indices taken, in order (a participant's sessions together)"),
            Property("keys", "json", True, "each participant's name (its first run's index), in the order of "
                     "`assignment` and `participants`"),
            Property("participants", "json", True, "each participant's held-out log-likelihood, summed over the folds"),
            Property("heldout_log_likelihood", "float", True, "the sum over the folds"),
            Property("settings", "json", True, "the model (agent, bounds, fixed; or the network's settings) and "
                     "how it was fitted"),
            Property("score", "str", False, "participant folds: marginal (Laplace, under the group prior) | mean"),
            Property("starts", "int", False, "optimiser starts per fit"),
            Property("seconds", "float", False, "time the model's folds took"),
            Property("phases", "json", False, "the phases whose trials were used (null: every phase)"),
            Property("created_at", "str", False, "UTC time of the cross-validation"),
            Property("version", "str", False, "graphtasks version that made it"),
        ],
        "A model's cross-validated (held-out) log-likelihood on seeded folds of a set of runs (graphtasks fit cv).",
        shared=True,
        owner=OWNER,
        renamed=RENAMED.get("CrossValidation", OWNER_RENAMED),
    )
    s.add_rel("HAS_PHASE", [("Experiment", "Phase")], [KEY], "An experiment's protocol.")
    s.add_rel("HAS_RUN", [("Experiment", "Run")], [KEY], "An experiment's runs.", also=(MLS + "hasPart",))
    s.add_rel("HAS_EPISODE", [("Run", "Episode")], [KEY], "A run's episodes.")
    s.add_rel("IN_PHASE", [("Episode", "Phase")], [KEY], "The phase an episode belongs to.")
    s.add_rel("HAS_TRIAL", [("Episode", "Trial")], [KEY], "An episode's steps, in order.")
    s.add_rel("HAS_PROBE", [("Run", "Probe")], [KEY], "A run's probes, one per probed phase.")
    s.add_rel("HAS_CHUNK", [("Experiment", "Chunk")], [KEY], "An experiment's record chunks.")
    s.add_rel("HOLDS_RUN", [("Chunk", "Run")], [KEY], "The runs whose rows a record chunk holds.")
    s.add_rel("PERFORMED", [("Participant", "Run")], [KEY], "The imported runs of a participant.")
    s.add_rel("FITS", [("Fit", "Run")], [KEY], "The run whose choices a fit explains.")
    s.add_rel("OF_MODEL", [("Fit", "Model"), ("GroupFit", "Model")], [KEY], "The model a fit is of.")
    s.add_rel("HAS_FIT", [("GroupFit", "Fit")], [KEY], "The fits of the runs a hierarchical fit fitted together.")
    s.add_rel("HAS_POSTERIOR", [("GroupFit", "Posterior")], [KEY], "The draws of a sampled (NUTS) group fit.")
    s.add_rel("VALIDATES", [("CrossValidation", "Run")], [KEY], "The runs whose choices a cross-validation held out.")
