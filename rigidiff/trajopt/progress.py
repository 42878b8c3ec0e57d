"""Progress reports of long solves: a tqdm bar when tqdm is installed, else one line per iteration."""

from __future__ import annotations

import sys
import time


class Progress:
    """Shows the iteration count and the cost; silent when ``enabled`` is False."""

    def __init__(self, enabled: bool, total: int, method: str):
        self.enabled = enabled
        self._bar = None
        self._last = 0.0
        self.method = method
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, desc=f"trajopt {method}", unit="it", leave=False)

    def update(self, iteration: int, cost: float, violation: float | None = None) -> None:
        if not self.enabled:
            return
        info = f"cost {cost:.6g}" + ("" if violation is None else f", violation {violation:.2e}")
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(info)
            return
        now = time.perf_counter()
        if now - self._last > 0.5:  # at most two lines a second
            print(f"trajopt {self.method}: iteration {iteration}, {info}", file=sys.stderr)
            self._last = now

    def close(self, message: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        print(f"trajopt {self.method}: {message}", file=sys.stderr)
