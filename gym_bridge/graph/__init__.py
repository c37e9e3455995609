"""The graph-task family (neuro-nav graphs, rewardGym tasks, users' graph files); see `family`."""
