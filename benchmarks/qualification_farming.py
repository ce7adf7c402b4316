"""How many identities does an attacker without knowledge need to pass a qualification? FRANK, BUMP Task 1
and BUMP Task 2, with their shipped pools and each campaign kind's default pass score.

    .venv/bin/python benchmarks/qualification_farming.py [--attempts 20000] [--seed 1]

The attacker creates identities, answers without knowing the key, and learns only pass or fail (all a
worker is ever shown); each identity has ``qualification_attempts`` attempts (1 by default) and a network
address serves at most ``FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS`` identities (3). Every attempt is a
fresh random subset of the pool (``annotate.qualification_pool``). Printed per protocol:

* **pool key bits** (reasoned): log2 of the ways to label the pool, for an attacker who knows the pool's
  composition (how many questions of each label; the docs state what a test holds). One pass/fail answer
  carries at most one bit, so learning the key takes at least this many attempts: identities >= bits /
  attempts per identity. This is the bound FRANK's pool was judged by (about 82).
* **blind pass probability** (exact): the best of several answering strategies that use the documented
  test composition (random arrangements of the labels a test holds, FRANK's two categories per sentence,
  more or fewer "correct" answers), computed exactly over the uniformly random shuffle the attacker
  faces; ``1 / p`` is the expected number of attempts to a first pass without learning anything.
* **simulated attempts** (measured): ``--attempts`` attempts through the real drawing and scoring code,
  each a new identity on a new random secret, answered by the structured random strategy; passes counted.

Baseline in the same run: the BUMP tests before pools (one fixed key: seven edits, one per type; four
yes/no pairs), by the same measures.

"identities needed" is the smaller of the two reasoned routes (learning the key, or passing blind), in
identities and in network addresses.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "factlab.settings")
# Scoring code is imported through Django's app registry; nothing here touches a database.
os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(64))

Accepts = frozenset  # the labels an answer at one position counts right


@dataclass
class Protocol:
    name: str
    pool_counts: list[int]  # questions per label in the pool
    test_counts: dict[object, int]  # questions per label in one test
    pass_score: float
    strategies: dict[str, list[frozenset]]  # name -> one accepted-label set per test position
    simulate: Callable[[random.Random], bool]  # one blind attempt: passed?
    simulated_how: str = "through the real drawing and scoring code"


def pass_probability(test_counts: dict[object, int], answer: Sequence[frozenset], needed: int) -> float:
    """P(at least ``needed`` positions right) when the test's labels (``test_counts``) are shuffled uniformly
    over the positions and position i counts right when its label is in ``answer[i]`` (exact, by dynamic
    programming over the labels left)."""
    labels = list(test_counts)

    @cache
    def go(position: int, left: tuple[int, ...], right: int) -> float:
        if right + (len(answer) - position) < needed:
            return 0.0
        if position == len(answer):
            return 1.0 if right >= needed else 0.0
        total = sum(left)
        p = 0.0
        for k, count in enumerate(left):
            if count:
                rest = left[:k] + (count - 1,) + left[k + 1:]
                p += count / total * go(position + 1, rest, right + (labels[k] in answer[position]))
        return p

    return go(0, tuple(test_counts[label] for label in labels), 0)


def needed_right(size: int, pass_score: float) -> int:
    return math.ceil(pass_score * size - 1e-9)


def pool_key_bits(counts: Sequence[int]) -> float:
    from annotate.qualification_pool import pool_key_bits as bits

    return bits(counts)


# ---------------------------------------------------------------- the three protocols

def frank() -> Protocol:
    from annotate.frank import content
    from annotate.frank.protocol import score_qualification
    from annotate.models import Campaign
    from taxonomies.frank import CODES

    pool = Counter(k.category for k in content.QUALIFICATION_POOL)
    factual = content.QUALIFICATION_FACTUAL_PER_TEST
    test_counts: dict[object, int] = {None: factual, **dict.fromkeys(CODES, 1)}
    yes = frozenset({None})
    cycle = [frozenset({CODES[i], CODES[(i + 1) % len(CODES)]}) for i in range(len(CODES))]  # every category twice
    singles = [frozenset({c}) for c in CODES]
    strategies = {
        f"{factual} Yes + No with a cycle of category pairs": [yes] * factual + cycle,
        f"{factual} Yes + No with one category each": [yes] * factual + singles,
        f"{factual + 1} Yes + 7 No with pairs": [yes] * (factual + 1) + cycle[:7],
        f"{factual - 1} Yes + 9 No with pairs": [yes] * (factual - 1) + cycle + [cycle[0]],
        "Yes everywhere": [yes] * (factual + len(CODES)),
    }
    pass_score = Campaign._meta.get_field("qualification_pass_score").default

    def simulate(rng: random.Random) -> bool:
        exercise = content.qualification_for(secrets.token_hex(8), 1, rng.randrange(10**9), 0)
        n = sum(len(s) for s in exercise.summaries)
        labels = [None] * factual + list(CODES)
        rng.shuffle(labels)  # a random arrangement of what a test holds
        pairs = iter(labels)
        rows = []
        for summary in exercise.summaries:
            row = []
            for _ in summary:
                guess = next(pairs)
                if guess is None:
                    row.append({"factual": True, "categories": []})
                else:
                    other = rng.choice([c for c in CODES if c != guess])
                    row.append({"factual": False, "categories": [guess, other]})
            rows.append(row)
        assert sum(len(r) for r in rows) == n
        score, _ = score_qualification({"summaries": rows}, exercise)
        return score >= pass_score

    return Protocol("FRANK", list(pool.values()), test_counts, pass_score, strategies, simulate)


def bump_taxonomy() -> Protocol:
    from annotate.bump import content
    from annotate.bump.protocol import BumpTaxonomyProtocol
    BUMP_DEFAULTS = BumpTaxonomyProtocol.campaign_defaults

    pool = Counter(e.error_type for e in content.TAXONOMY_POOL)
    per = content.TAXONOMY_EDITS_PER_TYPE
    codes = content.REQUESTABLE_CODES
    test_counts: dict[object, int] = dict.fromkeys(codes, per)
    one = {c: frozenset({c}) for c in codes}
    strategies = {
        f"a random arrangement of {per} of each type": [one[c] for c in codes for _ in range(per)],
        "one type everywhere": [one[codes[0]]] * (per * len(codes)),
    }
    pass_score = float(BUMP_DEFAULTS["qualification_pass_score"])

    def simulate(rng: random.Random) -> bool:
        test = content.taxonomy_test(secrets.token_hex(8), 1, rng.randrange(10**9), 0)
        guesses = [c for c in codes for _ in range(per)]
        rng.shuffle(guesses)
        score, _ = content.score_taxonomy({f"e{n}": g for n, g in enumerate(guesses, start=1)}, test)
        return score >= pass_score

    return Protocol("BUMP Task 1", list(pool.values()), test_counts, pass_score, strategies, simulate)


def bump_accuracy() -> Protocol:
    from annotate.bump import content
    from annotate.bump.protocol import BumpTaxonomyProtocol
    BUMP_DEFAULTS = BumpTaxonomyProtocol.campaign_defaults

    pool = Counter(s.error_type for s in content.ACCURACY_POOL)
    accurate, per = content.ACCURACY_ACCURATE_PER_TEST, content.ACCURACY_ERRORS_PER_TYPE
    codes = content.REQUESTABLE_CODES
    test_counts: dict[object, int] = {None: accurate, **dict.fromkeys(codes, per)}
    yes = frozenset({None})
    types = [frozenset({c}) for c in codes for _ in range(per)]
    strategies = {
        f"{accurate} Yes + one No of each type": [yes] * accurate + types,
        f"{accurate + 1} Yes + 6 types": [yes] * (accurate + 1) + types[:-1],
        f"{accurate - 1} Yes + 8 No": [yes] * (accurate - 1) + types + [types[0]],
        "Yes everywhere": [yes] * (accurate + len(types)),
    }
    pass_score = float(BUMP_DEFAULTS["qualification_pass_score"])

    def simulate(rng: random.Random) -> bool:
        test = content.accuracy_test(secrets.token_hex(8), 1, rng.randrange(10**9), 0)
        guesses: list[str | None] = [None] * accurate + [c for c in codes for _ in range(per)]
        rng.shuffle(guesses)
        answers: dict[str, str] = {}
        for n, g in enumerate(guesses, start=1):
            answers[f"s{n}"] = "yes" if g is None else "no"
            if g is not None:
                answers[f"s{n}_type"] = g
        score, _ = content.score_accuracy(answers, test)
        return score >= pass_score

    return Protocol("BUMP Task 2", list(pool.values()), test_counts, pass_score, strategies, simulate)


def fixed_key(name: str, test_counts: dict[object, int], pass_score: float) -> Protocol:
    """Baseline: the BUMP qualifications before pools, one fixed test (Task 1: seven edits, one per type;
    Task 2: four yes/no pairs, two accurate), so the pool is the test. Simulated abstractly: a random
    arrangement of the test's labels against the fixed key."""
    labels = [label for label, n in test_counts.items() for _ in range(n)]
    key = list(labels)
    random.Random(0).shuffle(key)
    strategies = {"a random arrangement of the test's labels": [frozenset({label}) for label in labels]}

    def simulate(rng: random.Random) -> bool:
        guess = list(labels)
        rng.shuffle(guess)
        return sum(g == k for g, k in zip(guess, key)) >= needed_right(len(key), pass_score)

    return Protocol(name, list(test_counts.values()), test_counts, pass_score, strategies, simulate,
                    simulated_how="against one fixed key")


def baselines() -> list[Protocol]:
    from annotate.bump import content
    from annotate.bump.protocol import BumpTaxonomyProtocol
    BUMP_DEFAULTS = BumpTaxonomyProtocol.campaign_defaults

    score = float(BUMP_DEFAULTS["qualification_pass_score"])
    return [
        fixed_key("BUMP Task 1, before (fixed key)", dict.fromkeys(content.REQUESTABLE_CODES, 1), score),
        fixed_key("BUMP Task 2, before (fixed key)", {True: 2, False: 2}, score),
    ]


def report(protocol: Protocol, *, attempts: int, per_identity: int, per_address: int, rng: random.Random, pass_scores: Sequence[float]) -> dict:
    size = sum(protocol.test_counts.values())
    bits = pool_key_bits(protocol.pool_counts)
    print(f"\n{protocol.name}: pool of {sum(protocol.pool_counts)} questions, tests of {size}, default pass score {protocol.pass_score:.2f}")
    print(f"  pool key: {bits:.1f} bits -> learning it takes >= {math.ceil(bits / per_identity)} identities "
          f"(>= {math.ceil(bits / per_identity / per_address)} addresses)")
    rows = {}
    for score in pass_scores:
        needed = needed_right(size, score)
        best_name, best = max(((name, pass_probability(protocol.test_counts, answer, needed))
                               for name, answer in protocol.strategies.items()), key=lambda item: item[1])
        blind = math.inf if best == 0 else 1 / (best * per_identity)
        identities = min(bits / per_identity, blind)
        rows[score] = (best, identities)
        label = "default" if score == protocol.pass_score else "compare"
        print(f"  pass score {score:.2f} ({label}, {needed}/{size} right): best blind strategy '{best_name}' passes with "
              f"p = {best:.2e} -> {blind:,.0f} identities expected to a first blind pass; "
              f"identities needed >= {math.ceil(identities)} ({math.ceil(identities / per_address)} addresses)")
    passes = sum(protocol.simulate(rng) for _ in range(attempts))
    print(f"  simulated: {passes} passes in {attempts:,} random attempts {protocol.simulated_how} "
          f"(pass score {protocol.pass_score:.2f})")
    return {"bits": bits, "rows": rows, "passes": passes}


# ---------------------------------------------------------------- solvers with knowledge of the task (rule scripts)

RULE_WORD = __import__("re").compile(r"[a-z0-9]+")
RULE_OVERLAP = 0.7  # "No" when a sentence shares under 70% of its words with its closest article sentence
PRONOUNS = {"he", "she", "they", "it", "its", "his", "her", "their", "them", "him"}
LINKS = {"because", "so", "therefore", "since", "after", "thus", "due"}


def rule_answer(sentence: str, article: Sequence[str]) -> dict:
    """The five-line rule of the attack, with category guesses a script can make from the words (two at most):
    a pronoun first -> CorefE, a causal word -> LinkE, every word in the article yet no close sentence ->
    GramE (a scramble), capitalised or numeric words absent from the article -> EntE / CircE, else OutE."""
    words = RULE_WORD.findall(sentence.lower())
    if not words:
        return {"factual": True, "categories": []}
    overlap = max((sum(w in set(RULE_WORD.findall(a.lower())) for w in words) / len(words) for a in article), default=0.0)
    if overlap >= RULE_OVERLAP:
        return {"factual": True, "categories": []}
    vocabulary = {w for a in article for w in RULE_WORD.findall(a.lower())}
    raw = sentence.split()
    guesses = []
    if words[0] in PRONOUNS:
        guesses.append("CorefE")
    if LINKS & set(words):
        guesses.append("LinkE")
    if all(w in vocabulary for w in words):
        guesses.append("GramE")
    new = [t for t in raw if RULE_WORD.findall(t.lower()) and not all(w in vocabulary for w in RULE_WORD.findall(t.lower()))]
    if any(t[:1].isupper() for t in new[1:] if t):
        guesses.append("EntE")
    if any(any(ch.isdigit() for ch in t) for t in new):
        guesses.append("CircE")
    guesses += ["OutE", "RelE"]
    return {"factual": False, "categories": list(dict.fromkeys(guesses))[:2]}


def rule_pass_rate(draw_exercise: Callable[[int], object], identities: int, pass_score: float) -> tuple[int, float]:
    """Identities (fresh worker ids, one attempt each) the rule script passes, through the real scoring code;
    and its mean score."""
    from annotate.frank.protocol import score_qualification

    passes, total = 0, 0.0
    for worker in range(identities):
        exercise = draw_exercise(worker)
        answers = {"summaries": [[rule_answer(k.text, exercise.article) for k in summary] for summary in exercise.summaries]}
        score, _ = score_qualification(answers, exercise)
        passes += score >= pass_score
        total += score
    return passes, total / max(identities, 1)


def frank_gold_documents(frank_dir: Path) -> list:
    """FRANK's documents as a campaign holding its data would draw them (annotate.frank.qualification:
    campaign_gold_documents): every summary rated Factuality 1.0 (factual sentences) or 0.0 (erroneous)."""
    import json

    from annotate.frank import content

    by_hash: dict[str, list] = {}
    for record in json.loads((frank_dir / "human_annotations.json").read_text(encoding="utf-8")):
        factuality = float(record["Factuality"])
        if factuality in (0.0, 1.0):
            by_hash.setdefault(record["hash"], []).append((record["model_name"], factuality == 1.0))
    documents = []
    for article_hash, rated in sorted(by_hash.items()):
        article = json.loads((frank_dir / "articles" / f"{article_hash}.json").read_text(encoding="utf-8"))
        lines_of = {k[: -len("_lines")].lower(): v for k, v in article.items() if k.endswith("_lines")}
        summaries = []
        for model, factual in rated:
            lines = [line.strip() for line in lines_of.get(model.lower(), []) if line.strip()]
            if lines:
                summaries.append(tuple(content.KeySentence(line, None if factual else "", "") for line in lines))
        if summaries:
            documents.append(content.GoldDocument(tuple(article["article_lines"]), tuple(summaries)))
    return documents


def rule_solvers(frank_dir: Path, identities: int) -> None:
    """What a rule script (and a script holding the source's keys) passes: the shipped FRANK pool, and the
    qualification a campaign of FRANK's data draws from its own gold."""
    from annotate.frank import content
    from annotate.models import Campaign

    pass_score = Campaign._meta.get_field("qualification_pass_score").default
    print(f"\nrule scripts ({identities} identities each, one attempt, pass score {pass_score:.2f}; word-overlap rule: 'No' under "
          f"{RULE_OVERLAP:.0%} of a sentence's words in its closest article sentence, categories guessed from the words)")
    secret = secrets.token_hex(8)
    passes, mean = rule_pass_rate(lambda w: content.qualification_for(secret, 1, w, 0), identities, pass_score)
    print(f"  FRANK shipped pool: rule script passes {passes} of {identities} (mean score {mean:.3f}); "
          f"a script holding the source's keys passes {identities} of {identities} (the keys ship in annotate/frank/content.py)")
    if not (frank_dir / "human_annotations.json").exists():
        print(f"  FRANK campaign gold: FRANK data not found at {frank_dir}")
        return
    documents = frank_gold_documents(frank_dir)
    eligible = [d for d in documents if content.gold_qualification_for([d], secret, 1, 0, 0) is not None]
    passes, mean = rule_pass_rate(lambda w: content.gold_qualification_for(documents, secret, 1, w, 0), identities, pass_score)
    print(f"  FRANK campaign gold ({len(eligible)} of {len(documents)} documents make a test): rule script passes {passes} of "
          f"{identities} (mean score {mean:.3f}); the source's keys name none of these sentences, and "
          f"'Yes' everywhere passes {rule_pass_rate_yes(documents, secret, identities, pass_score)} of {identities}")


def rule_pass_rate_yes(documents: list, secret: str, identities: int, pass_score: float) -> int:
    from annotate.frank import content
    from annotate.frank.protocol import score_qualification

    passes = 0
    for worker in range(identities):
        exercise = content.gold_qualification_for(documents, secret, 1, worker, 0)
        answers = {"summaries": [[{"factual": True, "categories": []} for _ in summary] for summary in exercise.summaries]}
        passes += score_qualification(answers, exercise)[0] >= pass_score
    return passes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20_000, help="simulated blind attempts per protocol")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--attempts-per-identity", type=int, default=None, help="default: the campaign default (1)")
    parser.add_argument("--frank", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "frank")
    parser.add_argument("--rule-identities", type=int, default=200, help="identities per rule-script measure")
    parser.add_argument("--rules-only", action="store_true", help="only the rule scripts (no blind-attacker figures)")
    args = parser.parse_args()
    import django

    django.setup()
    from django.conf import settings

    from annotate.models import Campaign

    per_identity = args.attempts_per_identity or Campaign._meta.get_field("qualification_attempts").default
    per_address = int(getattr(settings, "FACTLAB_QUALIFICATION_IDENTITIES_PER_ADDRESS", 3))
    print(f"attempts per identity {per_identity}, identities per network address {per_address}; one pass/fail bit per attempt")
    rng = random.Random(args.seed)
    rule_solvers(args.frank, args.rule_identities)
    if args.rules_only:
        return
    results = {}
    for make in (frank, bump_taxonomy, bump_accuracy):
        protocol = make()
        # Each protocol at its default pass score, and at FRANK's 0.85 for a like-for-like comparison.
        scores = sorted({protocol.pass_score, 0.85}, reverse=True)
        results[protocol.name] = report(protocol, attempts=args.attempts, per_identity=per_identity,
                                        per_address=per_address, rng=rng, pass_scores=scores)
    print("\nbaseline in the same run: the BUMP qualifications before pools (a fixed key; pass/fail answers give it away)")
    for protocol in baselines():
        results[protocol.name] = report(protocol, attempts=args.attempts, per_identity=per_identity, per_address=per_address,
                                        rng=rng, pass_scores=[protocol.pass_score])
    frank_needed = results["FRANK"]["rows"][0.85][1]
    print("\nidentities needed without knowledge (reasoned lower bound, smaller of learning the key and passing blind):")
    for name, result in results.items():
        worst = min(identities for _, identities in result["rows"].values())
        verdict = "" if name == "FRANK" else ("  >= FRANK" if worst >= frank_needed else "  BELOW FRANK")
        print(f"  {name:32s} >= {math.ceil(worst)} identities at either pass score above (simulated passes: {result['passes']}){verdict}")


if __name__ == "__main__":
    main()
