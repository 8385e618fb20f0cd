from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import services_for
from models import tiny_model

from llmwiki.publish.wiki import ingest_paths
from llmwiki.verify.page import not_checked
from llmwiki.verify import (
    NLIVerifier,
    VerificationError,
    VerifierError,
    label_columns,
    load_verification,
    page_sentences,
    verify_page,
)

# -- the model loading path, on tiny models built by the tests (fixtures/models.py) ------

@pytest.mark.parametrize(
    ("id2label", "expected"),
    [
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, {"entailment": 0, "neutral": 1, "contradiction": 2}),
        ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, {"entailment": 2, "neutral": 1, "contradiction": 0}),
        ({0: "Neutral", 1: "Entailment", 2: "Contradiction"}, {"entailment": 1, "neutral": 0, "contradiction": 2}),
        ({0: "entailment", 1: "not_entailment"}, {"entailment": 0, "not_entailment": 1}),
        ({0: "not entailment", 1: "entailment"}, {"entailment": 1, "not_entailment": 0}),
    ],
)
def test_label_mapping_by_name(id2label, expected):
    assert label_columns(id2label) == expected


@pytest.mark.parametrize("id2label", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {0: "positive", 1: "negative"}, {0: "neutral", 1: "contradiction"}])
def test_non_nli_labels_are_refused_with_the_fix(id2label):
    with pytest.raises(VerifierError, match="id2label|NLI"):
        label_columns(id2label)


@pytest.mark.parametrize("layout", [{0: "entailment", 1: "neutral", 2: "contradiction"}, {0: "contradiction", 1: "entailment", 2: "neutral"}])
def test_a_tiny_saved_model_loads_and_its_labels_are_mapped(tmp_path, layout):
    entail_index = next(index for index, name in layout.items() if name == "entailment")
    path = tiny_model(tmp_path / "m", layout, favour=entail_index)
    verifier = NLIVerifier(path)
    scores = verifier.score(["the otter eats fish ."] * 2, ["a sea otter eats kelp .", "the otter ."])
    assert scores.shape == (2, 3)
    assert np.allclose(scores.sum(axis=1), 1, atol=1e-5)
    assert (scores[:, 0] > 0.99).all()  # the favoured label is read as entailment, whatever its index
    contradiction = next(index for index, name in layout.items() if name == "contradiction")
    against = NLIVerifier(tiny_model(tmp_path / "c", layout, favour=contradiction))
    assert (against.score(["the otter ."], ["fish ."])[:, 2] > 0.99).all()  # control


def test_batches_sorted_by_length_return_rows_in_input_order(tmp_path):
    verifier = NLIVerifier(tiny_model(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"}), batch_size=2)
    verifier.model.classifier.weight.data *= 300  # a random tiny model is near uniform; sharpen it so rows differ
    premises = ["the otter eats fish . " * 6, "kelp .", "the sea otter eats a fish .", "otter ."]
    hypotheses = ["the otter .", "a sea otter eats kelp . " * 3, "fish .", "the kelp is a kelp ."]
    together = verifier.score(premises, hypotheses)
    one_by_one = np.concatenate([verifier.score([p], [h]) for p, h in zip(premises, hypotheses)])
    assert np.allclose(together, one_by_one, atol=1e-5, rtol=0)
    assert np.abs(together[0] - together[1]).max() > 1e-4  # control: the rows differ (10x the tolerance), so order matters: the rows differ, so order matters
    assert verifier.contradictions


def test_a_two_label_model_reports_not_entailment_as_neutral(tmp_path):
    verifier = NLIVerifier(tiny_model(tmp_path / "m", {0: "entailment", 1: "not_entailment"}, favour=1))
    scores = verifier.score(["the otter eats fish ."], ["kelp ."])
    assert scores[0, 1] > 0.99 and scores[0, 2] == 0.0


def test_long_pairs_are_truncated_not_refused(tmp_path):
    verifier = NLIVerifier(tiny_model(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"}), max_length=32)
    scores = verifier.score(["the otter eats fish . " * 200], ["a sea otter eats kelp . " * 100])
    assert scores.shape == (1, 3) and np.isfinite(scores).all()


def test_a_missing_model_says_what_to_give(tmp_path):
    with pytest.raises(VerifierError, match="save_pretrained"):
        NLIVerifier(tmp_path / "nothing-here")


# -- sentence splitting ---------------------------------------------------------------


def test_page_sentences_skip_structure_and_keep_offsets():
    body = (
        "# Title\n\n"
        "Dr. Smith paid 3.50 euros in the U.S. market [c12]. The otter ate 2.5 kg of fish [c3].\n\n"
        "```\ncode is not a claim.\n```\n\n"
        "| a | b |\n|---|---|\n| tables are not claims | x |\n\n"
        "- [Otters](../concepts/otters.md)\n"
        "- Lists of facts count as sentences, like this one.\n\n"
        "<!-- source: sources/a.md -->\n\n"
        "## Concepts\n\nA sentence under any heading is a claim, like this appended one.\n\n"
        "[c12]: ../../sources/a.md \"p.1\"\n"
    )
    sentences = page_sentences(body)
    texts = [sentence.text for sentence in sentences]
    assert texts == [
        "Dr. Smith paid 3.50 euros in the U.S. market .",
        "The otter ate 2.5 kg of fish .",
        "Lists of facts count as sentences, like this one.",
        "A sentence under any heading is a claim, like this appended one.",
    ]
    for sentence in sentences:
        raw = body[sentence.start:sentence.end]
        assert raw.split()[0] in sentence.text and "[c" not in sentence.text
    assert not_checked(body) == {"code": 1, "table": 3, "links": 1, "references": 1}
    assert page_sentences("# Only a heading\n\n- [a](b.md)\n") == []


# -- page verification --------------------------------------------------------------


class LexicalVerifier:
    """P(entailment) = 1 when every word of the hypothesis is in the premise, else 0.1; counts pairs."""

    name = "lexical-test"

    def __init__(self):
        self.pairs = 0

    def score(self, premises, hypotheses):
        self.pairs += len(premises)
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            words = {word.strip(".,").lower() for word in hypothesis.split()}
            supported = words <= {word.strip(".,").lower() for word in premise.split()}
            rows.append([1.0, 0.0, 0.0] if supported else [0.1, 0.2, 0.7])
        return np.array(rows)


KELP = "# Kelp\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring. Sea urchins graze on kelp.\n"


@pytest.fixture
def page(workspace):
    (workspace.sources_dir / "kelp.md").write_text(KELP, encoding="utf-8")
    (workspace.sources_dir / "other.md").write_text("# Other\n\nThe Other Source mentions the Other Source twice.\n", encoding="utf-8")
    ingest_paths(workspace)
    return workspace, "wiki/summaries/kelp.md"


def test_verification_is_stored_and_not_rescored_when_nothing_changed(page):
    workspace, path = page
    verifier = LexicalVerifier()
    first = verify_page(workspace, path, verifier, verbatim=False)
    assert first.pairs_scored > 0 and verifier.pairs == first.pairs_scored
    assert all(sentence.p_entailment == 1.0 for sentence in first.sentences)  # extractive pages quote their source
    assert first.sentences[0].excerpt_path == "sources/kelp.md" and first.sentences[0].excerpt_chunk_id
    again = verify_page(workspace, path, verifier)
    assert again.reused and verifier.pairs == first.pairs_scored  # 0 new NLI calls
    stored = load_verification(workspace, path)
    assert [s.sentence for s in stored.sentences] == [s.sentence for s in first.sentences] and not stored.outdated


def test_sentences_copied_from_a_source_are_entailed_without_a_model_call(page):
    workspace, path = page
    verifier = LexicalVerifier()
    copied = verify_page(workspace, path, verifier)  # an extractive page: every sentence quotes its source
    assert copied.pairs_scored == 0 and verifier.pairs == 0
    assert all(s.p_entailment == 1.0 and s.excerpt == s.sentence and s.excerpt_path == "sources/kelp.md" for s in copied.sentences)
    page_file = workspace.root / path
    page_file.write_text(page_file.read_text(encoding="utf-8").replace("\n\n## Concepts", "\n\nFish shelter in the Kelp Forest.\n\n## Concepts"), encoding="utf-8")
    ingest_paths(workspace, [page_file])
    reworded = verify_page(workspace, path, verifier)  # control: a reworded sentence goes to the model, and only it
    scored = [s for s in reworded.sentences if s.sentence == "Fish shelter in the Kelp Forest."]
    assert reworded.pairs_scored == verifier.pairs > 0 and len(scored) == 1 and scored[0].p_entailment == pytest.approx(0.1)
    assert sum(s.p_entailment == 1.0 for s in reworded.sentences) == len(copied.sentences)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Volta was born in Como, and he invented the battery in 1800.", ["Volta was born in Como", "he invented the battery in 1800"]),
        ("The pile, which Volta built in 1799, produced a steady current.", ["The pile Volta built in 1799", "produced a steady current"]),
        ("He visited Paris, London and Rome.", ["He visited Paris, London and Rome."]),  # list items are too short to stand alone
        ("The battery cost 1,234 lire in 1801.", ["The battery cost 1,234 lire in 1801."]),  # no space after the comma: a number
        ("Salt and pepper were sold in Como.", ["Salt and pepper were sold in Como."]),
        ("Short.", ["Short."]),
    ],
)
def test_clauses_cut_sentences_at_commas_and_conjunctions_into_clauses_of_four_words(sentence, expected):
    from llmwiki.verify.page import clauses

    assert clauses(sentence) == expected


class ClauseVerifier(LexicalVerifier):
    """The lexical test verifier, as an NLI model would be used: clause by clause."""

    name = "clause-test"
    prefers_clauses = True


SPREAD = ("# Reef\n\nThe reef lies off the northern cape. Storms hit the coast in winter. Fishing boats leave at dawn. "
          "Tourists arrive by ferry. The reef shelters green turtles.\n")


def page_on_source(workspace, source: str, source_text: str, title: str, body: str) -> str:
    """A hand-written concept page resting on one source, both ingested; returns the page's path."""
    (workspace.sources_dir / source).write_text(source_text, encoding="utf-8")
    relative = f"wiki/concepts/{title.lower().replace(' ', '-')}.md"
    page_file = workspace.root / relative
    page_file.write_text(f"---\ntitle: {title}\nsources:\n- path: sources/{source}\n---\n\n# {title}\n\n{body}\n", encoding="utf-8")
    ingest_paths(workspace, generate=False)
    ingest_paths(workspace, [page_file])
    return relative


def reef_page(workspace, sentence: str) -> str:
    return page_on_source(workspace, "reef.md", SPREAD, "Reef notes", sentence)


def test_a_sentence_is_as_supported_as_its_weakest_clause(workspace):
    path = reef_page(workspace, "The reef lies off the northern cape, and the reef shelters green turtles.")
    # the two facts are four sentences apart: no premise window holds both
    whole = verify_page(workspace, path, LexicalVerifier(), verbatim=False)
    assert whole.method == "sentence" and whole.sentences[0].p_entailment == pytest.approx(0.1) and whole.sentences[0].weakest_clause is None
    split = verify_page(workspace, path, ClauseVerifier(), verbatim=False)
    assert split.method == "clauses" and split.sentences[0].p_entailment == 1.0
    stored = load_verification(workspace, path)
    assert stored.method == "clauses" and stored.sentences[0].weakest_clause in ("The reef lies off the northern cape", "the reef shelters green turtles")

    path = reef_page(workspace, "The reef lies off the northern cape, and the reef shelters blue whales.")
    result = verify_page(workspace, path, ClauseVerifier(), verbatim=False)
    assert result.sentences[0].p_entailment == pytest.approx(0.1)
    assert result.sentences[0].weakest_clause == "the reef shelters blue whales"  # the reviewer sees which part fails
    assert load_verification(workspace, path).sentences[0].weakest_clause == "the reef shelters blue whales"


def with_split_claims(workspace, setting: str):
    config = workspace.config
    return dataclasses.replace(workspace, config=config.model_copy(update={"verification": config.verification.model_copy(update={"split_claims": setting})}))


def test_split_claims_setting_and_a_method_change_rescores(workspace):
    path = reef_page(workspace, "The reef lies off the northern cape, and the reef shelters green turtles.")
    verifier = ClauseVerifier()
    assert verify_page(workspace, path, verifier).method == "clauses"
    never_ws = with_split_claims(workspace, "never")
    never = verify_page(never_ws, path, verifier)
    assert not never.reused and never.method == "sentence" and never.sentences[0].p_entailment == pytest.approx(0.1)
    assert verify_page(never_ws, path, verifier).reused  # control: same method, nothing changed
    assert verify_page(with_split_claims(workspace, "always"), path, LexicalVerifier()).method == "clauses"


def test_threshold_reclassifies_without_rescoring(page):
    workspace, path = page
    page_file = workspace.root / path
    page_file.write_text(page_file.read_text(encoding="utf-8").replace("\n\n## Concepts", "\n\nWhales sing in the kelp at night.\n\n## Concepts"), encoding="utf-8")
    ingest_paths(workspace, [page_file])
    verifier = LexicalVerifier()
    result = verify_page(workspace, path, verifier)
    calls = verifier.pairs
    assert result.supported_share(0.5) < 1.0 and result.supported_share(0.05) == 1.0
    stored = load_verification(workspace, path)
    assert stored.supported_share(0.5) == result.supported_share(0.5) and verifier.pairs == calls


def test_a_page_edit_makes_its_verification_outdated_and_an_untouched_page_stays_valid(page):
    workspace, path = page
    verify_page(workspace, path, LexicalVerifier())
    verify_page(workspace, "wiki/summaries/other.md", LexicalVerifier())
    page_file = workspace.root / path
    page_file.write_text(page_file.read_text(encoding="utf-8") + "\nAn added sentence about divers.\n", encoding="utf-8")
    assert load_verification(workspace, path).outdated
    assert not load_verification(workspace, "wiki/summaries/other.md").outdated  # control
    ingest_paths(workspace, [page_file])  # writing (indexing) the page drops its stored verification
    assert load_verification(workspace, path) is None


def test_a_source_change_makes_its_pages_verifications_outdated(page):
    workspace, path = page
    verify_page(workspace, path, LexicalVerifier())
    verify_page(workspace, "wiki/summaries/other.md", LexicalVerifier())
    (workspace.sources_dir / "kelp.md").write_text(KELP.replace("every spring", "every autumn"), encoding="utf-8")
    ingest_paths(workspace, [workspace.sources_dir / "kelp.md"], generate=False)
    assert load_verification(workspace, path).outdated
    assert not load_verification(workspace, "wiki/summaries/other.md").outdated  # control


def test_pages_that_cannot_be_verified_say_why(page):
    workspace, _ = page
    bare = workspace.root / "wiki/concepts/bare.md"
    bare.write_text("---\ntitle: Bare\nsources:\n- path: sources/kelp.md\n---\n\n# Bare\n\n- [Kelp](../summaries/kelp.md)\n", encoding="utf-8")
    ingest_paths(workspace, [bare])
    with pytest.raises(VerificationError, match="no sentences"):
        verify_page(workspace, "wiki/concepts/bare.md", LexicalVerifier())
    with pytest.raises(VerificationError, match="not indexed|no such page"):
        verify_page(workspace, "wiki/concepts/missing.md", LexicalVerifier())
    foreign = workspace.root / "wiki/concepts/fremd.md"
    foreign.write_text("---\ntitle: Fremd\nsources:\n- path: sources/kelp.md\n---\n\n# Fremd\n\nDer Seetangwald beherbergt viele Fische.\n", encoding="utf-8")
    ingest_paths(workspace, [foreign])
    result = verify_page(workspace, "wiki/concepts/fremd.md", LexicalVerifier())
    assert len(result.sentences) == 1 and result.sentences[0].p_entailment == pytest.approx(0.1)


def test_the_default_verifier_without_trained_weights_is_word_overlap(monkeypatch):
    from llmwiki.verify import nli
    from llmwiki.verify.nli import OverlapVerifier, load_verifier

    monkeypatch.setattr(nli, "shipped_weights", lambda: None)  # an install without the weights folder
    verifier = load_verifier()
    assert isinstance(verifier, OverlapVerifier) and verifier.name == "lexical-overlap"
    scores = verifier.score(["The otter eats fish in rivers.", "The otter eats fish in rivers."], ["Otters eat fish.", "Whales sing songs."])
    assert scores[0, 0] > scores[1, 0] and scores[1, 0] == 0.0


def test_the_shipped_model_is_the_default_and_reads_entailment_negation_and_conflict():
    from llmwiki.verify.nli import describe, load_verifier, shipped_weights

    assert shipped_weights() is not None  # committed in llmwiki/verify/weights, checked by SHA256SUMS on load
    verifier = load_verifier(int8=True)
    assert verifier.name == "llmwiki-nli" and verifier.contradictions
    digest = (shipped_weights() / "SHA256SUMS").read_text(encoding="utf-8").split()[0]
    assert describe(verifier) == f"llmwiki-nli (weights sha256 {digest[:12]}, int8, onnxruntime)"  # what a reviewer is shown: which weights scored, how
    assert describe(load_verifier("lexical-overlap")) == "lexical-overlap"  # control: no weights, nothing added
    premise = "Alessandro Volta invented the electric battery in 1800. He was born in Como."
    scores = verifier.score([premise] * 4, ["Volta invented the battery.", "Volta did not invent the battery.", "Volta was born in Paris.", "Volta was born in Como."])
    entailment, negated, conflict, second = scores
    assert entailment[0] > 0.5 and second[0] > 0.5  # entailed, also from the second sentence
    assert negated[2] > 0.5 and conflict[2] > 0.5  # a negation and a wrong place read as contradictions
    assert negated[0] < 0.2 and conflict[0] < 0.2  # where word overlap would call both supported


def test_shipped_weights_are_assembled_from_the_package_base_and_checked(tmp_path):
    import torch

    from llmwiki.verify.nli import NLIVerifier, VerifierError
    from llmwiki.verify.train import SHIPPED_FILE, base_model, load_shipped, save_shipped

    model, _ = base_model()
    with torch.no_grad():
        model.classifier.bias.copy_(torch.tensor([3.0, 0.0, -3.0]))
    sums = save_shipped(model, tmp_path / "weights")
    assert (tmp_path / "weights" / SHIPPED_FILE).stat().st_size < 25 * 1024 * 1024  # the embedding matrix is not shipped
    loaded, tokenizer = load_shipped(tmp_path / "weights")
    assert torch.allclose(loaded.classifier.bias, torch.tensor([3.0, 0.0, -3.0]))
    assert torch.equal(loaded.bert.embeddings.word_embeddings.weight, model.bert.embeddings.word_embeddings.weight)
    verifier = NLIVerifier(loaded, tokenizer=tokenizer, name="llmwiki-default")
    assert verifier.score(["Otters eat fish."], ["Otters eat."]).shape == (1, 3)
    (tmp_path / "weights" / "SHA256SUMS").write_text(f"{'0' * 64}  {SHIPPED_FILE}\n", encoding="utf-8")
    with pytest.raises(VerifierError, match="checksum mismatch"):
        load_shipped(tmp_path / "weights")
    assert sums[SHIPPED_FILE] != "0" * 64


def test_int8_quantization_keeps_scores_close(tmp_path):
    import torch

    path = tiny_model(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    plain, quantized = NLIVerifier(path, device="cpu"), NLIVerifier(path, device="cpu", int8=True)
    assert isinstance(plain.model.classifier, torch.nn.Linear)
    assert not isinstance(quantized.model.classifier, torch.nn.Linear)  # the linear layers were swapped for int8 ones
    premises, hypotheses = ["the otter eats fish .", "kelp ."], ["a sea otter eats kelp .", "the otter ."]
    assert np.allclose(plain.score(premises, hypotheses), quantized.score(premises, hypotheses), atol=0.05)


def test_composed_training_pairs_carry_the_right_labels():
    from llmwiki.verify.train import compose

    pairs = [
        {"p": "Otters eat fish.", "h": "Otters eat.", "y": 0, "src": "a"},
        {"p": "Kelp is green.", "h": "Kelp is red.", "y": 2, "src": "a"},
        {"p": "Seals swim.", "h": "Seals swim fast.", "y": 1, "src": "a"},
        {"p": "Crabs walk.", "h": "Crabs fly.", "y": 3, "src": "a"},
        {"p": "Gulls nest on cliffs.", "h": "Gulls nest.", "y": 0, "src": "a"},
    ]
    made = compose(pairs, count=400, seed=3)
    by_hypothesis = {pair["h"]: pair for pair in pairs}
    for pair in made:
        sources = [original for original in pairs if original["p"] in pair["p"]]
        assert len(sources) == 2  # two premises, one of them unrelated
        if pair["h"] in by_hypothesis:  # a distractor was added: the label stands
            assert pair["y"] == by_hypothesis[pair["h"]]["y"]
        else:
            first, second = (original for original in pairs if pair["h"].startswith(original["h"].rstrip(".")) or pair["h"].endswith(original["h"][1:]))
            labels = {first["y"], second["y"]}
            expected = 2 if 2 in labels else 0 if labels == {0} else 3 if 3 in labels else 1
            assert pair["y"] == expected, pair
    joined = [pair for pair in made if ", and " in pair["h"]]
    assert joined and any(pair["y"] == 0 for pair in joined) and any(pair["y"] == 2 for pair in joined)  # both kinds occur


def test_clauses_share_the_sentence_premise_budget():
    from llmwiki.verify.page import premise_pairs

    text = " ".join(f"Fact number {n} is about the reef and turtles." for n in range(12))
    chunks = [(1, "sources/reef.md", 1, text)]
    whole = premise_pairs(["The reef shelters turtles and fish."], chunks, premises_per_sentence=8)
    two = premise_pairs(["The reef shelters turtles", "fish swim near the reef"], chunks, premises_per_sentence=8)
    five = premise_pairs([f"clause {n} about the reef" for n in range(5)], chunks, premises_per_sentence=8)
    assert len(whole) == 8 and {index for index, _, _ in whole} == {0}
    assert len(two) == 8 and [index for index, _, _ in two].count(1) == 4  # shared, not multiplied
    assert len(five) == 10 and all([index for index, _, _ in five].count(n) == 2 for n in range(5))  # at least 2 windows a clause


def concept_page(workspace, name: str, sources: list[str], body: str) -> str:
    frontmatter = "".join(f"- path: {source}\n" for source in sources)
    page_file = workspace.root / f"wiki/concepts/{name}.md"
    page_file.write_text(f"---\ntitle: {name}\nsources:\n{frontmatter}---\n\n# {name}\n\n{body}\n", encoding="utf-8")
    ingest_paths(workspace, [page_file])
    return f"wiki/concepts/{name}.md"


def test_a_missing_source_is_named_and_its_return_makes_the_verification_outdated(page):
    workspace, _ = page
    partly = concept_page(workspace, "partly", ["sources/kelp.md", "sources/gone.md"], "Divers study the forest of kelp each spring.")
    result = verify_page(workspace, partly, LexicalVerifier())
    assert result.missing_sources == ["sources/gone.md"] and result.sentences[0].excerpt_path == "sources/kelp.md"
    stored = load_verification(workspace, partly)
    assert stored.missing_sources == ["sources/gone.md"] and not stored.outdated
    (workspace.sources_dir / "gone.md").write_text("# Gone\n\nThe kelp forest is back.\n", encoding="utf-8")
    ingest_paths(workspace, [workspace.sources_dir / "gone.md"], generate=False)
    assert load_verification(workspace, partly).outdated  # the missing source returned: score again
    with pytest.raises(VerificationError, match=r"sources/never\.md.*not in the store|not in the store.*sources/never\.md"):
        verify_page(workspace, concept_page(workspace, "orphan", ["sources/never.md"], "Divers study the forest of kelp."), LexicalVerifier())
    unnamed = concept_page(workspace, "unnamed", [], "Divers study the forest of kelp each spring.")  # control: names none, checked against all
    assert verify_page(workspace, unnamed, LexicalVerifier()).missing_sources == []


def test_a_hundred_sentence_page_is_scored_in_two_batches_with_pruned_premises(page):
    workspace, _ = page

    class Counting(LexicalVerifier):
        calls = 0

        def score(self, premises, hypotheses):
            self.calls += 1
            return super().score(premises, hypotheses)

    body = " ".join(f"Diver {n} counted {n * 3} fish near the kelp." for n in range(100))
    path = concept_page(workspace, "census", ["sources/kelp.md"], body)
    verifier = Counting()
    result = verify_page(workspace, path, verifier, premises_per_sentence=4)
    # one batch of each clause's best window, one of the other windows of the clauses it did not settle
    assert len(result.sentences) == 100 and verifier.calls == 2 and 100 < result.pairs_scored <= 400
    from llmwiki.pages import read_page

    page_body = read_page(workspace.root, path).body
    assert [page_body[s.start:s.end] for s in result.sentences[:2]] == ["Diver 0 counted 0 fish near the kelp.", "Diver 1 counted 3 fish near the kelp."]
    assert all(s.p_entailment == pytest.approx(0.1) for s in result.sentences)


def test_a_clause_its_best_window_entails_is_not_scored_against_the_others(page):
    workspace, _ = page

    class Sure(LexicalVerifier):
        def __init__(self, entailment):
            self.entailment, self.asked = entailment, []

        def score(self, premises, hypotheses):
            self.asked.append(len(premises))
            return np.tile([self.entailment, 1 - self.entailment, 0.0], (len(premises), 1))

    body = " ".join(f"Diver {n} counted {n * 3} fish near the kelp forest at dawn." for n in range(6))
    path = concept_page(workspace, "settled", ["sources/kelp.md"], body)
    sure = Sure(0.95)
    settled = verify_page(workspace, path, sure, premises_per_sentence=4, verbatim=False)
    assert sure.asked == [6] and settled.pairs_scored == 6  # one pair per sentence: each settled by its best window
    unsure = Sure(0.5)  # control: below the settling bar, every window is scored
    verify_page(workspace, path, unsure, premises_per_sentence=4, verbatim=False, force=True)
    assert unsure.asked[0] == 6 and len(unsure.asked) == 2 and unsure.asked[1] > 0
    off = Sure(0.95)  # and with settling off, every window even when the best one entails
    verify_page(workspace, path, off, premises_per_sentence=4, verbatim=False, force=True, settled_entailment=None)
    assert off.asked == unsure.asked


@pytest.mark.slow
def test_cli_verify_continues_past_a_failing_page_and_reports_it(page):
    import subprocess
    import sys

    workspace, _ = page
    concept_page(workspace, "orphan", ["sources/never.md"], "Divers study the forest of kelp.")
    config = workspace.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('model = "llmwiki-default"', 'model = "lexical-overlap"'), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "llmwiki", "verify", "--all", "-w", str(workspace.root)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "wiki/summaries/kelp.md" in run.stdout and "wiki/summaries/other.md" in run.stdout  # the others were verified
    assert "failed" in run.stderr and "wiki/concepts/orphan.md" in run.stderr and "not in the store" in run.stderr
    assert load_verification(workspace, "wiki/summaries/kelp.md") is not None
    again = subprocess.run([sys.executable, "-m", "llmwiki", "verify", "--changed", "-w", str(workspace.root)], capture_output=True, text=True, timeout=300)
    assert "wiki/summaries/kelp.md" not in again.stdout and "wiki/concepts/orphan.md" in again.stderr  # only what has no valid verification


def test_llmwiki_nli_loads_the_shipped_weights_or_says_how_to_train_them(tmp_path, monkeypatch):
    from llmwiki.verify import nli, train
    from llmwiki.verify.nli import OverlapVerifier, load_verifier, not_nli_note

    model, _ = train.base_model()
    train.save_shipped(model, tmp_path / "weights")
    monkeypatch.setattr(nli, "shipped_weights", lambda: tmp_path / "weights")
    ours = load_verifier("llmwiki-nli")
    assert isinstance(ours, NLIVerifier) and ours.name == "llmwiki-nli" and ours.prefers_clauses
    assert not_nli_note(ours) is None and 'model = "llmwiki-nli"' in not_nli_note(OverlapVerifier())

    monkeypatch.setattr(nli, "shipped_weights", lambda: None)
    monkeypatch.setattr(train, "WEIGHTS_DIR", tmp_path / "nothing")
    with pytest.raises(VerifierError, match=r"not installed.*python -m llmwiki\.verify\.train"):
        load_verifier("llmwiki-nli")
    assert "python -m llmwiki.verify.train" in not_nli_note(OverlapVerifier())
    assert isinstance(load_verifier("llmwiki-default"), OverlapVerifier)  # without weights the default falls back to word overlap


FACTS = ("# Becquerel\n\nHenri Becquerel was born in Paris in 1852. He discovered radioactivity in 1896 while studying uranium salts. "
         "The five eastern provinces of the country speak Swahili.\n")


def facts_page(workspace, body: str) -> str:
    return page_on_source(workspace, "becquerel.md", FACTS, "Becquerel notes", body)


def test_a_changed_fact_is_unsupported_whatever_the_model_says_and_the_reason_is_stored(workspace):
    class Gullible:  # an NLI model that entails everything: the fact checks must still catch the change
        name = "gullible-test"

        def score(self, premises, hypotheses):
            return np.array([[0.99, 0.005, 0.005]] * len(premises))

    path = facts_page(workspace, "Becquerel was born in Lyon in 1852. Becquerel discovered radioactivity in 1901. "
                                 "The five western provinces of the country speak Swahili. Becquerel found radioactivity in 1896 while studying uranium salts.")
    result = verify_page(workspace, path, Gullible(), verbatim=False)
    by_text = {sentence.sentence: sentence for sentence in result.sentences}
    assert not by_text["Becquerel was born in Lyon in 1852."].supported(0.5)
    assert "Lyon" in by_text["Becquerel was born in Lyon in 1852."].reason and by_text["Becquerel was born in Lyon in 1852."].flagged == ("Lyon",)
    assert "1901" in by_text["Becquerel discovered radioactivity in 1901."].reason
    assert "western (excerpt: eastern)" in by_text["The five western provinces of the country speak Swahili."].reason
    control = by_text["Becquerel found radioactivity in 1896 while studying uranium salts."]
    assert control.supported(0.5) and control.reason is None  # the true rewording passes
    assert all(sentence.p_entailment == pytest.approx(0.99) for sentence in result.sentences)  # the raw probability is kept beside the score
    stored = load_verification(workspace, path)
    assert [s.reason for s in stored.sentences] == [s.reason for s in result.sentences] and stored.sentences[0].flagged == ("Lyon",)


def test_verify_json_prints_every_sentence_with_verdict_score_reason_and_excerpt(workspace):
    import json

    from click.testing import CliRunner

    from llmwiki.cli import cli

    path = facts_page(workspace, "Becquerel was born in Lyon in 1852. Becquerel found radioactivity in 1896 while studying uranium salts.")
    result = CliRunner().invoke(cli, ["verify", path, "--json", "-w", str(workspace.root)])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout.strip().splitlines()[-1])
    assert record["page"] == path and record["model"] == "llmwiki-nli" and record["threshold"] == 0.5
    false, true = record["sentences"]
    assert false["text"] == "Becquerel was born in Lyon in 1852." and false["supported"] is False and "Lyon" in false["reason"]
    assert true["supported"] is True and true["reason"] is None  # control
    for sentence in record["sentences"]:
        assert 0 <= sentence["score"] <= 1 and 0 <= sentence["p_entailment"] <= 1
        assert sentence["excerpt"]["path"] == "sources/becquerel.md" and sentence["excerpt"]["chunk_id"] and len(sentence["excerpt"]["text"]) <= 300


def test_a_sentence_opens_its_source_at_the_chunk_of_its_best_excerpt_with_the_excerpt_marked(workspace):
    from llmwiki.verify import flagged_spans, mark, source_at_chunk

    class Gullible:
        name = "gullible-test"

        def score(self, premises, hypotheses):
            return np.array([[0.99, 0.005, 0.005]] * len(premises))

    path = facts_page(workspace, "Becquerel was born in Lyon in 1852.")
    sentence = verify_page(workspace, path, Gullible(), verbatim=False).sentences[0]
    source = source_at_chunk(workspace, sentence)
    assert source is not None and source.path == "sources/becquerel.md" and source.chunk_id == sentence.excerpt_chunk_id
    start, end = source.excerpt
    assert " ".join(source.text[start:end].split()) == sentence.excerpt  # the marked span is the stored excerpt
    assert f"<mark>{source.text[start:end]}</mark>" in source.marked()
    assert mark(sentence.sentence, flagged_spans(sentence.sentence, sentence.flagged)) == "Becquerel was born in <mark>Lyon</mark> in 1852."
    (workspace.sources_dir / "becquerel.md").write_text("# Becquerel\n\nAn entirely new text about something else.\n", encoding="utf-8")
    ingest_paths(workspace)
    assert source_at_chunk(workspace, sentence) is None  # its chunk is gone: the reviewer is told to verify again


def test_excerpt_spans_survive_reflowed_whitespace_and_the_cut_at_the_excerpt_limit():
    from llmwiki.verify import flagged_spans
    from llmwiki.verify.page import EXCERPT_CHARS, excerpt_span

    text = "Intro.\nThe quick  brown\nfox jumps. " + "word " * 100
    assert excerpt_span(text, "The quick brown fox jumps.") == (7, text.index(" word"))
    cut = " ".join(text.split())[:EXCERPT_CHARS]  # as stored: normalised, cut inside a word
    assert excerpt_span(text, cut)[0] == 0
    assert excerpt_span(text, "The quick red fox") is None  # control: words that are not there
    assert flagged_spans("In 1955 and 19 more.", ["19"]) == [(12, 14)]  # whole words only, not inside 1955


def test_citations_of_chunks_that_do_not_exist_are_reported_and_never_read_as_numbers(wiki):
    from llmwiki.maintain import page_version, save_page
    from llmwiki.verify import verify_page

    page = "wiki/summaries/kelp.md"
    body = "# Kelp\n\nThe Kelp Forest shelters many fish. [c1] Divers study the Kelp Forest every spring. [c999999] [c0] [c-1]\n"
    save_page(wiki, page, body, expected_version=page_version(wiki, page))
    result = verify_page(wiki, page, services_for(wiki).verifier)
    assert result.unknown_citations == ("[c999999]", "[c0]", "[c-1]")  # [c1] is a stored chunk: the control
    assert all("1" not in (sentence.reason or "") for sentence in result.sentences)  # "[c-1]" is a mark, not the number 1
    assert all("[c" not in sentence.sentence for sentence in result.sentences)
    assert result.as_json(0.5)["unknown_citations"] == ["[c999999]", "[c0]", "[c-1]"]


@pytest.mark.slow
def test_cli_verify_in_two_processes_stores_what_one_process_would(page):
    import json
    import subprocess
    import sys

    workspace, _ = page
    concept_page(workspace, "orphan", ["sources/never.md"], "Divers study the forest of kelp.")  # a page that fails, in a worker too

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "llmwiki", "verify", "--all", "--json", "--force", *extra, "-w", str(workspace.root)],
                              capture_output=True, text=True, timeout=600)

    single = run()
    stored = {name: [s.p_entailment for s in load_verification(workspace, name).sentences] for name in ("wiki/summaries/kelp.md", "wiki/summaries/other.md")}
    parallel = run("--jobs", "2")
    assert single.returncode == parallel.returncode == 2, parallel.stderr  # the failing page, reported the same way
    lines = [json.loads(line) for line in parallel.stdout.splitlines() if line.startswith("{")]
    assert {line["page"] for line in lines} == {line["page"] for line in map(json.loads, filter(lambda text: text.startswith("{"), single.stdout.splitlines()))}
    assert any(line["page"] == "wiki/concepts/orphan.md" and "error" in line for line in lines)
    for name, scores in stored.items():  # each page scored again in a worker, the same numbers stored
        assert [s.p_entailment for s in load_verification(workspace, name).sentences] == pytest.approx(scores, abs=1e-3)


def test_contrast_pairs_negate_an_entailed_hypothesis_and_call_it_a_contradiction():
    from llmwiki.verify.train import contrast, negated

    assert negated("A man is playing a guitar.") == "A man is not playing a guitar."
    assert negated("Otters can swim.") == "Otters can not swim."
    assert negated("Otters are not fish.") is None and negated("Otters eat fish.") is None  # negated already; no "be" or modal
    pairs = [
        {"p": "A man plays a red guitar on stage.", "h": "A man is playing a guitar.", "y": 0, "src": "a"},
        {"p": "Kelp is green.", "h": "Kelp is red.", "y": 2, "src": "a"},  # control: only entailed pairs are turned
        {"p": "Otters eat fish.", "h": "Otters eat.", "y": 0, "src": "a"},  # control: no verb a "not" follows
    ]
    made = contrast(pairs, count=6, seed=1)
    assert len(made) == 6 and {pair["y"] for pair in made} == {2}
    assert {(pair["p"], pair["h"]) for pair in made} == {
        ("A man plays a red guitar on stage.", "A man is not playing a guitar."),  # P contradicts "not H"
        ("A man is not playing a guitar.", "A man plays a red guitar on stage."),  # and "not H" contradicts P
    }


def test_flipped_pairs_negate_a_contradicted_hypothesis_and_call_it_entailed():
    from llmwiki.verify.train import flipped

    pairs = [
        {"p": "Kelp is green.", "h": "Kelp is red.", "y": 2, "src": "a"},
        {"p": "A man plays a red guitar on stage.", "h": "A man is playing a guitar.", "y": 0, "src": "a"},  # control: only contradictions are turned
        {"p": "Otters eat fish.", "h": "Otters eat stones.", "y": 2, "src": "a"},  # control: no verb a "not" follows
    ]
    made = flipped(pairs, count=4, seed=1)
    assert len(made) == 4 and {(pair["p"], pair["h"], pair["y"]) for pair in made} == {("Kelp is green.", "Kelp is not red.", 0)}
    assert flipped(pairs[1:], count=4, seed=1) == []  # nothing to turn


def _tiny_pool(path):
    import gzip

    rows = [{"p": f"Otter {index} eats fish in the bay.", "h": f"Otter {index} is eating.", "y": index % 3, "src": "snli_dev"} for index in range(60)]
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return path


@pytest.mark.slow
def test_a_training_run_cut_off_goes_on_from_its_checkpoint_to_the_same_weights(tmp_path):
    import torch
    from safetensors.torch import load_file

    from llmwiki.verify.train import SHIPPED_FILE, main

    pool = _tiny_pool(tmp_path / "pool.jsonl.gz")
    common = ["--data", str(pool), "--max-pairs", "32", "--batch-size", "8", "--max-length", "32", "--log-every", "0"]
    main([*common, "--out", str(tmp_path / "whole")])  # the reference: four batches in one go
    cut = [*common, "--checkpoint", str(tmp_path / "checkpoints"), "--checkpoint-every", "100"]
    main([*cut, "--out", str(tmp_path / "first"), "--max-seconds", "1e-9"])  # stops after its first batch
    first = json.loads((tmp_path / "first" / "training.json").read_text())
    assert first["stopped_early"] and first["pairs_trained"] == 8 and list((tmp_path / "checkpoints").glob("run-*.pt"))
    main([*cut, "--out", str(tmp_path / "resumed")])  # the same command again
    resumed = json.loads((tmp_path / "resumed" / "training.json").read_text())
    assert resumed["resumed_at_batch"] == 1 and not resumed["stopped_early"] and resumed["pairs_trained"] == 32
    assert not list((tmp_path / "checkpoints").glob("run-*.pt"))  # done: started again, it would train anew
    whole, again = load_file(str(tmp_path / "whole" / SHIPPED_FILE)), load_file(str(tmp_path / "resumed" / SHIPPED_FILE))
    assert all(torch.equal(whole[name], again[name]) for name in whole)
    main([*cut, "--out", str(tmp_path / "cut-again"), "--max-seconds", "1e-9"])
    main([*cut, "--lr", "1e-4", "--out", str(tmp_path / "other")])  # control: another run's settings
    assert json.loads((tmp_path / "other" / "training.json").read_text())["resumed_at_batch"] == 0


def test_checkpoints_are_refused_inside_the_repository():
    from llmwiki.verify.train import Checkpoint

    with pytest.raises(SystemExit, match="outside"):
        Checkpoint(Path(__file__).resolve().parent / "checkpoints", "key")
    assert Checkpoint(Path("/tmp/llmwiki-checkpoints"), "key").path.name == "run-key.pt"  # control: outside is fine
