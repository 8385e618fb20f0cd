from __future__ import annotations

import json
import subprocess

import pytest

from llmwiki.publish.answers import save_answer
from llmwiki.read.answer import answer_question
from llmwiki.read.chat import agentic_answer
from llmwiki.read.conversation import Conversation, condense
from llmwiki.backends import ExtractiveBackend, OpenAIBackend
from llmwiki.pages import split_frontmatter
from conftest import services_for
from openai_stub import Reply, StubServer


def _yes_no(statement, sentences, verifier, *, names, subject=()):
    """The statement readings (``registry.STATEMENT``) on these sentences, as the extractive answer reads them."""
    from llmwiki.policy import ANSWER_POLICY
    from llmwiki.read.readings import decide
    from llmwiki.read.readings.case import StatementCase
    from llmwiki.read.readings.registry import STATEMENT

    return decide(STATEMENT, StatementCase(statement, sentences, verifier, names=names, subject=subject, policy=ANSWER_POLICY))


def stub_backend(server):
    return OpenAIBackend(base_url=server.base_url, model="stub-model", api_key="test-key", timeout_s=5, max_retries=0)


def test_extractive_answer_cites_the_source_chunks_it_was_given(wiki):
    answer = answer_question(wiki, "What did Volta stack into a pile?", services=services_for(wiki, backend=ExtractiveBackend()))
    assert "zinc and copper" in answer.text
    assert answer.citations and not answer.unknown_citations
    texts = wiki.store.chunk_texts([citation.chunk_id for citation in answer.citations])
    for citation in answer.citations:
        assert citation.chunk_id in answer.context_chunk_ids
        assert citation.label.startswith(citation.path) and citation.path.startswith("sources/")  # citations lead to sources, not pages
        assert "Volta" in texts[citation.chunk_id] and citation.text == texts[citation.chunk_id]


def test_nothing_selected_means_no_model_call(wiki):
    with StubServer([Reply(content="should not be asked")]) as server:
        answer = answer_question(wiki, "what did I say?", services=services_for(wiki, backend=stub_backend(server)))
        assert server.requests == []
    assert answer.refused and "no searchable terms" in answer.text


def test_model_answer_keeps_known_citations_and_drops_invented_ones(wiki):
    with StubServer([Reply(content="Volta made a pile [c999999]. It was zinc and copper [cCHUNK].")]) as server:
        backend = stub_backend(server)
        first = answer_question(wiki, "What did Volta stack?", services=services_for(wiki, backend=ExtractiveBackend()))
        chunk = first.context_chunk_ids[0]
        server.replies = [Reply(content=f"Volta made a pile [c999999]. It was zinc and copper [c{chunk}].")]
        tokens = []
        answer = answer_question(wiki, "What did Volta stack?", services=services_for(wiki, backend=backend), on_token=tokens.append)
    assert [citation.chunk_id for citation in answer.citations] == [chunk]
    assert answer.unknown_citations == (999999,) and "[c999999]" not in answer.text
    assert "".join(tokens).strip().startswith("Volta made a pile")
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert f"[c{chunk}]" in prompt and "What did Volta stack?" in prompt


def test_follow_ups_are_condensed_and_history_is_reduced(wiki):
    conversation = Conversation()
    first = answer_question(wiki, "Where do divers study the kelp forest?", services=services_for(wiki, backend=ExtractiveBackend()), conversation=conversation)
    conversation.add("Where do divers study the kelp forest?", first)
    refused = answer_question(wiki, "what did I say?", services=services_for(wiki, backend=ExtractiveBackend()), conversation=conversation)
    conversation.add("what did I say?", refused)
    standalone = condense("and in spring?", conversation, backend=ExtractiveBackend(), stopwords=frozenset({"where", "the"}))
    assert standalone.startswith("and in spring?") and "kelp" in standalone and "divers" in standalone
    assert condense("Who built the pile?", conversation, backend=ExtractiveBackend()) == "Who built the pile?"  # not a follow-up
    conversation.turns.append(type(conversation.turns[0])("assistant", "| a | b |\n" * 10))
    reduced = conversation.reduced(keep=6)
    assert all("what did I say?" not in message["content"] for message in reduced)  # refused exchange dropped
    assert "[a table from an earlier answer, left out]" in reduced[-1]["content"]
    assert len(conversation.reduced(keep=2)) == 2
    assert len(conversation.turns) == 5  # the full conversation stays for the UI


def test_agentic_chat_uses_tools_and_refuses_path_traversal(wiki):
    replies = [
        Reply(content=None, tool_calls=[{"name": "search_wiki", "arguments": {"query": "voltaic pile"}}]),
        Reply(content=None, tool_calls=[{"name": "read_page", "arguments": {"path": "../../etc/passwd"}}]),
        Reply(content="Volta stacked zinc and copper discs [cCHUNK]."),
    ]
    with StubServer(replies) as server:
        backend = stub_backend(server)
        # the chunk id the search will return
        from llmwiki.read.search import search

        chunk = search(wiki, "voltaic pile", scope="wiki").hits[0].chunk_id
        server.replies[2] = Reply(content=f"Volta stacked zinc and copper discs [c{chunk}].")
        answer = agentic_answer(wiki, "What is a voltaic pile?", services=services_for(wiki, backend=backend), strict=True)
        tool_messages = [message for request in server.requests for message in request["body"]["messages"] if message["role"] == "tool"]
    assert not answer.refused and answer.citations[0].chunk_id == chunk
    assert any(message["content"].startswith("Refused:") and "etc/passwd" in message["content"] for message in tool_messages)
    assert "root:" not in json.dumps(tool_messages)
    assert [step.split("(")[0] for step in answer.tool_steps] == ["search_wiki", "read_page"]


def test_strict_agentic_chat_refuses_without_a_substantive_tool_result(wiki):
    replies = [Reply(content=None, tool_calls=[{"name": "search_sources", "arguments": {"query": "quasar nebula"}}]), Reply(content="Quasars are bright [c1].")]
    with StubServer(replies) as server:
        answer = agentic_answer(wiki, "What is a quasar?", services=services_for(wiki, backend=stub_backend(server)), strict=True)
    assert answer.refused and "strict mode" in answer.text


def test_the_step_limit_stops_a_tool_loop(wiki):
    loop = Reply(content=None, tool_calls=[{"name": "search_wiki", "arguments": {"query": "kelp"}}])
    with StubServer([loop, loop, loop, Reply(content="Kelp shelters fish.")]) as server:
        config = wiki.config.model_copy(update={"chat": wiki.config.chat.model_copy(update={"max_tool_steps": 2})})
        limited = type(wiki)(root=wiki.root, config=config)
        answer = agentic_answer(limited, "kelp?", services=services_for(limited, backend=stub_backend(server)), strict=False)
        assert len(server.requests) == 3  # two tool rounds, then a final call without tools
        assert "tools" not in server.requests[-1]["body"]
    assert [step.split("(")[0] for step in answer.tool_steps] == ["search_wiki", "search_wiki", "step limit "]


def test_saving_an_answer_merges_into_the_page_and_commits(wiki):
    first = answer_question(wiki, "What did Volta stack into a pile?", services=services_for(wiki, backend=ExtractiveBackend()))
    path, commit = save_answer(wiki, first, title="Volta's pile")
    page = (wiki.root / path).read_text(encoding="utf-8")
    meta, body = split_frontmatter(page)
    assert path == "wiki/answers/volta-s-pile.md" and commit
    assert meta["sources"][0] == {"path": "chat"} and meta["sources"][1:] and all(entry["path"].startswith("sources/") for entry in meta["sources"][1:])
    second = answer_question(wiki, "Which metals were in the Voltaic Pile?", services=services_for(wiki, backend=ExtractiveBackend()))
    save_answer(wiki, second, title="Volta's pile")
    merged = (wiki.root / path).read_text(encoding="utf-8")
    assert "What did Volta stack into a pile?" in merged and "Which metals were in the Voltaic Pile?" in merged
    assert "[Volta's pile](answers/volta-s-pile.md)" in (wiki.root / "wiki/index.md").read_text(encoding="utf-8")
    assert wiki.store.document_by_path(path).kind == "wiki"
    log = subprocess.run(["git", "log", "--format=%s", "-n", "1"], cwd=wiki.root, capture_output=True, text=True).stdout
    assert log.startswith("save answer: wiki/answers/volta-s-pile.md")
    refused = answer_question(wiki, "what did I say?", services=services_for(wiki, backend=ExtractiveBackend()))
    from llmwiki.errors import LlmwikiError

    with pytest.raises(LlmwikiError, match="refusal cannot be saved"):
        save_answer(wiki, refused)


BECQUEREL = """# Henri Becquerel

Antoine Henri Becquerel was a French physicist. He won the 1903 Nobel Prize in Physics for discovering radioactivity.
Becquerel was born into a family of scientists. Becquerel was born in Paris on 15 December 1852.
In 1896 Becquerel discovered radioactivity while investigating uranium salts. He did not use a battery in that work.
"""


@pytest.fixture
def physics(workspace):
    from llmwiki.publish.wiki import ingest_paths

    (workspace.sources_dir / "becquerel.md").write_text(BECQUEREL, encoding="utf-8")
    (workspace.sources_dir / "kelp.md").write_text("# Kelp\n\nKelp forests shelter fish along the northern coast. Divers study the kelp forest every spring.\n", encoding="utf-8")
    ingest_paths(workspace)
    return workspace


def test_yes_no_questions_get_a_verdict_that_quotes_its_sentence(physics):
    yes = answer_question(physics, "Was Becquerel born in Paris?", services=services_for(physics, backend=ExtractiveBackend()))
    assert yes.verdict == "yes" and yes.text.startswith("Yes — ") and "Paris" in yes.text and yes.citations
    no = answer_question(physics, "Was Becquerel born in Lyon?", services=services_for(physics, backend=ExtractiveBackend()))
    assert no.verdict == "no" and no.text.startswith("No — ") and "Lyon" in no.text and no.citations
    negated = answer_question(physics, "Did Becquerel win the Nobel Prize in 1911?", services=services_for(physics, backend=ExtractiveBackend()))
    assert negated.verdict == "no" and "1911" in negated.text
    assert all(citation.path == "sources/becquerel.md" for citation in yes.citations + no.citations)


def test_a_negated_questions_no_says_the_passage_states_it_without_the_not(physics):
    services = services_for(physics, backend=ExtractiveBackend())
    negated = answer_question(physics, "Did Becquerel not win the 1903 Nobel Prize in Physics?", services=services)
    assert negated.verdict == "no" and '(The question says "not", the passage does not.)' in negated.text and "won the 1903 Nobel Prize" in negated.text
    other = answer_question(physics, "Did Becquerel win the 1911 Nobel Prize in Physics?", services=services)  # control: a no of another kind
    assert other.verdict == "no" and "(Numbers not in the excerpt: 1911.)" in other.text and '"not"' not in other.text


def test_a_yes_no_question_that_opens_with_an_adjunct_gets_a_verdict(physics):
    services = services_for(physics, backend=ExtractiveBackend())
    yes = answer_question(physics, "In 1896, did Becquerel discover radioactivity?", services=services)
    assert yes.verdict == "yes" and "1896" in yes.text and yes.standalone_question == "Did Becquerel discover radioactivity in 1896?"
    no = answer_question(physics, "In 1911, did Becquerel win the Nobel Prize?", services=services)  # control: the year otherwise
    assert no.verdict == "no" and "1903" in no.text


def with_sources(workspace, **texts: str):
    """The workspace with these sources (name=Markdown) ingested."""
    from llmwiki.publish.wiki import ingest_paths

    for name, text in texts.items():
        (workspace.sources_dir / f"{name}.md").write_text(text, encoding="utf-8")
    ingest_paths(workspace)
    return workspace


def ask_by_hand(workspace, question: str):
    """The extractive answer with the hand ranking alone: no model beyond the verifier."""
    return answer_question(workspace, question, services=services_for(workspace, backend=ExtractiveBackend(), ranker=None, similarity=None))


def first_chunk(workspace, question: str) -> int:
    """The chunk the extractive answer to a question selects first: what a stub model cites."""
    return answer_question(workspace, question, services=services_for(workspace, backend=ExtractiveBackend())).context_chunk_ids[0]


def test_a_sentence_full_of_names_answers_and_a_reference_line_does_not(workspace):
    with_sources(workspace, keepers=(
        "# Berlenga lighthouse\n\nThe lighthouse on Berlenga Island guides ships past the rocks.\n"
        "Marta Almeida was raised at the Berlenga Lighthouse by Captain Rui Almeida and Ines Sousa.\n"
        "The keepers trim the wick at dusk and log every passing ship.\n\n## References\n\n"
        "* Almeida, Marta. Raised at the Berlenga Lighthouse (1999), Lisbon Maritime Press.\n"
        "* Official site of the Berlenga Lighthouse Museum\n* a memoir of growing up at the Berlenga Lighthouse, by Marta Almeida\n"))
    answer = ask_by_hand(workspace, "Who raised Marta Almeida at the Berlenga Lighthouse?")
    first = answer.text.split(" [c")[0]
    assert not answer.refused and "Captain Rui Almeida and Ines Sousa" in first  # most of its words are names, yet it is prose
    assert "Press" not in answer.text and "Official site" not in answer.text and "memoir" not in answer.text  # reference lines share as many words
    control = ask_by_hand(workspace, "When do the keepers trim the wick?")
    assert not control.refused and "dusk" in control.text.split(" [c")[0]


def test_a_sentence_that_points_back_is_quoted_after_the_sentence_it_points_at(workspace):
    with_sources(workspace, wombat=(
        "# Wombat\n\nWombats are short-legged marsupials of the Australian bush.\n"
        "Wombats dig their burrows with strong front claws and flat, shovel-like paws.\n"
        "This digging method lets the wombat shift a metre of soil in a single night.\n"
        "Wombats feed at night on native grasses, roots and bark.\n"))
    answer = ask_by_hand(workspace, "Which digging method lets the wombat shift a metre of soil in a single night?")
    quoted = answer.text.split(" [c")[0]
    assert quoted == ("Wombats dig their burrows with strong front claws and flat, shovel-like paws. "
                      "This digging method lets the wombat shift a metre of soil in a single night.")  # verbatim, in the source's order
    assert answer.text.count("[c") == 1  # the two sentences are one quotation: with them the answer has its two sentences
    control = ask_by_hand(workspace, "When do wombats feed on native grasses?")
    assert control.text.split(" [c")[0] == "Wombats feed at night on native grasses, roots and bark."  # a sentence that stands alone stands alone


def test_a_sentence_that_names_a_function_by_this_is_quoted_after_the_sentence_that_names_it(workspace):
    with_sources(workspace, annotations=(
        "# Annotations\n\nVersion 3 of the toolkit adds a new function to its library: `meta.read_notes()`. "
        "In version 3 and newer, calling this function is the best practice for reading the notes of an object. "
        "Older versions read the notes attribute directly.\n"))
    answer = ask_by_hand(workspace, "What is the best practice for reading the notes of an object in version 3 and newer?")
    assert answer.text.split(" [c")[0] == ("Version 3 of the toolkit adds a new function to its library: `meta.read_notes()`. "
                                          "In version 3 and newer, calling this function is the best practice for reading the notes of an object.")
    control = ask_by_hand(workspace, "How do older versions read the notes?")
    assert control.text.split(" [c")[0] == "Older versions read the notes attribute directly."  # no "this function": it stands alone


def test_an_it_before_an_it_is_quoted_after_the_sentence_it_points_at_not_guessed(workspace):
    with_sources(workspace, modules=(
        "# Module attributes\n\n`__file__` is optional (if set, value must be a string). "
        "It indicates the pathname of the file from which the module was loaded. "
        "It might be missing for modules that are statically linked into the interpreter.\n\n"
        "Packages are modules that hold other modules in a folder of their own.\n"))
    answer = ask_by_hand(workspace, "Which modules might be missing a pathname because they are statically linked into the interpreter?")
    assert answer.text.split(" [c")[0] == ("`__file__` is optional (if set, value must be a string). "
                                          "It indicates the pathname of the file from which the module was loaded. "
                                          "It might be missing for modules that are statically linked into the interpreter.")
    assert "[Value]" not in answer.text  # control of the guess this replaces: "value" is the last noun before "It"


def test_a_question_about_what_happens_unless_the_reader_says_otherwise_is_answered_by_the_default(workspace):
    with_sources(workspace, plotter=(
        "# Plotter pens\n\nA pen is changed with the pen command before anything is drawn.\n"
        "To change how wide lines are drawn, change the pen with the pen command.\n"
        "By default, lines are drawn half a point wide in black.\n"
        "Thick lines need a wider pen and a slower plotter.\n"))
    answer = ask_by_hand(workspace, "How wide are lines drawn unless I change the pen?")
    assert answer.text.split(" [c")[0] == "By default, lines are drawn half a point wide in black."
    assert answer.standalone_question is None  # the question shown is the user's; only the reader reads "by default"
    assert "default" in answer.selection.query and "pen" in answer.selection.query  # the search looks for both
    control = ask_by_hand(workspace, "How is the pen changed?")
    assert control.text.split(" [c")[0] == "A pen is changed with the pen command before anything is drawn."


def test_a_yes_or_no_about_someone_is_decided_by_a_passage_that_mentions_them(workspace):
    with_sources(workspace,
                 lovelace="# Ada Lovelace\n\nAda Lovelace was born in London in 1815. Lovelace wrote notes on the analytical engine.\n",
                 tax="# The window tax\n\nMany residents of Bath were outraged at the window tax. Builders bricked up windows to pay less.\n")
    answer = ask_by_hand(workspace, "Was Lovelace outraged at the tax?")
    assert answer.verdict != "yes" and "residents of Bath" not in answer.text  # the best-matching sentence is about someone else
    assert all(citation.path == "sources/lovelace.md" for citation in answer.citations)
    control = ask_by_hand(workspace, "Were the residents of Bath outraged at the tax?")
    assert control.verdict == "yes" and "residents of Bath" in control.text


def test_a_sentence_counts_its_articles_title_as_named_when_it_settles_yes_or_no(workspace):
    with_sources(workspace,
                 lisbon="# Lisbon\n\nThe city is built on seven hills above the Tagus estuary. Trams climb its steepest streets.\n",
                 porto="# Porto\n\nPorto stands on the Douro river. Its old town is built on granite slopes above the river.\n")
    lisbon = ask_by_hand(workspace, "Is Lisbon built on seven hills?")
    assert lisbon.verdict == "yes" and "seven hills" in lisbon.text and "names not in the excerpt" not in lisbon.text
    porto = ask_by_hand(workspace, "Is Porto built on seven hills?")
    assert porto.verdict != "yes" and "seven hills" not in porto.text  # control: Lisbon's sentence does not speak for Porto


def test_a_sentence_whose_pronoun_stands_for_something_else_does_not_speak_for_the_articles_subject(workspace):
    with_sources(workspace,
                 vaduz="# Vaduz\n\nVaduz is the capital of a small alpine country on the Rhine. The new museum by three Swiss architects is a landmark in "
                       "the town. It was completed in November 2000 and holds modern art.\n",
                 bern="# Bern\n\nBern is the federal city of Switzerland on the Aare. It was completed in 1191 as a walled town by the duke.\n")
    museum = ask_by_hand(workspace, "Was Vaduz completed in November 2000?")
    assert museum.verdict != "yes" and "[Vaduz] was completed" not in museum.text  # the museum was completed then, not the town
    control = ask_by_hand(workspace, "Was Bern completed in 1191?")  # the same shape, where "it" is the article's subject
    assert control.verdict == "yes" and "[Bern] was completed in 1191" not in control.text
    # The answer quotes the sentence "it" points back at, as written, instead of a referent in brackets it guessed.
    assert "Bern is the federal city of Switzerland on the Aare. It was completed in 1191" in control.text


def test_a_question_the_sources_do_not_cover_is_refused_and_cannot_be_saved(physics):
    from llmwiki.errors import LlmwikiError

    offtopic = answer_question(physics, "Which fish do divers study in Mongolia?", services=services_for(physics, backend=ExtractiveBackend()))
    assert offtopic.refused and offtopic.text.startswith("The sources do not say") and "Mongolia" in offtopic.text and not offtopic.citations
    with pytest.raises(LlmwikiError, match="refusal cannot be saved"):
        save_answer(physics, offtopic)
    answered = answer_question(physics, "When was Becquerel born?", services=services_for(physics, backend=ExtractiveBackend()))  # control
    assert not answered.refused and "1852" in answered.text.split(" [c")[0]  # the dated sentence comes first


def test_a_misspelled_name_is_read_as_the_one_the_sources_have_and_the_answer_says_so(physics):
    misspelled = answer_question(physics, "When was Beckquerel born?", services=services_for(physics, backend=ExtractiveBackend()))
    assert not misspelled.refused and "1852" in misspelled.text
    assert misspelled.read_as == (("beckquerel", "becquerel"),) and '"beckquerel" as "becquerel"' in misspelled.read_as_note
    assert misspelled.as_json()["read_as"] == {"beckquerel": "becquerel"}
    spelled = answer_question(physics, "When was Becquerel born?", services=services_for(physics, backend=ExtractiveBackend()))  # control: nothing to read otherwise
    assert spelled.read_as == () and spelled.read_as_note == "" and "1852" in spelled.text
    unknown = answer_question(physics, "When was Schrodinger born?", services=services_for(physics, backend=ExtractiveBackend()))  # no near name: still refused
    assert unknown.refused and unknown.read_as == ()


def test_index_corrections_touch_names_and_words_that_are_no_english_word():
    from llmwiki.read.search import SearchIndex
    from llmwiki.store.duckdb_store import DuckDBStore

    store = DuckDBStore(":memory:")
    from llmwiki.records import Chunk, PageText

    text = "Becquerel studied uranium salts in Paris. Becquerel found radioactivity."
    store.bulk_load([("sources/b.md", "source", "sha256:x", [PageText(1, text)], [Chunk(1, 0, len(text), text, 12)])])
    index = SearchIndex.for_store(store)
    assert index.corrections("When did Beckquerel work?") == {"beckquerel": "becquerel"}
    assert index.corrections("What did becquerel study in uranum?") == {"uranum": "uranium"}  # a slip of an English word the store has
    assert index.corrections("When did becquerel study pairs of salts?") == {}  # a real word ("pairs", one slip from "paris") and a lowercase name stay
    assert index.corrections("When did Becquerel work?") == {}


def test_a_word_spelt_the_british_or_the_american_way_is_read_as_the_sources_spell_it_most():
    from llmwiki.read.search import SearchIndex
    from llmwiki.records import Chunk, PageText
    from llmwiki.store.duckdb_store import DuckDBStore

    def index_of(*texts: str) -> SearchIndex:
        store = DuckDBStore(":memory:")
        store.bulk_load([(f"sources/{number}.md", "source", f"sha256:{number}", [PageText(1, text)], [Chunk(1, 0, len(text), text, 12)])
                         for number, text in enumerate(texts)])
        return SearchIndex.for_store(store)

    american = index_of("The label color is set with textcolor.", "Each box takes its color from a column.", "A colour name may be quoted.")
    assert american.corrections("Which colour do the labels get?") == {"colour": "color"}  # more chunks write "color"
    assert american.corrections("Which color do the labels get?") == {}  # control: already the sources' spelling
    british = index_of("The label colour is set with textcolour.", "Each box takes its colour from a column.", "A color name may be quoted.")
    assert british.corrections("Which colour do the labels get?") == {}  # control: here the sources write "colour" most
    assert british.corrections("Which color do the labels get?") == {"color": "colour"}


def test_a_slip_of_a_common_word_is_read_as_the_english_word_the_sources_have(physics):
    from llmwiki.read.search import SearchIndex

    slip = answer_question(physics, "What did Becquerel discover while investigating urainum salts?", services=services_for(physics, backend=ExtractiveBackend()))
    assert slip.read_as == (("urainum", "uranium"),) and not slip.refused and "radioactivity" in slip.text
    spelled = answer_question(physics, "What did Becquerel discover while investigating uranium salts?", services=services_for(physics, backend=ExtractiveBackend()))
    assert spelled.read_as == () and "radioactivity" in spelled.text  # control
    index = SearchIndex.for_store(physics.store)
    assert index.corrections("Did Becquerel study pairs of salts?") == {}  # "pairs" is a word, though one slip from "Paris"
    assert index.corrections("Did Becquerel study urainum?") == {"urainum": "uranium"}  # control, on this store too


def test_a_slip_in_a_name_is_read_as_the_term_that_fits_the_rest_of_the_question(workspace):
    from llmwiki.read.search import SearchIndex

    with_sources(workspace,
                 roosevelt="# Theodore Roosevelt\n\nTheodore Roosevelt was a member of the Republican Party and governor of New York.\n",
                 **{f"physics{number}": f"# Physics {number}\n\nThe theory of heat was tested in laboratory {number}. Each theory had its critics.\n"
                    for number in range(3)})
    index = SearchIndex.for_store(workspace.store)
    # "theory" is one slip from "Thedore" too, and in more chunks; "Roosevelt" and "Republican" stand beside "Theodore"
    assert index.corrections("Was Thedore Roosevelt a Republican?") == {"thedore": "theodor"}
    assert index.corrections("Was the Thedore tested in a laboratory?") == {"thedore": "theori"}  # control: the words beside "theory"


def test_a_refusal_lists_the_question_s_missing_words_not_its_truth_frame(physics):
    framed = answer_question(physics, "Is it true that Becquerel painted purple sailboats at dawn?", services=services_for(physics, backend=ExtractiveBackend()))
    assert framed.refused and "sailboats" in framed.text and "true" not in framed.text.split("(", 1)[1]  # the frame asks nothing about "true"


def test_penn_treebank_brackets_in_a_question_are_read_as_brackets(physics):
    answer = answer_question(physics, "Was Becquerel -LRB- a physicist -RRB- born in Paris?", services=services_for(physics, backend=ExtractiveBackend()))
    assert answer.verdict == "yes" and "LRB" not in answer.text


def test_an_answer_never_opens_with_an_unresolved_pronoun_and_quotes_stay_verbatim(physics):
    from llmwiki.text.questions import opens_with_pronoun, unbracket

    answer = answer_question(physics, "Which prize did Becquerel win for discovering radioactivity?", services=services_for(physics, backend=ExtractiveBackend()))
    assert answer.text.startswith("[Antoine Henri Becquerel] won the 1903 Nobel Prize") and not opens_with_pronoun(answer.text)
    first = answer.text.split(" [c")[0]
    assert unbracket(first).strip() in " ".join(answer.citations[0].text.split())  # the quotation, less the bracket, is the source's


def test_the_referent_of_he_comes_with_the_selection_and_from_the_store_when_it_does_not(physics, monkeypatch):
    from dataclasses import replace

    from llmwiki.read.candidates import selection_candidates as _candidates
    from llmwiki.read.select import select

    selection = select(physics, "Which prize did Becquerel win for discovering radioactivity?")
    sources = [item for item in selection.items if item.kind == "source"]
    assert sources and all(item.title == physics.store.document_by_path(item.path).title for item in sources)
    untitled = replace(selection, items=tuple(replace(item, title=None) for item in selection.items))  # a selection built by hand
    looked_up = {candidate.referent for candidate in _candidates(physics, untitled)}
    assert "Henri Becquerel" in looked_up  # read from the store, not the file name's "becquerel"
    monkeypatch.setattr(type(physics.store), "document_by_path", lambda *args: pytest.fail("asked the store for a title the selection has"))
    assert {candidate.referent for candidate in _candidates(physics, selection)} == looked_up


def test_a_saved_answer_is_never_the_only_evidence_for_the_next(physics):
    first = answer_question(physics, "When did Becquerel discover radioactivity?", services=services_for(physics, backend=ExtractiveBackend()))
    path, _ = save_answer(physics, first)
    from llmwiki.read.search import search

    assert path in [hit.path for hit in search(physics, "When did Becquerel discover radioactivity?", scope="wiki").hits]  # the saved page matches ...
    again = answer_question(physics, "When did Becquerel discover radioactivity?", services=services_for(physics, backend=ExtractiveBackend()))
    assert path not in [item.path for item in again.selection.items]  # ... but gives way to the source chunks it cites
    assert again.citations and all(citation.path.startswith("sources/") for citation in again.citations)
    assert "1896" in again.text


def test_ask_json_and_batch_print_one_object_per_question(physics, tmp_path):
    from click.testing import CliRunner

    from llmwiki.cli import cli

    runner = CliRunner()
    single = runner.invoke(cli, ["ask", "Was Becquerel born in Paris?", "--json", "-w", str(physics.root)])
    assert single.exit_code == 0, single.output
    record = json.loads(single.stdout.strip().splitlines()[-1])
    assert record["verdict"] == "yes" and record["refused"] is False and record["citations"][0]["path"] == "sources/becquerel.md"
    assert {"id", "path", "text"} <= set(record["citations"][0])
    questions = tmp_path / "questions.txt"
    questions.write_text("Was Becquerel born in Paris?\nWhat is the capital of Mongolia?\n\nWhen was Becquerel born?\n", encoding="utf-8")
    batch = runner.invoke(cli, ["ask", "--batch", str(questions), "--json", "-w", str(physics.root)])
    assert batch.exit_code == 0, batch.output
    lines = [json.loads(line) for line in batch.stdout.strip().splitlines()]
    # One output line per input line, in order: the blank third line gets an object saying so.
    assert [line["question"] for line in lines] == ["Was Becquerel born in Paris?", "What is the capital of Mongolia?", "", "When was Becquerel born?"]
    assert lines[2] == {"question": "", "line": 3, "error": "line 3 is blank: no question to answer"}
    answered = [lines[0], lines[1], lines[3]]
    assert [line["refused"] for line in answered] == [False, True, False] and lines[1]["citations"] == [] and lines[1]["verdict"] is None
    refused_save = runner.invoke(cli, ["ask", "What is the capital of Mongolia?", "--save", "-w", str(physics.root)])
    assert refused_save.exit_code != 0 and "not saved" in refused_save.output


def test_run_tool_turns_any_bad_argument_into_a_tool_message(physics):
    from llmwiki.read.chat import run_tool

    cited: set[int] = set()
    bad_calls = [
        ("read_page", {"path": "x" * 100_000}),  # longer than the file system takes
        ("read_page", {"path": "wiki/" + "a" * 300 + ".md"}),
        ("read_page", {"path": ["not", "text"]}),
        ("search_wiki", {"query": "Becquerel", "limit": float("inf")}),  # what json.loads gives for Infinity
        ("search_wiki", {"query": "Becquerel", "limit": float("nan")}),
        ("search_sources", {"query": "Becquerel", "limit": "many"}),
        ("search_sources", {"query": {"nested": 1}}),
        ("query_dataset", {"category": "x" * 10_000}),
        ("search_sources", "not an object"),
    ]
    for name, arguments in bad_calls:
        text, found = run_tool(physics, name, arguments, cited=cited, services=services_for(physics))
        assert text.startswith("Refused") and not found, (name, text)
    text, found = run_tool(physics, "search_sources", {"query": "Becquerel", "limit": 3}, cited=cited, services=services_for(physics))  # control
    assert found and "[c" in text and cited
    text, found = run_tool(physics, "search_sources", {"query": "Becquerel", "limit": 1e400}, cited=set(), services=services_for(physics))
    assert text.startswith("Refused")


def test_a_closer_sentence_that_opposes_the_statement_outweighs_a_looser_one_that_the_model_likes():
    import numpy as np

    from llmwiki.read.candidates import Candidate as _Candidate

    class Likes:  # a stand-in model that finds the looser sentence entailing and the closer one not
        name = "stand-in"

        def score(self, premises, hypotheses):
            return np.array([[0.95, 0.04, 0.01] if "seal" in premise else [0.3, 0.6, 0.1] for premise in premises])

    loose = _Candidate("A leopard seal is a natural predator of penguins at sea.", 1, 0, "", "Penguins")
    closer = _Candidate("Penguins have few natural predators on land.", 2, 1, "", "Penguins")
    reply = _yes_no("Penguins have many natural predators on land.", [loose, closer], Likes(), names=frozenset({"penguins"}))
    assert reply.verdict == "no" and "few natural predators" in reply.text and "many (excerpt: few)" in reply.text
    control = _yes_no("Penguins have few natural predators on land.", [loose, closer], Likes(), names=frozenset({"penguins"}))
    assert control.verdict == "yes"  # nothing as close opposes it


def test_a_sentence_as_close_that_the_model_reads_as_contradicting_it_more_than_the_best_supports_it_answers_no():
    import numpy as np

    from llmwiki.read.candidates import Candidate as _Candidate

    class Reads:  # a stand-in model: a weak yes from the sentence on corruption, a contradiction from "undemocratic"
        name = "stand-in"

        def __init__(self, contradiction: float) -> None:
            self.contradiction = contradiction

        def score(self, premises, hypotheses):
            return np.array([[0.05, 0.95 - self.contradiction, self.contradiction] if "undemocratic" in premise else [0.7, 0.25, 0.05]
                             if "supported" in premise else [0.55, 0.4, 0.05] for premise in premises])

    statement = "Wilson supported the committee system."
    weak = _Candidate("Wilson also believed that the committee system facilitated corruption.", 1, 0, "", "Woodrow Wilson")
    against = _Candidate("Wilson said that the committee system was undemocratic.", 2, 1, "", "Woodrow Wilson")
    assert _yes_no(statement, [weak], Reads(0.6), names=frozenset({"wilson"}), subject=("Wilson",)).verdict == "yes"  # alone, a weak yes
    reply = _yes_no(statement, [weak, against], Reads(0.6), names=frozenset({"wilson"}), subject=("Wilson",))
    assert reply.verdict == "no" and "undemocratic" in reply.text
    assert _yes_no(statement, [weak, against], Reads(0.52), names=frozenset({"wilson"}), subject=("Wilson",)).verdict == "yes"  # control: weaker than the support
    strong = _Candidate("Wilson supported the committee system in 1885.", 3, 0, "", "Woodrow Wilson")
    control = _yes_no(statement, [strong, against], Reads(0.6), names=frozenset({"wilson"}), subject=("Wilson",))
    assert control.verdict == "yes" and "1885" in control.text  # control: the support is stronger than the contradiction


def test_the_model_reads_a_sentence_as_the_answer_shows_it():
    import numpy as np

    from llmwiki.read.candidates import Candidate as _Candidate

    class ReadsWords:  # a stand-in model that reads "It is ..." against "Liechtenstein is ..." as a contradiction
        name = "stand-in"

        def __init__(self):
            self.premises = []

        def score(self, premises, hypotheses):
            self.premises += premises
            return np.array([[0.9, 0.05, 0.05] if premise.startswith("Liechtenstein") else [0.02, 0.1, 0.88] for premise in premises])

    sentence = "It is the smallest German-speaking country in the world."
    model = ReadsWords()
    opening = _Candidate(sentence, 1, 0, sentence, "Liechtenstein", chunk_text=sentence)
    reply = _yes_no("Liechtenstein is the smallest German-speaking country in the world.", [opening], model, names=frozenset({"liechtenstein"}),
                    subject=("Liechtenstein",))
    assert model.premises == ["Liechtenstein is the smallest German-speaking country in the world."]  # the referent, without its brackets
    assert reply.verdict == "yes" and reply.text.startswith("Yes — [Liechtenstein] is the smallest")  # the answer shows the brackets
    # control: the same sentence in an article on something else is read with that referent, and is no yes
    elsewhere = _Candidate(sentence, 2, 0, sentence, "Andorra", chunk_text=sentence)
    reader = ReadsWords()
    other = _yes_no("Liechtenstein is the smallest German-speaking country in the world.", [elsewhere], reader, names=frozenset({"liechtenstein"}))
    assert reader.premises == ["Andorra is the smallest German-speaking country in the world."] and other.verdict != "yes"


def test_a_yes_needs_a_sentence_that_speaks_to_the_statement():
    import numpy as np

    from llmwiki.read.candidates import Candidate as _Candidate

    class EntailsAll:
        name = "stand-in"

        def score(self, premises, hypotheses):
            return np.array([[0.95, 0.04, 0.01]] * len(premises))

    statement = "Theodore Roosevelt has a brother."
    book = _Candidate("Hunting the Grisly and Other Sketches was written by Theodore Roosevelt in 1893.", 1, 0, "", "Gray Wolf")
    reply = _yes_no(statement, [book], EntailsAll(), names=frozenset({"theodore", "roosevelt"}), subject=("Theodore", "Roosevelt"))
    assert reply.verdict is None and not reply.text.startswith("Yes")  # it names him, and says nothing of a brother
    brother = _Candidate("Theodore Roosevelt had a younger brother, Elliott, who died in 1894.", 2, 0, "", "Theodore Roosevelt")
    control = _yes_no(statement, [brother], EntailsAll(), names=frozenset({"theodore", "roosevelt"}), subject=("Theodore", "Roosevelt"))
    assert control.verdict == "yes" and "younger brother" in control.text


def test_a_sentence_that_overlapping_chunks_hold_twice_is_ranked_once():
    from llmwiki.read.candidates import Candidate as _Candidate
    from llmwiki.read.candidates import hand_ranking
    from llmwiki.text.questions import shape

    sentence = "The keepers rowed out to the tower at dawn."
    candidates = [_Candidate(sentence, 1, 0, "", "Lighthouse"), _Candidate(sentence, 2, 1, "", "Lighthouse"),  # the chunks overlap
                  _Candidate("The lamp burned whale oil until 1870.", 2, 1, "", "Lighthouse"),
                  _Candidate(sentence, 3, 2, "", "Keepers")]  # control: the same words in another document are another sentence
    question = "When did the keepers row out to the tower?"
    ranked = [index for _, index in hand_ranking(question, candidates, shape(question))]
    assert sorted(ranked) == [0, 2, 3] and ranked[0] == 0  # the first chunk's copy: its place in the selection counts


def test_he_beside_an_open_page_is_that_pages_subject(workspace):
    with_sources(workspace,
                 hale="# Edmund Hale\n\nEdmund Hale was a surveyor from Bristol. He published a coastal atlas in 1791. "
                      "He founded the Severn Observatory in 1802.\n",
                 marsh="# Thomas Marsh\n\nThomas Marsh was a surveyor from Leeds. He published a coastal atlas in 1788. "
                       "He mapped the moors for the county.\n")
    services = services_for(workspace, backend=ExtractiveBackend(), ranker=None, similarity=None)
    for name, year, other in (("marsh", "1788", "1791"), ("hale", "1791", "1788")):  # each page, the other as the control
        page = next(path for path in (workspace.root / "wiki").rglob("*.md") if name in path.name).relative_to(workspace.root).as_posix()
        beside = answer_question(workspace, "When did he publish the coastal atlas?", services=services, open_page=page)
        first = beside.text.split(" [c")[0]
        assert not beside.refused and year in first and other not in first


GHANA_BODY = ("Ghana lies on the Gulf of Guinea in West Africa. Its coast is warm and comparatively dry, while the south-west is hot and humid. "
              "Cocoa grows in the forests of the south.\n")
COCOA = "# Cocoa trade\n\nTraders ship cocoa from the ports of the Gulf of Guinea to Europe. The harvest falls between October and March.\n"


@pytest.mark.parametrize("title, about", [("Ghana", True), ("West African travel notes", False)])
def test_a_question_about_what_a_page_mentions_in_passing_must_match_more_of_its_words(workspace, title, about):
    with_sources(workspace, a=f"# {title}\n\n{GHANA_BODY}", b=COCOA)  # the same text, under its subject's name or not
    # About a third of this question's weighted words stand in the best sentence under "# Ghana" (the title counts), a fifth
    # under the other title: one share for every question (0.45) refused it under both.
    # The shares alone, without the sentence embedder, whose paraphrase reading ("Its coast is warm ..." for the climate
    # of the coast) would answer it under either title.
    climate = answer_question(workspace, "What kind of climate does the coast of Ghana have?",
                              services=services_for(workspace, backend=ExtractiveBackend(), similarity=None))
    if about:  # the page is about Ghana: a question that shares part of its wording is answered from it
        assert not climate.refused and "warm and comparatively dry" in climate.text.split(" [c")[0]
    else:  # Ghana is mentioned in passing: "climate" is not there, and the rest is too little
        assert climate.refused and "climate" in climate.text and not climate.citations
    where = answer_question(workspace, "Where is Ghana?", services=services_for(workspace, backend=ExtractiveBackend()))  # control: the words all match either way
    assert not where.refused and "Gulf of Guinea" in where.text


def test_a_model_verdict_stands_only_on_a_cited_passage_about_the_subject(wiki):
    chunk = first_chunk(wiki, "What did Volta stack?")
    with StubServer([Reply(content=f"Yes, Volta stacked zinc and copper discs [c{chunk}].")]) as server:
        about = answer_question(wiki, "Did Volta stack zinc and copper?", services=services_for(wiki, backend=stub_backend(server)))
        assert about.verdict == "yes" and about.text.startswith("Yes, Volta")  # the cited chunk is about Volta
        elsewhere = answer_question(wiki, "Did Nairobi stack zinc and copper?", services=services_for(wiki, backend=stub_backend(server)))
        server.replies = [Reply(content="No, it did not.")]
        uncited = answer_question(wiki, "Did Volta stack zinc and copper?", services=services_for(wiki, backend=stub_backend(server)))
    # The same reply and citation for a question about another subject: not settled, with the reason.
    assert elsewhere.verdict is None and elsewhere.text.startswith("The sources do not settle this (no passage it cites is about Nairobi)")
    assert uncited.verdict is None and "the reply cites no passage" in uncited.text


def test_a_model_verdict_needs_a_cited_passage_that_speaks_to_the_question(wiki):
    chunk = first_chunk(wiki, "What did Volta stack?")
    with StubServer([Reply(content=f"Yes, Volta had a brother [c{chunk}].")]) as server:
        silent = answer_question(wiki, "Did Volta have a brother?", services=services_for(wiki, backend=stub_backend(server)))
        server.replies = [Reply(content=f"Yes, Volta stacked zinc and copper discs [c{chunk}].")]
        control = answer_question(wiki, "Did Volta stack zinc and copper?", services=services_for(wiki, backend=stub_backend(server)))
    # about Volta, silent on a brother: not settled, and the reason names what the passage does not speak to
    assert silent.verdict is None and silent.text.startswith("The sources do not settle this (no passage it cites about Volta speaks to brother)")
    assert control.verdict == "yes"


def test_a_model_no_needs_a_cited_passage_that_states_the_year_or_another(workspace):
    with_sources(workspace, volta="# Alessandro Volta\n\nAlessandro Volta stacked zinc and copper discs into a pile. The pile made a steady current.\n",
                 davy="# Humphry Davy\n\nHumphry Davy split potash with a large battery in 1807. Davy lectured at the Royal Institution.\n")
    volta, davy = first_chunk(workspace, "What did Volta stack?"), first_chunk(workspace, "What did Davy split?")
    with StubServer([Reply(content=f"No, Volta did not stack them in 1799 [c{volta}].")]) as server:
        silent = answer_question(workspace, "Did Volta stack zinc and copper discs in 1799?", services=services_for(workspace, backend=stub_backend(server)))
        server.replies = [Reply(content=f"No, Davy split potash in 1807 [c{davy}].")]
        other_year = answer_question(workspace, "Did Davy split potash with a battery in 1812?", services=services_for(workspace, backend=stub_backend(server)))
    # the passage says nothing of a year: the model's no is shown as not settled, with the year it leaves out
    assert silent.verdict is None and silent.text.startswith("The sources do not settle this (no passage it cites about Volta states 1799")
    assert other_year.verdict == "no" and other_year.text.startswith("No, Davy")  # control: the passage states another year


def test_a_model_reply_to_a_question_that_is_not_yes_no_has_no_verdict(wiki):
    chunk = first_chunk(wiki, "What did Volta stack?")
    with StubServer([Reply(content=f"No one but Volta stacked zinc and copper [c{chunk}].")]) as server:
        answer = answer_question(wiki, "What did Volta stack?", services=services_for(wiki, backend=stub_backend(server)))
    assert answer.verdict is None and answer.text.startswith("No one but Volta")  # left as the model wrote it


def test_a_yes_or_no_needs_a_sentence_about_the_question_subject(workspace):
    with_sources(workspace, finland=(
        "# Finland\n\nLarge mammals found in Finland include the brown bear, the elk and the reindeer. "
        "The polar night lasts for weeks above the Arctic Circle in the north of Finland.\n"))
    elsewhere = ask_by_hand(workspace, "Is the polar bear a mammal?")  # one sentence names a bear, one the polar night: neither is about polar bears
    assert elsewhere.refused and elsewhere.verdict is None and "no selected sentence is about polar bear" in elsewhere.text
    with_sources(workspace, bear="# Polar bear\n\nPolar bears are large marine mammals of the Arctic. They hunt seals on the sea ice.\n")
    control = ask_by_hand(workspace, "Is the polar bear a mammal?")  # a sentence about polar bears now
    assert control.verdict == "yes" and "Polar bears are large marine mammals" in control.text


def test_a_no_comes_from_a_sentence_that_speaks_to_the_statement_not_one_that_merely_lacks_it(workspace):
    with_sources(workspace,
                 canada="# Canada\n\nEnglish and French are the official languages of Canada. Canada has ten provinces and three territories.\n",
                 roosevelt=("# Theodore Roosevelt\n\nTheodore Roosevelt considered the timber wolves of Montana equal in size to European wolves. "
                            "Theodore Roosevelt wrote many books on hunting in the American West.\n"))
    no = ask_by_hand(workspace, "Is Canada's official language Zulu?")
    assert no.verdict == "no" and "official languages" in no.text and "Zulu" in no.text  # the same relation, another value
    swapped = ask_by_hand(workspace, "Is Ghana's official language Zulu?")  # the same sentence, the subject replaced
    assert swapped.verdict is None
    lacking = ask_by_hand(workspace, "Did Theodore Roosevelt go to Harvard?")  # about him, silent on Harvard
    assert lacking.verdict is None and not lacking.text.startswith("No")


def test_a_no_needs_a_sentence_that_states_the_fact_otherwise_not_one_that_leaves_it_out(workspace):
    with_sources(workspace,
                 mosqueda="# Teresa Mosqueda\n\nMosqueda won the Position 8 seat on the Seattle City Council with 62 percent of the vote.\n",
                 gonzalez="# Lorena Gonzalez\n\nGonzalez won the Position 9 seat on the Seattle City Council in 2015 with 64 percent of the vote.\n")
    silent = ask_by_hand(workspace, "Did Mosqueda win the Position 8 seat in 2017?")  # the page states no year
    assert silent.verdict is None and not silent.text.startswith("No")
    other = ask_by_hand(workspace, "Did Gonzalez win the Position 9 seat in 2017?")  # control: the page states another year
    assert other.verdict == "no" and "in 2015" in other.text


def test_an_equally_close_sentence_with_another_year_does_not_outweigh_one_that_states_the_year(workspace):
    with_sources(workspace, cleveland=("# Grover Cleveland\n\nCleveland won the presidency in the 1884 election with the support of reformers. "
                                       "Cleveland was one of four men to win the popular vote in an election but lose the presidency, as Gore would in 2000.\n"))
    yes = ask_by_hand(workspace, "Did Cleveland win the 1884 election?")  # the other year is another election's
    assert yes.verdict == "yes" and "in the 1884 election" in yes.text
    no = ask_by_hand(workspace, "Did Cleveland win the 1892 election?")  # control: no sentence states that year, each states another
    assert no.verdict == "no"
    with_sources(workspace, young=("# Kaitlin Young\n\nYoung was nominated for the fighter award in 2018, her best year. "
                                   "Young won the fighter award in 2019 after a long wait.\n"))
    other = ask_by_hand(workspace, "Did Young win the fighter award in 2018?")  # the sentence with the year does not say she won
    assert other.verdict == "no" and "in 2019" in other.text


def test_a_comparison_is_read_both_ways(workspace):
    with_sources(workspace, brothers="# The Coolidge brothers\n\nCalvin was older than John by three years. John became a railway clerk in Boston.\n")
    reversed_ = ask_by_hand(workspace, "Was John older than Calvin?")  # an NLI model reads both orders as the same sentence
    assert reversed_.verdict == "no" and "(The other way round.)" in reversed_.text
    control = ask_by_hand(workspace, "Was Calvin older than John?")
    assert control.verdict == "yes" and "Calvin was older than John" in control.text


def test_a_comparison_is_settled_by_a_sentence_that_orders_its_two_sides(workspace):
    with_sources(workspace, elephant=("# Elephant\n\nThe Sumatran elephant is considerably smaller than its Asian and African cousins. "
                                      "The African is typically larger than the Asian and has a concave back.\n"))
    yes = ask_by_hand(workspace, "Is an Asian elephant smaller than an African elephant?")  # the opposite comparative, the sides turned
    assert yes.verdict == "yes" and "typically larger than the Asian" in yes.text
    no = ask_by_hand(workspace, "Is an Asian elephant larger than an African elephant?")  # control: the same sentence, the statement turned
    assert no.verdict == "no" and "typically larger than the Asian" in no.text and "(The other way round.)" in no.text
    from llmwiki.read.readings.comparisons import _agreement
    from llmwiki.read.readings.comparisons import comparison_order as _comparison_order

    turned = "An Asian elephant is smaller than an African elephant."
    assert _comparison_order(turned, "The African is larger than, on average, the Asian.") == -1  # "than" before a comma
    assert _comparison_order(turned, "The African is larger Than the Asian.") == -1  # any case
    assert _comparison_order(turned, "Unlike the Asian elephant, the Sumatran is smaller than the African.") == 0  # control: not in the clause of "than"
    assert _agreement("Bulls are larger than cows.", "Cows are smaller than bulls.") == -1  # WordNet's opposite
    assert _agreement("Bulls weigh more than cows.", "Bulls are larger than cows.") == 0  # another measure: left to the model
    assert _agreement("Finland has more lakes than Sweden.", "Sweden has more forests than Finland.") == 0
    assert _agreement("Finland has more lakes than Sweden.", "Sweden has fewer lakes than Finland.") == -1


def test_a_comparison_with_any_verb_is_read_both_ways(workspace):
    with_sources(workspace, cattle="# Cattle\n\nBulls weigh more than cows, often by half again. Cows graze in herds on open pasture.\n")
    reversed_ = ask_by_hand(workspace, "Do cows weigh more than bulls?")
    assert reversed_.verdict == "no" and "(The other way round.)" in reversed_.text
    control = ask_by_hand(workspace, "Do bulls weigh more than cows?")
    assert control.verdict == "yes" and "Bulls weigh more than cows" in control.text
    from llmwiki.read.readings.comparisons import converse

    assert converse("There are more than 350,000 species of beetles.") is None  # a measure, not a second side
    assert converse("A bull weighs more than 500 kg.") is None
    assert converse("Cows weigh more than bulls.").lower() == "bulls weigh more than cows."  # control (the model reads no case)


def test_a_yes_or_no_reads_a_subject_by_the_name_in_apposition_to_it(workspace):
    with_sources(workspace, uhr="# Clive Uhr\n\nSir Clive Uhr (1903-1974) was a noted radiologist in Brisbane. Uhr also chaired the racing club.\n")
    named = ask_by_hand(workspace, "Is it true that his grandson, Clive Uhr, became a noted radiologist?")  # no sentence names a grandson
    assert named.verdict == "yes" and "noted radiologist" in named.text
    unnamed = ask_by_hand(workspace, "Is it true that his grandson became a noted radiologist?")  # control: the subject is a grandson
    assert unnamed.verdict is None


def test_a_yes_or_no_needs_the_subject_in_what_the_sentence_is_about_not_in_a_modifier(workspace):
    with_sources(workspace, kangaroo=("# Kangaroo\n\nGoannas and other carnivorous reptiles also pose a danger to smaller kangaroo species when food "
                                      "is scarce. Dingoes prey on kangaroos in the dry inland.\n"))
    # The sentence names kangaroos and reptiles, and is about goannas: it says nothing of what a kangaroo is.
    reptile = ask_by_hand(workspace, "Is a kangaroo a reptile?")
    assert reptile.verdict is None and not reptile.text.startswith("Yes")
    control = ask_by_hand(workspace, "Do goannas pose a danger to kangaroo species?")  # the same sentence, asked about its subject
    assert control.verdict == "yes" and "Goannas and other carnivorous reptiles" in control.text
    prey = ask_by_hand(workspace, "Are kangaroos preyed on by dingoes?")  # a verb's prepositional object is what it is about
    assert prey.verdict == "yes" and "Dingoes prey on kangaroos" in prey.text


def test_a_sentence_about_someone_else_denies_nothing(workspace):
    with_sources(workspace, league=(
        "# The League of Nations\n\nIn 1919, Canada joined the League of Nations independently of Britain. "
        "The U.S. Senate debated the treaty for months.\n"))
    # The sentence that holds the statement is about Canada; the one about the U.S. is silent on joining: no verdict.
    elsewhere = ask_by_hand(workspace, "Did the U.S. join the League of Nations?")
    assert elsewhere.verdict is None and not elsewhere.text.startswith(("No", "Yes"))
    control = ask_by_hand(workspace, "Did Canada join the League of Nations?")
    assert control.verdict == "yes" and "Canada joined the League of Nations" in control.text


def test_a_heading_or_a_list_item_takes_no_place_among_the_sentences_a_verdict_reads(workspace, monkeypatch):
    # Captions that end in brackets, as image captions and "see also" lines do: no verb, so they assert nothing.
    see_also = "Portrait of Wilson (then thirtieth President of the United States.)\n\nUnited States presidential election (1912.)\n"
    with_sources(workspace, wilson=f"# Woodrow Wilson\n\nThomas Woodrow Wilson was the twenty-eighth President of the United States.\n\n{see_also}")
    no = ask_by_hand(workspace, "Was Woodrow Wilson the thirtieth President of the United States?")
    assert no.verdict == "no" and "twenty-eighth President" in no.text  # the one sentence that says which President
    with_sources(workspace, wilson=f"# Woodrow Wilson\n\nWoodrow Wilson taught at Princeton.\n\n{see_also}")
    listed = ask_by_hand(workspace, "Was Woodrow Wilson the thirtieth President of the United States?")  # the lines assert nothing of him
    assert listed.verdict is None and not listed.text.startswith("Yes")
    from llmwiki.text import parsing

    monkeypatch.setattr(parsing, "states_something", lambda text: None)  # control: the rule off, as without a parser
    assert ask_by_hand(workspace, "Was Woodrow Wilson the thirtieth President of the United States?").verdict == "yes"  # the line read as a sentence on him


def test_a_sentence_that_only_lacks_a_fact_does_not_outweigh_one_that_states_it(workspace):
    with_sources(workspace,
                 adams=("# John Adams\n\nThe John Adams Library in Boston holds the personal collection of Adams. "
                        "Young Adams went to Harvard College at age sixteen.\n"),
                 kangaroo=("# Kangaroo\n\nKangaroos have few natural predators. "
                           "The Thylacine was once a major natural predator of the kangaroo and is now extinct.\n"))
    yes = ask_by_hand(workspace, "Did John Adams go to Harvard?")  # the library names him as often, and is silent on Harvard
    assert yes.verdict == "yes" and "went to Harvard College" in yes.text
    no = ask_by_hand(workspace, "Do kangaroos have many natural predators?")  # control: one as close that says otherwise still decides
    assert no.verdict == "no" and "few natural predators" in no.text


def test_a_no_needs_a_sentence_that_says_what_the_statement_says_besides_its_names(workspace):
    with_sources(workspace, qatar="# Qatar\n\nWomen can legally drive in Qatar, whereas they may not in Saudi Arabia.\n")
    names_only = ask_by_hand(workspace, "Is Qatar bordered by Saudi Arabia to the south?")  # a negation, the names, nothing on borders
    assert names_only.verdict is None and not names_only.text.startswith("No")
    with_sources(workspace, qatar="# Qatar\n\nQatar is bordered by Saudi Arabia to the south and by the Persian Gulf elsewhere.\n")
    no = ask_by_hand(workspace, "Is Qatar bordered by Saudi Arabia to the north?")  # control: a sentence on its border says otherwise
    assert no.verdict == "no" and "to the south" in no.text


def test_an_irregular_verb_form_holds_its_base_forms_relation():
    from llmwiki.read.readings.evidence import holds_relation as _holds_relation
    from llmwiki.text import stem

    relation = {stem("win")}
    assert _holds_relation(relation, "He won the 1903 Nobel Prize in Physics.")  # "won" is read as "win"
    assert not _holds_relation(relation, "He wanted the 1903 Nobel Prize in Physics.")  # control: another verb is not "win"
    assert _holds_relation({stem("build"), stem("bridge")}, "The bridge was built in 1900.")  # "built" is "build"


def test_a_yes_needs_the_model_where_the_sentence_puts_another_word_in_the_statements_place(workspace):
    with_sources(workspace, indonesia="# Indonesia\n\nIndonesia is a republic with a presidential system. Jakarta is its capital.\n")
    other_word = ask_by_hand(workspace, "Is Indonesia a monarchy with a presidential system?")  # every word but one, and another in its place
    assert other_word.verdict != "yes" and not other_word.text.startswith("Yes")
    control = ask_by_hand(workspace, "Is Indonesia a republic with a presidential system?")
    assert control.verdict == "yes" and "a republic with a presidential system" in control.text


class _Contradicting:
    """The shipped verifier's name (and so its calibration) with every pair read as a contradiction: what a small NLI
    model does with a sentence that leaves out the statement's year."""

    def __init__(self, verifier):
        self.name = verifier.name

    def score(self, premises, hypotheses):
        import numpy as np

        return np.array([[0.02, 0.08, 0.90]] * len(premises))


def test_the_models_contradiction_is_no_no_where_the_sentence_leaves_out_the_statements_year(workspace):
    with_sources(workspace, mill="# Kelso Mill\n\nThe Kelso Mill was powered by water wheels on the river.\n")
    shipped = services_for(workspace).verifier
    services = services_for(workspace, backend=ExtractiveBackend(), ranker=None, similarity=None, verifier=_Contradicting(shipped))
    silent = answer_question(workspace, "Was the Kelso Mill powered by steam in 1921?", services=services)
    assert silent.verdict is None and silent.text.startswith("The sources do not settle this")
    control = answer_question(workspace, "Was the Kelso Mill powered by steam?", services=services)  # every name and number there
    assert control.verdict == "no" and "(The passage contradicts it.)" in control.text


KANGAROO = ("# Kangaroo\n\nA kangaroo is a marsupial from the family Macropodidae. Kangaroos are large animals that graze on grass in "
            "Australia. Kangaroos are often kept in wildlife parks for visitors.\n")


def test_a_model_verdict_on_what_kind_its_subject_is_is_held_to_the_cited_sentence_that_says_what_it_is(workspace):
    with_sources(workspace, kangaroo=KANGAROO)
    chunk = first_chunk(workspace, "Which family is the kangaroo a marsupial from?")
    with StubServer([Reply(content=f"No, a kangaroo is a marsupial [c{chunk}].")]) as server:
        right = answer_question(workspace, "Is a kangaroo a reptile?", services=services_for(workspace, backend=stub_backend(server)))
        server.replies = [Reply(content=f"Yes, kangaroos are reptiles [c{chunk}].")]
        wrong = answer_question(workspace, "Is a kangaroo a reptile?", services=services_for(workspace, backend=stub_backend(server)))
    # the passage never says "reptile": what it says the kangaroo is settles the question, both ways
    assert right.verdict == "no" and right.text.startswith("No, a kangaroo")
    assert wrong.verdict is None and wrong.text.startswith("The sources do not settle this (a passage it cites on what kangaroo is answers no, "
                                                           "WordNet: a marsupial is not a reptile)")


def test_ask_why_and_json_name_the_reading_that_decided_each_kind_of_answer(workspace):
    from click.testing import CliRunner

    from llmwiki.cli import cli
    from llmwiki.read.readings.registry import every_reading

    with_sources(workspace,
                 volta="# Alessandro Volta\n\nAlessandro Volta was an Italian physicist. He invented the electric battery in 1800. Volta was born in Como.\n",
                 elephant="# Elephant\n\nThe Asian elephant is smaller than the African elephant. Elephants eat grass and bark.\n",
                 kangaroo="# Kangaroo\n\nThe kangaroo is a marsupial from the family Macropodidae. Kangaroos live in Australia.\n")
    runner = CliRunner()
    names = {item.name for item in every_reading()}

    def asked(question: str) -> dict:
        result = runner.invoke(cli, ["ask", question, "--json", "-w", str(workspace.root)])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout.strip().splitlines()[-1])

    cases = {"Was Volta born in Como?": ("supported", "yes"), "Was Volta born in Milan?": ("fact opposed", "no"),
             "What battery did Faraday invent?": ("names absent", None), "Is the Asian elephant larger than the African elephant?": ("comparison in a sentence", "no")}
    for question, (reading, verdict) in cases.items():
        record = asked(question)
        assert (record["decided_by"], record["verdict"]) == (reading, verdict), record
        assert record["steps"][-1]["reading"] == reading and all(step["outcome"] == "passed" for step in record["steps"][:-1])
    assert asked("What battery did Faraday invent?")["refused"] is True and asked("Who founded Rome?")["decided_by"] == "nothing selected"
    kind = asked("Is a kangaroo a reptile?")  # a question on what kind its subject is: some reading decides it, and says so
    assert kind["decided_by"] in names and kind["steps"][-1]["reading"] == kind["decided_by"]
    why = runner.invoke(cli, ["ask", "Was Volta born in Milan?", "--why", "-w", str(workspace.root)])
    assert why.exit_code == 0 and "Why: decided by: fact opposed" in why.output and "names absent: passed" in why.output
    plain = runner.invoke(cli, ["ask", "Was Volta born in Milan?", "-w", str(workspace.root)])
    assert plain.exit_code == 0 and "decided by" not in plain.output  # control: without --why the trail is not shown


def test_a_model_answer_names_the_check_that_held_its_verdict(workspace):
    with_sources(workspace, volta="# Alessandro Volta\n\nAlessandro Volta was an Italian physicist. He invented the electric battery in 1800.\n")
    chunk = first_chunk(workspace, "What did Volta invent?")
    with StubServer([Reply(content=f"Yes, Volta invented the electric battery [c{chunk}].")]) as server:
        stands = answer_question(workspace, "Did Volta invent the electric battery?", services=services_for(workspace, backend=stub_backend(server)))
        server.replies = [Reply(content="Yes, he did.")]
        uncited = answer_question(workspace, "Did Volta invent the electric battery?", services=services_for(workspace, backend=stub_backend(server)))
        server.replies = [Reply(content=f"Volta invented the battery [c{chunk}].")]
        fact = answer_question(workspace, "What did Volta invent?", services=services_for(workspace, backend=stub_backend(server)))
    assert (stands.decided_by, stands.verdict) == ("model verdict stands", "yes") and stands.as_json()["decided_by"] == "model verdict stands"
    assert (uncited.decided_by, uncited.verdict) == ("cites nothing", None) and [step.reading for step in uncited.steps] == ["cites nothing"]
    assert fact.decided_by == "model reply" and fact.steps == ()  # not yes/no: no check reads it


def test_the_headings_above_a_sentence_name_what_it_is_about(workspace):
    # A manual's sentence says "This terminal"; its section says which. Control: the same sentence under another heading.
    with_sources(workspace, manual=("# Plotting manual\n\n## Terminals\n\n### tkcanvas\n\n"
                                    "This terminal driver generates Tk canvas widget commands in Tcl by default.\n\n"
                                    "### svg\n\nThis terminal driver writes scalable vector graphics for web browsers.\n"))
    answer = ask_by_hand(workspace, "Does the tkcanvas terminal generate Tk canvas widget commands in Tcl by default?")
    assert answer.verdict == "yes" and "Tk canvas widget commands" in answer.text
    other = ask_by_hand(workspace, "Does the pdfcairo terminal generate Tk canvas widget commands in Tcl by default?")
    assert other.verdict is None


def test_a_code_block_is_never_quoted_as_the_sentence_before():
    from llmwiki.read.candidates import sentence_before

    code = "The conversion is below.\n\n```\ntime = weekdate_iso(year, week [, day])\n```\n\n"
    assert sentence_before(code) == ("", "")
    assert sentence_before("The conversion takes a year and a week number. ")[0] == "The conversion takes a year and a week number."  # control


def test_a_sentence_pointing_at_the_code_block_before_it_is_quoted_as_written():
    from llmwiki.read.candidates import Candidate, quote

    sentence = "This is often used to provide a convenient user interface to a module."
    after_code = "The path comes first.\n\n```\n>>> import fibo\n```\n\n" + sentence
    candidate = Candidate(sentence, 5, 0, after_code, "6. Modules", after_code, after_code.index(sentence))
    assert candidate.points_at_a_block and quote(candidate) == f"{sentence} [c5]"  # no "[6. Modules] is often used", no code quoted
    after_prose = "Scripts import the module by its name. " + sentence  # control: a sentence before is quoted with it
    candidate = Candidate(sentence, 5, 0, after_prose, "6. Modules", after_prose, after_prose.index(sentence))
    assert not candidate.points_at_a_block and quote(candidate) == f"Scripts import the module by its name. {sentence} [c5]"
