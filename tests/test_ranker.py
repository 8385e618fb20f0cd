from __future__ import annotations

import numpy as np
import pytest

from llmwiki.read.answer import answer_question
from llmwiki.read.candidates import fill_places
from llmwiki.backends import ExtractiveBackend
from llmwiki.read.ranker import (
    DEFAULT_RANKER,
    DEFAULT_SIMILARITY,
    answer_probabilities,
    load_ranker,
    load_similarity,
    ranker_input,
    rerank,
    shipped_weights,
    similarities,
)
from training.ranker import hits, train, training_pairs
from conftest import services_for


class Keyword:
    """A stand-in ranker: P(holds the answer) is 1 for sentences holding the keyword, else 0."""

    name = "keyword"

    def __init__(self, keyword: str) -> None:
        self.keyword, self.calls = keyword, []

    def score(self, premises, hypotheses):
        self.calls.append(list(premises))
        return np.array([[1.0 if self.keyword in premise else 0.0, 0.0, 0.0] for premise in premises]).reshape(-1, 3)


def test_rerank_reorders_only_the_best_hand_ranked_sentences():
    inputs = ["a", "b key", "c", "d key"]
    ranking = [(1.0, 0), (0.9, 1), (0.5, 2), (0.1, 3)]
    ranker = Keyword("key")
    three = answer_probabilities(ranker, "q", inputs, ranking, ranked=3)
    assert three == {0: 0.0, 1: 1.0, 2: 0.0} and ranker.calls == [["a", "b key", "c"]]
    assert [index for _, index in rerank(ranking, three, weight=2.0)] == [1, 0, 2, 3]  # "d key" is past the 3 looked at
    four = answer_probabilities(ranker, "q", inputs, ranking, ranked=4)
    assert [index for _, index in rerank(ranking, four, weight=2.0)] == [1, 3, 0, 2]
    assert [index for _, index in rerank(ranking, four, weight=0.05)] == [0, 1, 2, 3]  # a small weight only breaks near-ties
    assert answer_probabilities(None, "q", inputs, ranking) == {}
    assert rerank(ranking, {}) == ranking  # control: no ranker, the hand ranking


class Near:
    """A stand-in sentence embedder: the question (it ends with "?") and texts holding the keyword point one way,
    every other text at right angles to them (cosine 0)."""

    name = "near"

    def __init__(self, keyword: str) -> None:
        self.keyword, self.calls = keyword, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([[1.0, 0.0] if text.endswith("?") or self.keyword in text else [0.0, 1.0] for text in texts], dtype=np.float32)


def test_similarity_reorders_the_best_hand_ranked_sentences_beside_the_ranker():
    inputs = ["a", "b key", "c near", "d"]
    ranking = [(1.0, 0), (0.9, 1), (0.5, 2), (0.1, 3)]
    embedder = Near("near")
    cosines = similarities(embedder, "q?", inputs, ranking, ranked=3)
    assert cosines == {0: 0.0, 1: 0.0, 2: 1.0} and embedder.calls == [["q?", "a", "b key", "c near"]]
    assert [index for _, index in rerank(ranking, {}, cosines, similarity_weight=2.0)] == [2, 0, 1, 3]
    probabilities = answer_probabilities(Keyword("key"), "q?", inputs, ranking, ranked=3)
    assert [index for _, index in rerank(ranking, probabilities, cosines, weight=2.0, similarity_weight=1.0)] == [1, 2, 0, 3]
    assert [index for _, index in rerank(ranking, probabilities, cosines, weight=1.0, similarity_weight=2.0)] == [2, 1, 0, 3]
    assert similarities(None, "q?", inputs, ranking) == {}
    assert rerank(ranking, {}, {}) == ranking  # control: neither model, the hand ranking


def test_similarity_can_lead_the_answer(wiki):
    question = "What did Alessandro Volta stack into a pile?"
    led = answer_question(wiki, question, services=services_for(wiki, backend=ExtractiveBackend(), ranker=None, similarity=Near("steady current")))
    assert led.text.startswith("The Voltaic Pile made a steady current")
    assert "stacked zinc" in led.text  # still two sentences
    by_hand = answer_question(wiki, question, services=services_for(wiki, backend=ExtractiveBackend(), ranker=None, similarity=Near("zinc")))
    assert by_hand.text.startswith("Alessandro Volta stacked zinc")  # control: the other sentence is the close one


def test_the_shipped_embedder_tells_a_question_about_the_sentence_from_one_about_something_else():
    embedder = load_similarity(DEFAULT_SIMILARITY)
    inputs = [ranker_input("The lighthouse keeper painted the tower red and white in the spring.", "Harbour Point")]
    ranking = [(1.0, 0)]
    about = similarities(embedder, "What colours did the keeper paint the lighthouse tower?", inputs, ranking)[0]
    elsewhere = similarities(embedder, "Which river flows through the capital of Mongolia?", inputs, ranking)[0]
    assert about > elsewhere + 0.2


def test_the_ranker_decides_which_sentence_leads_an_answer(wiki):
    question = "What did Alessandro Volta stack into a pile?"
    by_hand = answer_question(wiki, question, services=services_for(wiki, backend=ExtractiveBackend(), ranker=None))
    assert by_hand.text.startswith("Alessandro Volta stacked zinc")
    ranked = answer_question(wiki, question, services=services_for(wiki, backend=ExtractiveBackend(), ranker=Keyword("steady current")))
    assert ranked.text.startswith("The Voltaic Pile made a steady current")
    assert "stacked zinc" in ranked.text  # still two sentences, the hand ranking's best second
    assert all(citation.path == "sources/volta.md" for citation in ranked.citations)


def test_yes_no_questions_are_not_reranked(wiki):
    ranker = Keyword("steady current")
    answer = answer_question(wiki, "Did Alessandro Volta stack zinc and copper discs into a pile?", services=services_for(wiki, backend=ExtractiveBackend(), ranker=ranker))
    assert answer.verdict == "yes" and ranker.calls == []


def test_ranker_input_carries_the_title_for_pronouns():
    assert ranker_input("He stacked discs.", "Alessandro Volta") == "Alessandro Volta: He stacked discs."
    assert ranker_input("He stacked discs.", "") == "He stacked discs."


def test_none_in_the_config_means_the_hand_ranking(workspace):
    from llmwiki.services import Services
    from llmwiki.workspace import CONFIG_FILENAME, Workspace

    assert load_ranker("none") is None
    config = workspace.root / CONFIG_FILENAME
    default = config.read_text(encoding="utf-8")
    assert 'answer_ranker = "llmwiki-ranker"' in default
    config.write_text(default.replace('answer_ranker = "llmwiki-ranker"', 'answer_ranker = "none"'), encoding="utf-8")
    assert Services(Workspace.open(workspace.root)).ranker is None
    if shipped_weights() is not None:  # control: the default loads the shipped model
        config.write_text(default, encoding="utf-8")
        assert Services(Workspace.open(workspace.root)).ranker.name == DEFAULT_RANKER


def test_none_in_the_config_means_no_similarity(workspace):
    from llmwiki.services import Services
    from llmwiki.workspace import CONFIG_FILENAME, Workspace

    config = workspace.root / CONFIG_FILENAME
    default = config.read_text(encoding="utf-8")
    assert f'answer_similarity = "{DEFAULT_SIMILARITY}"' in default
    assert Services(Workspace.open(workspace.root)).similarity.name == f"{DEFAULT_SIMILARITY} (int8)"  # control: the shipped MiniLM
    config.write_text(default.replace(f'answer_similarity = "{DEFAULT_SIMILARITY}"', 'answer_similarity = "none"'), encoding="utf-8")
    assert Services(Workspace.open(workspace.root)).similarity is None


def test_training_pairs_take_positives_and_the_hardest_negatives():
    row = {"question": "q", "inputs": [f"s{index}" for index in range(12)], "labels": [index in (3, 9) for index in range(12)],
           "ranking": list(range(12))}
    pairs = training_pairs([row, {**row, "labels": [False] * 12}])  # a question no sentence answers gives no pairs
    assert [pair for pair in pairs if pair[2] == 0] == [("s3", "q", 0), ("s9", "q", 0)]
    negatives = [pair[0] for pair in pairs if pair[2] == 3]
    assert negatives[:6] == ["s0", "s1", "s2", "s4", "s5", "s6"] and len(negatives) == 8 and not {"s3", "s9"} & set(negatives)


def test_training_without_pairs_says_why():
    with pytest.raises(ValueError, match="no training pairs"):
        train([])


def test_hits_count_the_first_and_first_two_sentences():
    rows = [{"question": "q", "inputs": ["a", "b key", "c"], "labels": [False, True, False], "ranking": [0, 1, 2], "scores": [1.0, 0.9, 0.1]},
            {"question": "q", "inputs": ["a", "b", "c key"], "labels": [False, False, True], "ranking": [0, 1, 2], "scores": [1.0, 0.9, 0.1]}]
    assert hits(rows) == {"questions": 2, "top1": 0.0, "top2": 0.5}
    assert hits(rows, Keyword("key")) == {"questions": 2, "top1": 1.0, "top2": 1.0}
    cosines = [{0: 0.0, 1: 1.0, 2: 0.0}, {0: 0.0, 1: 0.0, 2: 1.0}]  # the cosines point at the same sentences
    assert hits(rows, cosines=cosines, similarity_weight=2.0) == {"questions": 2, "top1": 1.0, "top2": 1.0}



def test_hits_count_a_sentence_repeated_by_overlapping_chunks_once():
    repeated = {"question": "q", "inputs": ["a", "a", "c key"], "labels": [False, False, True], "ranking": [0, 1, 2], "scores": [1.0, 0.9, 0.1]}
    assert hits([repeated])["top2"] == 1.0  # the answer quotes "a" once, then "c key"
    distinct = {**repeated, "inputs": ["a", "b", "c key"]}
    assert hits([distinct])["top2"] == 0.0  # control: two distinct sentences ahead of it


def test_hits_count_a_first_sentence_that_points_back_as_the_whole_answer():
    row = {"question": "q", "inputs": ["This a", "b key", "c"], "labels": [False, True, False], "ranking": [0, 1, 2], "scores": [1.0, 0.9, 0.1]}
    assert hits([row])["top2"] == 1.0  # control: without the flag, "b key" is the second sentence
    assert hits([{**row, "points_back": [True, False, False]}])["top2"] == 0.0  # "This a" came with the sentence before it
    second = {**row, "inputs": ["a", "This b key", "c"], "points_back": [False, True, False]}
    assert hits([second])["top2"] == 0.0  # a second that points back gives way to "c", as the answer quotes it
    recorded = {**row, "antecedents": ["before a", "", ""]}  # rows collected now keep the antecedent's text
    assert hits([recorded])["top2"] == 0.0
    assert hits([{**row, "antecedents": ["", "", ""]}])["top2"] == 1.0  # control: nothing points back


def test_an_answer_fills_its_places_as_it_quotes():
    sentences = ["A one.", "This two.", "B three.", "A one.", "C four."]
    antecedents = ["", "A one.", "", "", ""]
    assert fill_places(sentences, antecedents, 2) == [0, 2]  # "This two." would overfill; "B three." fits
    assert fill_places(sentences, antecedents, 3) == [0, 2, 4]  # "This two." brings "A one." again; the repeat is skipped
    assert fill_places(sentences[1:], antecedents[1:], 2) == [0]  # first and pointing back: it fills both places
    assert fill_places(["A one.", "A two."], ["", ""], 2) == [0, 1]  # control: two that stand alone


@pytest.mark.skipif(shipped_weights() is None, reason="the answer ranker's weights are not installed (python -m training.ranker)")
def test_the_shipped_ranker_finds_the_sentence_that_answers():
    ranker = load_ranker(DEFAULT_RANKER)
    assert ranker is not None and ranker.name == DEFAULT_RANKER and "weights sha256" in ranker.version
    sentences = [ranker_input("His mother, Agnes Muirhead, came from a distinguished family.", "James Watt"),
                 ranker_input("Watt was born on 19 January 1736 in Greenock, a seaport on the Firth of Clyde.", "James Watt")]
    mother = ranker.score(sentences, ["What was the name of James Watt's mother?"] * 2)[:, 0]
    born = ranker.score(sentences, ["Where was James Watt born?"] * 2)[:, 0]
    assert mother[0] > mother[1]
    assert born[1] > born[0]  # control: the other question, the other sentence


def test_the_workspace_ranker_is_loaded_only_for_a_question_it_reorders(wiki, monkeypatch):
    import llmwiki.read.ranker as ranker_module
    from llmwiki.services import Services

    shared = services_for(wiki)  # the session's models, before load_ranker is watched
    loads = []
    monkeypatch.setattr(ranker_module, "load_ranker", lambda *args, **kwargs: loads.append(1))

    def fresh(**given):  # the ranker built from the settings, on first use; the other models the session's
        return Services(wiki, backend=ExtractiveBackend(), similarity=shared.similarity, nli=shared.nli, **given)

    refused = answer_question(wiki, "What is the capital of Mongolia?", services=fresh())
    yes_no = answer_question(wiki, "Did Alessandro Volta stack zinc and copper discs into a pile?", services=fresh(verifier=Keyword("zinc")))
    assert refused.refused and yes_no.verdict is not None and loads == []
    answered = answer_question(wiki, "What did Alessandro Volta stack into a pile?", services=fresh())
    assert not answered.refused and loads == [1]  # control: a fact question asks for it


def test_the_questions_file_is_read_line_by_line_in_utf8_or_latin1(tmp_path):
    from llmwiki.read.ranker.cmuqa import load_questions

    header = b"ArticleTitle\tQuestion\tAnswer\tDifficultyFromQuestioner\tDifficultyFromAnswerer\tArticleFile\n"
    utf8 = "Tesla\tWho was born in Smiljan near Gospić?\tNikola Tesla\thard\thard\tdata/set4/a1\n".encode("utf-8")
    latin1 = "Tesla\tWho held the © of his papers?\tHis nephew\teasy\teasy\tdata/set4/a1\n".encode("latin-1")  # not UTF-8
    (tmp_path / "question_answer_pairs.txt").write_bytes(header + utf8 + latin1)
    questions = [entry["question"] for entry in load_questions(tmp_path)]
    assert questions == ["Who was born in Smiljan near Gospić?", "Who held the © of his papers?"]
