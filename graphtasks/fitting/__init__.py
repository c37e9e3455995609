"""Fitting agents to behaviour: likelihoods of recorded or human choices, maximum-likelihood
fits with AIC and BIC, fits kept in the store, and parameter and model recovery."""

from .behaviour import BehaviourError, Choices, load_run, read_events, recorded_runs
from .likelihood import TaskShape, log_likelihood, replay_log_likelihood, task_shape
from .mle import FitResult, fit
from .models import MODELS, FitModel, fit_model
from .simulate import simulate

__all__ = [
    "BehaviourError", "Choices", "FitModel", "FitResult", "MODELS", "TaskShape", "fit", "fit_model",
    "load_run", "log_likelihood", "read_events", "recorded_runs", "replay_log_likelihood", "simulate", "task_shape",
]
