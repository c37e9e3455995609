"""A study as a JATOS study archive (.jzip), the file JATOS 3.x imports (Studies > Import).

The archive holds the study's properties (`<dirName>.jas`: JSON, `{"version": "3", "data":
{...}}` with one component, `index.html`, and one batch) and its assets folder `<dirName>/`:
the jsPsych export of the study (`graphtasks.serve.jspsych.export_jspsych`) with `jatos.js`
loaded, so that on finish the page hands jsPsych's data to JATOS (`jatos.submitResultData`)
and ends the study. What JATOS stores per participant is that JSON, which `graphtasks
participants import --jspsych` reads back.
"""

from __future__ import annotations

import json
import re
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Any

from .jspsych import JsPsychError, export_jspsych
from .study import Study

WORKER_TYPES = ["Jatos", "PersonalSingle", "PersonalMultiple", "GeneralSingle", "GeneralMultiple", "MTurk"]


def export_jatos(study: Study, out: str | Path, sessions: int = 1, store: Any = None) -> Path:
    """Write `study` as a JATOS study archive at `out` (a `.jzip` file).

    Parameters
    ----------
    study : Study
        The study (`graphtasks.serve.study.load_study`).
    out : str or Path
        The archive to write.
    sessions : int, optional
        Session slots, as `export_jspsych`'s.
    store : GraphStore or str, optional
        Where tasks that are not built in are read.

    Returns
    -------
    Path
        The archive.

    Examples
    --------
    >>> import tempfile, zipfile
    >>> from pathlib import Path
    >>> from graphtasks.serve.jatos import export_jatos
    >>> from graphtasks.serve.study import load_study
    >>> archive = export_jatos(load_study("rewardgym/two-step", episodes=2), Path(tempfile.mkdtemp()) / "s.jzip")
    >>> sorted(n for n in zipfile.ZipFile(archive).namelist() if n.count("/") < 1)
    ['study_rewardgym_two-step.jas']
    """
    path = Path(out)
    if path.suffix != ".jzip":
        raise JsPsychError(f"{path}: a JATOS study archive's name ends in .jzip")
    folder = dir_name(study.spec.name)
    # the UUIDs are the study's own (the same study exported again is the same study in JATOS: an update)
    study_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"graphtasks:{study.spec.name}"))
    properties = {
        "version": "3",
        "data": {
            "uuid": study_uuid,
            "title": study.title or study.spec.name,
            "description": f"graphtasks study {study.spec.name!r}, exported for jsPsych 8 (graphtasks serve "
                           "--export-jatos).",
            "groupStudy": False,
            "linearStudy": False,
            "allowPreview": False,
            "dirName": folder,
            "comments": "Each result is jsPsych's data (JSON); read it back with `graphtasks participants import "
                        "--jspsych`.",
            "jsonData": None,
            "endRedirectUrl": study.redirect or "",
            "studyEntryMsg": None,
            "componentList": [{
                "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"graphtasks:{study.spec.name}:index.html")),
                "title": study.title or study.spec.name,
                "htmlFilePath": "index.html",
                "reloadable": False,
                "active": True,
                "comments": "",
                "jsonData": None,
            }],
            "batchList": [{
                "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"graphtasks:{study.spec.name}:batch")),
                "title": "Default",
                "active": True,
                "maxActiveMembers": None,
                "maxTotalMembers": None,
                "maxTotalWorkers": None,
                "allowedWorkerTypes": WORKER_TYPES,
                "comments": None,
                "jsonData": None,
            }],
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        export_jspsych(study, Path(tmp) / folder, sessions, jatos=True, store=store)
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{folder}.jas", json.dumps(properties, indent=2))
            for file in sorted((Path(tmp) / folder).rglob("*")):
                if file.is_file():
                    z.write(file, file.relative_to(tmp).as_posix())
    return path


def dir_name(name: str) -> str:
    """The study assets folder's name JATOS accepts: letters, digits, - and _.

    Examples
    --------
    >>> from graphtasks.serve.jatos import dir_name
    >>> dir_name("study rewardgym/two-step")
    'study_rewardgym_two-step'
    """
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:200] or "graphtasks_study"
