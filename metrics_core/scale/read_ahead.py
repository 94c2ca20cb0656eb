"""Reading ahead: blocks of whole queries cut from a stream of batches, produced on a
background thread while the engine evaluates the previous block."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def query_blocks(batches, block_rows: int):
    """Tables of whole queries (about ``block_rows`` rows) from a stream of batches.

    The rows of the last query of what has been read so far are carried into the next
    block (they may continue in the next batch).
    """
    pending, n = [], 0
    tail_q, tail_same = None, 0  # trailing pending batches known to hold only query tail_q
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        n += batch.num_rows
        last = batch.column("qid")[-1]
        if tail_q is None or not last.equals(tail_q):
            tail_q, tail_same = last, 0
        if n < block_rows:
            continue
        cut = None
        i = len(pending) - 1
        while i >= 0:
            ne = pc.not_equal(pending[i].column("qid"), last).to_numpy(zero_copy_only=False)
            where = np.flatnonzero(ne)
            if len(where):
                cut = (i, int(where[-1]) + 1)
                break
            i = i - 1 - tail_same if i == len(pending) - 1 else i - 1
        if cut is None:  # one query so far: read on
            tail_same = len(pending)
            continue
        i, at = cut
        head = pending[:i] + [pending[i].slice(0, at)]
        tail = [t for t in [pending[i].slice(at)] + pending[i + 1 :] if t.num_rows]
        yield pa.concat_tables(head)
        pending = tail
        n = sum(t.num_rows for t in pending)
        tail_same = len(pending)
    if pending:
        yield pa.concat_tables(pending)


class ReadAhead:
    """The items of ``items``, produced on a background thread up to ``depth`` ahead,
    starting at once (so the next block is read while the caller still works).

    Arrow's CSV parser, its compute functions and numpy's sorts release the GIL, so the
    next block is parsed on the second core while the engine evaluates this one. An
    exception in the producer is raised here, where the item it failed on would have
    come. :meth:`close` (also on leaving a ``with`` block) stops the producer.
    """

    _DONE = object()

    def __init__(self, items, depth: int = 1):
        self._q: queue.Queue = queue.Queue(maxsize=max(int(depth), 1))
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(
            target=self._produce, args=(items,), name="ranklab-read-ahead", daemon=True
        )
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, items):
        try:
            for item in items:
                if not self._put((True, item)):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put((False, exc))
            return
        self._put((True, self._DONE))

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        ok, item = self._q.get()
        if not ok or item is self._DONE:
            self.close()
            if not ok:
                raise item
            raise StopIteration
        return item

    def close(self) -> None:
        """Stop the producer thread and wait for it."""
        self._finished = True
        self._stop.set()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["ReadAhead", "query_blocks"]
