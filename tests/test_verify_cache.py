"""NLI scores kept across runs (llmwiki.verify.cache): only pairs not seen before reach the model."""

from __future__ import annotations

import hashlib

import numpy as np

from conftest import services_for

from llmwiki.verify.cache import CACHE_FILE, CachedVerifier, cached


class Counting:
    """An NLI-shaped verifier (it has a model and a tokenizer) whose scores follow from the pair's text."""

    def __init__(self, name: str = "counting-nli") -> None:
        self.name, self.model, self.tokenizer, self.version, self.max_length = name, object(), object(), "v1", 256
        self.scored: list[tuple[str, str]] = []

    def score(self, premises, hypotheses):
        self.scored += list(zip(premises, hypotheses))
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            value = hashlib.sha256(f"{premise}|{hypothesis}".encode()).digest()[0] / 255
            rows.append([value, (1 - value) / 2, (1 - value) / 2])
        return np.array(rows).reshape(-1, 3)


PREMISES = ["Kelp grows fast.", "Otters eat urchins.", "Divers count fish."]
HYPOTHESES = ["Kelp is fast.", "Otters eat.", "Fish are counted."]


def test_a_pair_seen_before_is_read_from_the_cache_not_scored_again(tmp_path):
    inner = Counting()
    verifier = cached(inner, tmp_path)
    first = verifier.score(PREMISES, HYPOTHESES)
    assert len(inner.scored) == 3 and (tmp_path / CACHE_FILE).is_file()
    again = cached(inner, tmp_path).score(PREMISES, HYPOTHESES)  # another process would open the same file
    assert len(inner.scored) == 3 and np.array_equal(first, again)  # nothing scored, the same numbers
    changed = verifier.score(PREMISES[:2] + ["Divers count crabs."], HYPOTHESES)
    assert inner.scored[3:] == [("Divers count crabs.", "Fish are counted.")]  # only the changed pair
    assert np.array_equal(changed[:2], first[:2]) and verifier.name == "counting-nli"  # the rest is the verifier's


def test_another_model_never_reads_the_scores_of_the_first(tmp_path):
    cached(Counting(), tmp_path).score(PREMISES, HYPOTHESES)
    other = Counting(name="another-nli")
    cached(other, tmp_path).score(PREMISES, HYPOTHESES)
    assert len(other.scored) == 3  # its own scores, though the pairs are the same


def test_a_local_model_folder_trained_again_does_not_read_its_old_scores(tmp_path):
    folder = tmp_path / "my-nli"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"first weights")
    first = Counting(name=str(folder))
    cached(first, tmp_path).score(PREMISES, HYPOTHESES)
    again = Counting(name=str(folder))
    cached(again, tmp_path).score(PREMISES, HYPOTHESES)
    assert again.scored == []  # control: the same weights read their scores back
    (folder / "model.safetensors").write_bytes(b"the weights of a second training run")
    retrained = Counting(name=str(folder))
    cached(retrained, tmp_path).score(PREMISES, HYPOTHESES)
    assert len(retrained.scored) == 3


def test_a_pair_asked_twice_in_one_call_is_scored_once(tmp_path):
    inner = Counting()
    result = cached(inner, tmp_path).score(["A cat sat.", "A cat sat."], ["A cat is sitting.", "A cat is sitting."])
    assert len(inner.scored) == 1 and np.array_equal(result[0], result[1])


def test_a_damaged_cache_file_is_set_aside_and_the_model_scores_everything(tmp_path):
    (tmp_path / CACHE_FILE).write_bytes(b"not a database" * 100)
    inner = Counting()
    verifier = cached(inner, tmp_path)
    result = verifier.score(PREMISES, HYPOTHESES)
    assert len(inner.scored) == 3 and np.array_equal(result, Counting().score(PREMISES, HYPOTHESES))
    verifier.score(PREMISES, HYPOTHESES)
    assert len(inner.scored) == 6  # scored again: no cache this time, and no error either


def test_cheap_verifiers_are_not_cached(tmp_path):
    from llmwiki.verify.nli import OverlapVerifier

    assert isinstance(cached(OverlapVerifier(), tmp_path), OverlapVerifier) and not (tmp_path / CACHE_FILE).exists()
    assert isinstance(cached(Counting(), tmp_path), CachedVerifier)  # control: an NLI model is


def test_a_page_verified_again_scores_nothing_and_an_edited_sentence_alone(wiki):
    from llmwiki.verify import verify_page

    page = "wiki/summaries/volta.md"
    services = services_for(wiki)
    verifier = services.verifier  # the shipped NLI model, its scores kept in the workspace
    assert isinstance(verifier, CachedVerifier)
    first = verify_page(wiki, page, verifier, force=True, verbatim=False)
    scored = verifier.misses
    assert scored > 0 and verifier.hits == 0
    second = cached(verifier.verifier, wiki.state_dir)  # as the next `llmwiki verify` process opens the file
    again = verify_page(wiki, page, second, force=True, verbatim=False)
    assert second.misses == 0 and second.hits == scored  # every pair read back
    assert services.verifier is verifier  # one per Services object, like the model it wraps
    assert [s.p_entailment for s in again.sentences] == [s.p_entailment for s in first.sentences]
    plain = wiki.config.model_copy(update={"verification": wiki.config.verification.model_copy(update={"cache_scores": False})})
    assert not isinstance(services_for(type(wiki)(root=wiki.root, config=plain)).verifier, CachedVerifier)  # the setting turns it off
