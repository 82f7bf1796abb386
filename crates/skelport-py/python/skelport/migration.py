"""Migrations past one machine: ``skelport.migrate`` converts many files on a Dask cluster,
resumably, and records what it did in a manifest.

The work is split in three parts so other engines can run it too (docs/python.md, "On Ray and
Spark"):

* ``plan(inputs, to, out_dir)``: what to convert, as the command line's batch plans it (each MPFB
  ``rig.<name>.json`` joined to the ``weights.<name>.json`` beside it, outputs named
  ``<stem>.<extension>``, colliding outputs refused). Runs where it is called.
* ``run_jobs(jobs, options)``: convert some of the planned jobs and return one row per job. Runs
  anywhere ``skelport`` is installed (a Dask task, a Ray task, a Spark partition); each conversion
  releases the GIL.
* ``write_manifest(rows, path)``: the rows as JSON Lines or Parquet.

A row has the fields of ``skelport convert --json``'s batch report (``input``, ``output``,
``from``, ``to``, ``ok``, ``skipped``, ``error``, ``code``, ``diagnostics``) and ``status``,
``weights``, ``outputs``, ``losses``, ``bytes_in``, ``bytes_out``, ``seconds``, ``worker`` and
``attempt``: schemas/migrate-manifest.schema.json.

Dask is imported only by ``migrate`` (``pip install skelport[dask]``); ``import skelport`` does not
need it, and neither do ``plan``, ``run_jobs`` and ``write_manifest``.
"""

from __future__ import annotations

import glob
import json
import math
import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

from . import _skelport

PathLike = Union[str, "os.PathLike[str]"]

#: The row's fields, in the manifest's column order (schemas/migrate-manifest.schema.json).
FIELDS = (
    "input",
    "output",
    "from",
    "to",
    "ok",
    "skipped",
    "error",
    "code",
    "diagnostics",
    "status",
    "weights",
    "outputs",
    "losses",
    "bytes_in",
    "bytes_out",
    "seconds",
    "worker",
    "attempt",
)

#: Temporaries the writer leaves behind when its process is killed mid-save (io.rs names them).
_TEMPORARY_SUFFIXES = (".tmp", ".bak")


@dataclass(frozen=True)
class Job:
    """One conversion of a migration: the input, the MPFB weights joined to it, where it goes."""

    input: str
    weights: "str | None"
    output: str
    side_files: "tuple[str, ...]" = ()
    #: Why it must not be converted (its output would collide with another input's), or None.
    conflict: "str | None" = None


@dataclass
class Plan:
    """What ``plan`` found: the jobs, and the rows of inputs that are no job of their own."""

    to: str
    out_dir: str
    jobs: "list[Job]"
    #: Rows for inputs that are not converted: MPFB weights files whose rig is not an input.
    refused: "list[dict[str, Any]]" = field(default_factory=list)
    #: Said once: which rigs were joined to the weights beside them.
    note: "str | None" = None


def _is_glob(s: str) -> bool:
    return any(c in s for c in "*?[")


def expand_inputs(inputs: "PathLike | Iterable[PathLike]") -> "list[str]":
    """The input paths: a glob (``"library/**/*.xml"``, recursive), one path, or paths."""
    if isinstance(inputs, (str, os.PathLike)):
        s = os.fspath(inputs)
        if _is_glob(s):
            return sorted(p for p in glob.glob(s, recursive=True) if os.path.isfile(p))
        return [s]
    out: "list[str]" = []
    for i in inputs:
        s = os.fspath(i)
        out.extend(sorted(p for p in glob.glob(s, recursive=True) if os.path.isfile(p)) if _is_glob(s) else [s])
    return out


def plan(
    inputs: "PathLike | Iterable[PathLike]",
    to: str,
    out_dir: PathLike,
    *,
    weights: "PathLike | None" = None,
    embed: bool = False,
    compress: bool = False,
) -> Plan:
    """Plan a migration as ``skelport convert INPUTS --to TO -o OUT_DIR/`` plans its batch."""
    paths = expand_inputs(inputs)
    out = os.fspath(out_dir)
    p = _skelport._migrate_plan(paths, out, to, weights=None if weights is None else os.fspath(weights), embed=embed, compress=compress)
    jobs = [Job(i, w, o, tuple(s), c) for i, w, o, s, c in p["jobs"]]
    refused = [
        _finish(
            {"input": i, "output": None, "from": "mpfb", "to": p["to"], "ok": False, "skipped": False, "error": m, "code": "input.kind", "diagnostics": [], "outputs": []},
            None,
            0.0,
            None,
            0,
        )
        for i, m in p["refused"]
    ]
    return Plan(p["to"], out, jobs, refused, p["note"])


def _size(p: "str | None") -> int:
    try:
        return os.stat(p).st_size if p else 0
    except OSError:
        return 0


def _finish(row: "dict[str, Any]", weights: "str | None", seconds: float, worker: "str | None", attempt: int) -> "dict[str, Any]":
    """The manifest row from the command line's row."""
    status = "skipped" if row["skipped"] else "converted" if row["ok"] else "failed"
    r = {k: row.get(k) for k in FIELDS[:9]}
    r.update(
        status=status,
        weights=weights,
        outputs=list(row.get("outputs") or []),
        losses=[d["code"] for d in row["diagnostics"] if d["severity"] == "loss"],
        bytes_in=_size(row["input"]) + _size(weights) if row["input"] else 0,
        bytes_out=sum(_size(o) for o in (row.get("outputs") or [])),
        seconds=seconds,
        worker=worker,
        attempt=attempt,
    )
    return r


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except Exception:  # not in a Dask worker: Ray, Spark, a plain process
        return f"{socket.gethostname()}:{os.getpid()}"


def _up_to_date(job: Job, since_ns: "int | None") -> bool:
    """The output is there, newer than its input (and weights), and older than this run (an
    output written during this run was written by an attempt whose worker died before it
    reported: it is converted again, so the manifest has its row)."""
    try:
        out = os.stat(job.output).st_mtime_ns
        newest_in = max(os.stat(p).st_mtime_ns for p in (job.input, job.weights) if p)
    except OSError:
        return False
    return out > newest_in and (since_ns is None or out < since_ns)


def _written_during(job: Job, since_ns: "int | None") -> bool:
    """The output was written during this run: by an attempt whose worker died before it
    reported. It was in flight, so it is finished (converted again) even after a stop."""
    try:
        return since_ns is not None and os.stat(job.output).st_mtime_ns >= since_ns
    except OSError:
        return False


def _dask_event(name: str) -> "Callable[[], bool]":
    """A check of the Dask event `name`, asked of the scheduler at most every 0.2 s."""
    from distributed import Event

    event = Event(name)
    last, answer = 0.0, False

    def is_set() -> bool:
        nonlocal last, answer
        now = time.monotonic()
        if not answer and now - last >= 0.2:
            last, answer = now, bool(event.is_set())
        return answer

    return is_set


def run_jobs(
    jobs: "Sequence[Job]",
    options: "dict[str, Any]",
    *,
    since_ns: "int | None" = None,
    attempt: int = 1,
    stop: "Callable[[], bool] | str | None" = None,
) -> "list[dict[str, Any]]":
    """Convert `jobs` one after another and return their manifest rows (never raises for a
    file's failure). `options`: `to` (required), `skip_existing`, `timeout` and
    ``skelport.convert``'s keyword options (`from_`, `mesh`, `map`, `max_influences`,
    `strict`, the writer options). `stop`: a callable, or the name of a Dask event, checked
    between files: once true, the files not started get the command line's row for an
    interrupted batch ("interrupted before it started")."""
    options = dict(options)
    to = options.pop("to")
    skip = options.pop("skip_existing", True)
    stopped = _dask_event(stop) if isinstance(stop, str) else stop
    worker = _worker_name()
    rows = []
    made: "set[str]" = set()
    for job in jobs:
        start = time.perf_counter()
        if stopped is not None and stopped() and not _written_during(job, since_ns):
            row = {"input": job.input, "output": None, "from": None, "to": to, "ok": False, "skipped": False, "error": "interrupted before it started", "code": "output", "diagnostics": []}
        elif job.conflict is not None:
            row = {"input": job.input, "output": None, "from": None, "to": to, "ok": False, "skipped": False, "error": job.conflict, "code": "output", "diagnostics": []}
        elif skip and _up_to_date(job, since_ns):
            row = {"input": job.input, "output": job.output, "from": None, "to": to, "ok": True, "skipped": True, "error": None, "code": None, "diagnostics": []}
        else:
            folder = os.path.dirname(job.output)
            if folder not in made:
                # Where run_jobs runs without migrate (Ray, Spark), the folder may be new.
                os.makedirs(folder or ".", exist_ok=True)
                made.add(folder)
            row = _skelport._migrate_file(job.input, job.output, to, weights=job.weights, **options)
            # The row's `to` is the format's name, as the command line prints it.
        rows.append(_finish(row, job.weights, time.perf_counter() - start, worker, attempt))
    return rows


def _outcome(f: Any) -> "tuple[list[dict[str, Any]] | None, str]":
    """A finished Dask future's rows, or None and why it has none."""
    try:
        if f.status == "finished":
            return f.result(), ""
        if f.status == "error":
            e = f.exception()
            return None, f"{type(e).__name__}: {e}".rstrip(": ")
        return None, f"the task was {f.status}"
    except BaseException as e:  # noqa: BLE001 - whatever the future raises, the files get rows
        return None, f"{type(e).__name__}: {e}".rstrip(": ")


def _lost_row(job: Job, to: str, why: str, attempt: int) -> "dict[str, Any]":
    row = {
        "input": job.input,
        "output": job.output,
        "from": None,
        "to": to,
        "ok": False,
        "skipped": False,
        "error": f"{job.input}: not converted: {why}; a re-run of the migration converts it",
        "code": "worker",
        "diagnostics": [],
    }
    return _finish(row, job.weights, 0.0, None, attempt)


# ---------------------------------------------------------------------------------------------
# The manifest


def _arrow_schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    # `place` is absent from a diagnostic that names none; Parquet stores it as null.
    diag = pa.struct([("severity", pa.string()), ("code", pa.string()), ("message", pa.string()), ("place", pa.string())])
    return pa.schema(
        [
            ("input", pa.string()),
            ("output", pa.string()),
            ("from", pa.string()),
            ("to", pa.string()),
            ("ok", pa.bool_()),
            ("skipped", pa.bool_()),
            ("error", pa.string()),
            ("code", pa.string()),
            ("diagnostics", pa.list_(diag)),
            ("status", pa.string()),
            ("weights", pa.string()),
            ("outputs", pa.list_(pa.string())),
            ("losses", pa.list_(pa.string())),
            ("bytes_in", pa.int64()),
            ("bytes_out", pa.int64()),
            ("seconds", pa.float64()),
            ("worker", pa.string()),
            ("attempt", pa.int32()),
        ]
    )


def _manifest_kind(path: PathLike) -> str:
    name = os.fspath(path).lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".jsonl"):
        return "jsonl"
    raise ValueError(f"manifest={os.fspath(path)!r}: name it .parquet (needs pyarrow) or .jsonl")


def _replace_atomically(path: str, write: Callable[[str], None]) -> None:
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{uuid.uuid4().hex}.part")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_manifest(rows: "Sequence[dict[str, Any]]", path: PathLike) -> None:
    """Write `rows` to `path` (``.jsonl``: one JSON object a line; ``.parquet``: pyarrow), all
    or nothing."""
    kind = _manifest_kind(path)
    if kind == "jsonl":

        def jsonl(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")

        _replace_atomically(os.fspath(path), jsonl)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist([dict(r) for r in rows], schema=_arrow_schema())
        _replace_atomically(os.fspath(path), lambda tmp: pq.write_table(table, tmp))


def read_manifest(path: PathLike) -> "list[dict[str, Any]]":
    """The rows of a manifest ``write_manifest`` (or ``migrate``) wrote."""
    if _manifest_kind(path) == "jsonl":
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    import pyarrow.parquet as pq

    rows = pq.read_table(os.fspath(path)).to_pylist()
    # A diagnostic's null place is one the row did not have (as the JSON report leaves it out).
    for row in rows:
        for d in row.get("diagnostics") or []:
            if d.get("place") is None:
                d.pop("place", None)
    return rows


class _JsonlAppender:
    """A JSON Lines manifest written as rows arrive, so a migration that is itself killed still
    leaves the rows it had (each line is whole: written and flushed in one call)."""

    def __init__(self, path: str):
        os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
        self.f = open(path, "w", encoding="utf-8")

    def add(self, rows: "Iterable[dict[str, Any]]") -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        if text:
            self.f.write(text)
            self.f.flush()

    def close(self) -> None:
        self.f.close()


# ---------------------------------------------------------------------------------------------
# Progress


class _Progress:
    """A one-line progress bar on a terminal's standard error, and the caller's callback."""

    def __init__(self, total: int, show: bool, callback: "Callable[[dict[str, Any]], Any] | None"):
        self.total, self.show, self.callback = total, show, callback
        self.counts = {"converted": 0, "skipped": 0, "failed": 0}
        self.last = 0.0
        self.start = time.perf_counter()

    def add(self, rows: "Iterable[dict[str, Any]]") -> None:
        for r in rows:
            self.counts[r["status"]] += 1
        if self.callback is not None:
            self.callback(self.snapshot())
        now = time.perf_counter()
        if self.show and (now - self.last > 0.1 or self.done == self.total):
            self.last = now
            width = 30
            filled = width * self.done // max(self.total, 1)
            c = self.counts
            sys.stderr.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"({c['converted']} converted, {c['skipped']} skipped, {c['failed']} failed)"
            )
            sys.stderr.flush()

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def snapshot(self) -> "dict[str, Any]":
        return {"total": self.total, "done": self.done, **self.counts, "seconds": time.perf_counter() - self.start}

    def close(self) -> None:
        if self.show:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# The migration


@dataclass
class Migration:
    """What ``migrate`` did: the summary of ``skelport convert --json``'s batch report, every
    row, and the manifest's path."""

    total: int
    converted: int
    skipped: int
    failed: int
    rows: "list[dict[str, Any]]"
    manifest: "str | None"
    seconds: float
    #: Tasks the cluster lost (a worker died, the cluster restarted) whose files were sent again.
    resubmitted: int = 0
    #: Temporaries of killed workers removed from the output folder at the end.
    temporaries_removed: int = 0
    note: "str | None" = None

    @property
    def ok(self) -> bool:
        return self.failed == 0

    @property
    def errors(self) -> "list[dict[str, Any]]":
        return [r for r in self.rows if r["status"] == "failed"]


def _remove_temporaries(out_dir: str) -> int:
    n = 0
    try:
        names = os.listdir(out_dir)
    except OSError:
        return 0
    for name in names:
        if name.startswith(".skelport-") and name.endswith(_TEMPORARY_SUFFIXES):
            try:
                os.remove(os.path.join(out_dir, name))
                n += 1
            except OSError:
                pass
    return n


def _chunks(jobs: "list[Job]", size: int) -> "list[list[Job]]":
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


def migrate(
    inputs: "PathLike | Iterable[PathLike]",
    to: str,
    out_dir: PathLike,
    *,
    client: Any = None,
    manifest: "PathLike | None" = None,
    skip_existing: bool = True,
    timeout: "float | None" = 300.0,
    chunk_size: "int | None" = None,
    progress: "bool | Callable[[dict[str, Any]], Any] | None" = None,
    weights: "PathLike | None" = None,
    from_: "str | None" = None,
    format: "str | None" = None,
    mesh: "PathLike | None" = None,
    map: "str | PathLike | None" = None,
    max_influences: "int | None" = None,
    strict: bool = False,
    **writer_options: Any,
) -> Migration:
    """Convert every input into `out_dir` as `to` on a Dask cluster, as
    ``skelport convert INPUTS --to TO -o OUT_DIR/ --skip-existing --json`` does on one machine.

    `inputs`: paths, or a glob (``"library/**/*.dae"``). `client`: a
    ``dask.distributed.Client``; by default a ``LocalCluster`` of worker processes is made for
    the call and closed after it. Each task converts `chunk_size` files (default: the jobs spread
    over four tasks per worker thread, at most 64 a task) with the GIL released.

    * Resumable and idempotent: with `skip_existing` (the default), an input whose output is
      there and newer than the input (and its weights) is not converted again (a row with status
      ``skipped``). Outputs are written atomically (a temporary file renamed into place), so a
      worker killed mid-file leaves no partial output; its temporaries are removed at the end.
    * Failures are rows: a bad file (the command line's error and code), a task whose worker
      died or that the cluster lost (code ``worker``; the lost task's files are sent again one a
      task first), a file not converted within `timeout` seconds (code ``timeout``; nothing is
      written). The migration goes on.
    * `manifest`: a ``.jsonl`` (written as rows arrive) or ``.parquet`` file with one row per
      input (schemas/migrate-manifest.schema.json).
    * `progress`: True for a progress bar on standard error (the default on a terminal), False
      for none, or a callable given ``{"total", "done", "converted", "skipped", "failed",
      "seconds"}`` after each finished task. The Dask dashboard shows the tasks too.

    The other options are ``skelport.convert``'s: `from_` (or `format`), `mesh`, `map`, `max_influences`,
    `strict`, `weights` (one rig's weights: refused for several inputs, as on the command
    line) and the writer options. Returns a ``Migration``; raises ``skelport.Error`` only when the
    migration cannot start (an unknown format, `weights` with several rigs).
    """
    if format is not None and from_ is not None and format != from_:
        raise TypeError(f"migrate() got from_={from_!r} and format={format!r}: give one")
    from_ = from_ if from_ is not None else format
    try:
        from distributed import Client, Event, LocalCluster, as_completed, wait
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("skelport.migrate needs Dask: pip install 'skelport[dask]' (dask[distributed])") from e

    started = time.perf_counter()
    kind = _manifest_kind(manifest) if manifest is not None else None
    p = plan(inputs, to, out_dir, weights=weights, embed=bool(writer_options.get("embed")), compress=bool(writer_options.get("compress")))
    os.makedirs(p.out_dir, exist_ok=True)
    # This run's start on the output folder's clock: outputs written after it were written by
    # this run (by an attempt whose worker died before reporting), and are converted again.
    stamp = os.path.join(p.out_dir, f".skelport-run-{uuid.uuid4().hex}.tmp")
    with open(stamp, "w"):
        pass
    since_ns = os.stat(stamp).st_mtime_ns
    os.remove(stamp)
    options: "dict[str, Any]" = dict(
        to=p.to,
        skip_existing=skip_existing,
        timeout=timeout,
        from_=from_,
        mesh=None if mesh is None else os.fspath(mesh),
        map=None if map is None else (map if isinstance(map, str) else os.fspath(map)),
        max_influences=max_influences,
        strict=strict,
        **writer_options,
    )
    if weights is not None:
        # One rig with its weights given (plan refused it for several).
        p.jobs = [Job(j.input, os.fspath(weights), j.output, j.side_files, j.conflict) for j in p.jobs]

    own_cluster = None
    if client is None:
        own_cluster = LocalCluster(processes=True, dashboard_address=":0")
        client = Client(own_cluster)
    show = sys.stderr.isatty() if progress is None else progress is True
    bar = _Progress(len(p.jobs) + len(p.refused), show, progress if callable(progress) else None)
    if show and getattr(client, "dashboard_link", None):
        sys.stderr.write(f"skelport.migrate: {len(p.jobs)} files on {client.dashboard_link}\n")
    appender = _JsonlAppender(os.fspath(manifest)) if kind == "jsonl" else None
    rows: "list[dict[str, Any]]" = []
    resubmitted = 0

    def add(new: "list[dict[str, Any]]") -> None:
        rows.extend(new)
        if appender is not None:
            appender.add(new)
        bar.add(new)

    order = {j.input: k for k, j in enumerate(p.jobs)}
    pending: "dict[Any, tuple[list[Job], int]]" = {}
    stop_event: Any = None
    try:
        add(p.refused)
        workers = max(1, sum(client.nthreads().values()))
        size = chunk_size or max(1, min(64, math.ceil(len(p.jobs) / (workers * 4))))
        token = uuid.uuid4().hex[:8]
        stop_name = f"skelport-migrate-stop-{token}"
        stop_event = Event(stop_name, client=client)

        def submit(chunk: "list[Job]", attempt: int) -> Any:
            key = f"skelport-migrate-{token}-{uuid.uuid4().hex[:12]}"
            f = client.submit(run_jobs, chunk, options, since_ns=since_ns, attempt=attempt, stop=stop_name, pure=False, key=key)
            pending[f] = (chunk, attempt)
            return f

        queue = as_completed([submit(c, 1) for c in _chunks(p.jobs, size)])
        for f in queue:
            chunk, attempt = pending.pop(f)
            new, why = _outcome(f)
            f.release()
            if new is not None:
                add(new)
            elif len(chunk) > 1 or attempt == 1:
                # The task was lost (its worker died, the cluster restarted): again, one file a
                # task, so a file that kills its worker fails alone.
                resubmitted += 1
                for job in chunk:
                    queue.add(submit([job], attempt + 1))
            else:
                add([_lost_row(job, p.to, f"its task was lost twice ({why})", attempt) for job in chunk])
    except BaseException:
        # Interrupted (Ctrl-C, or the progress callback raised), as the command line's batch
        # stops: no file starts any more, the files in flight finish their all-or-nothing save,
        # and every input gets its row (the ones not started: "interrupted before it started");
        # a re-run converts what is missing. A second Ctrl-C stops the wait.
        try:
            if stop_event is not None:
                stop_event.set()
            if pending:
                wait(list(pending), timeout=max(60.0, timeout or 0.0))
        except BaseException:
            pass
        for f, (chunk, attempt) in list(pending.items()):
            new, why = _outcome(f) if f.done() else (None, "it was still running")
            if new is None:
                new = [_lost_row(job, p.to, f"the migration was interrupted and its task did not report ({why}); its output may be there", attempt) for job in chunk]
            rows.extend(new)
        if appender is not None:
            appender.close()
        if not any(f.status == "pending" for f in pending):
            _remove_temporaries(p.out_dir)
        try:
            client.cancel(list(pending))
        except Exception:
            pass
        rows.sort(key=lambda r: order.get(r["input"], len(order)))
        if manifest is not None:
            write_manifest(rows, manifest)
        raise
    finally:
        if appender is not None:
            appender.close()
        bar.close()
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    removed = _remove_temporaries(p.out_dir)
    # In the command line's order: the jobs as planned, then the refused weights files.
    rows.sort(key=lambda r: order.get(r["input"], len(order)))
    if manifest is not None:
        write_manifest(rows, manifest)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("converted", "skipped", "failed")}
    return Migration(
        total=len(rows),
        converted=counts["converted"],
        skipped=counts["skipped"],
        failed=counts["failed"],
        rows=rows,
        manifest=None if manifest is None else os.fspath(manifest),
        seconds=time.perf_counter() - started,
        resubmitted=resubmitted,
        temporaries_removed=removed,
        note=p.note,
    )
