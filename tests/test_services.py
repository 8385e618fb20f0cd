"""The models and services of a process, built at the edge (llmwiki.services): made on first use, once per object,
handed in by a caller where given; nothing shared between objects, so no test clears a cache."""

from __future__ import annotations

import dataclasses

import pytest

from llmwiki.backends import ExtractiveBackend
from llmwiki.services import PARTS, Services


class Counting:
    """A fake loader: how many times each model was built."""

    def __init__(self) -> None:
        self.loads = 0

    def __call__(self, *args, **kwargs):
        self.loads += 1
        return type("Loaded", (), {"name": f"loaded {self.loads}", "score": lambda self, premises, hypotheses: None})()


def with_verification(workspace, **changes):
    config = workspace.config
    return dataclasses.replace(workspace, config=config.model_copy(update={"verification": config.verification.model_copy(update=changes)}))


def test_a_model_is_built_on_first_use_once_per_object_and_again_for_another(workspace, monkeypatch):
    import llmwiki.verify.nli as nli

    loader = Counting()
    monkeypatch.setattr(nli, "load_verifier", loader)
    services = Services(workspace)
    assert not services.loaded("verifier") and loader.loads == 0  # nothing is loaded before a step asks for it
    first = services.verifier
    assert services.verifier is first and services.load_verifier() is first and loader.loads == 1  # a notebook's next click reuses it
    assert services.loaded("verifier")
    assert Services(workspace).verifier is not first and loader.loads == 2  # control: no process-wide cache between objects


def test_a_part_handed_in_is_used_and_none_means_none(workspace, monkeypatch):
    import llmwiki.read.ranker as ranker

    loader = Counting()
    monkeypatch.setattr(ranker, "load_ranker", loader)
    backend = ExtractiveBackend()
    given = Services(workspace, backend=backend, ranker=None, similarity=None)
    assert given.backend is backend and given.ranker is None and given.similarity is None and loader.loads == 0
    assert Services(workspace).ranker is not None and loader.loads == 1  # control: not handed in, built from the settings


def test_the_settings_decide_what_is_built(workspace):
    from llmwiki.tracing import NULL_TRACER, Tracer
    from llmwiki.verify.cache import CachedVerifier
    from llmwiki.verify.nli import OverlapVerifier

    overlap = Services(with_verification(workspace, model="lexical-overlap"))
    assert isinstance(overlap.verifier, OverlapVerifier) and overlap.verifier is overlap.nli  # word overlap keeps no scores
    assert Services(workspace).embedder is None  # hybrid retrieval is off by default: BM25 alone
    assert isinstance(Services(workspace).tracer, Tracer)
    quiet = dataclasses.replace(workspace, config=workspace.config.model_copy(update={"tracing": workspace.config.tracing.model_copy(update={"enabled": False})}))
    assert Services(quiet).tracer is NULL_TRACER
    fake = type("NLI", (), {"name": "fake-nli", "model": None, "tokenizer": None, "score": lambda self, premises, hypotheses: None})()  # an NLI model's shape
    assert isinstance(Services(workspace, nli=fake).verifier, CachedVerifier)  # control: an NLI model's scores are kept
    assert not isinstance(Services(with_verification(workspace, cache_scores=False), nli=fake).verifier, CachedVerifier)


def test_one_embedder_serves_similarity_and_search_when_their_settings_agree(workspace):
    retrieval = workspace.config.retrieval.model_copy(update={"hybrid": True, "embedding_int8": workspace.config.verification.int8})
    hybrid = Services(dataclasses.replace(workspace, config=workspace.config.model_copy(update={"retrieval": retrieval})))
    assert hybrid.embedder is hybrid.similarity  # one MiniLM in memory, not two
    other = retrieval.model_copy(update={"embedding_int8": not workspace.config.verification.int8})
    apart = Services(dataclasses.replace(workspace, config=workspace.config.model_copy(update={"retrieval": other})))
    assert apart.embedder is not apart.similarity  # control: another precision, another model


def test_the_datasets_are_read_from_the_workspaces_folder_once_per_object(wiki):
    services = Services(wiki)
    assert services.datasets is services.datasets
    assert services.datasets.categories() == ["harbours"]


def test_an_unknown_part_is_an_error_that_names_the_parts(workspace):
    assert set(PARTS) >= {"backend", "verifier", "ranker", "similarity", "embedder", "tracer", "datasets"}
    with pytest.raises(ValueError, match="the parts: backend"):
        Services(workspace).loaded("reranker")
    with pytest.raises(TypeError):
        Services(workspace, reranker=None)


def test_the_workspace_builds_no_model():
    """Workspace holds paths, settings and the store; the models come from the edge."""
    from llmwiki.workspace import Workspace

    for name in ("verifier", "backend", "tracer", "datasets", "answer_ranker", "answer_similarity"):
        assert not hasattr(Workspace, name), name
    assert hasattr(Workspace, "store") and hasattr(Workspace, "relative")  # control: what it does hold
