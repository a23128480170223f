from __future__ import annotations

from informers.testing.stateful_fifo import RealFIFOMachine

TestRealFIFOMachine = RealFIFOMachine.TestCase
