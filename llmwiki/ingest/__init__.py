"""The first step of the write side: files -> stored documents and chunks.

``extract`` reads a file into text and pages (Markdown, plain text, HTML, PDF, DOCX), ``chunking`` cuts the
text into chunks within a token budget (pure), and ``sources`` runs both over the files of ``sources/`` and
stores what changed. Nothing here knows of wiki pages: generation and publishing come after
(``llmwiki.generate``, ``llmwiki.publish``).
"""
