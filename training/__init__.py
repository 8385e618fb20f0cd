"""Training scripts for llmwiki's shipped models, kept out of the runtime package: run from the repository root
(``python -m training.ranker``); the weights they write are what the package ships."""
