"""The one exception type that means "the user gave bad input".

The CLI turns it into a single line on stderr and exit status 2, the same contract smrbench
follows, so scripts can tell bad input (2) from failed trials (1).
"""


class UsageError(Exception):
    """Bad input: an invalid experiment file, a missing binary, an unknown name or option."""


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP during a run: handled as Ctrl-C is (the trial in flight is stopped,
    everything finished is stored), with exit status 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
