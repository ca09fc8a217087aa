"""smrlab: run smrbench experiment grids, keep the results, draw the figures of the SMR papers."""

__version__ = "0.1.0"
