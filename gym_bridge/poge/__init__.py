"""The POGE world family; see `family`."""
