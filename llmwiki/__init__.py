"""llmwiki: a notebook-driven analysis and QA workbench over a Markdown wiki."""

from llmwiki.errors import LlmwikiError
from llmwiki.workspace import Workspace

__all__ = ["LlmwikiError", "Workspace"]
