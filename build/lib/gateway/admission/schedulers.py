"""The schedulers' settings and the order each gives the waiters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCHEDULERS = ("strict", "serial", "fcfs", "wspt")


@dataclass(slots=True)
class SchedulerConfig:
    """The scheduler's settings: one shape, built from the operator settings' catalog."""

    name: str = "strict"
    aging_divisor: float = 60.0  # seconds of waiting per score point (serial); 0 = no aging
    affinity_bonus: float = 10.0  # serial only, 0..99
    max_waiters: int = 0  # 0 = unbounded
    prioritize: bool = True  # False: one class, arrival order
    fair_share: bool = False  # strict only: owners take turns inside a class

    @classmethod
    def from_catalog(cls, values: dict[str, Any]) -> SchedulerConfig:
        return cls(
            name=str(values["gateway.scheduler"]),
            aging_divisor=float(values["gateway.aging_divisor_secs"]),
            affinity_bonus=float(values["gateway.affinity_bonus"]),
            max_waiters=int(values["gateway.max_waiters"]),
            prioritize=bool(values["gateway.priority_enabled"]),
            fair_share=bool(values["gateway.fair_share"]),
        )

    def orders_like(self, other: SchedulerConfig) -> bool:
        """Are order keys made under these settings still right under the other? (The bonus
        and the bound apply at dispatch and arrival, not in the keys.)"""
        mine = (self.name, self.prioritize, self.fair_share, self.aging_divisor)
        return mine == (other.name, other.prioritize, other.fair_share, other.aging_divisor)
