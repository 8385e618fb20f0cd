
import sys
import sentence_transformers  # imports transformers' Trainer, which imports `datasets` when it can find one
module = sys.modules.get("datasets")
print(getattr(module, "__file__", None) or "")
