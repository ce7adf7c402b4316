"""Aggregation of crowd labels beyond the majority vote: Dawid–Skene, MACE and GLAD, with posteriors.

Plain Python (numpy, pandas, scipy; no Django). The label models are small vectorised EM loops here rather
than ``crowd-kit``'s (which the tests use as the reference): crowd-kit's MACE takes about 4 s per restart
on 9,000 judgements, and a report needs two fits per method plus one per FRANK ablation. A *task* is one summary sentence ``(summary_id,
sentence_index)``; the input is the judgement table of :mod:`.agreement` (``summary_id, sentence_index,
worker_id, factual, categories``), one row per worker and sentence. Methods:

* ``majority`` (the default, FRANK's rule): factual when at least half of the annotators say so; the
  error categories of a non-factual sentence are its modal codes (:func:`.factuality.sentence_majority`).
  A worker's reliability is the share of their answers equal to the majority label.
* ``dawid_skene``: Dawid & Skene (1979), EM with one full confusion matrix per worker
  (:func:`dawid_skene`, at most 100 iterations, tolerance 1e-5). A worker's reliability is
  their estimated accuracy, the sum over classes k of prior(k) x P(answer k | true class k).
* ``mace``: MACE (Hovy et al., 2013; :func:`mace`, variational Bayes with crowd-kit's priors, 10
  restarts x 50 iterations, seed 0). A worker's reliability is their competence: the posterior
  probability that they are not answering at random ("spamming").
* ``glad``: GLAD (Whitehill et al., 2009; :func:`glad`): worker ability and task difficulty. A worker's
  reliability is their probability of the right answer on a task of median difficulty; their ``ability``
  (alpha) and each sentence's ``difficulty`` are reported too.

Every aggregated label carries its posterior probability and an interval (:class:`Aggregation`,
:func:`posterior_interval`, :func:`summary_uncertainty`).

Factual labels are aggregated as a yes/no label. Error categories are aggregated as one label per
worker and sentence, the worker's set of codes (``NoE`` when they said factual), by the same method;
a sentence that the factual aggregation finds non-factual takes the codes of its aggregated set, or its
modal codes (FRANK's rule) when that set is ``NoE``, so a non-factual sentence never loses its
categories, and a factual one has none. Inputs are sorted by (summary, sentence, worker) before fitting,
so identical data give identical results whatever the row order.

Over 400 lines on purpose: the three label models share one task/worker encoding, one posterior and
interval convention and one reliability table, which a reader compares side by side here.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import digamma, expit, logit
from scipy.stats import beta as beta_dist

from taxonomies.frank import CODES, GROUPS, normalize_code

from .factuality import (
    NO_ERROR,
    UNIT,
    _summary_scores,
    sentence_majority,
    summary_human_scores,
)

METHODS = ("majority", "dawid_skene", "mace", "glad")
DEFAULT_METHOD = "majority"
_SEP = "+"


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown label aggregation {method!r}; expected one of {', '.join(METHODS)}")
    return method


def _sorted(judgements: pd.DataFrame) -> pd.DataFrame:
    return judgements.sort_values([*UNIT, "worker_id"], kind="mergesort").reset_index(drop=True)


def _code_label(factual: bool, categories: Iterable[str] | None) -> str:
    if factual:
        return NO_ERROR
    codes = {normalize_code(c) for c in (categories or [])}
    return _SEP.join(c for c in CODES if c in codes) or "unspecified"


def _encode(tasks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list, list]:
    """Integer codes of task, worker and label (each in sorted order, hence independent of row order)."""
    task_names, t = np.unique(tasks["task"].to_numpy(), return_inverse=True)
    worker_names, w = np.unique(tasks["worker"].to_numpy(), return_inverse=True)
    label_names, a = np.unique(tasks["label"].to_numpy(), return_inverse=True)
    return t, w, a, list(task_names), list(worker_names), list(label_names)


def dawid_skene(t: np.ndarray, w: np.ndarray, a: np.ndarray, n_tasks: int, n_workers: int, n_labels: int,
                *, n_iter: int = 100, tol: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dawid & Skene (1979) by EM: ``(posteriors [task, class], confusion [worker, true, answer], priors)``.

    Start from each task's vote shares; M-step: class priors = mean posterior, worker confusion rows =
    posterior-weighted answer counts (normalised, a 1e-10 floor keeping logs finite); E-step: posterior of
    class k proportional to prior(k) x product over the task's answers of confusion[worker, k, answer]. Stops
    when no posterior moves by more than ``tol`` or after ``n_iter`` rounds (the settings of crowd-kit's
    ``DawidSkene``, which the tests compare against).
    """
    posterior = np.bincount(t * n_labels + a, minlength=n_tasks * n_labels).reshape(n_tasks, n_labels).astype(float)
    posterior /= posterior.sum(axis=1, keepdims=True)
    cell = w * n_labels + a  # (worker, answer) of each judgement
    for _ in range(n_iter):
        priors = posterior.mean(axis=0)
        confusion = np.stack([
            np.bincount(cell, weights=posterior[t, k], minlength=n_workers * n_labels).reshape(n_workers, n_labels)
            for k in range(n_labels)
        ], axis=1) + 1e-10
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_answer = np.log(confusion[w, :, a])  # [judgement, true class]
        log_post = np.log(np.maximum(priors, 1e-300)) + np.stack(
            [np.bincount(t, weights=log_answer[:, k], minlength=n_tasks) for k in range(n_labels)], axis=1
        )
        log_post -= log_post.max(axis=1, keepdims=True)
        updated = np.exp(log_post)
        updated /= updated.sum(axis=1, keepdims=True)
        moved = np.abs(updated - posterior).max()
        posterior = updated
        if moved < tol:
            break
    return posterior, confusion, posterior.mean(axis=0)


def mace(t: np.ndarray, w: np.ndarray, a: np.ndarray, n_tasks: int, n_workers: int, n_labels: int,
         *, n_restarts: int = 10, n_iter: int = 50, seed: int = 0, method: str = "vb",
         alpha: float = 0.5, beta: float = 0.5, strategy_prior: float = 10.0,
         default_noise: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """MACE (Hovy et al., 2013): ``(posteriors [task, class], competence [worker])``.

    Worker j answers the true label when "knowing" (weight ``s1_j``), else ("spamming", weight ``s0_j``)
    draws from their own distribution ``xi_j``. True labels are uniform. E-step: P(task, k) proportional to
    the product over its answers a of ``s0_j xi_j[a] + s1_j [a == k]``; the expected "knowing" count of an
    answer is ``q[task, a] s1_j / (s0_j xi_j[a] + s1_j)``. M-step (``method``):

    * ``"vb"`` (the default, as crowd-kit's and the paper's variational Bayes): ``s = exp(digamma(counts +
      prior)) / exp(digamma(sum(counts + prior)))`` with a Beta(``alpha``, ``beta``) prior on spamming /
      knowing and a symmetric Dirichlet(``strategy_prior``) on ``xi``. The strong Dirichlet keeps a
      spammer's strategy near uniform, so a crowd that mostly answers one class (QAGS-like "factual")
      is not explained as spammers who favour that class, which made plain EM overturn many majority
      labels in favour of the rarer class;
    * ``"em"``: maximum likelihood with ``0.01 / n_labels`` added to every expected count.

    Starts: ``s`` and ``xi`` drawn uniformly in [1, 1 + ``default_noise``] and normalised (near balanced,
    as crowd-kit starts; starts near zero competence led EM to other optima); ``n_restarts`` seeded starts
    of ``n_iter`` rounds each, the one with the best marginal likelihood wins. Competence: the knowing
    share ``s1 / (s0 + s1)``.
    """
    if method not in ("vb", "em"):
        raise ValueError(f"unknown MACE method {method!r}; expected 'vb' or 'em'")
    rng = np.random.default_rng(seed)
    smoothing = 0.01 / n_labels
    cell = w * n_labels + a

    def e_step(s: np.ndarray, xi: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        spam = s[w, 0] * xi[w, a]  # per answer
        know = s[w, 1]
        log_p = np.bincount(t, weights=np.log(spam), minlength=n_tasks)[:, None] + np.bincount(
            t * n_labels + a, weights=np.log(spam + know) - np.log(spam), minlength=n_tasks * n_labels
        ).reshape(n_tasks, n_labels)
        shift = log_p.max(axis=1, keepdims=True)
        p = np.exp(log_p - shift)
        likelihood = float((np.log(p.sum(axis=1) / n_labels) + shift[:, 0]).sum())
        q = p / p.sum(axis=1, keepdims=True)
        knowing = q[t, a] * know / (spam + know)
        counts = np.stack([np.bincount(w, 1.0 - knowing, n_workers), np.bincount(w, knowing, n_workers)], axis=1)
        strategy = np.bincount(cell, weights=1.0 - knowing, minlength=n_workers * n_labels).reshape(n_workers, n_labels)
        return likelihood, q, counts, strategy

    def m_step(counts: np.ndarray, prior: np.ndarray | float) -> np.ndarray:
        if method == "em":
            return (counts + smoothing) / (counts + smoothing).sum(axis=1, keepdims=True)
        total = counts + prior
        return np.exp(digamma(total) - digamma(total.sum(axis=1, keepdims=True)))

    def start(columns: int) -> np.ndarray:
        x = rng.uniform(1.0, 1.0 + default_noise, (n_workers, columns))
        return x / x.sum(axis=1, keepdims=True)

    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(n_restarts):
        s, xi = start(2), start(n_labels)
        likelihood, q, counts, strategy = e_step(s, xi)
        for _ in range(n_iter):
            s, xi = m_step(counts, np.array([alpha, beta])), m_step(strategy, strategy_prior)
            likelihood, q, counts, strategy = e_step(s, xi)
        if best is None or likelihood > best[0]:
            best = (likelihood, q, s[:, 1] / s.sum(axis=1))
    return best[1], best[2]


def glad(t: np.ndarray, w: np.ndarray, a: np.ndarray, n_tasks: int, n_workers: int, n_labels: int,
         *, n_iter: int = 100, tol: float = 1e-5, priors: np.ndarray | None = None,
         m_step_max_iter: int = 25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GLAD (Whitehill et al., 2009) by EM: ``(posteriors [task, class], ability [worker], log inverse
    difficulty [task])``.

    Worker j answers task i correctly with probability ``sigmoid(alpha_j exp(beta_i))``, otherwise one of
    the other ``n_labels - 1`` classes uniformly: ``alpha`` is the worker's ability (negative: adversarial),
    ``exp(beta)`` the task's inverse difficulty (near 0: even good workers are at chance). Priors: N(1, 1)
    on every ``alpha`` and ``beta`` (crowd-kit's), class priors ``priors`` (uniform when None, as
    crowd-kit's). E-step: posterior of class c proportional to prior(c) x product of the answers'
    likelihoods; M-step: the expected complete log posterior maximised over (alpha, beta) with analytic
    gradients (L-BFGS, ``m_step_max_iter`` steps from the previous values). Stops when no posterior moves
    by more than ``tol`` or after ``n_iter`` rounds. Starts from alpha = beta = 1.
    """
    log_prior = np.log(np.full(n_labels, 1.0 / n_labels) if priors is None else np.asarray(priors, dtype=float))
    log_others = np.log(max(n_labels - 1, 1))
    alpha, beta = np.ones(n_workers), np.ones(n_tasks)

    def posterior_of(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
        x = alpha[w] * np.exp(beta[t])
        right, wrong = -np.logaddexp(0.0, -x), -np.logaddexp(0.0, x) - log_others  # log sigmoid(+-x)
        log_post = log_prior + np.bincount(t, weights=wrong, minlength=n_tasks)[:, None] + np.bincount(
            t * n_labels + a, weights=right - wrong, minlength=n_tasks * n_labels
        ).reshape(n_tasks, n_labels)
        log_post -= log_post.max(axis=1, keepdims=True)
        post = np.exp(log_post)
        return post / post.sum(axis=1, keepdims=True)

    posterior = posterior_of(alpha, beta)
    for _ in range(n_iter):
        correct = posterior[t, a]  # expected share of the answer being the true class

        def negative_q(params: np.ndarray) -> tuple[float, np.ndarray]:
            al, be = params[:n_workers], params[n_workers:]
            scale = np.exp(be[t])
            x = al[w] * scale
            q = correct * -np.logaddexp(0.0, -x) + (1.0 - correct) * (-np.logaddexp(0.0, x) - log_others)
            value = q.sum() - 0.5 * ((al - 1.0) ** 2).sum() - 0.5 * ((be - 1.0) ** 2).sum()
            dx = correct - expit(x)
            grad_alpha = np.bincount(w, weights=dx * scale, minlength=n_workers) - (al - 1.0)
            grad_beta = np.bincount(t, weights=dx * x, minlength=n_tasks) - (be - 1.0)
            return -value, -np.concatenate([grad_alpha, grad_beta])

        result = minimize(negative_q, np.concatenate([alpha, beta]), jac=True, method="L-BFGS-B",
                          options={"maxiter": m_step_max_iter})
        alpha, beta = result.x[:n_workers], result.x[n_workers:]
        updated = posterior_of(alpha, beta)
        moved = np.abs(updated - posterior).max()
        posterior = updated
        if moved < tol:
            break
    return posterior, alpha, beta


def glad_accuracy(ability: np.ndarray, log_inverse_difficulty: np.ndarray, n_labels: int) -> np.ndarray:
    """A GLAD worker's reliability in [0, 1]: their probability of the right answer on a task of median
    difficulty (``sigmoid(alpha x median exp(beta))``)."""
    return expit(ability * float(np.median(np.exp(log_inverse_difficulty))))


INTERVAL_LEVEL = 0.95
UNCERTAIN_BELOW = 0.9  # method_comparison counts the labels less certain than this


def posterior_interval(posterior: np.ndarray, n: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed Jeffreys interval of a label's posterior ``p`` backed by ``n`` judgements: the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of Beta(p n + 1/2, (1 - p) n + 1/2).

    The posterior is read as a proportion observed over the sentence's judgements, so the interval says
    how far more evidence of the same amount could move it: one judgement at p = 0.9 gives about
    [0.10, 1.00], five at p = 0.99 about [0.68, 1.00]. The interval always holds ``p``.
    """
    p, n = np.asarray(posterior, dtype=float), np.asarray(n, dtype=float)
    tail = (1.0 - level) / 2.0
    a, b = p * n + 0.5, (1.0 - p) * n + 0.5
    # Widened, where needed, to hold the posterior itself (the Beta's quantiles exclude p = 1 exactly).
    return np.minimum(beta_dist.ppf(tail, a, b), p), np.maximum(beta_dist.ppf(1.0 - tail, a, b), p)


def worker_aware_interval(labels: np.ndarray, posterior: np.ndarray, task: np.ndarray, votes: np.ndarray, worker: np.ndarray,
                          level: float = INTERVAL_LEVEL, draws: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Interval of each yes/no label's posterior from what is known of the workers who gave its judgements.

    A label resting on two workers known from hundreds of judgements is surer than one resting on two
    newcomers, and a "yes" from a worker who says "yes" to everything is weak evidence: the Jeffreys
    interval, which sees only the count, says neither. Here each worker has a sensitivity (P(yes | the label
    is yes)) and a specificity (P(no | the label is no)), each uncertain as a proportion observed over the
    worker's judgements of sentences of that label, Beta(k + 1/2, n - k + 1/2); the share of "yes" labels
    is uncertain the same way. For each of ``draws`` joint draws, a label's probability of "yes" follows by
    Bayes' rule from its judgements (the two-coin model); the interval of the label's posterior is the
    equal-tailed ``level`` range over the draws, widened where needed to hold ``posterior`` (the label
    model's own). Deterministic (``seed``).

    ``labels`` (bool, the aggregated label) and ``posterior`` (of that label): per task; ``task`` (index
    into them), ``votes`` (bool) and ``worker`` (any hashable id): per judgement.

    Examples
    --------
    >>> import numpy as np
    >>> labels, posterior = np.array([True, True, False, True]), np.array([0.9, 0.9, 0.9, 0.9])
    >>> task = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    >>> votes = np.array([True, True, True, True, False, False, True, True])
    >>> worker = np.array([1, 2, 1, 2, 1, 2, 1, 2])
    >>> low, high = worker_aware_interval(labels, posterior, task, votes, worker)
    >>> bool(np.all(low <= posterior) and np.all(posterior <= high))
    True
    """
    labels = np.asarray(labels, dtype=bool)
    posterior = np.asarray(posterior, dtype=float)
    task, votes = np.asarray(task, dtype=int), np.asarray(votes, dtype=bool)
    if task.size == 0:
        return posterior.copy(), posterior.copy()
    workers, w = np.unique(np.asarray(worker), return_inverse=True)
    yes_label = labels[task]
    n_yes = np.bincount(w, weights=yes_label, minlength=len(workers))  # judgements of "yes" sentences
    k_yes = np.bincount(w, weights=yes_label & votes, minlength=len(workers))  # ... answered yes
    n_no = np.bincount(w, weights=~yes_label, minlength=len(workers))
    k_no = np.bincount(w, weights=~yes_label & ~votes, minlength=len(workers))
    rng = np.random.default_rng(seed)
    p_yes = np.empty((len(labels), draws))
    for start in range(0, draws, 50):  # draws in blocks: memory stays (50 x judgements)
        block = min(50, draws - start)
        sensitivity = np.clip(rng.beta(k_yes + 0.5, n_yes - k_yes + 0.5, size=(block, len(workers))), 1e-4, 1 - 1e-4)
        specificity = np.clip(rng.beta(k_no + 0.5, n_no - k_no + 0.5, size=(block, len(workers))), 1e-4, 1 - 1e-4)
        prior = np.clip(rng.beta(labels.sum() + 0.5, (~labels).sum() + 0.5, size=block), 1e-4, 1 - 1e-4)
        evidence = np.where(votes, np.log(sensitivity[:, w] / (1 - specificity[:, w])), np.log((1 - sensitivity[:, w]) / specificity[:, w]))
        for column in range(block):
            p_yes[:, start + column] = expit(logit(prior[column]) + np.bincount(task, weights=evidence[column], minlength=len(labels)))
    of_label = np.where(labels[:, None], p_yes, 1.0 - p_yes)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(of_label, tail, axis=1), np.quantile(of_label, 1.0 - tail, axis=1)
    return np.minimum(low, posterior), np.maximum(high, posterior)


def majority_posterior(yes: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Posterior probability that most of the crowd would say "yes", given ``yes`` of ``n`` votes:
    P(share > 1/2) under Beta(yes + 1/2, n - yes + 1/2) (Jeffreys prior); exactly 1/2 on a tie."""
    yes, n = np.asarray(yes, dtype=float), np.asarray(n, dtype=float)
    return beta_dist.sf(0.5, yes + 0.5, n - yes + 0.5)


@dataclass(frozen=True)
class LabelFit:
    """One label model fitted on ``task, worker, label`` rows.

    ``labels``, ``posterior`` (of the chosen label), ``probabilities`` (task x label): per task;
    ``reliability`` (in [0, 1]) and ``ability`` (GLAD's alpha; otherwise the reliability): per worker;
    ``difficulty``: per task, GLAD's ``1 / exp(beta)`` (larger is harder), NaN for the other methods.
    """

    labels: pd.Series
    posterior: pd.Series
    probabilities: pd.DataFrame
    reliability: pd.Series
    ability: pd.Series
    difficulty: pd.Series


def fit_labels(tasks: pd.DataFrame, method: str) -> LabelFit:
    """Fit ``method`` (``dawid_skene``, ``mace`` or ``glad``) on ``task, worker, label`` rows."""
    t, w, a, task_names, worker_names, label_names = _encode(tasks)
    shape = (len(task_names), len(worker_names), len(label_names))
    difficulty = np.full(shape[0], np.nan)
    if shape[2] < 2:  # nothing to tell apart: every worker agrees with the only label
        posterior, reliability = np.ones((shape[0], 1)), np.ones(shape[1])
        ability = reliability
    elif method == "dawid_skene":
        posterior, confusion, priors = dawid_skene(t, w, a, *shape)
        reliability = ability = (confusion[:, np.arange(shape[2]), np.arange(shape[2])] * priors).sum(axis=1)
    elif method == "glad":
        posterior, ability, log_inverse_difficulty = glad(t, w, a, *shape)
        reliability = glad_accuracy(ability, log_inverse_difficulty, shape[2])
        difficulty = np.exp(-log_inverse_difficulty)
    elif method == "mace":
        posterior, reliability = mace(t, w, a, *shape)
        ability = reliability
    else:
        raise ValueError(f"unknown label model {method!r}; expected dawid_skene, mace or glad")
    best = posterior.argmax(axis=1)  # ties: the first label in sorted order
    labels = np.asarray(label_names, dtype=object)[best]
    return LabelFit(
        labels=pd.Series(labels, index=task_names),
        posterior=pd.Series(posterior[np.arange(shape[0]), best], index=task_names),
        probabilities=pd.DataFrame(posterior, index=task_names, columns=label_names),
        reliability=pd.Series(reliability, index=worker_names, dtype=float),
        ability=pd.Series(ability, index=worker_names, dtype=float),
        difficulty=pd.Series(difficulty, index=task_names),
    )


def _fit(tasks: pd.DataFrame, method: str) -> tuple[pd.Series, pd.Series]:
    """Aggregate ``task, worker, label`` rows: (label per task, reliability per worker in [0, 1])."""
    fitted = fit_labels(tasks, method)
    return fitted.labels, fitted.reliability


def _task_key(frame: pd.DataFrame) -> list[str]:
    return [f"{s}:{i}" for s, i in zip(frame["summary_id"], frame["sentence_index"], strict=True)]


UNCERTAINTY_COLUMNS = ("p_factual", "posterior", "posterior_low", "posterior_high",
                       "categories_posterior", "categories_low", "categories_high", "difficulty")


@dataclass(frozen=True)
class Aggregation:
    """The outcome of one method on one judgement table.

    ``units``: one row per sentence as :func:`.factuality.sentence_majority` (``summary_id, sentence_index,
    n, factual, categories``) plus its uncertainty: ``p_factual`` (posterior probability that the sentence
    is factual), ``posterior`` (of the aggregated factual label) with its :func:`worker_aware_interval`
    ``posterior_low, posterior_high`` (from the reliabilities of the workers who judged it), the same for the aggregated category set (``categories_posterior,
    categories_low, categories_high``), and GLAD's ``difficulty`` (NaN for other methods). For the majority,
    ``p_factual`` is :func:`majority_posterior` and the category posterior the share of annotators who chose
    exactly that set, (k + 1/2) / (n + 1). ``reliability``: per worker (index ``worker_id``) ``n``
    judgements, ``factual`` and ``categories`` reliabilities and ``ability`` (GLAD's alpha for ``glad``,
    the factual reliability otherwise; see the module docstring).
    """

    method: str
    units: pd.DataFrame
    reliability: pd.DataFrame


def _tasks(data: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    factual = pd.DataFrame({"task": _task_key(data), "worker": data["worker_id"].to_numpy(), "label": data["factual"].astype(bool).to_numpy()})
    sets = factual.assign(label=[_code_label(f, c) for f, c in zip(data["factual"], data["categories"], strict=True)])
    return factual, sets


def _with_uncertainty(units: pd.DataFrame, p_factual: np.ndarray, categories_posterior: np.ndarray,
                      difficulty: np.ndarray | None = None) -> pd.DataFrame:
    units = units.copy()
    n = units["n"].to_numpy(dtype=float)
    p_factual = np.asarray(p_factual, dtype=float)
    units["p_factual"] = p_factual
    units["posterior"] = np.where(units["factual"].astype(bool).to_numpy(), p_factual, 1.0 - p_factual)
    units["posterior_low"], units["posterior_high"] = posterior_interval(units["posterior"].to_numpy(), n)
    units["categories_posterior"] = np.asarray(categories_posterior, dtype=float)
    units["categories_low"], units["categories_high"] = posterior_interval(units["categories_posterior"].to_numpy(), n)
    units["difficulty"] = np.full(len(units), np.nan) if difficulty is None else np.asarray(difficulty, dtype=float)
    return units


def _with_worker_aware_interval(units: pd.DataFrame, keys: list[str], factual_tasks: pd.DataFrame) -> pd.DataFrame:
    """``posterior_low, posterior_high`` from what is known of the judging workers (:func:`worker_aware_interval`)."""
    position = {key: index for index, key in enumerate(keys)}
    units = units.copy()
    units["posterior_low"], units["posterior_high"] = worker_aware_interval(
        units["factual"].astype(bool).to_numpy(), units["posterior"].to_numpy(dtype=float),
        factual_tasks["task"].map(position).to_numpy(dtype=int), factual_tasks["label"].to_numpy(dtype=bool),
        factual_tasks["worker"].to_numpy())
    return units


def aggregate(judgements: pd.DataFrame, method: str = DEFAULT_METHOD, *, majority: pd.DataFrame | None = None) -> Aggregation:
    """Aggregate factual labels and error categories with ``method`` (two fits: labels, then code sets).

    ``majority``: :func:`.factuality.sentence_majority` of the same judgements when the caller has it.
    """
    check_method(method)
    majority = sentence_majority(judgements) if majority is None else majority
    if judgements.empty:
        empty = pd.DataFrame(columns=["n", "factual", "categories", "ability"]).rename_axis("worker_id")
        return Aggregation(method, majority.reindex(columns=[*majority.columns, *UNCERTAINTY_COLUMNS]), empty)
    data = _sorted(judgements)
    factual_tasks, set_tasks = _tasks(data)
    keys = _task_key(majority)
    n = data.groupby("worker_id").size()
    if method == "majority":
        truth = dict(zip(keys, majority["factual"], strict=True))
        truth_sets = {k: _code_label(f, c) for k, f, c in zip(keys, majority["factual"], majority["categories"], strict=True)}

        def agreement(tasks: pd.DataFrame, labels: dict) -> pd.Series:
            agree = [labels[t] == label for t, label in zip(tasks["task"], tasks["label"], strict=True)]
            return pd.Series(agree, index=tasks["worker"].to_numpy(), dtype=float).groupby(level=0).mean()

        reliability = pd.DataFrame({"n": n, "factual": agreement(factual_tasks, truth), "categories": agreement(set_tasks, truth_sets)})
        reliability["ability"] = reliability["factual"]
        yes = factual_tasks.groupby("task")["label"].sum()
        same_set = pd.Series([truth_sets[t] == label for t, label in zip(set_tasks["task"], set_tasks["label"], strict=True)],
                             index=set_tasks["task"].to_numpy()).groupby(level=0).sum()
        counts = majority["n"].to_numpy(dtype=float)
        units = _with_uncertainty(majority, majority_posterior(yes[keys].to_numpy(), counts),
                                  (same_set[keys].to_numpy(dtype=float) + 0.5) / (counts + 1.0))
        units = _with_worker_aware_interval(units, keys, factual_tasks)
        return Aggregation(method, units, reliability.rename_axis("worker_id"))
    factual_fit = fit_labels(factual_tasks, method)
    set_fit = fit_labels(set_tasks, method)
    factual, code_sets = factual_fit.labels, set_fit.labels
    units = majority.copy()
    units["factual"] = [bool(factual[k]) for k in keys]
    categories = []
    for key, is_factual, modal in zip(keys, units["factual"], majority["categories"], strict=True):
        label = code_sets[key]
        if is_factual:
            categories.append(())
        elif label in (NO_ERROR, "unspecified"):
            categories.append(tuple(modal))
        else:
            categories.append(tuple(label.split(_SEP)))
    units["categories"] = categories
    probabilities = factual_fit.probabilities
    p_factual = probabilities[True].reindex(keys).to_numpy() if True in probabilities.columns else np.zeros(len(keys))
    set_probabilities = set_fit.probabilities
    categories_posterior = [
        float(set_probabilities.at[k, label]) if label in set_probabilities.columns else 0.0
        for k, label in zip(keys, (_code_label(f, c) for f, c in zip(units["factual"], units["categories"], strict=True)), strict=True)
    ]
    units = _with_uncertainty(units, p_factual, categories_posterior, factual_fit.difficulty.reindex(keys).to_numpy())
    reliability = pd.DataFrame({"n": n, "factual": factual_fit.reliability, "categories": set_fit.reliability, "ability": factual_fit.ability})
    units = _with_worker_aware_interval(units, keys, factual_tasks)
    return Aggregation(method, units, reliability.rename_axis("worker_id"))


def confident_summaries(judgements: pd.DataFrame, method: str = DEFAULT_METHOD, min_posterior: float = 0.9) -> set:
    """Summaries every one of whose judged sentences has an aggregated factual label (under ``method``) with
    a posterior of at least ``min_posterior`` (the report's ``min_label_posterior`` option)."""
    if judgements.empty:
        return set()
    units = aggregate(judgements, method).units
    lowest = units.groupby("summary_id")["posterior"].min()
    return set(lowest.index[lowest >= min_posterior])


def poisson_binomial_interval(probabilities: Sequence[float], level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """Equal-tailed interval of the *share* of successes among independent events of the given
    probabilities (the exact Poisson-binomial distribution, by convolution): for a summary, the share of
    its sentences that are factual when each is factual with its posterior probability. The interval
    always holds the mean share."""
    dist = np.ones(1)
    for p in probabilities:
        dist = np.convolve(dist, [1.0 - p, p])
    cdf = np.cumsum(dist)
    tail = (1.0 - level) / 2.0
    k = len(dist) - 1
    low = int(np.searchsorted(cdf, tail - 1e-12))
    high = int(np.searchsorted(cdf, 1.0 - tail - 1e-12))
    # The share is discrete (k / n): the bounds are widened, where needed, to hold its mean.
    mean = float(np.mean(probabilities)) if len(probabilities) else 0.0
    return min(low / max(k, 1), mean), max(min(high, k) / max(k, 1), mean)


def summary_uncertainty(units: pd.DataFrame, level: float = INTERVAL_LEVEL) -> pd.DataFrame:
    """Per summary (index ``summary_id``): ``Factuality_posterior`` (the expected share of factual sentences,
    mean of ``p_factual``) and ``Factuality_low, Factuality_high`` (its :func:`poisson_binomial_interval`),
    from :class:`Aggregation` units."""
    rows = {}
    for summary_id, group in units.groupby("summary_id", sort=True):
        p = group["p_factual"].to_numpy(dtype=float)
        low, high = poisson_binomial_interval(p, level)
        rows[summary_id] = (float(p.mean()), low, high)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["Factuality_posterior", "Factuality_low", "Factuality_high"]).rename_axis("summary_id")


def sentence_labels(judgements: pd.DataFrame, method: str = DEFAULT_METHOD) -> pd.DataFrame:
    """One row per sentence (``summary_id, sentence_index, n, factual, categories``) aggregated with ``method``."""
    return aggregate(judgements, method).units


def _factual_only(judgements: pd.DataFrame, method: str) -> pd.Series:
    """Per summary: mean over sentences of the aggregated factual label (one fit, no categories)."""
    if method == "majority":
        units = sentence_majority(judgements)
        return units.groupby("summary_id")["factual"].mean().astype(float)
    data = _sorted(judgements)
    factual_tasks, _ = _tasks(data)
    labels, _ = _fit(factual_tasks, method)
    units = data[UNIT].drop_duplicates().assign(factual=lambda f: [bool(labels[k]) for k in _task_key(f)])
    return units.groupby("summary_id")["factual"].mean().astype(float)


def summary_scores(
    judgements: pd.DataFrame,
    method: str = DEFAULT_METHOD,
    codes: Sequence[str] = CODES,
    groups: Mapping[str, Sequence[str]] = GROUPS,
    with_flips: bool = True,
) -> pd.DataFrame:
    """FRANK's per-summary scores (``Factuality``, per category and group, ``Flip_*``) from labels aggregated
    with ``method``; ``majority`` is exactly :func:`.factuality.summary_human_scores`. ``Flip_<c>`` re-runs
    the aggregation of factual labels after dropping ``c`` from every judgement (a non-factual judgement
    left without codes becomes factual), as FRANK's ablation does for the majority."""
    check_method(method)
    if method == "majority" or judgements.empty:
        return summary_human_scores(judgements, codes, groups, with_flips=with_flips)
    frame = _summary_scores(sentence_labels(judgements, method), codes, groups)
    if with_flips:
        for name, removed in [*((c, [c]) for c in codes), *groups.items()]:
            gone = frozenset(normalize_code(c) for c in removed)
            factual = [
                bool(f) if (f or not cats) else not ({normalize_code(c) for c in cats} - gone)
                for f, cats in zip(judgements["factual"], judgements["categories"], strict=True)
            ]
            frame[f"Flip_{name}"] = _factual_only(judgements.assign(factual=factual), method)
    return frame


def aggregate_all(judgements: pd.DataFrame, methods: Sequence[str] = METHODS) -> list[Aggregation]:
    """:func:`aggregate` with each method, computing the majority once."""
    majority = sentence_majority(judgements)
    return [aggregate(judgements, m, majority=majority) for m in methods]


def worker_reliability(judgements: pd.DataFrame, methods: Sequence[str] = METHODS) -> pd.DataFrame:
    """Per worker (index ``worker_id``): ``n`` and, per method, ``<method>`` (factual labels) and
    ``<method>_categories`` reliabilities."""
    return reliability_table(aggregate_all(judgements, methods))


def reliability_table(aggregations: Sequence[Aggregation]) -> pd.DataFrame:
    """The reliabilities of several aggregations side by side (columns ``n``, ``<method>``, ``<method>_categories``
    and, with GLAD, ``glad_ability``)."""
    parts = []
    for agg in aggregations:
        parts.append(agg.reliability[["factual", "categories"]].rename(columns={"factual": agg.method, "categories": f"{agg.method}_categories"}))
        if agg.method == "glad" and "ability" in agg.reliability:
            parts.append(agg.reliability["ability"].rename("glad_ability"))
    n = next((agg.reliability["n"] for agg in aggregations if not agg.reliability.empty), pd.Series(dtype=int))
    return pd.concat([n.rename("n"), *parts], axis=1).rename_axis("worker_id")


def method_comparison(aggregations: Sequence[Aggregation]) -> dict[str, dict]:
    """Per method: sentences, share judged non-factual, sentences whose factual label or categories
    differ from the majority's (the first aggregation must be the majority), the mean posterior of the
    factual labels and how many are below ``UNCERTAIN_BELOW``."""
    if not aggregations or aggregations[0].units.empty:
        return {}
    majority = aggregations[0].units
    out = {}
    for agg in aggregations:
        units = agg.units
        out[agg.method] = {
            "sentences": len(units),
            "non_factual_share": float((~units["factual"].astype(bool)).mean()),
            "factual_differs_from_majority": int((units["factual"].to_numpy() != majority["factual"].to_numpy()).sum()),
            "categories_differ_from_majority": int(sum(a != b for a, b in zip(units["categories"], majority["categories"], strict=True))),
            "mean_posterior": float(units["posterior"].mean()) if "posterior" in units else None,
            f"sentences_below_{UNCERTAIN_BELOW}": int((units["posterior"] < UNCERTAIN_BELOW).sum()) if "posterior" in units else None,
        }
    return out
