from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from llmwiki.ingest.chunking import chunk_page, chunk_pages
from llmwiki.text.segment import sentence_spans
from llmwiki.ingest.extract import _PageBuilder
from llmwiki.records import PageText


def count_words(text: str) -> int:
    """A token counter that is additive over whitespace, like word-piece."""
    return len(text.split())


def page_of(blocks: list[tuple[str, tuple[str, ...]]], number: int = 1) -> PageText:
    builder = _PageBuilder()
    for text, breadcrumb in blocks:
        builder.add(text, breadcrumb)
    return builder.page(number)


def words(count: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{index}" for index in range(count)) + "."


# -- sentence spans ----------------------------------------------------------


def test_sentence_spans_keep_abbreviations_initials_and_decimals_together():
    text = "Dr. Smith met J. Watt in the U.S. at 3.5 p.m. on Monday. It rained! Did it? Yes."
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    assert sentences == ["Dr. Smith met J. Watt in the U.S. at 3.5 p.m. on Monday.", "It rained!", "Did it?", "Yes."]


def test_sentence_spans_split_before_quotes_and_digits():
    text = 'He said "no." "Then go," she replied. 1911 was the year.'
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    assert sentences == ['He said "no."', '"Then go," she replied.', "1911 was the year."]


# -- chunking rules ------------------------------------------------------------


def test_paragraphs_pack_until_the_budget_then_start_a_new_chunk():
    page = page_of([(words(40, "a"), ()), (words(40, "b"), ()), (words(40, "c"), ())])
    chunks = chunk_page(page, max_tokens=100, overlap_tokens=0, min_tokens=0, count_tokens=count_words)
    assert [chunk.token_count for chunk in chunks] == [80, 40]
    assert chunks[1].text.startswith("c0")


def test_new_heading_section_starts_a_new_chunk_with_its_breadcrumb():
    page = page_of([
        ("Intro", ("Intro",)),
        (words(30, "i"), ("Intro",)),
        ("Diet", ("Intro", "Diet")),
        (words(30, "d"), ("Intro", "Diet")),
    ])
    chunks = chunk_page(page, max_tokens=500, overlap_tokens=50, min_tokens=10, count_tokens=count_words)
    assert [chunk.breadcrumb for chunk in chunks] == [("Intro",), ("Intro", "Diet")]
    assert chunks[1].text.startswith("Diet\n\nd0")  # no overlap across a section boundary


def test_a_lone_heading_stays_with_its_first_paragraph():
    page = page_of([("Intro", ("Intro",)), ("Diet", ("Intro", "Diet")), (words(30, "d"), ("Intro", "Diet"))])
    chunks = chunk_page(page, max_tokens=500, overlap_tokens=0, min_tokens=10, count_tokens=count_words)
    assert len(chunks) == 1
    assert chunks[0].text.startswith("Intro\n\nDiet\n\nd0")


def test_overlap_repeats_trailing_sentences_within_a_section():
    sentences = " ".join(f"S{index} x x x x x x x x x." for index in range(12))  # 12 sentences of 10 words
    page = page_of([(sentences, ())])
    chunks = chunk_page(page, max_tokens=50, overlap_tokens=20, min_tokens=0, count_tokens=count_words)
    assert len(chunks) > 2
    for before, after in zip(chunks, chunks[1:]):
        assert after.start < before.end  # they overlap
        overlap_text = page.text[after.start:before.end]
        assert count_words(overlap_text) <= 20
    assert all(chunk.token_count <= 50 for chunk in chunks)


def test_oversized_sentence_and_word_are_split_to_fit():
    long_sentence = words(130, "x")
    long_word = "y" * 300
    page = page_of([(long_sentence, ()), (long_word, ())])
    chunks = chunk_page(page, max_tokens=50, overlap_tokens=10, min_tokens=0, count_tokens=len)
    assert all(chunk.token_count <= 50 for chunk in chunks)
    covered = "".join(page.text[chunk.start:chunk.end] for chunk in chunks)
    assert "y" * 50 in covered


def test_tiny_trailing_chunk_merges_into_the_previous_one():
    page = page_of([(words(60, "a"), ()), ("Tail end.", ())])
    merged = chunk_page(page, max_tokens=100, overlap_tokens=0, min_tokens=5, count_tokens=count_words)
    assert len(merged) == 1 and merged[0].text.endswith("Tail end.")
    # Control: with no minimum, a tail that does not fit gets its own chunk.
    page = page_of([(words(99, "a"), ()), ("Tail end.", ())])
    separate = chunk_page(page, max_tokens=100, overlap_tokens=0, min_tokens=0, count_tokens=count_words)
    assert len(separate) == 2 and separate[1].text == "Tail end."


def test_chunks_never_span_pages_and_keep_page_numbers():
    pages = [page_of([(words(10, "p"), ("Sec",))], number=1), page_of([(words(10, "q"), ("Sec",))], number=2)]
    chunks = chunk_pages(pages, max_tokens=100, overlap_tokens=0, min_tokens=0, count_tokens=count_words)
    assert [(chunk.page_number, chunk.breadcrumb) for chunk in chunks] == [(1, ("Sec",)), (2, ("Sec",))]


def test_real_tokenizer_budget_is_respected(count_tokens):
    text = " ".join(["The otter (Lutra lutra) eats fish, crayfish and frogs in 1,234 rivers."] * 200)
    page = page_of([(text, ("Otters",))])
    chunks = chunk_page(page, max_tokens=128, overlap_tokens=32, min_tokens=16, count_tokens=count_tokens)
    assert len(chunks) > 5
    assert all(chunk.token_count <= 128 for chunk in chunks)


# -- properties ----------------------------------------------------------------

word = st.from_regex(r"[A-Za-z0-9éü]{1,12}[.!?,]?", fullmatch=True)
paragraph = st.lists(word, min_size=1, max_size=80).map(" ".join)
heading_path = st.sampled_from([(), ("A",), ("A", "B"), ("C",)])
blocks = st.lists(st.tuples(paragraph, heading_path), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(blocks=blocks, max_tokens=st.integers(8, 120), overlap=st.integers(0, 40), minimum=st.integers(0, 20))
def test_chunk_properties(blocks, max_tokens, overlap, minimum):
    overlap = min(overlap, max_tokens - 1)
    minimum = min(minimum, max_tokens)
    page = page_of(blocks)
    chunks = chunk_page(page, max_tokens=max_tokens, overlap_tokens=overlap, min_tokens=minimum, count_tokens=count_words)
    # Every chunk is an exact slice of the page and fits the budget.
    for chunk in chunks:
        assert chunk.text == page.text[chunk.start:chunk.end]
        assert chunk.token_count == count_words(chunk.text) <= max_tokens
        assert chunk.text == chunk.text.strip()
    # Chunks move forward through the page.
    starts = [chunk.start for chunk in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # Nothing is lost: every word of the page is inside some chunk.
    for match in re.finditer(r"\S+", page.text):
        assert any(chunk.start <= match.start() and match.end() <= chunk.end for chunk in chunks)
    # Overlap between neighbours stays within its budget.
    for before, after in zip(chunks, chunks[1:]):
        if after.start < before.end:
            assert count_words(page.text[after.start:before.end]) <= overlap
    # Each chunk's breadcrumb is one of the breadcrumbs of the blocks it touches.
    for chunk in chunks:
        touched = {block.breadcrumb for block in page.blocks if block.start < chunk.end and chunk.start < block.end}
        assert chunk.breadcrumb in touched


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=0, max_size=400))
def test_sentence_spans_are_ordered_trimmed_and_cover_all_words(text):
    spans = sentence_spans(text)
    for start, end in spans:
        assert text[start:end] == text[start:end].strip() and end > start
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    for match in re.finditer(r"\S+", text):
        assert any(start <= match.start() and match.end() <= end for start, end in spans)


def test_a_long_code_block_is_fenced_in_pieces_so_no_chunk_reads_code_as_prose():
    from llmwiki.ingest.extract import CODE_BLOCK_CHARACTERS
    from llmwiki.text.segment import CODE, segments

    code_lines = [f"GRANT {{ SELECT | INSERT }} ON TABLE t{index} TO {{ role_{index} | PUBLIC }} [, ...]" for index in range(60)]
    page = page_of([("## Synopsis", ("Synopsis",)), ("```sql\n" + "\n".join(code_lines) + "\n```", ("Synopsis",)),
                    ("## Description", ("Description",)), ("The command sets the privileges of objects made later. It changes no old ones.", ("Description",))])
    fenced = [block.text for block in page.blocks if block.text.startswith("```")]
    assert len(fenced) > 1 and all(len(text) <= CODE_BLOCK_CHARACTERS + 20 for text in fenced)  # an opening and a closing fence each
    assert all(text.startswith("```sql\n") and text.endswith("\n```") for text in fenced)
    assert [line for text in fenced for line in text.split("\n")[1:-1]] == code_lines  # every line kept, in order
    for chunk in chunk_pages([page], max_tokens=120, overlap_tokens=0, min_tokens=0, count_tokens=count_words):
        parts = segments(chunk.text)
        assert not any(part.is_prose and "GRANT {" in chunk.text[part.start:part.end] for part in parts)  # no code line is prose
        kinds = {chunk.text[part.start:part.end]: part.kind for part in parts}
        if "The command sets" in chunk.text:
            assert kinds.get("The command sets the privileges of objects made later.") == "sentence"
    assert len(page_of([("```\nshort = 1\n```", ())]).blocks) == 1  # control: a short block stays one


def test_a_chunk_cut_inside_a_code_block_reads_the_lines_before_its_closing_fence_as_code():
    from llmwiki.text.segment import CODE, segments

    cut = "...]\n    [ --force | --dry-run ]\n```\n\n## Description\n\nThe command sets privileges. It changes no old ones."
    kinds = [(part.kind, cut[part.start:part.end]) for part in segments(cut)]
    assert kinds[0] == (CODE, "...]\n    [ --force | --dry-run ]\n```") and ("sentence", "The command sets privileges.") in kinds
    # Control: a fence that opens a block right after a line of prose (CommonMark allows it) still opens one.
    opened = "Example:\n```\nprint(1)\n```\n\nThat prints one."
    assert [(part.kind, opened[part.start:part.end]) for part in segments(opened)] == [
        ("sentence", "Example:"), (CODE, "```\nprint(1)\n```"), ("sentence", "That prints one.")]
