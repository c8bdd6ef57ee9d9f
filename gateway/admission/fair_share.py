"""Fair share's turns: owners take turns inside a class, by requests or by the work they took.

Start-time fair queuing: each owner's requests get consecutive start tags that begin at the
class's current tag (the latest one admitted), so owners alternate instead of one owner's burst
going first, and an owner back from idle gets no credit for it. By requests each request is one
turn; by work (VTC, Sheng et al., OSDI'24) it is its tokens: its prompt charged at arrival, the
rest settled when the engine has reported what it took (`charge`). What an owner took beyond the
class's tag halves every half-life, so a heavy past is forgiven in time (llm-d's decaying
attained service). Plain bookkeeping over the clock the queue passes in.
"""

from __future__ import annotations

from gateway.admission.types import Waiter


class Turns:
    """Per class: each owner's next start tag, when it was last charged, and the class's tag."""

    def __init__(self) -> None:
        self.vtime = [0.0, 0.0, 0.0]  # the class's current tag: the latest admitted
        self.next: list[dict[str, float]] = [{}, {}, {}]
        self._charged_at: list[dict[str, float]] = [{}, {}, {}]

    def reset(self) -> None:
        """Hand the tags out anew (a scheduler change keys everyone again)."""
        self.next, self._charged_at = [{}, {}, {}], [{}, {}, {}]

    def take(self, w: Waiter, *, by_work: bool, half_life: float, now: float) -> None:
        """The owner's next turn in the class, never before the class's tag."""
        turns, vtime = self.next[w.cls], self.vtime[w.cls]
        used = turns.get(w.owner, 0.0)
        if used > vtime and half_life > 0:
            elapsed = max(0.0, now - self._charged_at[w.cls].get(w.owner, now))
            used = vtime + (used - vtime) * 0.5 ** (elapsed / half_life)
        start = max(used, vtime)
        turns[w.owner] = start + (w.work if by_work else 1.0)
        self._charged_at[w.cls][w.owner] = now
        w.turn = start

    def charge(self, w: Waiter, work: float) -> None:
        """By work: the request ended having taken `work` (0 if it never ran); its owner's next
        turns move by the difference from what its arrival charged (`Waiter.work`), once."""
        turns = self.next[w.cls]
        if w.owner in turns:
            turns[w.owner] = max(0.0, turns[w.owner] + work - w.work)
            w.work = work

    def served(self, w: Waiter) -> None:
        """`w` was admitted: its tag is the class's now, if later."""
        if w.turn > self.vtime[w.cls]:
            self.vtime[w.cls] = w.turn

    def forget_the_past(self) -> None:
        """Drop owners whose next turn is not ahead of their class's: they gain nothing from it
        (keeps the tables from growing with every owner ever seen)."""
        for cls, turns in enumerate(self.next):
            if len(turns) > 1024:
                vtime = self.vtime[cls]
                self.next[cls] = kept = {o: t for o, t in turns.items() if t > vtime}
                charged = self._charged_at[cls]
                self._charged_at[cls] = {o: charged[o] for o in kept if o in charged}
