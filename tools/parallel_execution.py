"""Sphinx extension (loaded from _config.yml): run the chapters' notebooks side by side, on every core.

myst-nb, in execution mode ``cache``, runs a notebook when Sphinx reads it, one notebook after the
other; on a machine with several cores all but one wait. Here, just before Sphinx starts reading,
every notebook it is about to read that is not yet in the execution cache is run in a pool of worker
processes, one per core, exactly as myst-nb would run it (jupyter-cache's ``single_nb_execution``,
the notebook's own folder as working directory, the book's timeout and ``allow_errors``), and stored
in the same cache. When Sphinx then reads the notebook, myst-nb finds it there. Nothing on a page
changes: each notebook still runs in a kernel of its own, from its first cell to its last.

Two kinds of notebook are left to myst-nb, which runs them afterwards, one at a time:

- those named in ``parallel_execution_alone`` (the lab, which times the reader's own machine and
  must have it to itself while it measures);
- those that carry their own myst-nb settings in their metadata.

A notebook that fails in the pool is not cached, so myst-nb runs it again and reports the error
as it always does.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def _run(job: tuple[str, bool, int, bool]) -> tuple[str, str | None, float, str | None]:
    """Execute one notebook (a worker's task): its path, the executed notebook as JSON, seconds, error."""
    import contextlib
    import tempfile

    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    path, in_temp, timeout, allow_errors = job
    notebook = nbformat.read(path, as_version=4)
    folder = tempfile.TemporaryDirectory() if in_temp else contextlib.nullcontext(str(Path(path).parent))
    with folder as cwd:
        result = single_nb_execution(notebook, cwd=cwd, timeout=timeout, allow_errors=allow_errors,
                                     meta_override=True)
    if result.err is not None:
        return path, None, result.time, result.exc_string
    return path, nbformat.writes(result.nb), result.time, None


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                       # not every system reports the cores this process may use
        return os.cpu_count() or 1


def _to_run(app, env, docnames) -> list[str]:
    """The notebooks Sphinx is about to read that the pool should run: not cached, not to be run alone."""
    import nbformat
    from jupyter_cache import get_cache

    config = env.mystnb_config
    if config.execution_mode != "cache":
        return []
    cache = get_cache(config.execution_cache_path)
    alone = set(app.config.parallel_execution_alone)
    paths = []
    for docname in sorted(docnames):
        path = Path(env.doc2path(docname))
        if path.suffix != ".ipynb" or docname in alone:
            continue
        relative = path.relative_to(app.srcdir).as_posix()
        if any(fnmatch.fnmatch(relative, pattern) for pattern in config.execution_excludepatterns):
            continue
        notebook = nbformat.read(path, as_version=4)
        if config.metadata_key in notebook.metadata:
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            paths.append(str(path))
    return paths


def execute_side_by_side(app, env, docnames) -> None:
    """``env-before-read-docs``: run the uncached notebooks in a pool and store them in myst-nb's cache."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    paths = _to_run(app, env, docnames)
    workers = min(len(paths), _workers())
    if workers < 2:
        return                                   # nothing to share out: myst-nb runs it as usual
    config = env.mystnb_config
    LOGGER.info(f"executing {len(paths)} notebooks in {workers} processes")
    jobs = [(p, config.execution_in_temp, config.execution_timeout, config.execution_allow_errors) for p in paths]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        results = pool.map(_run, jobs, chunksize=1)
    cache = get_cache(config.execution_cache_path)
    for path, text, seconds, error in results:
        if text is None:
            LOGGER.info(f"{path} failed in the pool; it runs again when read\n{error}")
            continue
        record = cache.add_nb_to_project(path)
        cache.cache_notebook_bundle(
            CacheBundleIn(nbformat.reads(text, as_version=4), record.uri, data={"execution_seconds": seconds}),
            check_validity=False, overwrite=True)


def setup(app):
    app.add_config_value("parallel_execution_alone", [], "env", types=[list])
    app.connect("env-before-read-docs", execute_side_by_side)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
