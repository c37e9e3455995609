"""The graphtasks command line (the only code that imports every layer) and the packaged data."""
