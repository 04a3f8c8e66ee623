"""Named calibration failures: each message states the problem and the offending value."""


class CalibrationError(ValueError):
    """A calibration could not be made or read."""
