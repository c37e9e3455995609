"""Fitting agents to behaviour: likelihoods of recorded or human choices, maximum-likelihood
fits with AIC and BIC, hierarchical fits (EM with Laplace approximations), random-effects
model selection, fits kept in the store, parameter and model recovery, and held-out (cross-validated)
likelihoods, of the agents and of small recurrent networks alike."""

from .batched import batched_log_likelihood
from .bayes import sample_group
from .behaviour import BehaviourError, Choices, load_run, read_events
from .bms import ModelSelection, random_effects
from .cv import CrossValidation, cross_validate
from .hierarchical import GroupFit, fit_group
from .likelihood import TaskShape, log_likelihood, replay_log_likelihood, task_shape
from .mle import FitResult, fit, fit_many
from .models import MODELS, FitModel, fit_model
from .ppc import posterior_predictive
from .rt import rt_log_likelihood
from .selection import Selection, recorded_runs, select_runs
from .simulate import simulate

__all__ = [
    "BehaviourError", "Choices", "CrossValidation", "FitModel", "FitResult", "GroupFit", "MODELS", "ModelSelection",
    "Selection", "TaskShape",
    "batched_log_likelihood", "cross_validate", "fit", "fit_group", "fit_many", "fit_model", "load_run",
    "log_likelihood", "posterior_predictive",
    "random_effects", "read_events", "recorded_runs", "replay_log_likelihood", "rt_log_likelihood", "sample_group",
    "select_runs", "simulate", "task_shape",
]
