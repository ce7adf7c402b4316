"""Tutorial and qualification material of FRANK campaigns (hand-made, no setup needed).

The keys (which sentences are correct and their error category) are read only by the server-side
checks in ``annotate.frank.protocol``; pages render :func:`public_view` of an exercise, which has the
sentences but no key.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate import qualification_pool
from annotate.presentation import article_blocks, casing_map, present_article, present_summary
from annotate.qualification_pool import MaterialError, positive_int, text_field
from taxonomies.frank import BY_CODE, CODES


@dataclass(frozen=True)
class KeySentence:
    text: str
    category: str | None  # None: the sentence is correct
    explanation: str

    @property
    def factual(self) -> bool:
        return self.category is None


@dataclass(frozen=True)
class Exercise:
    title: str
    article: tuple[str, ...]
    summaries: tuple[tuple[KeySentence, ...], ...]

    def sentence(self, summary: int, index: int) -> KeySentence:
        """The keyed sentence; raises ``IndexError`` for positions outside the exercise."""
        if not (0 <= summary < len(self.summaries)) or not (0 <= index < len(self.summaries[summary])):
            raise IndexError(f"no sentence {index} in summary {summary}")
        return self.summaries[summary][index]

    @property
    def size(self) -> int:
        return sum(len(s) for s in self.summaries)


def public_view(exercise: Exercise) -> dict:
    """What a page may show: the article and the summary sentences, without the key."""
    article = present_article(exercise.article)
    casing = casing_map(article)
    return {
        "title": exercise.title,
        "article": article,
        "blocks": article_blocks(article),
        "summaries": [present_summary([s.text for s in summary], casing) for summary in exercise.summaries],
    }


def K(text: str, category: str | None = None, explanation: str = "") -> KeySentence:
    if category is not None and category not in BY_CODE:
        raise ValueError(f"unknown category {category!r}")
    return KeySentence(text, category, explanation)


TUTORIAL = Exercise(
    title="New mayor for Riverton",
    article=(
        "Maria Santos, 41, was elected mayor of Riverton on Tuesday.",
        "She won 58% of the vote, defeating the incumbent, Tom Becker.",
        "Santos, a former teacher, promised to build a new public library in the city centre.",
        "Becker, who had been mayor for eight years, congratulated her in a speech at the town hall.",
        "Turnout was low because of heavy rain across the region.",
        "Santos will take office in January.",
    ),
    summaries=(
        (
            K("Maria Santos, a former teacher, was elected mayor of Riverton on Tuesday.", None,
              "Everything in this sentence is stated in the article."),
            K("Tom Becker won 58% of the vote.", "EntE",
              "It was Santos, not Becker, who won 58% of the vote: the entity in the relation is wrong."),
            K("Santos will take office in March.", "CircE",
              "The article says January: the circumstance (time) is wrong."),
            K("Turnout was low because Santos promised a new library.", "LinkE",
              "Turnout was low because of the rain; the summary links two facts with a wrong cause."),
        ),
        (
            K("Santos promised to build a new public library.", None, "The article says exactly this."),
            K("Becker criticised Santos in a speech at the town hall.", "RelE",
              "Becker congratulated Santos: the relationship (the verb) between the entities is wrong."),
            K("Santos, a mother of three, plans to cut local taxes.", "OutE",
              "The article says nothing about her children or taxes: this information is not in the article."),
            K("Becker congratulated him at the town hall.", "CorefE",
              "This sentence has a coreference error: 'him' has no antecedent (Santos is 'her' in the article)."),
            K("Rain the turnout heavy low region was across.", "GramE",
              "The words are scrambled: the sentence is grammatically meaningless."),
            K("Santos won 58% of the vote, more than two thirds of it.", "OtherE",
              "58% is less than two thirds: a factual error that none of the other categories describes."),
        ),
    ),
)

# The default qualification: one article and a pool of keyed sentences, several per error category. Each
# worker (and each of their attempts) gets a random subset covering every category (qualification_for),
# so no fixed key exists to be recovered by trying identities.
QUALIFICATION_ARTICLE = (
    "A fire broke out at a chemical plant in Northfield on Saturday night, officials said.",
    "About 200 residents were evacuated from nearby homes as a precaution.",
    "Firefighters brought the blaze under control after six hours.",
    "No one was injured, but two workers were treated for smoke inhalation.",
    "The plant, owned by Larsen Industries, produces cleaning products.",
    "Company spokesman David Okafor said he did not yet know what caused the fire.",
    "The plant will remain closed until an investigation is completed.",
)
QUALIFICATION_POOL: tuple[KeySentence, ...] = (
    K("A fire broke out at a chemical plant in Northfield on Saturday night."),
    K("About 200 residents were evacuated as a precaution."),
    K("Larsen Industries' plant produces cleaning products."),
    K("No one was injured in the fire."),
    K("The plant will stay closed until an investigation is completed."),
    K("Firefighters controlled the blaze after six hours."),
    K("Two workers were treated for smoke inhalation."),
    K("David Okafor said he did not yet know the cause of the fire."),
    K("Firefighters needed two days to control the blaze.", "CircE"),
    K("The fire broke out on Sunday morning.", "CircE"),
    K("A fire broke out at a chemical plant in Southfield.", "CircE"),
    K("The plant is owned by David Okafor.", "EntE"),
    K("Officials at Larsen Industries evacuated 200 firefighters.", "EntE"),
    K("The plant, owned by Northfield, produces cleaning products.", "EntE"),
    K("Two workers died from smoke inhalation.", "RelE"),
    K("Firefighters started the blaze at the plant.", "RelE"),
    K("David Okafor said he knew what caused the fire.", "RelE"),
    K("The fire was caused by an electrical fault in the warehouse.", "OutE"),
    K("The plant employs 350 people from Northfield.", "OutE"),
    K("Larsen Industries will pay compensation to the residents.", "OutE"),
    K("The plant will remain closed because no one was injured.", "LinkE"),
    K("Residents were evacuated because the plant produces cleaning products.", "LinkE"),
    K("Two workers were treated because the plant will remain closed.", "LinkE"),
    K("She said the cause of the fire was not yet known.", "CorefE"),
    K("They said she did not know what caused the fire.", "CorefE"),
    K("Its spokesman said she would investigate.", "CorefE"),
    K("Northfield evacuated plant the fire residents hours six.", "GramE"),
    K("Smoke workers two inhalation the treated were for.", "GramE"),
    K("Cleaning the produces plant Larsen products owned.", "GramE"),
    K("About 200 residents, more than a thousand people, were evacuated.", "OtherE"),
    K("The six-hour fire lasted most of a week.", "OtherE"),
    K("Two workers, the only people at the plant, were among the many injured.", "OtherE"),
)
QUALIFICATION_FACTUAL_PER_TEST = 5
QUALIFICATION_SUMMARY_SIZE = 4


def _per_label(factual_per_test: int) -> list[tuple[str | None, int]]:
    """A test's composition: one sentence of every category, ``factual_per_test`` correct ones."""
    return [(code, 1) for code in CODES] + [(None, factual_per_test)]


def _describe(category: str | None) -> str:
    return "correct sentences" if category is None else f"sentence of category {category}"


def pool_problems(pool: tuple[KeySentence, ...], factual_per_test: int) -> list[str]:
    """What keeps a pool from giving every worker a test that covers every category (empty: fine)."""
    return qualification_pool.pool_problems(pool, lambda k: k.category, _per_label(factual_per_test), _describe)


def qualification_for(
    secret: str, campaign_id: int, worker_id: int, attempt: int, *,
    pool: tuple[KeySentence, ...] = QUALIFICATION_POOL, article: tuple[str, ...] = QUALIFICATION_ARTICLE,
    title: str = "Fire at a chemical plant", factual_per_test: int = QUALIFICATION_FACTUAL_PER_TEST,
) -> Exercise:
    """The qualification test of one worker's attempt: one pool sentence per category and
    ``QUALIFICATION_FACTUAL_PER_TEST`` correct ones, shuffled into summaries of four or five sentences.

    Drawn by the shared pool mechanism (``annotate.qualification_pool``): the same on every page load and on
    scoring, different between workers and attempts, and not predictable without the server's secret.
    """
    rng = qualification_pool.attempt_rng(secret, "frank-qualification", campaign_id, worker_id, attempt)
    chosen = qualification_pool.draw(rng, pool, lambda k: k.category, _per_label(factual_per_test))
    n = max(1, len(chosen) // QUALIFICATION_SUMMARY_SIZE)
    summaries = tuple(tuple(chosen[i::n]) for i in range(n))
    return Exercise(title=title, article=article, summaries=summaries)


# ---------------------------------------------------------------- a campaign's own gold as its qualification

@dataclass(frozen=True)
class GoldDocument:
    """A document of the campaign with its summaries whose every sentence has gold (``KeySentence`` per
    sentence: category None when factual, "" when erroneous of unknown category, scored on Yes/No)."""

    article: tuple[str, ...]
    summaries: tuple[tuple[KeySentence, ...], ...]


#: A document can make a qualification test when its labelled summaries hold at least this many sentences of
#: each class (and does when as many are in the same word-overlap bands).
GOLD_TEST_MIN_PER_CLASS = 2


def _class_counts(summaries) -> tuple[int, int]:
    keys = [k for summary in summaries for k in summary]
    return sum(k.factual for k in keys), sum(not k.factual for k in keys)


def gold_test_eligible(document: GoldDocument) -> bool:
    return min(_class_counts(document.summaries)) >= GOLD_TEST_MIN_PER_CLASS


def _balanced_by_overlap(document: GoldDocument, rng) -> list[KeySentence]:
    """As many factual as erroneous sentences within each word-overlap band (the bands of the control score), so
    that a rule over the overlap ("extractive, so factual") scores about one half on the test."""
    from annotate.services.control_items import overlap_band, sentence_overlap  # the one overlap rule

    bands: dict[int, dict[bool, list[KeySentence]]] = {}
    for summary in document.summaries:
        for key in summary:
            bands.setdefault(overlap_band(sentence_overlap(key.text, document.article)), {True: [], False: []})[key.factual].append(key)
    chosen: list[KeySentence] = []
    for band in sorted(bands):
        factual, wrong = bands[band][True], bands[band][False]
        n = min(len(factual), len(wrong))
        chosen += rng.sample(factual, n) + rng.sample(wrong, n)
    return chosen


def gold_qualification_for(documents: list[GoldDocument], secret: str, campaign_id: int, worker_id: int, attempt: int) -> Exercise | None:
    """The qualification test of one attempt drawn from the campaign's own gold: the first document, in a keyed
    random order (as for the pools), whose gold holds at least ``GOLD_TEST_MIN_PER_CLASS`` factual and
    erroneous sentences within the same word-overlap bands; those sentences, shuffled into summaries of up to
    ``QUALIFICATION_SUMMARY_SIZE``. None when no document has them. Unlike the shipped pool, these keys are not
    in the source: a script holding the code learns nothing of them."""
    eligible = [d for d in documents if gold_test_eligible(d)]
    rng = qualification_pool.attempt_rng(secret, "frank-gold-qualification", campaign_id, worker_id, attempt)
    rng.shuffle(eligible)
    for document in eligible:
        chosen = _balanced_by_overlap(document, rng)
        if len(chosen) >= 2 * GOLD_TEST_MIN_PER_CLASS:
            rng.shuffle(chosen)
            n = max(1, round(len(chosen) / QUALIFICATION_SUMMARY_SIZE))
            return Exercise(title="News article", article=document.article, summaries=tuple(tuple(chosen[i::n]) for i in range(n)))
    return None


# ---------------------------------------------------------------- campaign material (admin import)

def _key(raw, where: str) -> KeySentence:
    if not isinstance(raw, dict):
        raise MaterialError(f"{where}: expected an object with text, category and explanation")
    category = raw.get("category")
    if category is not None and category not in BY_CODE:
        raise MaterialError(f"{where}.category: unknown category {category!r}; expected null or one of {', '.join(CODES)}")
    explanation = raw.get("explanation", "")
    if not isinstance(explanation, str):
        raise MaterialError(f"{where}.explanation: expected a string")
    return KeySentence(text_field(raw.get("text"), f"{where}.text"), category, explanation)


def _article(raw, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise MaterialError(f"{where}: expected a non-empty list of sentences")
    return tuple(text_field(s, f"{where}[{i}]") for i, s in enumerate(raw))


def parse_material(data) -> dict:
    """Validate a campaign's material (format in docs/training-material.md) and return it normalised.

    ``{"tutorial": {"title", "article": [...], "summaries": [[{"text", "category", "explanation"}]]},
    "qualification": {"title", "article": [...], "pool": [{"text", "category", "explanation"}],
    "factual_per_test": 5}}``; either part may be left out (the default stays). Raises ``MaterialError``.
    """
    if not isinstance(data, dict) or not data or set(data) - {"tutorial", "qualification"}:
        raise MaterialError("expected an object with 'tutorial' and/or 'qualification'")
    out: dict = {}
    if "tutorial" in data:
        t = data["tutorial"]
        if not isinstance(t, dict) or not isinstance(t.get("summaries"), list) or not t["summaries"]:
            raise MaterialError("tutorial: expected an object with title, article and a non-empty list of summaries")
        summaries = [[_key(k, f"tutorial.summaries[{s}][{i}]") for i, k in enumerate(row)] if isinstance(row, list) and row
                     else _fail(f"tutorial.summaries[{s}]: expected a non-empty list of sentences") for s, row in enumerate(t["summaries"])]
        out["tutorial"] = {"title": text_field(t.get("title"), "tutorial.title"), "article": list(_article(t.get("article"), "tutorial.article")),
                           "summaries": [[k.__dict__ for k in row] for row in summaries]}
    if "qualification" in data:
        q = data["qualification"]
        if not isinstance(q, dict) or not isinstance(q.get("pool"), list):
            raise MaterialError("qualification: expected an object with title, article and a pool list")
        pool = tuple(_key(k, f"qualification.pool[{i}]") for i, k in enumerate(q["pool"]))
        factual = positive_int(q.get("factual_per_test", QUALIFICATION_FACTUAL_PER_TEST), "qualification.factual_per_test")
        problems = pool_problems(pool, factual)
        if problems:
            raise MaterialError("qualification.pool: " + "; ".join(problems))
        out["qualification"] = {"title": text_field(q.get("title"), "qualification.title"), "article": list(_article(q.get("article"), "qualification.article")),
                                "pool": [k.__dict__ for k in pool], "factual_per_test": factual}
    return out


def _fail(message: str):
    raise MaterialError(message)


def _keys(rows) -> tuple[KeySentence, ...]:
    return tuple(KeySentence(r["text"], r["category"], r.get("explanation", "")) for r in rows)


def campaign_tutorial(material: dict) -> Exercise:
    """The campaign's tutorial: imported material, or FRANK's default."""
    t = (material or {}).get("tutorial")
    if not t:
        return TUTORIAL
    return Exercise(title=t["title"], article=tuple(t["article"]), summaries=tuple(_keys(row) for row in t["summaries"]))


def campaign_qualification(material: dict, secret: str, campaign_id: int, worker_id: int, attempt: int) -> Exercise:
    """The worker's qualification test from the campaign's pool (imported, or FRANK's default)."""
    q = (material or {}).get("qualification")
    if not q:
        return qualification_for(secret, campaign_id, worker_id, attempt)
    return qualification_for(secret, campaign_id, worker_id, attempt, pool=_keys(q["pool"]), article=tuple(q["article"]),
                             title=q["title"], factual_per_test=q["factual_per_test"])


assert not pool_problems(QUALIFICATION_POOL, QUALIFICATION_FACTUAL_PER_TEST)


QUALIFICATION = Exercise(
    title="Fire at a chemical plant",
    article=(
        "A fire broke out at a chemical plant in Northfield on Saturday night, officials said.",
        "About 200 residents were evacuated from nearby homes as a precaution.",
        "Firefighters brought the blaze under control after six hours.",
        "No one was injured, but two workers were treated for smoke inhalation.",
        "The plant, owned by Larsen Industries, produces cleaning products.",
        "Company spokesman David Okafor said he did not yet know what caused the fire.",
        "The plant will remain closed until an investigation is completed.",
    ),
    summaries=(
        (
            K("A fire broke out at a chemical plant in Northfield on Saturday night."),
            K("Firefighters needed two days to control the blaze.", "CircE"),
            K("The plant is owned by David Okafor.", "EntE"),
            K("About 200 residents were evacuated as a precaution."),
        ),
        (
            K("Two workers died from smoke inhalation.", "RelE"),
            K("The fire was caused by an electrical fault in the warehouse.", "OutE"),
            K("The plant will remain closed because no one was injured.", "LinkE"),
            K("Larsen Industries' plant produces cleaning products."),
        ),
        (
            K("She said the cause of the fire was not yet known.", "CorefE"),
            K("Northfield evacuated plant the fire residents hours six.", "GramE"),
            K("About 200 residents, more than a thousand people, were evacuated.", "OtherE"),
            K("No one was injured in the fire."),
            K("The plant will stay closed until an investigation is completed."),
        ),
    ),
)
