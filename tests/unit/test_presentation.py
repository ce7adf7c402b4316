"""Text as a person writes it: every FRANK article, summary and trap, and the BUMP samples, rendered
through the presentation layer show none of the corpus artefacts (tokenised quotes and spacing, "# 1.9",
raw UNK, lower-case summaries, quotes glued to their word), and the source's own spacing is kept."""
from __future__ import annotations

import json
import re

import pytest

from annotate.presentation import (
    UNKNOWN_WORD,
    article_paragraphs,
    casing_map,
    is_lower_cased,
    present,
    present_article,
    present_summary,
    style_like,
)
from tests.conftest import FRANK_DIR, SAMPLES_DIR

QUOTE_CHARS = "'‘’\"“”`"
ARTEFACTS = {
    "tokenised double quote": re.compile(r"``|''"),
    "space before punctuation": re.compile(r"\s[,;:!?%](?:\s|$)|\s\.$|\s\.\s"),
    "split clitic": re.compile(r"\s(?:'s|n't|'re|'ve|'ll|'m)(?=\s|$|[.,;:!?])", re.IGNORECASE),
    "hash before an amount": re.compile(r"#\s?\d"),
    "raw unknown word": re.compile(r"\bUNK\b|<unk>"),
    "opening quote followed by a space": re.compile(r"[“‘]\s"),
    "space before a closing quote": re.compile(r"\s”"),
    "closing double quote glued to a word": re.compile(r"”[^\W_]"),
    "escaped quote": re.compile(r"\\['\"]"),
}


def artefacts(text: str) -> list[str]:
    return [name for name, pattern in ARTEFACTS.items() if pattern.search(text)]


def source_spaces_kept(raw: str, shown: str) -> bool:
    """Every quote attached to its word in an untokenised source keeps the space before it ("said: 'On")."""
    for token in raw.split()[1:]:
        if len(token) > 1 and token[0] in QUOTE_CHARS and token[1].isalnum() and " " + present(token) not in shown:
            return False
    return True


def frank_records() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((FRANK_DIR / "articles").glob("*.json"))]


@pytest.fixture(scope="module")
def records() -> list[dict]:
    found = frank_records()
    assert len(found) >= 499, f"FRANK articles missing under {FRANK_DIR}"
    return found


def test_rules_before_and_after():
    assert present("study 's author , dr kujala could n't go .") == "study's author, dr kujala couldn't go."
    assert present("mclean 's `` american pie '' is 44 years old .") == "mclean's “american pie” is 44 years old."
    assert present("the ` special relationship ' between britain and the us") == "the ‘special relationship’ between britain and the us"
    assert present("signed for # 1.9 m from chelsea .") == "signed for £1.9m from chelsea."
    assert present("the university of UNK .") == f"the university of {UNKNOWN_WORD}."
    assert present("a ``huge honour\\'\\'of the club") == "a “huge honour” of the club"
    assert present("the players ' union met") == "the players’ union met"
    # The source's own spaces stay: no quote glued to the word before it.
    assert present("He said: 'On average it is a 'buffer' zone.'") == "He said: 'On average it is a 'buffer' zone.'"
    casing = casing_map(["Dr Urho Kujala, of the University of Jyvaskyla, led the U.S. team.", "The study was led by Kujala."])
    assert present_summary(["dr urho kujala , of the university of jyvaskyla , said .", "the u.s. team won ."], casing) == [
        "Dr Urho Kujala, of the University of Jyvaskyla, said.", "The U.S. team won."]
    assert present_summary(["Already Cased , here ."], casing) == ["Already Cased, here."]
    assert present_summary(["UNK hired robots .", "he said ."], casing) == [f"{UNKNOWN_WORD} hired robots.", "He said."]


def test_article_lines_become_paragraphs_with_captions_apart():
    lines = ["He spoke on Monday. '", "I am happy,' he said.", "Scroll down for video", "Fans cheered the team",
             '"Is it enough?', 'Yes," she said.']
    shown = present_article(lines)
    assert shown[:2] == ["He spoke on Monday.", "'I am happy,' he said."]
    assert article_paragraphs(shown) == [
        {"caption": False, "lines": [0]}, {"caption": False, "lines": [1]}, {"caption": True, "lines": [2]},
        {"caption": True, "lines": [3]}, {"caption": False, "lines": [4, 5]},
    ]


def test_a_trap_in_a_lower_case_summary_with_unk_is_styled_like_it():
    article = ["The obesity issue is the most troubling, Dr Kujala says.", "Kujala works in Finland."]
    casing = casing_map(present_article(article))
    shown = present_summary(["the obesity issue is UNK 's main worry", "dr kujala works in finland"], casing)
    assert shown == [f"The obesity issue is {UNKNOWN_WORD}'s main worry", "Dr Kujala works in Finland"]
    trap = style_like("the obesity issue is the most troubling , dr kujala says .", shown, casing)
    assert trap == "The obesity issue is the most troubling, Dr Kujala says"  # no final full stop, like its summary


@pytest.mark.slow
def test_every_frank_article_summary_and_trap_renders_without_artefacts(records):
    problems: list[str] = []
    glued = 0
    summaries = lower_left = 0
    for record in records:
        name = record.get("hash", "?")
        shown_article = present_article(record["article_lines"])
        for raw, shown in zip(record["article_lines"], shown_article):
            if found := artefacts(shown):
                problems.append(f"{name} article: {found}: {shown[:120]}")
            if not source_spaces_kept(raw, shown):
                glued += 1
                problems.append(f"{name} article: source space lost: {raw[:120]} -> {shown[:120]}")
        assert article_paragraphs(shown_article), name
        casing = casing_map(shown_article)
        for key, lines in record.items():
            if not key.endswith("_lines") or key == "article_lines" or not lines:
                continue
            shown = present_summary(lines, casing)
            summaries += 1
            if is_lower_cased(shown):
                lower_left += 1
            for raw, text in zip(lines, shown):
                if found := artefacts(text):
                    problems.append(f"{name} {key}: {found}: {raw[:100]} -> {text[:100]}")
                if not text[:1].isupper() and text[:1].isalpha():
                    problems.append(f"{name} {key}: sentence starts lower case: {text[:100]}")
            for _, trap in record.get("traps") or []:
                styled = style_like(trap, shown, casing)
                if found := artefacts(styled):
                    problems.append(f"{name} trap: {found}: {styled[:100]}")
                if styled[:1].islower():
                    problems.append(f"{name} trap starts lower case beside a truecased summary: {styled[:100]}")
    assert summaries > 2000
    assert lower_left == 0
    assert not problems, f"{len(problems)} artefacts, first: " + "\n".join(problems[:15])


def test_bump_samples_render_without_artefacts():
    for name in ("bump_task1_sample.json", "bump_task2_sample.json"):
        for row in json.loads((SAMPLES_DIR / name).read_text(encoding="utf-8")):
            for text in (row["reference_summary"], row["article"]):
                shown = present(text)
                assert not artefacts(shown), (name, artefacts(shown), shown[:200])
                assert source_spaces_kept(text, shown)
            assert "19-year-old" not in row["reference_summary"] or "19-year-old" in present(row["reference_summary"])


def test_presenting_twice_changes_nothing(records):
    for record in records[:100]:
        for line in record["article_lines"]:
            once = present(line)
            assert present(once) == once


@pytest.mark.parametrize("stored, shown", [
    ("he paid â£50,000 for the car .", "he paid £50,000 for the car."),  # mojibake lower-cased with its corpus
    ("He paid Â£50,000 for the car.", "He paid £50,000 for the car."),
    ("Itâ€™s the councilâ€™s plan.", "It’s the council’s plan."),
    ("the cafã© in zã¼rich", "the café in zürich"),
    ("Déjà vu à la carte, naïve café £5 – ok", "Déjà vu à la carte, naïve café £5 – ok"),  # real accents stay
])
def test_mojibake_of_any_corpus_is_repaired_for_the_reader(stored, shown):
    assert present(stored) == shown
    assert present(present(stored)) == shown


def test_truecasing_keeps_names_whole_and_never_capitalises_a_common_word_for_a_name_it_is_part_of():
    article = ["Crowds marked Anzac Day in Wellington.", "Officers from Somerset Police said the Royal Bank of Scotland shut.",
               "PGA Tour star Rickie Fowler won.", "A man from New York met Gary Locke.", "Locke said the mood was good."]
    casing = casing_map(article, common={"police", "day"})
    shown = present_summary(["a day of celebrations marked anzac day .", "a police officer said the royal bank of scotland shut .",
                             "pga tour star rickie fowler won .", "a new york judge met locke and gary locke ."], casing)
    assert shown == ["A day of celebrations marked Anzac Day.", "A police officer said the Royal Bank of Scotland shut.",
                     "PGA Tour star Rickie Fowler won.", "A New York judge met Locke and Gary Locke."]
    # Without the corpus's word the article alone cannot tell "Police" from a name; with it, it can.
    assert present_summary(["a police officer came ."], casing_map(article)) == ["A Police officer came."]


def test_the_corpus_casing_model_knows_common_words_from_cased_texts_only():
    from annotate.presentation import common_words

    found = common_words(["The police said on Friday the day was over.", "Police said the police came.", "all lower case police police"])
    assert {"police", "said", "the"} <= found and "friday" not in found and "day" not in found  # "day" once: too little
