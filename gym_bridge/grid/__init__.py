"""The neuro-nav grid family; see `family`."""
