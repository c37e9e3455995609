"""The Room memory task family; see `family`."""
