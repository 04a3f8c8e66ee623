"""Detectors: from pixels to table-millimetre pieces, through a calibration."""
