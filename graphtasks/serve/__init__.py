"""People play the tasks: `graphtasks serve STUDY` (docs/participants.md).

- `study`: a study file (an experiment spec with a `[study]` table) or a task id, checked;
- `engine`: a session's run stepped one person's action at a time, with the agents' seed tree,
  and the experiment records of each step;
- `app`: the Starlette server (needs `graphtasks[web]`): sessions, the store writer, the pages;
- `pilot`: simulated participants through the server;
- `compare`: sessions beside agents' runs (two-step stay probabilities);
- `schema`: the browser's properties of Trial, Run and Participant records.

Importing this package imports no web framework.
"""
