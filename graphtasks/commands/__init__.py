"""One module per command group; see graphtasks/cli.py."""
