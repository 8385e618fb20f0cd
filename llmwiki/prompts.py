"""Every prompt llmwiki sends, as constants, each stating its output format.

Placeholders are filled with ``str.format``; literal braces are doubled.
Chunks are shown to the model as ``[c<id>] <text>`` and every claim must cite
them the same way, so each sentence stays traceable to a source passage.
"""

SYSTEM = (
    "You maintain a wiki of Markdown pages built only from the source passages you are given. "
    "Never state anything the passages do not say. Cite every sentence with the id of the passage "
    "it comes from, written exactly as [c<id>], for example [c12]."
)

SOURCE_PAGES = """Write the wiki pages for one source document.

Source: {title} ({path})

Passages:
{passages}

Reply with one JSON object and nothing else, in this format:
{{
  "description": "one line, at most 20 words, saying what the source is about",
  "summary": "Markdown paragraphs summarising the source; every sentence ends with citations like [c12]",
  "concepts": [
    {{
      "name": "a concept, person, place or thing the source explains (Title Case)",
      "aliases": ["other names for it used in the passages"],
      "text": "2-4 sentences about it from this source; every sentence ends with citations like [c12]"
    }}
  ]
}}
Give at most {max_concepts} concepts. Cite only the passage ids listed above."""

ANSWER = """Answer the question from the context passages only.

Context:
{context}

Question: {question}

Write a short answer in Markdown. End every sentence with the citations of the passages it rests on,
like [c12]. If the passages do not answer the question, say exactly: "The sources do not say." """

CONDENSE = """Rewrite the follow-up question so that it stands alone, using the conversation for context.

Conversation:
{history}

Follow-up question: {question}

Reply with the rewritten question only, on one line."""

CONFIRM_CONTRADICTION = """Two sentences from different pages of the same wiki:

1. {first}
2. {second}

Can both be true at the same time? Reply with one word and nothing else: "yes" if they contradict each other (both cannot be true), "no" if they can both be true."""
