from llmwiki.cli import main

main()
